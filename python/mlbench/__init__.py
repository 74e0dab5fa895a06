"""mlbench: the parts of mlbench that run in your Python (README "The Python package").

    mlbench.stages     StageTimer: time a training loop's stages, write a stage file for `mlbench gap --run`
    mlbench.simplify   run your loop's parts one at a time (python3 -m mlbench.simplify myloop.py)
    mlbench.results    read a results file with mlbench's own rule for a usable case
    mlbench.peers      mlbench's host-side ceilings next to fio, STREAM, numpy and torch (python3 -m mlbench.peers)
    mlbench.gpu        the GPU session's tools: pair, required, steady_compare, pytorch_compare

Standard library only: it runs on a bare GPU machine from the bundle and in any interpreter a training script
uses, with nothing to install. torch is imported only by the tools that time PyTorch, and only when they run.
"""

import os

__version__ = "0.1.0"   # mlbench's own (CMakeLists.txt project VERSION): tests/python_package.sh holds them equal


def tree_root():
    """The folder holding this package's python/ folder, when it is in an mlbench checkout or bundle (the source
    tree's root, or the bundle's with run.sh), else None (an installed copy)."""
    parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.dirname(parent) if os.path.basename(parent) == "python" else None
