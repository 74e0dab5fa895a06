#!/usr/bin/env python3
"""scripts/gpu_pair.py: python3 -m mlbench.gpu.pair (python/mlbench/gpu/pair.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench.gpu.pair import main  # noqa: E402

sys.exit(main())
