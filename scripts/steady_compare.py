#!/usr/bin/env python3
"""scripts/steady_compare.py: python3 -m mlbench.gpu.steady_compare (python/mlbench/gpu/steady_compare.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench.gpu.steady_compare import main  # noqa: E402

sys.exit(main())
