"""gpu_pair.py: paired data for the projection's measured error (docs/gap.md,
"Measured error"), collected in one 10-minute GPU slot per GPU kind.

  gpu_pair.py collect OUTDIR [--mlbench PATH] [--processes 3] [--steps 30]
      on a GPU machine (python3 with torch and CUDA): for each workload
      below, ground-truth step times (median of --steps timed steps, in
      --processes separate processes) and one PyTorch profiler trace with
      record_shapes=True; then the machine's mlbench ceilings (membw, peak,
      gemm-gpu suites, as long as the budget allows). Writes OUTDIR/steps.json,
      OUTDIR/<workload>.pt.trace.json.gz and OUTDIR/ceilings.json. The
      ceilings are the GPU part of the default suite (`--suite all --filter
      CEILINGS_FILTER`: GEMM every dtype, conv, copies, membw, peak, launch);
      --quick-ceilings runs them with 3 repetitions of 0.1 s (for a short slot).
  gpu_pair.py kernels A_DIR B_DIR [--mlbench PATH]
      anywhere: the kernels both traces of a workload ran, matched by name
      and order, summed per class (configs/gap/kernel_classes.ini: GEMM,
      conv, attention; the rest memory-bound) on A and on B, and their
      ratio: what each class gained between the GPUs; the same of all
      kernels; and, with mlbench, the ratio the model projects per class
      (gap's kernel_seconds) both ways: the per-class error of the model.
  gpu_pair.py compare A_DIR B_DIR [A_DIR B_DIR ...] [--mlbench PATH] [--per-target] [--check-per-target INI]
      anywhere: projects each workload's trace from A onto B and from B onto
      A with `mlbench gap --target` (B's measured ceilings; B's datasheet),
      and prints mean/max absolute % error, signed bias and the error of the
      predicted speed-up, next to the no-change, FLOPs-ratio and
      bandwidth-ratio baselines. Each projection is given the source's
      measured step (`gap --step-ms`): the profiler lengthens a trace's host
      time, and a loop that keeps its GPU busy can look host-bound in its
      trace; --uncalibrated projects the traces as recorded. Several pairs
      (each A_DIR B_DIR) give one set of figures over all their projections.
      --per-target: per target GPU the mean |e| of the projections onto it,
      their count and the GPUs they came from, as the [pairs.MODE] sections
      of configs/gap/projection_error.ini (`gap --target`'s `checked`);
      --check-per-target INI: exit 1 unless INI holds exactly those.
      Exit 1 when a file is missing, 2 for an odd number of directories.

Workloads (synthetic data, standard training steps: forward, loss, backward,
optimizer step), at the batches in BATCH: collect runs the first three unless
--workloads names others (a 10-minute slot holds three and the ceilings):
  mlp-fp32          fp32 MLP, TF32 off: CUDA-core GEMMs
  transformer-bf16  bf16-autocast transformer encoder (nn.TransformerEncoder)
  convnet-bf16      bf16 conv net, channels-last, batch norm
  gpt-bf16          bf16 decoder: causal SDPA (flash attention), GELU MLP,
                    a 32k-token vocabulary head and its cross-entropy
  mlp-tf32          the MLP with TF32 tensor cores, at a batch that keeps them
                    busy
  convnet-fp32      the conv net in fp32, TF32 off
  mixer-bf16        a narrow token MLP (width 256): GEMMs of low arithmetic
                    intensity (K = 256) between layer norms and GELUs, where
                    bandwidth, not math, bounds most kernels
Loops as real training scripts write them (issue 31; SYNC says how each step
waits for the GPU, and the traced and timed loops do only that):
  gpt-bf16-nosync   the GPT decoder in bf16, never synchronising
  gpt-fp32-nosync   the GPT decoder in fp32 (TF32 off), never synchronising
  resnet50-bf16-nosync  ResNet-50 (bottlenecks 3-4-6-3, plain torch.nn),
                    channels_last, bf16 autocast, SGD with momentum
  lnchain-fp32-nosync   8 x (x = x + gelu(layernorm(x))) on a 65536 x 1024 fp32
                    tensor, loss mean(x^2), AdamW on the LayerNorm parameters
  tinymlp-item      40 Linear layers of width 64 at batch 64 that reads
                    loss.item() after every step (its own synchronisation)
  gpt-bf16-compiled gpt-bf16-nosync under torch.compile (Inductor's default
                    mode: Triton kernels, cuBLAS matmuls), never synchronising;
                    uncompiled where torch has no torch.compile (steps.json
                    says which)
The first seven end every traced and timed step with torch.cuda.synchronize()
(host clock per step, median); a workload that never synchronises is traced
without one and timed with CUDA events around --steps back-to-back steps (one
synchronize after them: step = elapsed / steps); tinymlp-item's own .item()
waits for the GPU (host clock per step, median, nothing added). steps.json
records each workload's sync and timing. Warm-up steps are not timed. A loop
that never synchronises is also timed at batch 1 (HOST_BATCH), where its GPU
has little to do: that step is its host's own time to issue one
(host_step_ms), which compare gives gap as --host-ms.
stdlib + torch only."""
import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from .. import tree_root

# The GPU sections of configs/suites/all.ini (and every case id of those components).
CEILINGS_FILTER = "^(gemm-gpu|conv-gpu|copy|membw|peak|launch)"
WORKLOADS = ("mlp-fp32", "transformer-bf16", "convnet-bf16", "gpt-bf16", "mlp-tf32", "convnet-fp32", "mixer-bf16",
             "gpt-bf16-nosync", "gpt-fp32-nosync", "resnet50-bf16-nosync", "lnchain-fp32-nosync", "tinymlp-item",
             "gpt-bf16-compiled")
