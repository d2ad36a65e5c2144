#!/usr/bin/env python3
"""test_gpu.py -- PyTorch and CuPy device tensors through vyre programs zero copy on the CUDA backend: pointer identity, results, stream order, timing, DLPack 1.x both ways, the device UUID; exit 77 without a GPU, PyTorch and CuPy.

Run from a build tree on a GPU machine (gpu.test does this under make check):
    PYTHONPATH=BUILD/python python3 SRC/tests/python/test_gpu.py
Prints one line per check with its figures.  Each framework that is
missing is reported and skipped; with neither, or without a GPU, it
exits 77.  Exit 1 on any failure.
"""
import sys
import time

import numpy as np

import vyre

SAXPY = """workgroup 256
buffer a uniform f32 [1]
buffer x ro f32
buffer y rw f32
%i = gid.x
%n = buflen y
%in = lt %i %n
if %in
  %z = const u32 0
  %av = load a %z
  %xv = load x %i
  %yv = load y %i
  %r = fma %av %xv %yv
  store y %i %r
end
"""

SCALE = """workgroup 256
buffer y rw f32
%i = gid.x
%n = buflen y
%in = lt %i %n
if %in
  %v = load y %i
  %two = const f32 2.0
  %r = mul %v %two
  store y %i %r
end
"""

GIB = 1 << 30
failures = []


def say(msg):
    print("test_gpu: " + msg)
    sys.stdout.flush()


def check(cond, msg):
    if cond:
        say("ok: " + msg)
    else:
        say("FAIL: " + msg)
        failures.append(msg)


