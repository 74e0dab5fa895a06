#!/usr/bin/env python3
"""scripts/pytorch_compare.py: python3 -m mlbench.gpu.pytorch_compare (python/mlbench/gpu/pytorch_compare.py),
here and in the bundle's bin/ (its python/ folder beside bin/)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench.gpu.pytorch_compare import main  # noqa: E402

sys.exit(main())