FIRST_SET = WORKLOADS[:3]
# The dtype whose datasheet peak the FLOPs-ratio baseline uses.
DTYPE = {"mlp-fp32": "fp32", "transformer-bf16": "bf16", "convnet-bf16": "bf16", "gpt-bf16": "bf16",
         "mlp-tf32": "tf32", "convnet-fp32": "fp32", "mixer-bf16": "bf16", "gpt-bf16-nosync": "bf16",
         "gpt-fp32-nosync": "fp32", "resnet50-bf16-nosync": "bf16", "lnchain-fp32-nosync": "fp32",
         "tinymlp-item": "fp32", "gpt-bf16-compiled": "bf16"}
# How a workload's step waits for the GPU, which decides how it is traced and timed (child, traced_loop, timed_loop):
#   synchronize  the harness ends every step with torch.cuda.synchronize() (the first seven workloads: their data
#                in bench/data were recorded so);
#   none         the loop never waits: the host runs ahead of the GPU, as most training loops do; no synchronize
#                per step in the trace or the timing;
#   item         the step reads its loss with loss.item() after the optimizer step, which waits for the GPU; the
#                harness adds nothing.
SYNC = {**{n: "synchronize" for n in WORKLOADS[:7]}, "gpt-bf16-nosync": "none", "gpt-fp32-nosync": "none",
        "resnet50-bf16-nosync": "none", "lnchain-fp32-nosync": "none", "tinymlp-item": "item",
        "gpt-bf16-compiled": "none"}
TIMING = {"synchronize": "host clock around each step, ended by torch.cuda.synchronize(); median of the steps",
          "none": "CUDA events around the steps run back to back after warm-up and one synchronize, one synchronize "
                  "after the end event; elapsed / steps",
          "item": "host clock around each step, whose own loss.item() waits for the GPU (no torch.cuda.synchronize "
                  "added); median of the steps"}
# What each workload is, for steps.json (its dtype and batch are recorded beside it).
CONFIG = {
    "mlp-fp32": "4 x (Linear 4096, ReLU), Linear 1000; SGD momentum; TF32 off",
    "transformer-bf16": "nn.TransformerEncoder 6 x (width 1024, 16 heads, FFN 4096), 512 tokens; bf16 autocast; AdamW",
    "convnet-bf16": "6 conv3x3-BN-ReLU blocks (64-256 channels), 128x128 images, channels_last; bf16 autocast; SGD",
    "gpt-bf16": "GPT decoder 12 x width 1024, 16 heads, 1024 tokens, 32000-token head; bf16 autocast; AdamW",
    "mlp-tf32": "4 x (Linear 4096, ReLU), Linear 1000; SGD momentum; TF32 on",
    "convnet-fp32": "6 conv3x3-BN-ReLU blocks (64-256 channels), 128x128 images, channels_last; fp32, TF32 off; SGD",
    "mixer-bf16": "8 x (x + MLP(LayerNorm(x))), width 256, 1024 tokens, dropout 0.1; bf16 autocast; AdamW",
    "gpt-bf16-nosync": "GPT decoder 12 x width 1024, 16 heads, 1024 tokens, 32000-token head; bf16 autocast; AdamW",
    "gpt-fp32-nosync": "GPT decoder 12 x width 1024, 16 heads, 1024 tokens, 32000-token head; fp32, TF32 off; AdamW",
    "resnet50-bf16-nosync": "ResNet-50 (bottlenecks 3-4-6-3, stride on the 3x3), 224x224 images, channels_last; "
                            "bf16 autocast; SGD lr 0.01, momentum 0.9, weight decay 1e-4",
    "lnchain-fp32-nosync": "8 x (x = x + gelu(layernorm(x))) on a batch x 1024 fp32 tensor; loss mean(x^2); AdamW on "
                           "the LayerNorm parameters",
    "tinymlp-item": "40 Linear layers 64 -> 64 (ReLU between), 64 classes; AdamW; loss.item() after every step; "
                    "TF32 off",
    "gpt-bf16-compiled": "GPT decoder 12 x width 1024, 16 heads, 1024 tokens, 32000-token head; bf16 autocast; AdamW; "
                         "torch.compile(model), default mode",
}
# fp32 workloads with cuDNN's TF32 off too (torch.backends.cudnn.allow_tf32; matmuls: set_float32_matmul_precision).
CUDNN_FP32 = ("convnet-fp32", "gpt-fp32-nosync", "lnchain-fp32-nosync", "tinymlp-item")
# Batch per step (sequences for the transformer, 512 tokens each). Large enough that the GPU, not the host's
# launches, sets the step: the first pair (bench/data/pair-h100-h200, which recorded no batch) ran the
# transformer at 8 and the conv net at 64, host-bound, and separate processes of one step disagreed by up to
# 43%. compare pairs only workloads run at the same batch.
#
# The issue-31 workloads (the last five) are sized so that all five, with the ceilings, fit about 6 minutes of one
# GPU kind, H100 or H200. The estimate, from bench/data/pair-h100-h200-gpubound2 (whose four workloads and ceilings
# took 232 s on an H200 and 239 s on an H100 in `gpu_session.sh OUT pair`, ceilings 57-58 s of it): a process costs
# about 10 s before its first step (interpreter, torch, CUDA context, cuBLAS/cuDNN), plus its 10 warm-up and 30 timed
# steps (18 steps and the export for the trace); 3 timed processes + 1 traced per workload:
#   gpt-bf16-nosync       ~40 ms a step (gpt-bf16 at the same batch: 40.6 ms H100, 37.0 ms H200)  ~ 48 s
#   gpt-fp32-nosync       batch 2: ~2.6 TFLOP a step at ~50 TFLOP/s fp32 GEMM, ~60 ms            ~ 52 s
#   resnet50-bf16-nosync  batch 128 at 224^2: ~1.6 TFLOP a step, ~50 ms                          ~ 53 s
#   lnchain-fp32-nosync   ~42 GB moved a step (fwd ~1.8 GB, bwd ~3.5 GB per block), ~15 ms       ~ 42 s
#   tinymlp-item          ~250 launches and a .item() a step: host-bound, ~2 ms                  ~ 38 s
# about 235 s of workloads, about 55 s of ceilings (fp32/bf16 GEMM, conv, membw, fp32 peak, launch): 4.8 min. The 8
# files a device call brings back (scripts/gpu_session.sh) hold 4 workloads at most, so the five take two calls
# on one machine (docs/gap.md "Loops that never synchronise"). Measured on an H200, 2026-11-29: the four -nosync
# loops with their ceilings 226 s in one call (PAIR_BUDGET=270), tinymlp-item with its own 90 s. Since then each
# loop that never synchronises adds one process at HOST_BATCH (about 15 s, an estimate): PAIR_BUDGET=330 for them.
BATCH = {"mlp-fp32": 512, "transformer-bf16": 32, "convnet-bf16": 256, "gpt-bf16": 8, "mlp-tf32": 4096,
         "convnet-fp32": 128, "mixer-bf16": 64, "gpt-bf16-nosync": 8, "gpt-fp32-nosync": 2,
         "resnet50-bf16-nosync": 128, "lnchain-fp32-nosync": 65536, "tinymlp-item": 64, "gpt-bf16-compiled": 8}
