#!/usr/bin/env python3
"""peers.py -- the same measurements as `vyre bench`, on PyTorch and CuPy, for ratio tables.

Each case matches one case of `vyre bench --jsonl` by name:
  dispatch_resident_1k   y = a*x + y on 1024 resident f32, launch + synchronise, host wall median
  roundtrip_1k           1024 f32 host -> device, y = a*x + y, device -> host, host wall median
  sequence_1k_x100       100 queued launches of the 1k case, one synchronise: per launch
  graph_1k_x1000         those 100 launches captured in a CUDA graph, replayed 10x: per launch
  saxpy_bw_<n>           y = a*x + y on n resident f32, device time (events) median -> GB/s (12 bytes/elem)
  copy_bw_<n>            y = x device-to-device copy of n f32 (8 bytes/elem), the bandwidth ceiling
  host_dispatch_1g       1 GiB of pageable f32 (NumPy) .to(cuda), summed, .item(): host wall (PyTorch)
  saxpy_roundtrip_256m   x, y of 256 MiB pageable up, y.add_(x, alpha=2), y.cpu() (PyTorch)
  resident_upload_1g     device_tensor.copy_(pageable 1 GiB host tensor) (PyTorch)
  resident_download_1g   pageable_host_tensor.copy_(1 GiB device tensor) (PyTorch)
  matmul_4096            torch.addmm(C, A, B), fp32 with TF32 off, 4096^3: device time (events)
  sum_256m               torch.sum of 256 Mi f32: device time (events), GB/s of the input
  compile_cold           cupy.RawKernel of y = a*x + y + k, a new source each sample (so NVRTC
                         compiles): source -> loaded function (NVRTC + cuModuleLoadData), host wall
  compile_warm_hit       the same source again, a new RawKernel object (CuPy's in-memory cache)
  compile_disk_hit       a source compiled once, CuPy's in-memory cache cleared, then loaded again
                         (its kernel cache file: no NVRTC)
Prints one JSON object per line: {"peer": ..., "case": ..., "median_us": ..., "gbps": ...}.
usage: peers.py [SIZES...] [--cases latency,bandwidth,transfer,compute,compile]   (default: all)
"""
import json
import statistics
import sys
import time


def median_wall(fn, sync, warm=200, iters=2000):
    for _ in range(warm):
        fn()
    sync()
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter_ns()
        fn()
        sync()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000.0


def median_events(fn, make_event, sync, warm=5, iters=30):
    for _ in range(warm):
        fn()
    sync()
    samples = []
    for _ in range(iters):
        start, end = make_event(), make_event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start_end_ms(start, end))
    return statistics.median(samples) * 1000.0


def start_end_ms(start, end):
    try:
        return start.elapsed_time(end)  # torch
    except AttributeError:
        import cupy
        return cupy.cuda.get_elapsed_time(start, end)


def emit(peer, case, us, nbytes=None):
    rec = {"peer": peer, "case": case, "median_us": round(us, 3)}
    if nbytes:
        rec["gbps"] = round(nbytes / (us * 1e-6) / 1e9, 1)
    print(json.dumps(rec), flush=True)


def torch_cases(sizes):
    import torch
    dev = torch.device("cuda")
    x = torch.rand(1024, device=dev)
    y = torch.rand(1024, device=dev)
    emit("torch", "dispatch_resident_1k",
         median_wall(lambda: y.add_(x, alpha=2.0), torch.cuda.synchronize))
    hx = torch.rand(1024).numpy()
    hy = torch.rand(1024).numpy()

    def roundtrip():
        dx = torch.from_numpy(hx).to(dev, non_blocking=False)
        dy = torch.from_numpy(hy).to(dev, non_blocking=False)
        dy.add_(dx, alpha=2.0)
        return dy.cpu()
    emit("torch", "roundtrip_1k", median_wall(roundtrip, torch.cuda.synchronize, iters=1000))

    def hundred():
        for _ in range(100):
            y.add_(x, alpha=2.0)
    emit("torch", "sequence_1k_x100",
         median_wall(hundred, torch.cuda.synchronize, warm=5, iters=30) / 100)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        hundred()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        hundred()

    def replay10():
        for _ in range(10):
            g.replay()
    emit("torch", "graph_1k_x1000",
         median_wall(replay10, torch.cuda.synchronize, warm=3, iters=30) / 1000)
    for n in sizes:
        xs = [torch.rand(n, device=dev) for _ in range(2)]
        ys = [torch.rand(n, device=dev) for _ in range(2)]
        k = [0]

        def saxpy():
            k[0] ^= 1
            ys[k[0]].add_(xs[k[0]], alpha=2.0)
        us = median_events(saxpy, lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize)
        emit("torch", "saxpy_bw_%d" % n, us, 12 * n)

        def copy():
            k[0] ^= 1
            ys[k[0]].copy_(xs[k[0]])
        us = median_events(copy, lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize)
        emit("torch", "copy_bw_%d" % n, us, 8 * n)
        del xs, ys
        torch.cuda.empty_cache()


