#!/usr/bin/env python3
"""scripts/gpu_required.py: python3 -m mlbench.gpu.required (python/mlbench/gpu/required.py), here and
in the bundle's bin/ (its python/ folder beside bin/)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench.gpu.required import main  # noqa: E402

sys.exit(main(sys.argv))