class DLPackOnly(object):
    """A producer with only the DLPack protocol (no __cuda_array_interface__)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_torch(be, saxpy, scale):
    try:
        import torch
    except ImportError:
        say("SKIP PyTorch: not installed")
        return False
    if not torch.cuda.is_available():
        say("SKIP PyTorch: it sees no GPU")
        return False
    dev = torch.device("cuda:%d" % be.device)
    n = 1 << 22  # 2x + 4 stays below 2**24: exact in f32
    a = torch.tensor([2.0], device=dev)
    x = torch.arange(n, dtype=torch.float32, device=dev)
    y = torch.ones(n, dtype=torch.float32, device=dev)
    torch.cuda.synchronize()
    before = (a.data_ptr(), x.data_ptr(), y.data_ptr())
    mem_before = torch.cuda.memory_allocated(dev)
    be.dispatch_resident(saxpy, a, x, y)  # also the warm-up compile
    torch.cuda.synchronize()
    mem_after = torch.cuda.memory_allocated(dev)
    want = 2 * torch.arange(n, dtype=torch.float32, device=dev) + 1
    check(torch.equal(y, want), "torch: saxpy in place on %d elements is exact" % n)
    check((a.data_ptr(), x.data_ptr(), y.data_ptr()) == before and
          mem_after == mem_before,
          "torch: same tensors, same pointers (y at %#x before and after), no allocation"
          % y.data_ptr())
    with be.import_device(y) as r:
        check(r.device_ptr == y.data_ptr() and r.size == n * 4,
              "torch: the imported resident buffer is the tensor's memory (%#x, %d bytes)"
              % (r.device_ptr, r.size))

    # A parameter that requires grad (its .detach() shares the memory).
    w = torch.ones(n, device=dev, requires_grad=True)
    with torch.no_grad():
        be.dispatch_resident(saxpy, a, x, w)
    torch.cuda.synchronize()
    check(torch.equal(w.detach(), want), "torch: a requires_grad parameter updated in place")

    # Only DLPack.
    y.fill_(1)
    be.dispatch_resident(saxpy, a, x, DLPackOnly(y))
    torch.cuda.synchronize()
    check(torch.equal(y, want) and y.data_ptr() == before[2],
          "torch: a DLPack-only producer, updated in place")

    # Refusals.
    try:
        be.dispatch_resident(saxpy, a, x, torch.ones(2 * n, device=dev)[::2])
        check(False, "torch: a strided view is refused")
    except vyre.InvalidArgument as e:
        check(".contiguous()" in e.fix, "torch: a strided view is refused: %s" % e.message)
    try:
        be.dispatch_resident(saxpy, a, x, torch.ones(n, dtype=torch.float64, device=dev))
        check(False, "torch: a float64 tensor for an f32 buffer is refused")
    except vyre.InvalidArgument as e:
        check("float32" in e.fix, "torch: a float64 tensor is refused: %s" % e.message)

    # Stream order: a non-default stream held back by matmuls; y.mul_(3)
    # before and y.add_(1) after on that stream.  A dispatch that did not
    # join the stream would read y before the hold ends.
    torch.backends.cuda.matmul.allow_tf32 = False
    hold = torch.ones(8192, 8192, device=dev)
    y.fill_(1)
    side = torch.cuda.Stream(device=dev)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        h = hold
        for _ in range(4):
            h = h @ h * (1.0 / 8192)
        y.mul_(3)
        t0 = time.perf_counter()
        be.dispatch_resident(saxpy, a, x, y)  # the current stream: side
        wall = time.perf_counter() - t0
        y.add_(1)
    torch.cuda.synchronize()
    want4 = 2 * torch.arange(n, dtype=torch.float32, device=dev) + 4
    check(torch.equal(y, want4) and wall > 0.002,
          "torch: ordered on non-default stream %#x between two torch kernels (y = 2x + 4 "
          "exact; the call waited %.1f ms for the matmuls holding the stream)"
          % (side.cuda_stream, wall * 1e3))
    del hold, h

    # Timing: 1 GiB in place vs a 1 GiB device-to-host copy.
    big = torch.ones(GIB // 4, dtype=torch.float32, device=dev)
    ptr = big.data_ptr()
    be.dispatch_resident(scale, big)  # warm-up compile
    torch.cuda.synchronize()
    metrics0 = be.metrics()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        be.dispatch_resident(scale, big)
        times.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    metrics1 = be.metrics()
    host = torch.empty(GIB // 4, dtype=torch.float32, pin_memory=True)
    copies = []
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        host.copy_(big)
        torch.cuda.synchronize()
        copies.append(time.perf_counter() - t0)
    ok = bool((big[:16] == 64).all()) and bool((big[-16:] == 64).all()) and big.data_ptr() == ptr
    moved = sum(metrics1.get(k, 0) - metrics0.get(k, 0) for k in metrics1
                if k.startswith("transfer.") and k.endswith(".bytes"))
    disp, copy = min(times), min(copies)
    check(ok and moved < (1 << 20) and disp < copy / 4,
          "torch: 1 GiB tensor doubled in place 6 times (x64 exact, pointer %#x kept): dispatch "
          "%.2f ms (%.0f GB/s read+write) vs a 1 GiB device-to-host copy %.2f ms (%.1f GB/s); "
          "vyre moved %d bytes between host and device" % (
              ptr, disp * 1e3, 2 * GIB / disp / 1e9, copy * 1e3, GIB / copy / 1e9, moved))
    del big, host
    torch.cuda.empty_cache()
    return True


class Recorder(object):
    """Forwards the DLPack protocol to `obj`, recording how a consumer asked
    (the keyword arguments) and which capsule came back."""

    def __init__(self, obj):
        self.obj, self.asked, self.capsules = obj, [], []

    def __dlpack__(self, **kw):
        self.asked.append(kw)
        cap = self.obj.__dlpack__(**kw)
        self.capsules.append(str(cap).split('"')[1] if '"' in str(cap) else str(cap))
        return cap

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()


def test_dlpack_and_uuid(be, saxpy):
    """DLPack 1.x both ways with PyTorch, and the device UUID against torch's."""
    try:
        import torch
    except ImportError:
        say("SKIP DLPack with PyTorch: not installed")
        return False
    dev = torch.device("cuda:%d" % be.device)
    n = 1 << 20
    # vyre -> torch: torch.from_dlpack(resident), zero copy, both ways.
    r = be.upload(np.arange(n, dtype=np.float32))
    rec = Recorder(r)
    t = torch.from_dlpack(rec)
    check(t.data_ptr() == r.device_ptr and t.device == dev and t.dtype == torch.float32 and
          t.numel() == n, "dlpack: torch.from_dlpack(resident) is the buffer's memory (%#x on "
          "%s), asked with %r, capsule %s" % (t.data_ptr(), t.device, rec.asked, rec.capsules))
    t.mul_(2)
    torch.cuda.synchronize()
    check(np.array_equal(r.download(), 2 * np.arange(n, dtype=np.float32)),
          "dlpack: torch's in-place mul_ lands in the resident buffer")
    v = r.__dlpack__(max_version=(1, 0))
    check("dltensor_versioned" in str(v), "dlpack: max_version=(1, 0) gives %s" % v)
    del v
    # torch -> vyre: a torch tensor through __dlpack__ only (versioned when torch has it).
    a = torch.tensor([2.0], device=dev)
    x = torch.arange(n, dtype=torch.float32, device=dev)
    y = torch.ones(n, dtype=torch.float32, device=dev)
    ry = Recorder(y)
    be.dispatch_resident(saxpy, a, x, ry)
    torch.cuda.synchronize()
    check(torch.equal(y, 2 * x + 1), "dlpack: a torch tensor imported through __dlpack__ "
          "(asked %r, capsule %s) updated in place" % (ry.asked, ry.capsules))
    del t
    r.free()
    # The UUID: vyre's against torch's and nvidia-smi's.
    uuid = be.profile().uuid
    tu = str(getattr(torch.cuda.get_device_properties(dev), "uuid", "")).lower()
    check(uuid is not None and (not tu or uuid[4:] == tu.replace("gpu-", "")),
          "uuid: vyre %s, torch %s" % (uuid, tu or "(no uuid property)"))
    try:
        import subprocess
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
        check(uuid in smi, "uuid: nvidia-smi -L lists %s" % uuid)
    except OSError:
        say("SKIP uuid vs nvidia-smi: no nvidia-smi")
    with vyre.open("cuda", device=uuid[:13]) as b:
        check(b.device == be.device, "uuid: vyre.open('cuda', device=%r) opens device %d"
              % (uuid[:13], b.device))
    return True