FIRST_BATCH = {"mlp-fp32": 512, "transformer-bf16": 8, "convnet-bf16": 64}  # steps.json without "batch"
# A loop that never synchronises hides its host behind a full launch queue; at this batch the same kernels and
# launches have little work, so the GPU idles and the step is the host's own (docs/gap.md, --host-ms). One process,
# timed as the loop is (CUDA events around --steps steps).
HOST_BATCH = 1


# ---- collect (GPU side) ---------------------------------------------------------------

class Decoder:
    """A GPT-style decoder (pre-norm, causal self-attention through F.scaled_dot_product_attention, GELU MLP)."""

    @staticmethod
    def make(torch, vocab, width, heads, layers):
        nn, F = torch.nn, torch.nn.functional

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
                self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
                self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

            def forward(self, x):
                b, t, _ = x.shape
                q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
                if hasattr(F, "scaled_dot_product_attention"):
                    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                else:  # torch < 2.0 (Debian's, for a CPU smoke test only)
                    s = (q @ k.transpose(-1, -2)) / (width // heads) ** 0.5
                    s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
                    a = s.softmax(-1) @ v
                x = x + self.proj(a.transpose(1, 2).reshape(b, t, width))
                return x + self.mlp(self.ln2(x))

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(vocab, width)
                self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
                self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

            def forward(self, tokens):
                return self.head(self.ln(self.blocks(self.emb(tokens))))
        return Model()


def resnet50(torch, classes=1000):
    """ResNet-50 in plain torch.nn (no torchvision): a 7x7 stem and max pool, bottleneck blocks 3-4-6-3 (1x1, 3x3
    with the stage's stride, 1x1 to 4x the width; a projection shortcut where the shape changes), average pool, fc."""
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = 4 * width
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.shortcut = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.body(x) + self.shortcut(x))
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = 4 * width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes))


