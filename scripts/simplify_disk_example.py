"""simplify_disk_example.py: issue 32's random-read trap as a training loop
(docs/simplify.md, "The random-read trap, found"), in the form mlbench.simplify
reads, on the GPU when there is one, else on the CPU.

    PYTHONPATH=python python3 -m mlbench.simplify scripts/simplify_disk_example.py --out disk.json --seconds 3
    mlbench gap --run disk.json --ceilings RESULTS   # RESULTS with this machine's disk cases

A file of random 64 KiB records (SIMPLIFY_DISK_MB, default 1024 MiB), written
once into a folder this script makes under SIMPLIFY_DATA_DIR (default: the
current directory) and removed with it when the process ends; a DataLoader
with two workers reads it through a memory map, at shuffled offsets
(SIMPLIFY_ORDER=sequential: in order), batch 32, pinned on a GPU; the step: a
small MLP over each record's bytes, bf16 autocast on a GPU, AdamW. The runner
keeps the file out of the page cache (a dataset larger than memory) unless
given --warm: cold and shuffled, each record's page fault reads a readahead
window around it, and the loader mode says how many bytes came from storage
for the bytes it delivered. SIMPLIFY_PERSISTENT=1 makes the workers persistent:
they keep the file mapped from one mode to the next, the runner then evicts
what one worker alone maps and says how much two keep (docs/simplify.md,
"Persistent workers"; before 2026-11-29 evening it measured a warm cache
while it said cold)."""
import atexit
import mmap
import os
import shutil
import tempfile

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
RECORD = 64 << 10

_dir = tempfile.mkdtemp(prefix="mlbench-disk-example-", dir=os.environ.get("SIMPLIFY_DATA_DIR", "."))
_owner = os.getpid()
# the folder goes with the process that made it (the DataLoader's workers are its forks and must leave it)
atexit.register(lambda: os.getpid() == _owner and shutil.rmtree(_dir, ignore_errors=True))
_path = os.path.join(_dir, "records.bin")


def _write(path, size):
    g = torch.Generator().manual_seed(1)
    with open(path, "wb") as f:
        for _ in range(size // (4 << 20)):
            f.write(torch.randint(0, 256, (4 << 20,), dtype=torch.uint8, generator=g).numpy().tobytes())
        f.flush()
        os.fsync(f.fileno())   # on the device: the runner evicts it from the page cache before each mode


_write(_path, int(os.environ.get("SIMPLIFY_DISK_MB", "1024")) << 20)


class _Records(torch.utils.data.Dataset):
    """The file's records, read through a memory map each worker opens."""

    def __init__(self, path):
        self.path, self.size, self.mm = path, os.path.getsize(path), None

    def __len__(self):
        return self.size // RECORD

    def __getitem__(self, i):
        if self.mm is None:
            with open(self.path, "rb") as f:
                self.mm = mmap.mmap(f.fileno(), self.size, prot=mmap.PROT_READ)
        x = torch.frombuffer(bytearray(self.mm[i * RECORD:(i + 1) * RECORD]), dtype=torch.uint8)
        return x, int(x[0]) % 10


loader = torch.utils.data.DataLoader(_Records(_path), batch_size=32, num_workers=2, drop_last=True,
                                     shuffle=os.environ.get("SIMPLIFY_ORDER", "random") != "sequential",
                                     pin_memory=device == "cuda",
                                     persistent_workers=os.environ.get("SIMPLIFY_PERSISTENT") == "1")
_model = nn.Sequential(nn.Linear(RECORD, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
optimizer = torch.optim.AdamW(_model.parameters(), lr=1e-4)


def step(batch):
    x, y = batch
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
        loss = nn.functional.cross_entropy(_model(x.float() / 255).float(), y)
    loss.backward()
    optimizer.step()
