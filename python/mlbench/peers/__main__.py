"""python3 -m mlbench.peers: mlbench's host-side ceilings next to their peers (see mlbench.peers)."""
import sys

from . import main

sys.exit(main(prog="python3 -m mlbench.peers"))
