#!/usr/bin/env python3
"""interop_torch.py -- PyTorch tensors imported zero copy into the vyre CUDA plugin and a program run on torch's stream (vyre_cuda.h); exit 77 without PyTorch or a GPU.

Run from a build tree on a GPU machine:
    VYRE_BUILD_DIR=$PWD python3 $VYRE_SRC_DIR/tests/runtime/interop_torch.py

It loads plugin/runtime/.libs/libvyre-cuda.so through ctypes (no Python
binding exists: the structs below mirror abi/vyre/vyre.h and vyre_cuda.h),
assembles a saxpy with the build's `vyre asm`, imports two CUDA tensors
with resident_import, and runs dispatch_resident chained with torch's
current stream between two torch kernels on that stream.  The first torch
kernel is held back by four large matmuls on the same stream, so a
dispatch that did not wait for the stream would read y too early, and the
call's own time shows the wait.  The program is compiled by a warm-up call
first: a cold compile inside the ordered call could outlast the hold.
"""
import ctypes as C
import os
import subprocess
import sys
import time

SAXPY = """
workgroup 256
buffer x ro f32
buffer y rw f32
%i  = gid.x
%n  = buflen x
%in = lt %i %n
if %in
  %a  = const f32 2.0
  %xv = load x %i
  %yv = load y %i
  %r  = fma %a %xv %yv
  store y %i %r
end
"""

VYRE_EXT_CUDA_STREAM = 0x43550001


class Error(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("status", C.c_int32),
                ("native_code", C.c_int64), ("message", C.c_char * 2048)]


def new_error():
    e = Error()
    e.struct_size = C.sizeof(Error)
    return e


CREATE = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(C.c_void_p), C.POINTER(Error))


class Registration(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("abi_major", C.c_uint16),
                ("abi_minor", C.c_uint16), ("id", C.c_char_p), ("version", C.c_char_p),
                ("description", C.c_char_p), ("precedence", C.c_int32),
                ("op_count", C.c_uint32), ("ops", C.c_void_p), ("capabilities", C.c_uint64),
                ("storage_types", C.c_uint64), ("create", CREATE), ("op_types", C.c_void_p),
                ("extensions", C.c_char_p)]


class Vtable(C.Structure):  # struct_size, reserved, then 26 entries (vyre.h)
    _fields_ = [("struct_size", C.c_uint32), ("reserved", C.c_uint32),
                ("entries", C.c_void_p * 26)]


VT_DESTROY, VT_RESIDENT_FREE, VT_DISPATCH_RESIDENT, VT_GET_EXTENSION = 0, 13, 21, 25


class Backend(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("reserved", C.c_uint32),
                ("vt", C.POINTER(Vtable))]


class ProgramRef(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("flags", C.c_uint32), ("bytes", C.c_void_p),
                ("size", C.c_uint64), ("pipeline", C.c_uint64)]


class Ext(C.Structure):
    pass


Ext._fields_ = [("struct_size", C.c_uint32), ("type", C.c_uint32), ("next", C.POINTER(Ext))]


class CudaStream(C.Structure):
    _fields_ = [("head", Ext), ("stream", C.c_void_p)]


class Options(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("flags", C.c_uint32),
                ("workgroup", C.c_uint32 * 3), ("grid", C.c_uint32 * 3),
                ("fixpoint_iterations", C.c_uint32), ("ulp_budget", C.c_uint32),
                ("next", C.POINTER(Ext))]


class Interop(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("version", C.c_uint32),
                ("context", C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(C.c_void_p),
                                        C.POINTER(C.c_int32), C.POINTER(Error))),
                ("resident_import", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint64, C.c_uint64,
                                                C.POINTER(C.c_uint64), C.POINTER(Error))),
                ("resident_pointer", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint64,
                                                 C.POINTER(C.c_uint64), C.POINTER(C.c_uint64),
                                                 C.POINTER(Error)))]


def check(status, err, what):
    if status != 0:
        sys.exit("interop_torch: %s failed (status %d): %s"
                 % (what, status, err.message.decode(errors="replace")))


