"""mlbench.runner: runs the mlbench binary on one job file and reads back the results file it wrote.

The peer comparisons (mlbench.peers) and the PyTorch comparison (mlbench.gpu.pytorch_compare) run mlbench this one
way; what a failure means is theirs to say. Standard library only.
"""

import collections
import os
import subprocess

from . import results

# argv: the command run; returncode: its exit status (negative: killed by that signal); output: its stdout and
# stderr together; results: the results file (mlbench.results.Results), None when it wrote none.
Run = collections.namedtuple("Run", "argv returncode output results")


def run_mlbench(command, job, out, extra=(), env=None):
    """Runs `command --suite job --out out -q extra` (command: the binary and any leading arguments, a list) and
    reads `out` back. A results file mlbench would refuse raises mlbench.results.ResultsError."""
    if os.path.exists(out):
        os.unlink(out)   # a file left by an earlier run must not pass for this one's
    argv = list(command) + ["--suite", job, "--out", out, "-q"] + list(extra)
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    read = results.load(out) if os.path.exists(out) else None
    return Run(argv, p.returncode, p.stdout, read)


def write_job(path, text):
    """Writes a job file's text to path; returns path."""
    with open(path, "w") as f:
        f.write(text)
    return path
