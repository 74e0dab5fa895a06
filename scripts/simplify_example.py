"""simplify_example.py: a small training loop in the form mlbench.simplify
reads (docs/simplify.md), on the GPU when there is one, else on the CPU.

    PYTHONPATH=python python3 -m mlbench.simplify scripts/simplify_example.py --out simplify.json --seconds 3
    mlbench gap --run simplify.json

A DataLoader with two workers over synthetic images (each item costs a little
host work, like decoding), pinned batches, a small conv net in bf16 autocast
on a GPU (fp32 on the CPU) and SGD: every stage the runner separates (loader,
transfer, step, optimizer) has work to do. Replace the parts with your own.

SIMPLIFY_DDP=1 wraps the model in DistributedDataParallel (NCCL on a GPU, gloo
on the CPU; one rank unless torchrun's environment says more) and names it the
collective: the runner's DDP modes on a machine with one GPU."""
import os

import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"
_IMAGE = (3, 96, 96)


class _Images(torch.utils.data.Dataset):
    """Random images and labels, made per item: the host work a decoder does."""

    def __len__(self):
        return 2048

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(_IMAGE, generator=g), int(torch.randint(0, 100, (1,), generator=g))


loader = torch.utils.data.DataLoader(_Images(), batch_size=64, shuffle=True, num_workers=2,
                                     pin_memory=device == "cuda", drop_last=True, persistent_workers=True)

_model = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                       nn.Conv2d(64, 128, 3, 2, 1), nn.BatchNorm2d(128), nn.ReLU(),
                       nn.Conv2d(128, 256, 3, 2, 1), nn.BatchNorm2d(256), nn.ReLU(),
                       nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100)).to(device)
optimizer = torch.optim.SGD(_model.parameters(), lr=0.01, momentum=0.9)
if os.environ.get("SIMPLIFY_DDP") == "1":
    for key, value in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29511"), ("WORLD_SIZE", "1"), ("RANK", "0")):
        os.environ.setdefault(key, value)
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if device == "cuda" else "gloo")
    _model = torch.nn.parallel.DistributedDataParallel(_model)
    collective = _model


def step(batch):
    x, y = batch
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
        loss = nn.functional.cross_entropy(_model(x).float(), y)
    loss.backward()
    optimizer.step()