def main():
    try:
        import torch
    except ImportError:
        print("interop_torch: SKIP: no PyTorch")
        return 77
    if not torch.cuda.is_available():
        print("interop_torch: SKIP: PyTorch sees no GPU")
        return 77
    build = os.environ.get("VYRE_BUILD_DIR", ".")
    text = SAXPY.encode()
    program = subprocess.run([os.path.join(build, "host-stub/cli/vyre"), "asm", "-", "-o", "-"],
                             input=text, stdout=subprocess.PIPE, check=True).stdout

    plugin = C.CDLL(os.path.join(build, "plugin/runtime/.libs/libvyre-cuda.so"))
    entry = plugin.vyre_plugin_entry
    entry.argtypes = [C.c_uint16, C.c_uint16, C.POINTER(C.POINTER(Registration)),
                      C.POINTER(Error)]
    entry.restype = C.c_int
    reg, err = C.POINTER(Registration)(), new_error()
    check(entry(1, 1, C.byref(reg), C.byref(err)), err, "vyre_plugin_entry")
    print("interop_torch: plugin %s %s serves %s" % (reg.contents.id.decode(),
          reg.contents.version.decode(), reg.contents.extensions.decode()))

    torch.cuda.init()
    dev = torch.device("cuda:0")
    n = 1 << 22  # 2x + 4 stays below 2**24: exact in f32
    x = torch.arange(n, dtype=torch.float32, device=dev)
    y = torch.ones(n, dtype=torch.float32, device=dev)
    torch.cuda.synchronize()

    be = C.c_void_p()
    check(reg.contents.create(None, C.byref(be), C.byref(err)), err, "create")
    vt = C.cast(be, C.POINTER(Backend)).contents.vt.contents
    get_extension = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_char_p, C.c_uint32,
                                C.POINTER(C.c_void_p), C.POINTER(Error))(
                                    vt.entries[VT_GET_EXTENSION])
    table = C.c_void_p()
    check(get_extension(be, b"vyre.cuda.interop", 1, C.byref(table), C.byref(err)), err,
          "get_extension")
    cu = C.cast(table, C.POINTER(Interop)).contents

    # vyre runs in the primary context, the one PyTorch made current.
    ctx, ordinal = C.c_void_p(), C.c_int32()
    check(cu.context(be, C.byref(ctx), C.byref(ordinal), C.byref(err)), err, "context")
    libcuda = C.CDLL("libcuda.so.1")
    current = C.c_void_p()
    libcuda.cuCtxGetCurrent(C.byref(current))
    assert current.value == ctx.value, "vyre's context is torch's (primary) context"

    handles = []
    for t in (x, y):
        h = C.c_uint64()
        check(cu.resident_import(be, t.data_ptr(), t.numel() * t.element_size(), C.byref(h),
                                 C.byref(err)), err, "resident_import")
        ptr, size = C.c_uint64(), C.c_uint64()
        check(cu.resident_pointer(be, h, C.byref(ptr), C.byref(size), C.byref(err)), err,
              "resident_pointer")
        assert ptr.value == t.data_ptr(), "zero copy: the handle is the tensor's memory"
        handles.append(h.value)

    buf = C.create_string_buffer(program, len(program))
    ref = ProgramRef(C.sizeof(ProgramRef), 0, C.cast(buf, C.c_void_p), len(program), 0)
    hs = (C.c_uint64 * 2)(*handles)
    side = torch.cuda.Stream()
    link = CudaStream(Ext(C.sizeof(CudaStream), VYRE_EXT_CUDA_STREAM, None),
                      C.c_void_p(side.cuda_stream))
    opts = Options()
    opts.struct_size = C.sizeof(Options)
    opts.next = C.pointer(link.head)
    dispatch_resident = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(ProgramRef),
                                    C.POINTER(C.c_uint64), C.c_uint32, C.POINTER(Options),
                                    C.c_void_p, C.POINTER(Error))(
                                        vt.entries[VT_DISPATCH_RESIDENT])
    # Compile first: a cold compile inside the ordered call could outlast
    # the hold below and hide a missing join.
    check(dispatch_resident(be, C.byref(ref), hs, 2, None, None, C.byref(err)), err,
          "dispatch_resident (warm-up)")
    torch.cuda.synchronize()
    y.fill_(1)
    torch.cuda.synchronize()
    # Hold `side` back with device work: four 8192^3 f32 matmuls (tens of
    # ms on an H100).  A host function (cuLaunchHostFunc with a Python
    # callback) held nothing back in practice: the callback ran, under the
    # GIL, before the ordered call started.
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.ones(8192, 8192, device=dev)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        for _ in range(4):
            a = a @ a * (1.0 / 8192)
        y.mul_(3)                        # y = 3, once the hold is over
        t0 = time.perf_counter()
        check(dispatch_resident(be, C.byref(ref), hs, 2, C.byref(opts), None, C.byref(err)), err,
              "dispatch_resident")
        wall = time.perf_counter() - t0
        y.add_(1)                        # after vyre's work: y = 2x + 3 + 1
    torch.cuda.synchronize()
    want = 2 * torch.arange(n, dtype=torch.float32, device=dev) + 4
    bad = (y != want).sum().item()
    assert bad == 0, "%d of %d elements differ: y[0..4] = %s" % (bad, n, y[:4].tolist())

    free = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint64, C.POINTER(Error))(
        vt.entries[VT_RESIDENT_FREE])
    for h in handles:
        check(free(be, h, C.byref(err)), err, "resident_free")
    C.CFUNCTYPE(None, C.c_void_p)(vt.entries[VT_DESTROY])(be)
    # vyre forgot the tensors' memory; torch still owns it and it is intact.
    y.add_(0)
    torch.cuda.synchronize()
    assert torch.equal(y, want)
    assert wall > 0.005, "the call waited for the held stream (%.1f ms)" % (wall * 1e3)
    print("interop_torch: %d-element saxpy on imported torch tensors, ordered on torch stream "
          "%#x between two torch kernels: correct (the call waited %.1f ms for the matmuls "
          "holding the stream); the tensors survived resident_free and destroy"
          % (n, side.cuda_stream, wall * 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