def test_cupy(be, saxpy, scale):
    try:
        import cupy
    except ImportError:
        say("SKIP CuPy: not installed")
        return False
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        say("SKIP CuPy: no GPU (%s)" % exc)
        return False
    with cupy.cuda.Device(be.device):
        n = 1 << 22
        a = cupy.array([2.0], dtype=cupy.float32)
        x = cupy.arange(n, dtype=cupy.float32)
        y = cupy.ones(n, dtype=cupy.float32)
        before = y.data.ptr
        be.dispatch_resident(saxpy, a, x, y)
        cupy.cuda.Device().synchronize()
        want = 2 * cupy.arange(n, dtype=cupy.float32) + 1
        check(bool((y == want).all()) and y.data.ptr == before,
              "cupy: saxpy in place, y at %#x before and after" % before)
        with be.import_device(y) as r:
            check(r.device_ptr == y.data.ptr, "cupy: the imported resident buffer is the array's "
                  "memory (%#x)" % r.device_ptr)

        # Stream order on a non-blocking CuPy stream held back by matmuls.
        hold = cupy.ones((8192, 8192), dtype=cupy.float32)
        y.fill(1)
        s = cupy.cuda.Stream(non_blocking=True)
        cupy.cuda.Device().synchronize()
        with s:
            h = hold
            for _ in range(4):
                h = h @ h * (1.0 / 8192)
            y *= 3
            t0 = time.perf_counter()
            be.dispatch_resident(saxpy, a, x, y)  # cupy's current stream: s
            wall = time.perf_counter() - t0
            y += 1
        s.synchronize()
        want4 = 2 * cupy.arange(n, dtype=cupy.float32) + 4
        check(bool((y == want4).all()) and wall > 0.002,
              "cupy: ordered on non-blocking stream %#x (y = 2x + 4 exact; the call waited "
              "%.1f ms for the stream)" % (s.ptr, wall * 1e3))
        del hold, h

        big = cupy.ones(GIB // 4, dtype=cupy.float32)
        ptr = big.data.ptr
        be.dispatch_resident(scale, big)
        cupy.cuda.Device().synchronize()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            be.dispatch_resident(scale, big)
            times.append(time.perf_counter() - t0)
        host = cupy.cuda.alloc_pinned_memory(GIB)
        hview = np.frombuffer(host, dtype=np.float32, count=GIB // 4)
        copies = []
        for _ in range(3):
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            big.get(out=hview)
            cupy.cuda.Device().synchronize()
            copies.append(time.perf_counter() - t0)
        disp, copy = min(times), min(copies)
        ok = float(hview[0]) == 64.0 and float(hview[-1]) == 64.0 and big.data.ptr == ptr
        check(ok and disp < copy / 4,
              "cupy: 1 GiB array doubled in place (pointer %#x kept): dispatch %.2f ms vs a "
              "1 GiB device-to-host copy %.2f ms" % (ptr, disp * 1e3, copy * 1e3))
        del big, hview, host
    return True


def main():
    try:
        be = vyre.open("cuda")
    except vyre.VyreError as e:
        say("SKIP: the CUDA backend cannot be used: %s" % e)
        return 77
    saxpy, scale = vyre.assemble(SAXPY), vyre.assemble(SCALE)
    say("backend %s on %s" % (be.id, be.profile().name))
    ran = False
    with be:
        ran |= test_torch(be, saxpy, scale)
        ran |= test_cupy(be, saxpy, scale)
        ran |= test_dlpack_and_uuid(be, saxpy)
    if not ran:
        say("SKIP: neither PyTorch nor CuPy with a GPU")
        return 77
    if failures:
        say("%d check(s) failed" % len(failures))
        return 1
    say("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
