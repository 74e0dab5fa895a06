#!/usr/bin/env python3
"""scripts/mlbench_simplify.py: python3 -m mlbench.simplify (python/mlbench/simplify.py). Imported from scripts/
(`import mlbench_simplify`, as before the package) it is mlbench.simplify itself."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench import simplify  # noqa: E402

if __name__ == "__main__":
    sys.exit(simplify.main())
sys.modules[__name__] = simplify
