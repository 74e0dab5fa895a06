#!/usr/bin/env python3
"""Builds bench/data/neusight_labels.csv from a checkout of NeuSight
(https://github.com/trsharm25/NeuSight, MIT licence, Georgia Institute of
Technology and Microsoft): the per-operator and end-to-end latencies that
NeuSight's authors measured for the same transformer workloads on several
NVIDIA GPUs (scripts/asplos/label/<GPU>/<workload>.csv and .json).

For each workload measured on two or more of the GPUs kept here, one row per operator of
the graph NeuSight traced (one layer plus embeddings and head; layer ops
count num_layer times), with the FLOPs and bytes this script derives from the
recorded shapes (fp32), and one "(step)" row per workload and GPU with the
measured end-to-end latency. bench/project_validate reads it.

With --ceilings, instead: each GPU's measured ceilings from NeuSight's
operator datasets (scripts/asplos/data/dataset/test: the fastest fp32
bmm/linear in FLOP/s, the fastest elementwise add in bytes/s, 3 x 4 bytes per
element), measured apart from the workloads above, for project_validate's
"measured" mode (bench/data/neusight_ceilings.csv). --min-ms MS: the fastest
bmm/linear among operators of MS or more only (a rate held under load: the
experiment docs/gap.md reports under "Held-out GPUs"; not the shipped file).

usage: neusight_extract.py NEUSIGHT_GIT_DIR > bench/data/neusight_labels.csv
       neusight_extract.py --ceilings [--min-ms MS] NEUSIGHT_GIT_DIR > bench/data/neusight_ceilings.csv
stdlib only; reads the repository with `git show`, writes nothing else."""
import ast
import csv
import json
import re
import subprocess
import sys

# NeuSight's directory name -> configs/hardware datasheet stem
GPUS = {
    "NVIDIA_H100_80GB_HBM3": "h100-sxm",
    "NVIDIA_A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA_A100_80GB_PCIe": "a100-pcie-80gb",
    "NVIDIA_L4": "l4",
    "Tesla_T4": "t4",
    "Tesla_V100-PCIE-32GB": "v100-pcie",
    "Tesla_P100-PCIE-16GB": "p100-pcie-16gb",
    "Tesla_P4": "p4",
}
LAYER = re.compile(r"(^|[._])(layer|layers|h|block|blocks)[._]0([._]|$|')")
LINEAR = re.compile(r"dense|query|key|value|decoder|c_fc|c_proj|c_attn|fc[12]|proj|lm_head|seq_relationship|"
                    r"out_proj|q_proj|k_proj|v_proj|mlp")
MEMORY = re.compile(r"add|sub|mul|truediv|div|softmax|gelu|relu|tanh|dropout|LayerNorm|layer_norm|ln_|embeddings|"
                    r"wte|wpe|pow|mean|where|masked_fill|contiguous|permute|transpose|cat|max|min|sum|amax|clamp|full|"
                    r"fill|exp|log|sqrt|rsqrt|neg|cumsum|to")


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def op_work(row):
    """(kind, flops, bytes) of one operator from its recorded shapes."""
    try:
        ins = ast.literal_eval(row["input_shapes"] or "[]")
        out = ast.literal_eval(row["output_shape"] or "()")
    except (ValueError, SyntaxError):
        return "other", 0.0, 0.0
    if not isinstance(out, (tuple, list)) or any(not isinstance(d, int) for d in out):
        out = ()
    ins = [s for s in ins if isinstance(s, list) and all(isinstance(d, int) for d in s)]
    target, name = row["target"], row["Name"]
    in_elems = sum(numel(s) for s in ins)
    out_elems = numel(out) if out else 0
    if re.search(r"addmm|baddbmm|matmul|bmm", target + " " + name):
        # addmm(bias, x, w), baddbmm(input, b1, b2): the inner size is the
        # second input's last; matmul(a, b), bmm(a, b): the first input's last
        first = 1 if "addmm" in target + name or "baddbmm" in target + name else 0
        if len(ins) > first and len(ins[first]) >= 2 and out:
            k = ins[first][-1]
            return "gemm", 2.0 * out_elems * k, 4.0 * (in_elems + out_elems)
    if row["op"] == "call_module" and LINEAR.search(target) and ins and out:
        k, n = ins[0][-1], out[-1]
        return "gemm", 2.0 * out_elems * k, 4.0 * (in_elems + out_elems + k * n)
    if (row["op"] in ("call_module", "call_function", "call_method") and MEMORY.search(target + " " + name)
            and out_elems):
        return "memory", 0.0, 4.0 * (in_elems + out_elems)
    return "other", 0.0, 0.0


