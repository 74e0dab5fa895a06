#!/usr/bin/env python3
"""Writes a large, realistic PyTorch profiler (Kineto) trace for tests and
benchmarks of the mlbench trace reader, and a summary of what it wrote.

    gen_large_trace.py --out trace.json [--mb 300] [--seed 1] [--summary s.json]

The events copy the shape of real Kineto output (see the fixtures under
shared/fixtures/kineto): ProfilerStep#N and enumerate(DataLoader) annotations,
cpu_op records with Input Dims / Input type / Concrete Inputs, cudaLaunchKernel
runtime calls with correlation ids and ac2g flow events, kernels with grid/
block/occupancy args on a compute stream, NCCL all-reduce kernels with their
collective args on a second stream (overlapping compute), pinned H2D batch
copies, pageable D2H copies, memsets, a cudaStreamSynchronize per step, and
metadata/instant events. GPU events of a step are written after the next
step's CPU events and shuffled, so the file is not in time order (as real
traces are not).

The summary holds the expected figures (counts per kernel class, copy bytes,
busy time as a union over streams, FLOPs) that tests compare the reader with.
Standard library only; never commit a generated trace.
"""
import argparse
import gzip
import json
import random
import sys

GEMM = ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4>"
        "(cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4::Params)")
CONV = ("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16"
        "_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer")
ELEM = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3>)")
BN = "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct, float const*)"
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"

PID, TID, BWD_TID = 4242, 4242, 4250
STREAM, COMM_STREAM = 7, 20


