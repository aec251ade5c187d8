"""choreograph hardware: robots, drivers and simulators that stages talk to."""