def ceilings(repo, min_ms=0.0):
    names = {g.replace("_", " "): stem for g, stem in GPUS.items()}
    names.update({"NVIDIA A100-PCIE-40GB": "a100-pcie-40gb", "Tesla V100-PCIE-32GB": "v100-pcie"})
    flops, bw = {}, {}
    for op in ("bmm", "linear"):
        for r in csv.DictReader(git(repo, "show", f"HEAD:scripts/asplos/data/dataset/test/{op}.csv").splitlines()):
            b, m, n, k = (int(r[x]) for x in "BMNK")
            if float(r["Latency"]) < min_ms:
                continue
            rate = 2.0 * b * m * n * k / (float(r["Latency"]) * 1e-3)
            flops[r["Device"]] = max(flops.get(r["Device"], 0.0), rate)
    for r in csv.DictReader(git(repo, "show", "HEAD:scripts/asplos/data/dataset/test/elem.csv").splitlines()):
        if r["OPName"] == "add":
            rate = 3 * 4.0 * int(r["B"]) * int(r["H"]) / (float(r["Latency"]) * 1e-3)
            bw[r["Device"]] = max(bw.get(r["Device"], 0.0), rate)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["gpu", "fp32_flops", "bw_bytes", "source"])
    for dev in sorted(flops):
        stem = names.get(dev)
        if stem:
            out.writerow([stem, f"{flops[dev]:.6g}", f"{bw.get(dev, 0):.6g}",
                          "NeuSight dataset/test: fastest fp32 bmm/linear" +
                          (f" of {min_ms:g} ms or more" if min_ms else "") + (", elementwise add" if dev in bw else "")])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--ceilings":
        return ceilings(sys.argv[2])
    if len(sys.argv) == 5 and sys.argv[1] == "--ceilings" and sys.argv[2] == "--min-ms":
        return ceilings(sys.argv[4], float(sys.argv[3]))
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    repo = sys.argv[1]
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "scripts/asplos/label/").split("\n")
    have = {}
    for f in files:
        m = re.match(r"scripts/asplos/label/([^/]+)/([^/]+)\.csv$", f)
        if m and m.group(1) in GPUS:
            have.setdefault(m.group(2), set()).add(m.group(1))
    workloads = sorted(w for w, g in have.items() if len(g) >= 2)  # a pair at least
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["workload", "gpu", "op", "kind", "weight", "flops", "bytes", "ms"])
    for w in workloads:
        for g, stem in GPUS.items():
            if g not in have[w]:
                continue
            try:
                meta = json.loads(git(repo, "show", f"HEAD:scripts/asplos/label/{g}/{w}.json"))
                text = git(repo, "show", f"HEAD:scripts/asplos/label/{g}/{w}.csv")
            except subprocess.CalledProcessError:
                print(f"skipped {g}/{w}: not in the checkout", file=sys.stderr)
                continue
            rows = list(csv.DictReader(text.splitlines()))
            layers = int(meta.get("num_layer", 1))
            out.writerow([w, stem, "(step)", "step", 1, 0, 0, f"{float(meta['e2e_latency']):.6g}"])
            for r in rows:
                ms = float(r["latency"] or 0)
                if ms <= 0:
                    continue
                kind, flops, nbytes = op_work(r)
                in_layer = LAYER.search(r["target"]) or LAYER.search(r.get("meta", ""))
                out.writerow([w, stem, r["Name"], kind, layers if in_layer else 1, f"{flops:.6g}", f"{nbytes:.6g}",
                              f"{ms:.6g}"])


if __name__ == "__main__":
    main()