def us(ns):
    """Integer ns as Kineto's microseconds text with 3 decimals."""
    return "%d.%03d" % divmod(ns, 1000)


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.corr = 1000
        self.ext = 1
        self.t = 1_700_000_000_000_000_000 // 1000 * 1000  # ns, a realistic epoch
        self.sum = {"kernels": {"gemm": 0, "conv": 0, "nccl": 0, "other": 0},
                    "memcpy_bytes": {"h2d pinned": 0, "d2h pageable": 0},
                    "memcpys": 0, "memsets": 0, "memset_bytes": 0, "steps": 0,
                    "launches": 0, "syncs": 0, "dataloader": 0, "busy_ns": 0,
                    "gpu_events": 0, "gemm_flops": 0, "conv_flops": 0,
                    "allreduce_bytes": 0, "step_ns": []}

    def x(self, cat, name, ts, dur, args, pid=PID, tid=TID):
        return ('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                '"args": %s}' % (cat, json.dumps(name), pid, tid, us(ts), us(dur), args))

    def flow(self, ph, corr, ts, pid, tid):
        bp = ', "bp": "e"' if ph == "f" else ""
        return ('{"ph": "%s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", '
                '"name": "ac2g"%s}' % (ph, corr, pid, tid, us(ts), bp))

    def kernel_args(self, corr, ext, stream, extra=""):
        return ('{"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": %d, '
                '"correlation": %d, "registers per thread": 96, "shared memory": 41744, '
                '"blocks per SM": 2.962963, "warps per SM": 11.851851, "grid": [160, 1, 1], '
                '"block": [128, 1, 1], "est. achieved occupancy %%": 25%s}' % (ext, stream, corr, extra))

    def launch(self, cpu, gpu, now, name, cls, gpu_free, dur, tid=TID, ext=None, stream=STREAM,
               extra=""):
        """cudaLaunchKernel at `now` on the host and its kernel on `stream`."""
        self.corr += 1
        corr = self.corr
        ext = ext if ext is not None else self.ext
        ldur = self.rng.randrange(3000, 9000)
        cpu.append(self.x("cuda_runtime", "cudaLaunchKernel", now, ldur,
                          '{"External id": %d, "cbid": 211, "correlation": %d}' % (ext, corr),
                          tid=tid))
        cpu.append(self.flow("s", corr, now, PID, tid))
        start = max(now + 5000, gpu_free) + self.rng.randrange(500, 3000)
        gpu.append(self.x("kernel", name, start, dur, self.kernel_args(corr, ext, stream, extra),
                          pid=0, tid=stream))
        gpu.append(self.flow("f", corr, start, 0, stream))
        self.sum["kernels"][cls] += 1
        self.sum["launches"] += 1
        self.sum["gpu_events"] += 1
        return now + ldur, (start, start + dur)

    def op(self, name, ts, dur, dims, types, concrete, tid=TID):
        self.ext += 1
        return self.x("cpu_op", name, ts, dur,
                      '{"External id": %d, "Record function id": 0, "Concrete Inputs": %s, '
                      '"Input type": %s, "Input Strides": [], "Input Dims": %s, "Ev Idx": %d}'
                      % (self.ext, json.dumps(concrete), json.dumps(types), json.dumps(dims),
                         self.ext))

    def step(self, n, layers):
        rng = self.rng
        cpu, gpu, iv = [], [], []
        step_start = self.t
        now = step_start + 2000
        # Data loading: the GPU idles while the host waits for a batch.
        dl = rng.randrange(200_000, 900_000)
        cpu.append(self.x("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                          now, dl, '{"External id": %d}' % self.ext))
        self.sum["dataloader"] += 1
        now += dl + 1000
        # The batch goes to the GPU (pinned memory).
        self.corr += 1
        nbytes = 4 * 1024 * 1024
        cpu.append(self.x("cuda_runtime", "cudaMemcpyAsync", now, 12000,
                          '{"External id": %d, "cbid": 51, "correlation": %d}' % (self.ext, self.corr)))
        start = now + 8000
        gpu.append(self.x("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", start, 180_000,
                          '{"External id": %d, "device": 0, "context": 1, "stream": %d, '
                          '"correlation": %d, "bytes": %d, "memory bandwidth (GB/s)": 23.3}'
                          % (self.ext, STREAM, self.corr, nbytes)))
        iv.append((start, start + 180_000))
        self.sum["memcpy_bytes"]["h2d pinned"] += nbytes
        self.sum["memcpys"] += 1
        self.sum["gpu_events"] += 1
        gpu_free = start + 180_000
        now += 14000
        comm_free = 0
        for layer in range(layers):
            kind = layer % 4
            if kind == 0:  # linear -> addmm (the leaf op launches the GEMM)
                m, k, nn = 1024, 4096, 4096
                opdur = rng.randrange(40_000, 90_000)
                cpu.append(self.op("aten::linear", now, opdur, [[m, k], [nn, k], [nn]],
                                   ["float", "float", "float"], ["", "", ""]))
                cpu.append(self.op("aten::addmm", now + 2000, opdur - 4000,
                                   [[nn], [m, k], [k, nn], [], []],
                                   ["float", "float", "float", "Scalar", "Scalar"],
                                   ["", "", "", "1", "1"]))
                self.sum["gemm_flops"] += 2 * m * nn * k
                end, kv = self.launch(cpu, gpu, now + 10_000, GEMM, "gemm", gpu_free,
                                      rng.randrange(300_000, 600_000))
            elif kind == 1:  # conv2d -> convolution -> _convolution -> cudnn_convolution
                N, C, H, K, R = 32, 64, 56, 64, 3
                opdur = rng.randrange(60_000, 120_000)
                dims = [[N, C, H, H], [K, C, R, R], []]
                cpu.append(self.op("aten::conv2d", now, opdur, dims, ["float", "float", ""],
                                   ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]))
                cpu.append(self.op("aten::convolution", now + 1000, opdur - 2000, dims,
                                   ["float", "float", ""],
                                   ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]))
                cpu.append(self.op("aten::cudnn_convolution", now + 3000, opdur - 6000,
                                   [[N, C, H, H], [K, C, R, R]], ["float", "float"],
                                   ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"]))
                self.sum["conv_flops"] += 2 * N * K * C * R * R * H * H
                end, kv = self.launch(cpu, gpu, now + 12_000, CONV, "conv", gpu_free,
                                      rng.randrange(400_000, 800_000))
            elif kind == 2:  # batch norm + add: elementwise kernels (class other)
                opdur = 0
                end, kv = self.launch(cpu, gpu, now + 6000, BN, "other", gpu_free,
                                      rng.randrange(50_000, 150_000))
                cpu.append(self.op("aten::batch_norm", now, end - now + 1000, [[32, 64, 56, 56]],
                                   ["float"], [""]))
                iv.append(kv)
                gpu_free = kv[1]
                cpu.append(self.op("aten::add_", end + 1000, 15_000, [[32, 64, 56, 56], [32, 64, 56, 56], []],
                                   ["float", "float", "Scalar"], ["", "", "1"]))
                end, kv = self.launch(cpu, gpu, end + 3000, ELEM, "other", gpu_free,
                                      rng.randrange(20_000, 60_000))
            else:  # gradient all-reduce on the comm stream, overlapping compute
                nel = 2_000_000 + 1000 * layer
                annot = self.x("user_annotation", "nccl:all_reduce", now, 30_000,
                               '{"External id": %d}' % self.ext)
                cpu.append(annot)
                extra = (', "Collective name": "allreduce", "In msg nelems": %d, "Out msg nelems": %d, '
                         '"Group size": 8, "dtype": "Float", "In split size": "[]", "Out split size": "[]", '
                         '"Process Group Name": "0", "Process Group Description": "default_pg", '
                         '"Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"' % (nel, nel))
                end, kv = self.launch(cpu, gpu, now + 2000, NCCL, "nccl", max(comm_free, gpu_free - 300_000),
                                      rng.randrange(500_000, 1_500_000), stream=COMM_STREAM, extra=extra)
                comm_free = kv[1]
                self.sum["allreduce_bytes"] += nel * 4
                iv.append(kv)
                now = end + rng.randrange(2000, 8000)
                continue
            iv.append(kv)
            gpu_free = kv[1]
            now = max(end, now + opdur) + rng.randrange(5_000, 40_000)
            if layer % 16 == 14:
                self.corr += 1
                start = max(now, gpu_free) + 2000
                gpu.append(self.x("gpu_memset", "Memset (Device)", start, 4000,
                                  '{"External id": %d, "device": 0, "context": 1, "stream": %d, '
                                  '"correlation": %d, "bytes": 65536, "memory bandwidth (GB/s)": 16.4}'
                                  % (self.ext, STREAM, self.corr)))
                iv.append((start, start + 4000))
                gpu_free = start + 4000
                self.sum["memsets"] += 1
                self.sum["memset_bytes"] += 65536
                self.sum["gpu_events"] += 1
        # Loss to the host (pageable), then the host waits for the GPU.
        self.corr += 1
        start = max(now, gpu_free, comm_free) + 3000
        gpu.append(self.x("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", start, 3000,
                          '{"External id": %d, "device": 0, "context": 1, "stream": %d, '
                          '"correlation": %d, "bytes": 4, "memory bandwidth (GB/s)": 0.001}'
                          % (self.ext, STREAM, self.corr)))
        iv.append((start, start + 3000))
        self.sum["memcpy_bytes"]["d2h pageable"] += 4
        self.sum["memcpys"] += 1
        self.sum["gpu_events"] += 1
        gpu_end = start + 3000
        self.corr += 1
        cpu.append(self.x("cuda_runtime", "cudaStreamSynchronize", now, gpu_end - now + 2000,
                          '{"External id": %d, "cbid": 131, "correlation": %d}' % (self.ext, self.corr)))
        self.sum["syncs"] += 1
        step_end = gpu_end + 5000
        cpu.insert(0, self.x("user_annotation", "ProfilerStep#%d" % n, step_start, step_end - step_start,
                             '{"External id": %d, "Record function id": 0}' % self.ext))
        self.sum["steps"] += 1
        self.sum["step_ns"].append(step_end - step_start)
        self.sum["busy_ns"] += union(iv)
        self.t = step_end + 1000
        rng.shuffle(gpu)
        return cpu, gpu


def union(iv):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="trace path (.json or .json.gz)")
    ap.add_argument("--mb", type=float, default=300, help="approximate uncompressed size in MB")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=64, help="ops per step")
    ap.add_argument("--summary", help="write the expected figures here (JSON)")
    a = ap.parse_args()
    g = Gen(a.seed)
    target = int(a.mb * 1e6)
    opener = gzip.open if a.out.endswith(".gz") else open
    written = 0
    with opener(a.out, "wt", encoding="utf-8", newline="\n") as f:
        head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", '
                '"totalGlobalMem": 85097971712, "computeMajor": 8, "computeMinor": 0, "numSms": 108}\n  ],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n'
                '  "record_shapes": 1,\n  "traceEvents": [\n')
        f.write(head)
        meta = ['{"name": "process_name", "ph": "M", "ts": %s, "pid": %d, "tid": 0, "args": {"name": "python3"}}'
                % (us(g.t), PID),
                '{"name": "process_labels", "ph": "M", "ts": %s, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}'
                % us(g.t)]
        meta_text = "  " + ",\n  ".join(meta)
        f.write(meta_text)
        written = len(head) + len(meta_text)
        pending_gpu = []
        n = 1
        while written < target:
            cpu, gpu = g.step(n, a.layers)
            chunk = ",\n  " + ",\n  ".join(cpu + pending_gpu)
            f.write(chunk)
            written += len(chunk)
            pending_gpu = gpu
            n += 1
        tail = ",\n  " + ",\n  ".join(pending_gpu) if pending_gpu else ""
        tail += (',\n  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": %s}\n'
                 '  ],\n  "traceName": "gen_large_trace.py",\n  "displayTimeUnit": "ms",\n'
                 '  "baseTimeNanoseconds": 1700000000000000000\n}\n' % us(g.t))
        f.write(tail)
        written += len(tail)
    s = g.sum
    d = sorted(s.pop("step_ns"))
    s["step_median_ns"] = d[len(d) // 2] if len(d) % 2 else (d[len(d) // 2 - 1] + d[len(d) // 2]) / 2
    s["json_bytes"] = written
    if a.summary:
        with open(a.summary, "w", encoding="utf-8") as f:
            json.dump(s, f, indent=1)
    print("wrote %s: %.1f MB, %d steps, %d GPU events" % (a.out, written / 1e6, s["steps"], s["gpu_events"]),
          file=sys.stderr)


if __name__ == "__main__":
    main()