def torch_transfer_cases():
    """vyre bench's transfer cases the PyTorch way: pageable NumPy memory, .to(cuda) / .cpu()."""
    import numpy
    import torch
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize

    def wall(fn, iters=7):
        fn()
        sync()
        samples = []
        for _ in range(iters):
            t0 = time.perf_counter_ns()
            fn()
            sync()
            samples.append(time.perf_counter_ns() - t0)
        return statistics.median(samples) / 1000.0
    g = 1 << 30
    host = numpy.random.rand(g // 4).astype(numpy.float32)
    emit("torch", "host_dispatch_1g", wall(lambda: torch.from_numpy(host).to(dev).sum().item()), g)
    q = g // 4
    hx, hy = host[: q // 4], host[q // 4: q // 2]

    def roundtrip():
        x = torch.from_numpy(hx).to(dev)
        y = torch.from_numpy(hy).to(dev)
        y.add_(x, alpha=2.0)
        return y.cpu()
    emit("torch", "saxpy_roundtrip_256m", wall(roundtrip), 3 * q)
    d = torch.empty(g // 4, dtype=torch.float32, device=dev)
    src = torch.from_numpy(host)
    emit("torch", "resident_upload_1g", wall(lambda: d.copy_(src)), g)
    out = torch.empty(g // 4, dtype=torch.float32)
    emit("torch", "resident_download_1g", wall(lambda: out.copy_(d)), g)
    del d
    torch.cuda.empty_cache()


def torch_compute_cases():
    """The compute-bound cases: C = A*B + C at 4096^3 in fp32 with TF32 off (addmm), and the sum
    of 256 Mi f32; device time (events), median of 20."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    mk = lambda: torch.cuda.Event(enable_timing=True)
    n = 4096
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    c = torch.rand(n, n, device="cuda")
    emit("torch", "matmul_4096", median_events(lambda: torch.addmm(c, a, b), mk,
                                                 torch.cuda.synchronize, warm=3, iters=20))
    del a, b, c
    x = torch.rand(256 << 20, device="cuda")
    emit("torch", "sum_256m", median_events(lambda: torch.sum(x), mk, torch.cuda.synchronize,
                                              warm=3, iters=30), 4 * (256 << 20))
    del x
    torch.cuda.empty_cache()


def cupy_cases(sizes):
    import cupy
    saxpy_k = cupy.ElementwiseKernel("float32 a, float32 x", "float32 y", "y = a * x + y", "saxpy")
    x = cupy.random.rand(1024, dtype=cupy.float32)
    y = cupy.random.rand(1024, dtype=cupy.float32)
    sync = cupy.cuda.Device().synchronize
    a = cupy.float32(2.0)
    emit("cupy", "dispatch_resident_1k", median_wall(lambda: saxpy_k(a, x, y), sync))
    hx = cupy.asnumpy(x)
    hy = cupy.asnumpy(y)

    def roundtrip():
        dx = cupy.asarray(hx)
        dy = cupy.asarray(hy)
        saxpy_k(a, dx, dy)
        return cupy.asnumpy(dy)
    emit("cupy", "roundtrip_1k", median_wall(roundtrip, sync, iters=1000))

    def hundred():
        for _ in range(100):
            saxpy_k(a, x, y)
    emit("cupy", "sequence_1k_x100", median_wall(hundred, sync, warm=5, iters=30) / 100)
    for n in sizes:
        xs = [cupy.random.rand(n, dtype=cupy.float32) for _ in range(2)]
        ys = [cupy.random.rand(n, dtype=cupy.float32) for _ in range(2)]
        k = [0]

        def saxpy():
            k[0] ^= 1
            saxpy_k(a, xs[k[0]], ys[k[0]])
        us = median_events(saxpy, cupy.cuda.Event, sync)
        emit("cupy", "saxpy_bw_%d" % n, us, 12 * n)
        del xs, ys
        cupy.get_default_memory_pool().free_all_blocks()


SAXPY_K = r'''// %(salt)s
extern "C" __global__ void saxpy_k(const float* a, const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[0] * x[i] + y[i] + %(k)s;
}
'''


def cupy_compile_cases(samples=30, warm_iters=1000):
    """The peer of `vyre bench`'s compile cases: CUDA C source -> loaded function."""
    import os
    import random
    import shutil
    import tempfile
    # A private kernel cache (CuPy reads CUPY_CACHE_DIR when it compiles),
    # and a salt no earlier run used: every cold sample really compiles.
    cache = tempfile.mkdtemp(prefix="cupy-bench-cache-")
    old = os.environ.get("CUPY_CACHE_DIR")
    os.environ["CUPY_CACHE_DIR"] = cache
    try:
        import cupy
        salt = "%016x" % random.getrandbits(64)

        def source(k):
            return SAXPY_K % {"salt": salt, "k": "%.1ff" % k}

        def load(src):
            kern = cupy.RawKernel(src, "saxpy_k")
            return kern.kernel  # compiles (or finds) and loads: a cupy Function

        def timed(src):
            t0 = time.perf_counter_ns()
            load(src)
            return (time.perf_counter_ns() - t0) / 1000.0

        for k in range(3):  # first-use costs of NVRTC and the driver
            load(source(-1.0 - k))
        cold = [timed(source(1.0 + i)) for i in range(samples)]
        emit("cupy", "compile_cold", statistics.median(cold))
        last = source(float(samples))
        warm = [timed(last) for _ in range(warm_iters)]
        emit("cupy", "compile_warm_hit", statistics.median(warm))
        clear = getattr(cupy, "clear_memo", None) or cupy._util.clear_memo
        disk = []
        for i in range(samples):
            src = source(100000.0 + i)
            load(src)  # compiled and written to the kernel cache
            clear()    # forget it in memory
            disk.append(timed(src))
        emit("cupy", "compile_disk_hit", statistics.median(disk))
    finally:
        if old is None:
            os.environ.pop("CUPY_CACHE_DIR", None)
        else:
            os.environ["CUPY_CACHE_DIR"] = old
        shutil.rmtree(cache, ignore_errors=True)


def main():
    args = sys.argv[1:]
    groups = {"latency", "bandwidth", "transfer", "compute", "compile"}
    if "--cases" in args:
        at = args.index("--cases")
        groups = set(args[at + 1].split(",")) if at + 1 < len(args) else set()
        if "all" in groups:
            groups = {"latency", "bandwidth", "transfer", "compute", "compile"}
        del args[at:at + 2]
    sizes = [int(s) for s in args] or [1 << 20, 1 << 24, 1 << 28]
    runs = []
    if groups & {"latency", "bandwidth"}:
        # The latency cases always run with the bandwidth ones (no sizes: latency only).
        sz = sizes if "bandwidth" in groups else []
        runs += [(torch_cases, (sz,)), (cupy_cases, (sz,))]
    if "transfer" in groups:
        runs.append((torch_transfer_cases, ()))
    if "compute" in groups:
        runs.append((torch_compute_cases, ()))
    if "compile" in groups:
        runs.append((cupy_compile_cases, ()))
    for run, args in runs:
        try:
            run(*args)
        except Exception as exc:  # a missing peer is reported, not fatal
            print(json.dumps({"peer": run.__name__, "error": str(exc)}), flush=True)


if __name__ == "__main__":
    main()
