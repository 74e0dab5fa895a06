#!/usr/bin/env python3
"""Writes a large, realistic PyTorch profiler (Kineto) trace for tests and
benchmarks of the mlbench trace reader, and a summary of what it wrote.

    gen_large_trace.py --out trace.json [--mb 300] [--seed 1] [--summary s.json]
    gen_large_trace.py --out trace.json --pattern NAME [--steps 8] [--summary s.json] [--record-shapes]

--pattern writes a small trace whose step has a known bottleneck (the step
table and diagnosis of `mlbench gap` must name it): dataloader,
compute-tensor, compute-memory, launch-bound, sync-bound, copy-bound,
comm-bound, cpu-bound, balanced, overlapped-launch, runahead, runahead-after,
compiled (torch.compile's Triton kernels), graphed (the same replayed from a
CUDA graph). Its summary holds
"expect": the pattern's finding id (null = balanced) and the step's known
shares by construction. --record-shapes (compute-memory) wraps its batch-norm
and add kernels in cpu_ops with Input Dims/Input type; "expect.memory_bound"
then holds their bytes (counted here by the model of docs/traces.md), the
GPU time of their kernels, bytes/s, and the share of memory-bound kernel
time that has shapes; for compiled (which wants it), "expect.gemm" the
matmuls' FLOPs by hand and their kernels' time.

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
                    "gpu_events": 0, "gemm_flops": 0, "conv_flops": 0, "memory_bytes": 0,
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
                # bytes (docs/traces.md): batch_norm reads its input and writes
                # one as large; add_ reads both inputs and writes in place
                act = 32 * 64 * 56 * 56 * 4
                self.sum["memory_bytes"] += 2 * act + 2 * act
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


# ---- --pattern: small traces with a known bottleneck ---------------------------

ELEM_BF16 = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, "
             "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
             "at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::BFloat16>, at::detail::Array<char*, 3>)")
BN_BF16 = "void at::native::batch_norm_collect_statistics_channels_last_kernel<c10::BFloat16, float, float, 4>(...)"
ADAM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::TensorListMetadata<4>, FusedAdamMathFunctor>(...)"
CONV_BF16 = "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x256x64_cga1x1x1_execute_kernel__5x_cudnn"
GEMM_BF16 = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
TINY = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(...)"


class PatternGen:
    """One host thread and one compute stream (plus a comm stream), all times
    in integer ns; every event written has a reason in the pattern."""

    def __init__(self, seed, record_shapes=False):
        self.rng = random.Random(seed)
        self.t = 1_700_000_000_000_000_000 // 1000 * 1000
        self.corr = 1
        self.cpu, self.gpu = [], []
        self.gpu_free = 0
        self.comm_free = 0
        self.kernels = 0
        self.record_shapes = record_shapes
        # memory-bound ops with shapes: bytes by the model of docs/traces.md
        # and their kernels' time; all memory-bound kernel time
        self.mem = {"bytes": 0, "shaped_ns": 0, "kernel_ns": 0, "ops": 0}
        self.gemm = {"flops": 0, "ns": 0}  # matmul ops with shapes: FLOPs by hand, their kernels' time
        self.graph = None  # inside graph_replay: the replay's correlation id

    def mem_launch(self, name, kdur, ldur, op=None, runtime="cudaLaunchKernel", counted=True):
        """A memory-bound kernel; with record_shapes, launched inside the cpu_op
        op = (name, dims, types, model) whose bytes are counted here by hand:
        tensor inputs once each, plus the largest input again for "out"
        ("inplace", and Inductor's kernels, whose outputs are arguments too:
        each tensor once). counted=False: an op whose bytes the reader cannot
        know (more arguments than it keeps): its shapes are written, its
        bytes and time left out of expect.memory_bound."""
        self.mem["kernel_ns"] += kdur
        if not (self.record_shapes and op):
            self.launch(name, kdur, ldur, runtime=runtime)
            return
        opname, dims, types, model = op
        size = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4}
        sizes = []
        for d, t in zip(dims, types):
            if t in size:
                n = 1
                for x in d:
                    n *= x
                sizes.append(n * size[t])
        self.op_launch(opname, dims, types, name, kdur, ldur, runtime)
        if not counted:
            self.mem["unknown_ns"] = self.mem.get("unknown_ns", 0) + kdur
            return
        self.mem["bytes"] += sum(sizes) + (max(sizes) if model == "out" else 0)
        self.mem["shaped_ns"] += kdur
        self.mem["ops"] += 1

    def op_launch(self, opname, dims, types, name, kdur, ldur, runtime="cudaLaunchKernel"):
        """A kernel launched inside the cpu_op `opname` with Input Dims / Input type."""
        if self.graph is not None:  # a replay records no ops
            self.launch(name, kdur, ldur, runtime=runtime)
            return
        start = self.now
        self.now += 1000
        self.launch(name, kdur, ldur, runtime=runtime)
        self.now += 1000
        self.cpu.append(self.x("cpu_op", opname, start, self.now - start,
                               '{"Input Dims": %s, "Input type": %s}' % (json.dumps(dims), json.dumps(types))))
        self.now += 1000  # the op has ended before the next launch

    def gemm_launch(self, name, kdur, ldur, opname, dims, types, flops, runtime="cudaLaunchKernel"):
        """A matmul kernel in its op; its FLOPs counted here by hand (2 M N K)."""
        self.op_launch(opname, dims, types, name, kdur, ldur, runtime)
        self.gemm["flops"] += flops
        self.gemm["ns"] += kdur

    def x(self, cat, name, ts, dur, args="{}", pid=PID, tid=TID):
        return ('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                '"args": %s}' % (cat, json.dumps(name), pid, tid, us(ts), us(dur), args))

    def launch(self, name, kdur, ldur=5000, stream=STREAM, extra="", runtime="cudaLaunchKernel"):
        """cudaLaunchKernel (or the driver's cuLaunchKernel, as Triton launches)
        for ldur ns at now; the kernel runs when the stream is free."""
        if self.graph is not None:  # captured in a CUDA graph: the replay's correlation id, no launch call
            corr, ldur = self.graph, 0
        else:
            self.corr += 1
            corr = self.corr
            cat, cbid = ("cuda_driver", 307) if runtime.startswith("cuLaunch") else ("cuda_runtime", 211)
            self.cpu.append(self.x(cat, runtime, self.now, ldur, '{"cbid": %d, "correlation": %d}' % (cbid, corr)))
        free = self.comm_free if stream == COMM_STREAM else self.gpu_free
        start = max(self.now + 2000, free)
        self.first_gpu = getattr(self, "first_gpu", start)
        self.gpu.append(self.x("kernel", name, start, kdur,
                               '{"device": 0, "stream": %d, "correlation": %d%s}' % (stream, corr, extra),
                               pid=0, tid=stream))
        if stream == COMM_STREAM:
            self.comm_free = start + kdur
        else:
            self.gpu_free = start + kdur
        self.kernels += 1
        self.now += ldur

    def graph_replay(self, body):
        """cudaGraphLaunch: the kernels `body` launches, captured in a CUDA
        graph earlier, run under the replay's one correlation id; no op or
        launch call of theirs is in the trace."""
        self.corr += 1
        self.graph = self.corr
        self.cpu.append(self.x("cuda_runtime", "cudaGraphLaunch", self.now, 20_000,
                               '{"cbid": 311, "correlation": %d}' % self.corr))
        self.now += 2000
        body(self)
        self.graph = None
        self.now += 18_000

    def copy(self, kind, nbytes, dur, blocking=False):
        """A copy on the compute stream; blocking = cudaMemcpy (the host waits for it)."""
        self.corr += 1
        start = max(self.now + 2000, self.gpu_free)
        name = {"h2d pageable": "Memcpy HtoD (Pageable -> Device)", "h2d pinned": "Memcpy HtoD (Pinned -> Device)",
                "d2h pageable": "Memcpy DtoH (Device -> Pageable)"}[kind]
        self.gpu.append(self.x("gpu_memcpy", name, start, dur,
                               '{"device": 0, "stream": %d, "correlation": %d, "bytes": %d}'
                               % (STREAM, self.corr, nbytes), pid=0, tid=STREAM))
        self.gpu_free = start + dur
        if blocking:
            end = self.gpu_free + 1000
            self.cpu.append(self.x("cuda_runtime", "cudaMemcpy", self.now, end - self.now,
                                   '{"cbid": 31, "correlation": %d}' % self.corr))
            self.now = end
        else:
            self.cpu.append(self.x("cuda_runtime", "cudaMemcpyAsync", self.now, 4000,
                                   '{"cbid": 51, "correlation": %d}' % self.corr))
            self.now += 4000

    def sync(self, extra_wait=0, until=None, name="cudaStreamSynchronize"):
        """cudaStreamSynchronize: returns when the GPU is done (+ extra_wait);
        with `until`, cudaEventSynchronize on an event reached at that time."""
        if until is not None:
            end, name = max(until, self.now + 1000), "cudaEventSynchronize"
        else:
            end = max(self.now + 2000, self.gpu_free, self.comm_free) + 1000 + extra_wait
        self.corr += 1
        self.cpu.append(self.x("cuda_runtime", name, self.now, end - self.now,
                               '{"cbid": 131, "correlation": %d}' % self.corr))
        self.now = end

    def dataloader(self, dur):
        self.cpu.append(self.x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                               self.now, dur))
        self.now += dur

    def host(self, dur):
        """Python, autograd, optimizer bookkeeping: recorded as a cpu_op only."""
        self.cpu.append(self.x("cpu_op", "aten::empty_strided", self.now, dur))
        self.now += dur

    def step(self, n, body, sync=True, closing=False):
        """One ProfilerStep; closing: the loop never synchronises, and the
        profiler's closing synchronize lands in this (the last) step."""
        start = self.t
        self.now = start + 1000
        body(self)
        self.gpu_done = self.gpu_free  # where this step's GPU work ends (one compute stream)
        if sync:
            self.sync()
        elif closing:
            self.sync(name="cudaDeviceSynchronize")
        end = self.now + 1000
        self.cpu.append(self.x("user_annotation", "ProfilerStep#%d" % n, start, end - start))
        self.t = end + 500


def p_dataloader(g):
    g.dataloader(40_000_000)  # a slow single-process DataLoader: 40 ms
    g.copy("h2d pinned", 4 << 20, 200_000)
    for i in range(40):
        g.launch(CONV_BF16 if i % 2 else BN_BF16, 60_000, 6000)
    g.launch(ADAM, 100_000, 6000)


def p_compute_tensor(g):
    for i in range(60):
        g.launch(GEMM_BF16 if i % 3 else CONV_BF16, 400_000, 6000)
        if i % 6 == 0:
            g.launch(ELEM_BF16, 20_000, 6000)


def p_compute_memory(g):
    """The ResNet look-alike: ~3 ms of host work before the first kernel
    (GPU idle ~16%), convolutions about a third of the step, batch
    norm/ReLU/adds/optimizer about half, and a final synchronize that waits
    ~4 ms on the busy GPU (not a sync bottleneck)."""
    g.host(3_000_000)
    act = [32, 64, 56, 56]
    bn = ("aten::native_batch_norm", [act, [64], [64], [64], [64], [], [], []],
          ["c10::BFloat16", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"], "out")
    add = ("aten::add_", [act, act, []], ["c10::BFloat16", "c10::BFloat16", "Scalar"], "inplace")
    for i in range(60):
        g.launch(CONV_BF16, 105_000, 5000)
        g.mem_launch(BN_BF16, 85_000, 5000, bn)
        g.mem_launch(ELEM_BF16, 70_000, 5000, add)
    g.mem_launch(ADAM, 400_000, 5000)  # foreach lists record no dtype: time only
    g.host(max(0, g.gpu_free - g.now - 4_000_000))  # the host runs ahead, then waits ~4 ms in the sync


def p_launch_bound(g):
    """Host overhead: ~250 kernels of a few us per step, Python/autograd
    between them; loss.item() at the end (a 4-byte copy and a short wait)."""
    for i in range(250):
        g.host(40_000)
        g.launch(TINY, 2000, 8000)
    g.copy("d2h pageable", 4, 2000, blocking=True)


def p_sync_bound(g):
    """The host blocks in syncs while the GPU has nothing to do (waiting on
    an event another process records)."""
    for i in range(20):
        g.launch(ELEM_BF16, 30_000, 6000)
        g.sync(extra_wait=800_000)
        g.host(20_000)


def p_copy_bound(g):
    for i in range(4):
        g.copy("h2d pageable", 64 << 20, 5_000_000)
        g.launch(ELEM_BF16, 100_000, 6000)


def p_comm_bound(g):
    extra = (', "Collective name": "allreduce", "In msg nelems": 50000000, "Out msg nelems": 50000000, '
             '"Group size": 8, "dtype": "BFloat16"')
    for i in range(10):
        g.launch(GEMM_BF16, 200_000, 6000)
    for i in range(4):
        g.launch(NCCL, 8_000_000, 6000, stream=COMM_STREAM, extra=extra)


def p_cpu_bound(g):
    """Host compute between a few long kernels (CPU augmentation in the loop)."""
    for i in range(5):
        g.host(6_000_000)
        g.launch(CONV_BF16, 500_000, 6000)


def p_balanced(g):
    g.dataloader(3_000_000)                     # ~18%
    g.copy("h2d pinned", 8 << 20, 1_200_000)    # ~7% copy
    for i in range(10):
        g.launch(GEMM_BF16 if i % 2 else ELEM_BF16, 650_000, 6000)  # ~40% GPU compute
    g.host(max(0, g.gpu_free - g.now) + 4_000_000)  # host code after the GPU is done: ~25%
    g.launch(ELEM_BF16, 50_000, 6000)
    g.sync(extra_wait=1_200_000)               # ~7% sync


LAYER_NORM = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, true>(int, float, ...)"
GELU = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(...)::{lambda(float)#1}, ...>"
ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)")


def p_runahead(g):
    """A LayerNorm/GELU/residual chain on 65536x1024 fp32 tensors that never
    synchronises (no .item()): the host launches a step's 24 kernels in
    ~0.8 ms, the GPU takes ~5.6 ms to run them, so each ProfilerStep window
    holds the launches of its step and the kernels of earlier ones; the
    profiler's closing synchronize lands in the last step. Bytes as
    docs/traces.md counts them (inputs once + one output)."""
    g.host(500_000)
    x = [65536, 1024]
    ln = ("aten::native_layer_norm", [x, [1024], [1024], [1024], []], ["float", "float", "float", "float", "Scalar"],
          "out")
    gelu = ("aten::gelu", [x, []], ["float", "Scalar"], "out")
    add = ("aten::add", [x, x, []], ["float", "float", "Scalar"], "out")
    for i in range(8):
        g.mem_launch(LAYER_NORM, 205_000, 8000, ln)
        g.mem_launch(GELU, 200_000, 8000, gelu)
        g.mem_launch(ADD, 300_000, 8000, add)


NVJET = "nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopA_TNT"


def p_compiled(g):
    """A torch.compile'd (Inductor) MLP block in bf16, GPU-bound: per layer a
    cuBLAS matmul Inductor calls as aten::mm, a Triton template matmul
    (triton_tem_fused_mm_*, max-autotune), and Triton pointwise, reduction
    and persistent-reduction kernels, each launched with cuLaunchKernel inside
    a cpu_op of its own name whose Input Dims are the kernel's arguments,
    outputs included, and its element counts (Scalar); then the fused
    optimizer's foreach kernel (triton_for_*). Two names carry the aten ops
    Inductor fused (convolution, _scaled_dot_product_efficient_attention):
    they are elementwise kernels, not a convolution or attention."""
    bf16, f32 = "c10::BFloat16", "float"
    x, h = [8192, 1024], [8192, 4096]
    region = g.now  # torch.compile's code runs inside its "Torch-Compiled Region" (a cpu_op from torch 2.1)
    for i in range(4):
        g.gemm_launch(NVJET, 500_000, 6000, "aten::mm", [x, [1024, 4096]], [bf16, bf16], 2 * 8192 * 1024 * 4096)
        name = "triton_poi_fused_convolution_gelu_%d" % (4 * i)
        g.mem_launch(name, 160_000, 4000, (name, [h, [4096], h, []], [bf16, bf16, bf16, "Scalar"], "inplace"),
                     runtime="cuLaunchKernel")
        name = "triton_tem_fused_mm_%d" % (4 * i + 1)
        g.gemm_launch(name, 520_000, 4000, name, [h, [4096, 1024], x], [bf16, bf16, bf16], 2 * 8192 * 4096 * 1024,
                      runtime="cuLaunchKernel")
        name = "triton_red_fused_add_native_layer_norm_%d" % (4 * i + 2)
        g.mem_launch(name, 70_000, 4000, (name, [x, x, [1024], [1024], x, [8192, 1], [8192, 1], [], []],
                                         [bf16, bf16, bf16, bf16, bf16, f32, f32, "Scalar", "Scalar"], "inplace"),
                     runtime="cuLaunchKernel")
        name = "triton_per_fused__scaled_dot_product_efficient_attention_%d" % (4 * i + 3)
        g.mem_launch(name, 40_000, 4000, (name, [x, x, [], []], [bf16, bf16, "Scalar", "Scalar"], "inplace"),
                     runtime="cuLaunchKernel")
    params = [[1024, 4096]] * 8
    g.mem_launch("triton_for_fused_16", 90_000, 4000,
                 ("triton_for_fused_16", params * 3, [f32] * 24, "inplace"), runtime="cuLaunchKernel")
    g.mem_launch("triton_for_fused_17", 30_000, 4000,  # 32 parameters x 3 lists: 96 arguments
                 ("triton_for_fused_17", [[256]] * 96, [f32] * 96, "inplace"), runtime="cuLaunchKernel")
    # the optimizer's last foreach kernel: 100 parameters x 3 lists = 300 arguments, more than the reader keeps
    g.mem_launch("triton_for_fused_18", 20_000, 4000,
                 ("triton_for_fused_18", [[64]] * 300, [f32] * 300, "inplace"), runtime="cuLaunchKernel", counted=False)
    g.cpu.append(g.x("cpu_op", "Torch-Compiled Region: 0/0", region, g.now - region))


def p_graphed(g):
    """The compiled step of p_compiled as torch.compile(mode="reduce-overhead")
    runs it: replayed from a CUDA graph, one cudaGraphLaunch per step."""
    g.graph_replay(p_compiled)


def p_overlapped_launch(g):
    """Many launches and a sync, all hidden behind GPU work: the host waits
    on an event after kernel A while B and the small kernels still run, and
    the next step's launches queue behind them (no drain per step). Only the
    trace's very first launch finds the GPU idle."""
    g.launch(GEMM_BF16, 3_000_000, 6000)
    a_end = g.gpu_free
    g.launch(GEMM_BF16, 3_000_000, 6000)
    g.sync(until=a_end)
    for i in range(200):
        g.launch(ELEM_BF16 if i % 2 else GEMM_BF16, 40_000, 6000)


PATTERNS = {
    "dataloader": (p_dataloader, "data_loading_bound"),
    "compute-tensor": (p_compute_tensor, "gpu_compute_bound"),
    "compute-memory": (p_compute_memory, "gpu_compute_bound"),
    "launch-bound": (p_launch_bound, "launch_bound"),
    "sync-bound": (p_sync_bound, "sync_bound"),
    "copy-bound": (p_copy_bound, "copy_bound"),
    "comm-bound": (p_comm_bound, "communication_bound"),
    "cpu-bound": (p_cpu_bound, "cpu_compute_bound"),
    "balanced": (p_balanced, None),
    "overlapped-launch": (p_overlapped_launch, "gpu_compute_bound"),
    "runahead": (p_runahead, "gpu_compute_bound"),
    "runahead-after": (p_runahead, "gpu_compute_bound"),
    "compiled": (p_compiled, "gpu_compute_bound"),
    "graphed": (p_graphed, "gpu_compute_bound"),
}
# loops that never wait for the GPU at the end of a step; the run-ahead chain's closing synchronize lands in its
# last step ("runahead", as issue 31's traces showed) or after it ("runahead-after", prof.step() before the stop)
NO_SYNC = ("overlapped-launch", "runahead", "runahead-after")


def write_pattern(out, pattern, steps, seed, summary, record_shapes=False):
    body, finding = PATTERNS[pattern]
    g = PatternGen(seed, record_shapes)
    for n in range(1, steps + 1):
        g.step(n, body, sync=pattern not in NO_SYNC, closing=pattern == "runahead" and n == steps)
    if pattern == "runahead-after":
        g.now = g.t
        g.sync(name="cudaDeviceSynchronize")
    head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA H100 80GB HBM3", '
            '"totalGlobalMem": 85045379072, "computeMajor": 9, "computeMinor": 0, "numSms": 132}\n  ],\n'
            '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n%s  "traceEvents": [\n  '
            % ('  "record_shapes": 1,\n' if record_shapes else ''))
    tail = '\n  ],\n  "traceName": "gen_large_trace.py --pattern %s"\n}\n' % pattern
    events = g.cpu + g.gpu
    random.Random(seed).shuffle(events)  # file order is not time order
    opener = gzip.open if out.endswith(".gz") else open
    with opener(out, "wt", encoding="utf-8", newline="\n") as f:
        f.write(head + ",\n  ".join(events) + tail)
    if summary:
        with open(summary, "w", encoding="utf-8") as f:
            expect = {"finding": finding}
            if record_shapes and g.mem["ops"]:
                expect["memory_bound"] = {"bytes": g.mem["bytes"], "seconds": g.mem["shaped_ns"] / 1e9,
                                          "bytes_per_s": g.mem["bytes"] / (g.mem["shaped_ns"] / 1e9),
                                          "shaped_share": g.mem["shaped_ns"] / g.mem["kernel_ns"],
                                          "unknown_seconds": g.mem.get("unknown_ns", 0) / 1e9}
            if record_shapes and g.gemm["ns"]:
                expect["gemm"] = {"flops": g.gemm["flops"], "seconds": g.gemm["ns"] / 1e9}
            if pattern.startswith("runahead"):
                # the GPU's step: its work back to back from its first kernel (each later step's queues behind the
                # last, so step 0's host time before it is a lead-in that no later step has)
                expect["step_seconds"] = (g.gpu_done - g.first_gpu) / steps / 1e9
                expect["timeline"] = "gpu"
            json.dump({"pattern": pattern, "steps": steps, "expect": expect,
                       "kernels_per_step": g.kernels / steps}, f, indent=1)
    print("wrote %s: pattern %s, %d steps, %d events" % (out, pattern, steps, len(events)), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="trace path (.json or .json.gz)")
    ap.add_argument("--mb", type=float, default=300, help="approximate uncompressed size in MB")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=64, help="ops per step")
    ap.add_argument("--summary", help="write the expected figures here (JSON)")
    ap.add_argument("--pattern", choices=sorted(PATTERNS), help="a small trace with this known bottleneck")
    ap.add_argument("--steps", type=int, default=8, help="ProfilerSteps of a --pattern trace")
    ap.add_argument("--record-shapes", action="store_true",
                    help="--pattern compute-memory: its batch-norm and add ops record their shapes "
                         "(summary: expect.memory_bound, the bytes/s by hand)")
    a = ap.parse_args()
    if a.pattern:
        write_pattern(a.out, a.pattern, a.steps, a.seed, a.summary, a.record_shapes)
        return
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
    s["step_mean_ns"] = sum(d) / len(d)  # the step table's step (its windows: the ProfilerSteps, synchronised)
    s["json_bytes"] = written
    if a.summary:
        with open(a.summary, "w", encoding="utf-8") as f:
            json.dump(s, f, indent=1)
    print("wrote %s: %.1f MB, %d steps, %d GPU events" % (a.out, written / 1e6, s["steps"], s["gpu_events"]),
          file=sys.stderr)


if __name__ == "__main__":
    main()
