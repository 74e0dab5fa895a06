#!/usr/bin/env python3
"""scripts/fio_compare.py: python3 -m mlbench.peers disk-cases (python/mlbench/peers/disk_cases.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench.peers.disk_cases import main  # noqa: E402

sys.exit(main(name="fio_compare"))
