"""Online RL around the peg-insertion task: policy hooks, success detection, the episode loop."""
