#!/usr/bin/env python3
"""scripts/mlbench_stages.py: mlbench.stages (python/mlbench/stages.py). Run, it prints the usage; imported from
scripts/ (`import mlbench_stages`, as before the package) it is mlbench.stages itself."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))
from mlbench import stages  # noqa: E402

if __name__ == "__main__":
    sys.exit(stages.main(sys.argv))
sys.modules[__name__] = stages