def build(name, torch, dev="cuda", batch=None, tiny=False):
    """(model, optimizer, make_batch, autocast dtype or None) of a workload; batch: BATCH[name] unless given
    (a CPU smoke test runs tiny ones); tiny: CPU-test sizes (the GPTs and the transformer 2 layers of width 64 over
    32 tokens, the MLPs 256 wide, ResNet-50 on 64x64 images, the convnets on 32x32, the mixer over 64 tokens): a CPU
    without bf16 instructions multiplies bf16 at a tenth of its fp32 rate (4.6 against 46 GFLOP/s on an AVX2 EPYC
    with torch 1.13), and the full-size GPT trained there for over 20 minutes a check. make_batch gives (input, target);
    a target None means the model's output is its loss."""
    nn = torch.nn
    torch.manual_seed(1)
    b = batch or BATCH[name]
    # Every workload sets both switches: one process runs one workload, but say what each one ran with.
    torch.set_float32_matmul_precision("high" if name == "mlp-tf32" else "highest")
    torch.backends.cudnn.allow_tf32 = name not in CUDNN_FP32
    if name in ("mlp-fp32", "mlp-tf32"):
        width = 256 if tiny else 4096
        model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(width, width), nn.ReLU())],
                              nn.Linear(width, 1000)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        x, y = torch.randn(b, width, device=dev), torch.randint(0, 1000, (b,), device=dev)
        return model, opt, lambda: (x, y), None
    if name == "transformer-bf16":
        width, heads, ff, layers, seq = (64, 4, 128, 2, 32) if tiny else (1024, 16, 4096, 6, 512)
        layer = nn.TransformerEncoderLayer(width, heads, ff, batch_first=True, dropout=0.0)
        model = nn.Sequential(nn.TransformerEncoder(layer, layers), nn.Linear(width, 1000)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x, y = torch.randn(b, seq, width, device=dev), torch.randint(0, 1000, (b * seq,), device=dev)
        return model, opt, lambda: (x, y), torch.bfloat16
    if name in ("convnet-bf16", "convnet-fp32"):
        def block(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
        model = nn.Sequential(block(3, 64, 2), block(64, 64, 1), block(64, 128, 2), block(128, 128, 1),
                              block(128, 256, 2), block(256, 256, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                              nn.Linear(256, 1000)).to(dev).to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
        side = 32 if tiny else 128
        x = torch.randn(b, 3, side, side, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (b,), device=dev)
        return model, opt, lambda: (x, y), torch.bfloat16 if name == "convnet-bf16" else None
    if name in ("gpt-bf16", "gpt-bf16-nosync", "gpt-fp32-nosync", "gpt-bf16-compiled"):
        vocab, seq, width, heads, layers = (512, 32, 64, 4, 2) if tiny else \
            (32000, 1024, 1024, 16, 12)
        model = Decoder.make(torch, vocab, width, heads, layers).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        if name == "gpt-bf16-compiled" and compiled(torch):
            model = torch.compile(model)  # compiled during the warm-up steps, which are not timed
        x = torch.randint(0, vocab, (b, seq), device=dev)
        y = torch.randint(0, vocab, (b * seq,), device=dev)
        return model, opt, lambda: (x, y), None if name == "gpt-fp32-nosync" else torch.bfloat16
    if name == "resnet50-bf16-nosync":
        side = 64 if tiny else 224
        model = resnet50(torch).to(dev).to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
        x = torch.randn(b, 3, side, side, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (b,), device=dev)
        return model, opt, lambda: (x, y), torch.bfloat16
    if name == "lnchain-fp32-nosync":
        width = 1024

        class Chain(nn.Module):
            def __init__(self):
                super().__init__()
                self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(8))

            def forward(self, x):
                for norm in self.norms:
                    x = x + nn.functional.gelu(norm(x))
                return x.square().mean()  # the scalar loss
        model = Chain().to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(b, width, device=dev)
        return model, opt, lambda: (x, None), None
    if name == "tinymlp-item":
        width = 64
        model = nn.Sequential(*[m for _ in range(39) for m in (nn.Linear(width, width), nn.ReLU())],
                              nn.Linear(width, width)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = torch.randn(b, width, device=dev), torch.randint(0, width, (b,), device=dev)
        return model, opt, lambda: (x, y), None
    if name == "mixer-bf16":
        width, tokens = 256, 64 if tiny else 1024

        class Mix(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = nn.LayerNorm(width)
                self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Dropout(0.1),
                                         nn.Linear(4 * width, width))

            def forward(self, x):
                return x + self.mlp(self.ln(x))
        model = nn.Sequential(*[Mix() for _ in range(8)], nn.LayerNorm(width), nn.Linear(width, 1000)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randn(b, tokens, width, device=dev)
        y = torch.randint(0, 1000, (b * tokens,), device=dev)
        return model, opt, lambda: (x, y), torch.bfloat16
    raise ValueError(name)


def compiled(torch):
    """Whether this torch has torch.compile (2.0 and later; Debian 12's 1.13, which the CPU tests use, has not)."""
    return hasattr(torch, "compile")


def step_fn(model, opt, batch, amp, torch, dev="cuda", item=False):
    """One training step: forward, loss, backward, optimizer step. item: it ends with loss.item() (the loss read
    for logging, as many loops do), which waits for the GPU; without it nothing in the step synchronises."""
    def step():
        x, y = batch()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev, dtype=amp, enabled=amp is not None):
            out = model(x)
            if y is None:
                loss = out
            else:
                out = out.reshape(-1, out.shape[-1])
                loss = torch.nn.functional.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        if item:
            return loss.item()
        return loss  # not read in a timed step (.item() would synchronize)
    return step


def traced_loop(step, sync, prof, torch, steps=8):
    """The profiled steps (wait=1, warmup=2, active=5): each ended by torch.cuda.synchronize() only where the
    workload's SYNC is 'synchronize'. (The profiler itself synchronizes once, when its active window closes, after
    the last recorded step.)"""
    for _ in range(steps):
        step()
        if sync == "synchronize":
            torch.cuda.synchronize()
        prof.step()


def timed_loop(step, sync, steps, torch):
    """{step_ms, steps[, host_issue_ms]} of `steps` steps after the warm-up and a synchronize, as the workload's SYNC
    says (TIMING): 'none' CUDA events around the steps back to back, one synchronize after them, and the host's
    median time to issue a step beside (near step_ms: host-bound); 'synchronize' and 'item' the host clock around
    each step, the median."""
    if sync == "none":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        issue = []
        start.record()
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            issue.append(time.perf_counter() - t0)
        end.record()
        torch.cuda.synchronize()
        return {"step_ms": start.elapsed_time(end) / steps, "steps": steps,
                "host_issue_ms": 1e3 * statistics.median(issue)}
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        if sync == "synchronize":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return {"step_ms": 1e3 * statistics.median(times), "steps": steps}


def child(name, steps, trace, dev="cuda", batch=None, tiny=False, warmup=10):
    """One process: warm up, synchronize, then time `steps` steps (or record a trace), as SYNC[name] says. dev,
    batch, tiny and warmup: a CPU test's (which replaces torch.cuda.synchronize and torch.cuda.Event)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    model, opt, batch_fn, amp = build(name, torch, dev, batch, tiny)
    step = step_fn(model, opt, batch_fn, amp, torch, dev, item=SYNC[name] == "item")
    for _ in range(warmup):  # warm-up: cuDNN/cuBLAS choices, allocator, clocks
        step()
    torch.cuda.synchronize()
    if trace:
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
        with profile(activities=activities, record_shapes=True, schedule=schedule(wait=1, warmup=2, active=5)) as prof:
            traced_loop(step, SYNC[name], prof, torch)
        prof.export_chrome_trace(trace)
        return {}
    return timed_loop(step, SYNC[name], steps, torch)


def run_child(args, name, trace=None, timeout=240, batch=None):
    """One workload in a process of its own (this module's _child mode), which finds this package as this one does:
    its folder first on PYTHONPATH, also when a wrapper in scripts/ put it on sys.path. batch: another than BATCH
    (timed only)."""
    cmd = [sys.executable, "-m", "mlbench.gpu.pair", "_child", name, str(args.steps), trace or "-"] + \
        ([str(batch)] if batch else [])
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def collect(args):
    import torch
    if not torch.cuda.is_available():
        sys.exit("gpu_pair.py collect: no CUDA device")
    os.makedirs(args.outdir, exist_ok=True)
    started = time.time()
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "processes": args.processes,
           "steps_per_process": args.steps, "workloads": {}}
    for name in args.workloads:
        runs = [run_child(args, name) for _ in range(args.processes)]
        per = [r["step_ms"] for r in runs]
        doc["workloads"][name] = {"dtype": DTYPE[name], "batch": BATCH[name], "config": CONFIG[name],
                                  "sync": SYNC[name], "timing": TIMING[SYNC[name]], "step_ms_per_process": per,
                                  "step_ms": statistics.median(per)}
        if SYNC[name] == "none":
            doc["workloads"][name]["host_issue_ms_per_process"] = [r["host_issue_ms"] for r in runs]
            try:  # an extra figure: its failure loses none of the others
                small = run_child(args, name, batch=HOST_BATCH)
                doc["workloads"][name].update(host_batch=HOST_BATCH, host_step_ms=small["step_ms"],
                                              host_issue_ms_at_host_batch=small["host_issue_ms"])
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                doc["workloads"][name]["host_step_error"] = str(e)[-400:]
        if name == "gpt-bf16-compiled":
            doc["workloads"][name]["compiled"] = compiled(torch)
        raw = os.path.join(args.outdir, f"{name}.pt.trace.json")
        run_child(args, name, trace=raw)
        with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(raw)
        with open(os.path.join(args.outdir, "steps.json"), "w") as f:
            json.dump(doc, f, indent=1)
        print(f"{name}: {doc['workloads'][name]['step_ms']:.3f} ms per step ({per})", flush=True)
    left = args.budget - (time.time() - started)
    if args.mlbench and left > 60:
        out = os.path.join(args.outdir, "ceilings.json")
        try:  # results are rewritten after every case: a timeout keeps what was measured
            quick = ["--repetitions", "3", "--min-time", "0.1", "--warmup-time", "0.05"] if args.quick_ceilings else []
            subprocess.run([args.mlbench, "--suite", "all", "--filter", args.ceilings_filter, "--out", out] + quick,
                           timeout=left - 10)
        except subprocess.TimeoutExpired:
            print("gpu_pair.py: the ceilings ran out of budget; keeping what was measured", file=sys.stderr)
    return 0


# ---- compare (anywhere) -------------------------------------------------------------

def gap_json(mlbench, trace, ceilings, target, step_ms=None, host_ms=None):
    """`mlbench gap --target`'s ranking; step_ms: the source's step without the profiler (--step-ms); host_ms: its
    host's own time per step (--host-ms, a loop that never synchronises)."""
    r = subprocess.run([mlbench, "gap", "--run", trace, "--ceilings", ceilings, "--target", target,
                        "--format", "json"] + (["--step-ms", f"{step_ms:.6g}"] if step_ms else []) +
                       (["--host-ms", f"{host_ms:.6g}"] if host_ms else []), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)["machines"]


def host_ms(workload, args):
    """The source loop's host time per step for --host-ms: its step at HOST_BATCH, when collect timed one and it is
    under the loop's own step (else the host kept pace with the GPU there too, and says nothing more)."""
    h = workload.get("host_step_ms")
    if args.uncalibrated or not h or workload.get("sync") != "none" or h >= workload["step_ms"]:
        return None
    return h


def datasheets(config_dir):
    """{stem: (match patterns, {key: value})} of configs/hardware/*.ini."""
    import configparser
    out = {}
    hw = os.path.join(config_dir, "hardware")
    for f in sorted(os.listdir(hw)):
        if not f.endswith(".ini"):
            continue
        cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
        cp.read(os.path.join(hw, f))
        pats = [cp["product"].get("name", "")] + [m.strip() for m in cp["product"].get("match", "").split(",")]
        vals = {f"{s}.{k}": v for s in cp.sections() for k, v in cp[s].items()}
        out[f[:-4]] = ([p for p in pats if p], vals)
    return out


def match_sheet(sheets, gpu):
    """The stem whose longest pattern occurs in the CUDA device name (as mlbench matches)."""
    best, best_len = None, 0
    for stem, (pats, _) in sheets.items():
        for p in pats:
            if p.lower() in gpu.lower() and len(p) > best_len:
                best, best_len = stem, len(p)
    return best


def figure(sheets, stem, key):
    try:
        return float(sheets[stem][1][key])
    except (KeyError, ValueError):
        return None


def spread_of(workload):
    """(fastest, slowest) of a workload's per-process step times (ms)."""
    per = workload.get("step_ms_per_process") or [workload["step_ms"]]
    return min(per), max(per)


def beyond_spread(projected, measured, spread):
    """How far a projection lies outside the target's per-process range, as a fraction of the measured step:
    0 inside it. Separate processes of the same step disagree on a shared machine; an error inside that
    range is not one the model can be blamed for."""
    lo, hi = spread
    return max(lo - projected, projected - hi, 0.0) / measured


def stats_line(label, errs):
    return (f"  {label:16s} mean |e| {100 * statistics.mean(abs(e) for e in errs):6.1f}%  max |e| "
            f"{100 * max(abs(e) for e in errs):6.1f}%  bias {100 * statistics.mean(errs):+6.1f}%")


# (source GPU, target GPU) as steps.json names them -> their datasheet stems (per_target's keys)
stems_of = {}


def project_pair(args, a, b, sheets, rows):
    """Appends to rows[mode] each workload of a and b projected both ways; 1 when a steps.json is missing."""
    steps = {}
    for d in (a, b):
        p = os.path.join(d, "steps.json")
        if not os.path.exists(p):
            print(f"gpu_pair.py: {p} missing (run `gpu_pair.py collect` there)", file=sys.stderr)
            return 1
        steps[d] = json.load(open(p))
    stems = {d: match_sheet(sheets, steps[d]["gpu"]) for d in (a, b)}
    for src, dst in ((a, b), (b, a)):
        for name in WORKLOADS:
            trace = os.path.join(src, f"{name}.pt.trace.json.gz")
            if name not in steps[src]["workloads"] or name not in steps[dst]["workloads"] or not os.path.exists(trace):
                continue
            batches = [steps[x]["workloads"][name].get("batch") or FIRST_BATCH[name] for x in (src, dst)]
            if batches[0] != batches[1]:
                print(f"gpu_pair.py: {name} ran at batch {batches[0]} in {src} and {batches[1]} in {dst}: not paired",
                      file=sys.stderr)
                continue
            here_ms = steps[src]["workloads"][name]["step_ms"]
            there_ms = steps[dst]["workloads"][name]["step_ms"]
            dt = DTYPE[name]
            flops = [figure(sheets, stems[x], f"peak.{dt}") for x in (src, dst)]
            bw = [figure(sheets, stems[x], "memory.bandwidth_gbps") for x in (src, dst)]
            base = {"no change": here_ms,
                    "flops ratio": here_ms * flops[0] / flops[1] if None not in flops else None,
                    "bandwidth ratio": here_ms * bw[0] / bw[1] if None not in bw else None}
            # The datasheet by its file: a bare name may be a reference machine's measured figures.
            sheet = os.path.join(args.config_dir, "hardware", stems[dst] + ".ini") if stems[dst] else None
            spread = spread_of(steps[dst]["workloads"][name])
            for mode, target in (("measured", os.path.join(dst, "ceilings.json")), ("datasheet", sheet)):
                if target is None or (mode == "measured" and not os.path.exists(target)):
                    continue
                step = None if args.uncalibrated else here_ms
                m = gap_json(args.mlbench, trace, os.path.join(src, "ceilings.json"), target, step)
                host = host_ms(steps[src]["workloads"][name], args)
                if host and m["here"].get("host_seconds_max") is not None:  # a range: the host's time settles it
                    m = gap_json(args.mlbench, trace, os.path.join(src, "ceilings.json"), target, step, host)
                pick = [r for r in m["ranking"] if r.get("projected")]
                if not pick:
                    continue
                ratio = pick[0]["step_seconds"] / m["here"]["step_seconds"]
                rows[mode].append((name, steps[src]["gpu"], steps[dst]["gpu"], here_ms, there_ms, here_ms * ratio, base,
                                   spread))
                stems_of[(steps[src]["gpu"], steps[dst]["gpu"])] = (stems[src], stems[dst])
    return 0


def per_target(rows):
    """{mode: {target stem: (mean |e| in %, projections, sorted source stems)}}: how far the projections onto each
    GPU have been, as configs/gap/projection_error.ini's [pairs.MODE] sections hold it (`gap --target`'s `checked`
    column, where the trace ran on a GPU these pairs projected from)."""
    out = {}
    for mode, rs in rows.items():
        errs, srcs = {}, {}
        for (_, s, d, _, t, p, _, _) in rs:
            src, dst = stems_of[(s, d)]
            if dst is None:
                continue
            errs.setdefault(dst, []).append(abs(p - t) / t)
            srcs.setdefault(dst, set()).add(src or "?")
        out[mode] = {g: (round(100 * statistics.mean(e), 1), len(e), sorted(srcs[g])) for g, e in errs.items()}
    return out


def check_per_target(path, found):
    """0 when the [pairs.MODE] sections of INI hold exactly `found` (per_target's figures, to 0.1 and the count),
    else 1 with each difference on stderr."""
    import configparser
    cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    cp.read(path)
    bad = 0
    for mode, targets in found.items():
        sec = f"pairs.{mode}"
        listed = dict(cp[sec]) if cp.has_section(sec) else {}
        for g, (mean, n, srcs) in sorted(targets.items()):
            want = f"{mean:.1f} {n} {','.join(srcs)}"
            if listed.pop(g, None) != want:
                print(f"gpu_pair.py: {path} [{sec}] {g} = {cp.get(sec, g, fallback='(missing)')}, measured {want}",
                      file=sys.stderr)
                bad = 1
        for g in listed:
            print(f"gpu_pair.py: {path} [{sec}] {g}: no projection onto it here", file=sys.stderr)
            bad = 1
    return bad


def compare(args):
    if len(args.dirs) % 2:
        print("gpu_pair.py compare: directories come in pairs (A_DIR B_DIR ...)", file=sys.stderr)
        return 2
    sheets = datasheets(args.config_dir)
    rows = {"measured": [], "datasheet": []}
    for a, b in zip(args.dirs[::2], args.dirs[1::2]):
        if project_pair(args, a, b, sheets, rows):
            return 1
    for mode, rs in rows.items():
        if not rs:
            continue
        print(f"{mode} figures on both sides ({len(rs)} projections):")
        for n, s, d, h, t, p, _, (lo, hi) in rs:
            print(f"  {n:16s} {s[:14]:14s} -> {d[:14]:14s} measured {t:7.3f} ms ({lo:.3f}-{hi:.3f})  "
                  f"projected {p:7.3f} ms ({100 * (p - t) / t:+.1f}%)")
        print(stats_line("model", [(p - t) / t for (_, _, _, h, t, p, _, _) in rs]) +
              f"  speed-up |e| {100 * statistics.mean(abs(t / p - 1) for (_, _, _, h, t, p, _, _) in rs):.1f}%")
        for k in ("no change", "flops ratio", "bandwidth ratio"):
            errs = [(bs[k] - t) / t for (_, _, _, h, t, p, bs, _) in rs if bs[k] is not None]
            if errs:
                print(stats_line(k, errs))
        # the issue's bar: on no projection worse than the best of the baselines, chosen per projection
        worse = sum(1 for (*_, t, p, bs, _) in rs
                    if abs(p - t) > min(abs(v - t) for v in bs.values() if v is not None))
        print(f"  the model is worse than the best of the baselines (chosen per projection) on {worse} of {len(rs)}")
        beyond = [beyond_spread(p, t, sp) for (_, _, _, h, t, p, _, sp) in rs]
        print(f"  the target's own processes spread {100 * statistics.mean((hi - lo) / t for (*_, t, _, _, (lo, hi)) in rs):.1f}% "
              f"of its step on average (fastest to slowest);")
        print(f"  the model's error beyond that spread: mean {100 * statistics.mean(beyond):.1f}%, "
              f"max {100 * max(beyond):.1f}% ({sum(1 for b in beyond if b == 0)} of {len(rs)} projections inside it)")
    found = per_target(rows)
    if args.per_target:
        for mode in rows:
            if found.get(mode):
                print(f"[pairs.{mode}]")
                for g, (mean, n, srcs) in sorted(found[mode].items()):
                    print(f"{g} = {mean:.1f} {n} {','.join(srcs)}")
    if args.check_per_target:
        return check_per_target(args.check_per_target, found)
    return 0


# ---- kernels (anywhere) -------------------------------------------------------------

def kernel_rules(config_dir):
    """[(class, compiled regex)] of configs/gap/kernel_classes.ini's [kernel] section, in file order (first match
    wins, case-insensitive, as mlbench's trace reader applies them)."""
    rules, section = [], None
    with open(os.path.join(config_dir, "gap", "kernel_classes.ini")) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "kernel" and "=" in line:
                key, pattern = (x.strip() for x in line.split("=", 1))
                rules.append((key, re.compile(pattern, re.I)))
    return rules


def step_kernels(path, memory_ops=False):
    """[[(name, µs)] per profiler step]: each kernel in the step whose host range launched it; memory_ops: also
    memsets and device-to-device copies (which gap counts with the memory-bound kernels)."""
    ev = json.load(gzip.open(path))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}

    def wanted(e):
        return e.get("cat") == "kernel" or memory_ops and (
            e.get("cat") == "gpu_memset" or e.get("cat") == "gpu_memcpy" and "DtoD" in e.get("name", ""))
    out = [[] for _ in steps]
    for e in sorted((e for e in ev if wanted(e)), key=lambda e: e["ts"]):
        t = launch.get(e.get("args", {}).get("correlation"), e["ts"])
        for i, (a, b) in enumerate(steps):
            if a <= t < b:
                out[i].append((e["name"], e["dur"]))
                break
    return [s for s in out if s]


def kernel_class(rules, name):
    """gemm, conv, attention, nccl; the rest (normalization, softmax, elementwise) memory-bound, as gap's step
    table counts them."""
    for cls, pat in rules:
        if pat.search(name):
            return cls if cls in ("gemm", "conv", "attention", "nccl") else "memory-bound"
    return "memory-bound"


# gap's kernel_seconds kinds as kernel_class names them (transfers, host-device copies, are no kernels)
KIND_CLASS = {"gemm": "gemm", "conv": "conv", "attention": "attention", "memory": "memory-bound",
              "collective": "nccl"}


def is_copy(name):
    """A memset or device copy among step_kernels(memory_ops=True)'s events (Kineto names them so)."""
    return name.startswith(("Memset", "Memcpy"))


def only_kernels(steps):
    """step_kernels(path) from step_kernels(path, memory_ops=True): the kernels, steps without one left out."""
    return [k for k in ([e for e in s if not is_copy(e[0])] for s in steps) if k]


def class_means(rules, steps):
    """{class: mean µs per step} of all the events of [[(name, µs)] per step]."""
    out = {}
    for s in steps:
        for name, us in s:
            c = kernel_class(rules, name) if not is_copy(name) else "memory-bound"
            out[c] = out.get(c, 0.0) + us / len(steps)
    return out


def model_ratios(args, name):
    """{class: (A/B projecting A onto B, A/B projecting B onto A)}: the kernel time per step gap projects
    (kernel_seconds, with measured figures on both sides); {} without --mlbench or ceilings."""
    dirs = (args.a_dir, args.b_dir)
    if not args.mlbench or not all(os.path.exists(os.path.join(d, "ceilings.json")) for d in dirs):
        return {}
    ratios = []
    for src, dst in (dirs, dirs[::-1]):
        m = gap_json(args.mlbench, os.path.join(src, f"{name}.pt.trace.json.gz"), os.path.join(src, "ceilings.json"),
                     os.path.join(dst, "ceilings.json"))
        here, there = m["here"]["kernel_seconds"], m["ranking"][0]["kernel_seconds"]
        ratios.append({k: here[k] / there[k] if src == dirs[0] else there[k] / here[k]
                       for k in KIND_CLASS if here[k] > 0 and there[k] > 0})
    return {KIND_CLASS[k]: (ratios[0][k], ratios[1][k]) for k in ratios[0] if k in ratios[1]}


def kernels(args):
    """Per class, the time of the kernels both traces ran (matched by name and order, per-step medians) on A and
    on B: what each class gained from one GPU to the other, the ground truth of the kernel model; of all the
    kernels (GEMM libraries pick other kernels on another GPU: those do not match); and with --mlbench what the
    model gives for all of them, projecting A onto B and B onto A."""
    import difflib
    rules = kernel_rules(args.config_dir)
    print("per class, ms per step on A / on B = A/B: of the kernels matched, of all kernels (memsets and device "
          "copies\nwith the memory-bound ones); the model's A/B projecting A onto B, B onto A (gap, measured figures)")
    for name in WORKLOADS:
        pa, pb = (os.path.join(d, f"{name}.pt.trace.json.gz") for d in (args.a_dir, args.b_dir))
        if not (os.path.exists(pa) and os.path.exists(pb)):
            continue
        # each trace read once: its kernels for the matching, with memsets and device copies for the sums
        every_a, every_b = step_kernels(pa, memory_ops=True), step_kernels(pb, memory_ops=True)
        sa, sb = (only_kernels(e) for e in (every_a, every_b))
        if not sa or not sb:
            print(f"{name}: no profiler steps with kernels", file=sys.stderr)
            continue
        na, nb = [k for k, _ in sa[0]], [k for k, _ in sb[0]]
        per = {}
        matched = 0
        for i, j, size in difflib.SequenceMatcher(None, na, nb, autojunk=False).get_matching_blocks():
            for k in range(size):
                ta = statistics.median(s[i + k][1] for s in sa if len(s) > i + k)
                tb = statistics.median(s[j + k][1] for s in sb if len(s) > j + k)
                c = per.setdefault(kernel_class(rules, na[i + k]), [0.0, 0.0, 0])
                c[0], c[1], c[2] = c[0] + ta, c[1] + tb, c[2] + 1
                matched += 1
        all_a, all_b = class_means(rules, every_a), class_means(rules, every_b)
        model = model_ratios(args, name)
        print(f"{name}: {matched} of {len(na)} / {len(nb)} kernels per step matched")
        for cls in sorted(set(per) | set(all_a) | set(all_b)):
            ta, tb, n = per.get(cls, (0.0, 0.0, 0))
            line = f"  {cls:13s} {n:4d} matched: " + (f"{ta / 1e3:7.3f} / {tb / 1e3:7.3f} = {ta / tb:.3f}" if tb
                                                       else f"{'-':>25s}")
            xa, xb = all_a.get(cls, 0.0), all_b.get(cls, 0.0)
            line += f"   all: {xa / 1e3:7.3f} / {xb / 1e3:7.3f} = " + (f"{xa / xb:.3f}" if xb else "-")
            if cls in model:
                line += f"   model: {model[cls][0]:.3f}, {model[cls][1]:.3f}"
            print(line)
    return 0


def workload_list(text):
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown workload {', '.join(unknown) or '(none)'}; "
                                         f"known: {', '.join(WORKLOADS)}")
    return names


def main(argv=None, prog=None):
    """The command line; argv without the program's name (default sys.argv[1:]), prog as usage names it."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) >= 3 and argv[0] == "_child":  # _child NAME STEPS [TRACE|-] [BATCH]
        trace = argv[3] if len(argv) > 3 and argv[3] != "-" else None
        batch = int(argv[4]) if len(argv) > 4 else None
        print(json.dumps(child(argv[1], int(argv[2]), trace, batch=batch)))
        return 0
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("outdir")
    c.add_argument("--mlbench", default=shutil.which("mlbench"))
    c.add_argument("--processes", type=int, default=3)
    c.add_argument("--steps", type=int, default=30)
    c.add_argument("--budget", type=float, default=540, help="seconds for the whole collection")
    c.add_argument("--quick-ceilings", action="store_true", help="3 repetitions of 0.1 s per ceiling case")
    c.add_argument("--workloads", type=workload_list, default=FIRST_SET,
                   help=f"comma-separated, of {', '.join(WORKLOADS)} (default: the first three)")
    c.add_argument("--ceilings-filter", default=CEILINGS_FILTER,
                   help="which cases of the default suite to run (mlbench --filter; default: its GPU part)")
    p = sub.add_parser("compare")
    p.add_argument("dirs", nargs="+", metavar="A_DIR B_DIR", help="one or more pairs: the figures are over them all")
    p.add_argument("--mlbench", default=shutil.which("mlbench") or "mlbench")
    p.add_argument("--config-dir", default=os.environ.get("MLBENCH_CONFIG_DIR",
                                                         os.path.join(tree_root() or ".", "configs")))
    p.add_argument("--uncalibrated", action="store_true",
                   help="project the traces' steps as recorded (no --step-ms: the profiler's host time kept)")
    p.add_argument("--per-target", action="store_true",
                   help="per target GPU (datasheet stem) the mean |e| of the projections onto it, their count and "
                        "sources, as configs/gap/projection_error.ini's [pairs.MODE] sections")
    p.add_argument("--check-per-target", metavar="INI",
                   help="exit 1 unless INI's [pairs.MODE] sections hold exactly those figures")
    k = sub.add_parser("kernels", help="per kernel class, the time both traces' matched kernels took on A and B")
    k.add_argument("a_dir")
    k.add_argument("b_dir")
    k.add_argument("--config-dir", default=p.get_default("config_dir"))
    k.add_argument("--mlbench", default=shutil.which("mlbench"),
                   help="with it, the model's A/B per class beside the measured (needs both ceilings.json)")
    args = ap.parse_args(argv)
    return {"collect": collect, "compare": compare, "kernels": kernels}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m mlbench.gpu.pair"))
