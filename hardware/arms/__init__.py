"""Arm drivers: the protocol every driver keeps, the MuJoCo physics driver, fault injection."""
