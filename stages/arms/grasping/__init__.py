"""Grasping: how the peg lies, which grasps exist, which one an arm reaches with least travel."""
