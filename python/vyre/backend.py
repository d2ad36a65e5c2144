"""backend.py -- a backend instance (vyre.open): queries, host and async dispatch, resident buffers, device-array interop, sequences and pipelines."""
import ctypes as C

from . import _ints, _lib, interop
from ._handle import Call, SharedHandle
from .errors import VyreError, check, invalid, make, unsupported
from .host import (BackendInfo, Profile, Timing, _get_host, _info, _new_timing,  # noqa: F401
                   backends)
from .program import Program
from .resident import (Pending, Pipeline, Resident, Step, _AnyBuffer, _dtype_of,  # noqa: F401
                       _host_in, _host_out, _sequence_reads, _to_host_array)


def open(id=None, device=0, program=None):
    """Create an instance of backend `id` ("cuda", "reference") on device
    `device`: an ordinal, or the device's UUID as Profile.uuid and
    nvidia-smi -L print it ("GPU-8932f937-..."; all of it or a prefix only
    one device has; "GPU-" optional).  id None takes $VYRE_BACKEND when
    set, else the best backend that works (lowest precedence); with
    `program` (a Program, or its image as bytes), the best backend whose
    registration and device cover what that program needs
    (vyre_host_create_for: host.md, "Selection for a program"; id and a
    UUID device are then not allowed).  Raises the host's error (with
    every reason) when none can be created."""
    if program is not None:
        return _open_for(id, device, program)
    if id is not None and not isinstance(id, str):
        raise invalid("backend id %r is not a string. Fix: pass e.g. 'cuda' or 'reference'" % (id,))
    if isinstance(device, str):
        return _open_by_uuid(id, device)
    return _open_on(id, _ordinal(device))


def _ordinal(device):
    return _ints.u32(device, "device", fix="pass an ordinal 0, 1, ... or a UUID "
                     "'GPU-xxxxxxxx-...' (Backend.profile().uuid)")


def _made(out, index, device):
    """The Backend over a new instance; the instance is destroyed when that fails."""
    try:
        return Backend(out, _info(index.value), device)
    except BaseException:
        out.contents.vt.contents.destroy(out)
        raise


def _open_on(id, device):
    opts = _lib.BackendOptions()
    opts.struct_size = C.sizeof(opts)
    opts.device_ordinal = device
    out = _lib.BP()
    index = C.c_uint32()
    err = _lib.new_error()
    check(_lib.vyre_host_create(_get_host(), id.encode() if id else None, C.byref(opts),
                                C.byref(out), C.byref(index), C.byref(err)), err,
          "vyre_host_create")
    return _made(out, index, device)


def _open_for(id, device, program):
    if id is not None:
        raise invalid("open(id=%r, program=...): a program chooses the backend. Fix: pass "
                      "either id or program" % (id,))
    device = _ints.u32(device, "device", fix="open(program=...) takes an ordinal: pass 0, 1, ...")
    if not isinstance(program, Program):
        program = Program(program)
    opts = _lib.BackendOptions()
    opts.struct_size = C.sizeof(opts)
    opts.device_ordinal = device
    out = _lib.BP()
    index = C.c_uint32()
    err = _lib.new_error()
    check(_lib.vyre_host_create_for(_get_host(), C.cast(program._image, C.c_void_p),
                                    program.size, None, C.byref(opts), C.byref(out),
                                    C.byref(index), C.byref(err)), err, "vyre_host_create_for")
    return _made(out, index, device)


def _open_by_uuid(id, text):
    """The instance on the device of backend `id` whose UUID starts with
    `text`: one is created on each ordinal (device_count of ordinal 0's
    profile) and its profile compared; InvalidArgument for text that is no
    UUID, NoDevice listing every device's UUID when none or several match."""
    from .host import uuid_prefix
    want = uuid_prefix(text)
    if want is None:
        raise invalid("device %r is neither an ordinal nor a device UUID. Fix: pass an int or "
                      "a UUID as Profile.uuid prints it ('GPU-xxxxxxxx-...')" % (text,))
    first = _open_on(id, 0)
    seen, hits = [], []
    try:
        count = max(first.profile().device_count if first.has("device_profile") else 1, 1)
        for d in range(count):
            try:
                b = first if d == 0 else _open_on(first.id, d)
            except VyreError as e:
                seen.append("device %d (unavailable: %s)" % (d, e.status))
                continue
            u = b.profile().uuid if b.has("device_profile") else None
            seen.append("device %d %s" % (d, u or "(no UUID reported)"))
            if u and u[4:].replace("-", "").startswith(want):
                hits.append(b)
            elif b is not first:
                b.close()
    except Exception:
        for b in hits + [first]:
            b.close()
        raise
    if len(hits) == 1:
        if hits[0] is not first:
            first.close()
        return hits[0]
    for b in set(hits + [first]):
        b.close()
    raise make("VYRE_NO_DEVICE", (
        "no device of backend %s has UUID %s: %s. Fix: pass one of these UUIDs (a unique prefix "
        "is enough) or an ordinal" if not hits else
        "%d devices of backend %%s match UUID prefix %%s: %%s. Fix: give more of the UUID, "
        "enough to tell them apart" % len(hits)) % (first.id, text, ", ".join(seen)))


# ---------------------------------------------------------------------------
# The backend instance
# ---------------------------------------------------------------------------


class Backend(SharedHandle):
    """A backend instance (vyre.open).  Free-threaded like the C instance:
    any number of threads may call it at once, and close() waits for the
    calls in flight (docs/python.md, "Threads").  A context manager:
    leaving the block closes it.  Attributes: id, info (BackendInfo),
    device (ordinal)."""

    def __init__(self, ptr, info, device):
        SharedHandle.__init__(self)
        self._b = ptr
        self._vt = ptr.contents.vt.contents
        self._native = _lib.vyre_host_backend_native(ptr)
        self._cu = None
        self.info = info
        self.id = info.id
        self.device = device

    # Life ----------------------------------------------------------------

    def _closed_text(self):
        return "backend %s is closed. Fix: vyre.open() a new one" % self.id

    def has(self, entry):
        """True when the instance provides vtable entry `entry` ("dispatch_async", ...)."""
        field = getattr(_lib.Vtable, entry, None) if isinstance(entry, str) else None
        if field is None or entry in ("struct_size", "reserved"):
            raise invalid("'%s' is no entry of the backend's function table. Fix: use a name "
                          "of vyre.h's vyre_backend_vtable" % (entry,))
        with Call(self):
            return bool(_lib.vyre_host_vtable_has(self._b, field.offset))

    def _need(self, entry):
        """Inside a Call: Unsupported when the instance lacks vtable entry `entry`."""
        if not _lib.vyre_host_vtable_has(self._b, getattr(_lib.Vtable, entry).offset):
            raise unsupported("backend %s does not provide %s. Fix: use a backend that does "
                              "(vyre.backends() lists their capabilities)" % (self.id, entry))

    def close(self):
        """Destroy the instance (every handle it made is released), once the
        calls in flight on it have returned; calls made after close() began
        raise InvalidHandle.  Idempotent."""
        SharedHandle.close(self)

    def _release(self):
        b, self._b = self._b, None
        if b:
            self._vt.destroy(b)

    def __repr__(self):
        return "<vyre.Backend %s (device %d)%s>" % (self.id, self.device,
                                                    "" if self._is_open() else " closed")

    # Queries ---------------------------------------------------------------

    def profile(self):
        """The device profile (a Profile)."""
        with Call(self):
            self._need("device_profile")
            p = _lib.DeviceProfile()
            p.struct_size = C.sizeof(p)
            err = _lib.new_error()
            check(self._vt.device_profile(self._b, C.byref(p), C.byref(err)), err,
                  "device_profile")
        return Profile(p)

    @property
    def capabilities(self):
        """The capability names this instance's device has (profile().capabilities)."""
        return self.profile().capabilities

    def metrics(self):
        """The backend's counters: a dict name -> int."""
        with Call(self):
            self._need("metrics")
            err = _lib.new_error()
            count = C.c_uint32()
            check(self._vt.metrics(self._b, None, 0, C.byref(count), C.byref(err)), err,
                  "metrics")
            arr = (_lib.Metric * max(count.value, 1))()
            check(self._vt.metrics(self._b, arr, count.value, C.byref(count), C.byref(err)), err,
                  "metrics")
        return {m.name.decode(): m.value for m in arr[:min(count.value, len(arr))]}

    def prepare(self):
        """Warm up (contexts, streams) so the first dispatch is not slow."""
        self._simple("prepare")

    def shutdown(self):
        """Wait for all work and release cached resources; the instance stays usable."""
        self._simple("shutdown")

    def _simple(self, entry):
        with Call(self):
            self._need(entry)
            err = _lib.new_error()
            check(getattr(self._vt, entry)(self._b, C.byref(err)), err, entry)

    # Programs and options ----------------------------------------------------

    def _ref(self, program, call):
        """(vyre_program_ref, Program) for a Program, Pipeline or program
        bytes; a Pipeline is use()d by `call`."""
        if isinstance(program, Pipeline):
            if program.backend is not self:
                raise invalid("the pipeline was compiled on another backend instance. Fix: "
                              "compile it on this one (Backend.compile)")
            return _lib.ProgramRef(C.sizeof(_lib.ProgramRef), 0, None, 0, call.use(program)), \
                program.program
        if isinstance(program, (bytes, bytearray, memoryview)):
            program = Program(program)
        if not isinstance(program, Program):
            raise invalid("%r is not a program. Fix: pass a vyre.Program (vyre.assemble(text), "
                          "vyre.load(path), Builder.finish()) or a Pipeline" % (program,))
        ref = _lib.ProgramRef(C.sizeof(_lib.ProgramRef), 0,
                              C.cast(program._image, C.c_void_p), program.size, 0)
        return ref, program

    def _options(self, call, workgroup=None, grid=None, fixpoint=None, ulp=None, stream=None,
                 indirect=None):
        """(DispatchOptions or None, keepalive) for the call's options; stream
        (a CUstream as an int) chains vyre_cuda_stream; indirect (a Resident,
        or (Resident, byte offset)) chains vyre_indirect, use()d by `call`."""
        if workgroup is None and grid is None and fixpoint is None and ulp is None and \
                stream is None and indirect is None:
            return None, None
        o = _lib.DispatchOptions()
        o.struct_size = C.sizeof(o)
        o.workgroup[:] = _ints.triple(workgroup, "workgroup")
        o.grid[:] = _ints.triple(grid, "grid")
        o.fixpoint_iterations = 0 if fixpoint is None else _ints.u32(
            fixpoint, "fixpoint", fix="pass a launch count from 0 to 4294967295")
        o.ulp_budget = 0 if ulp is None else _ints.u32(
            ulp, "ulp", fix="pass a budget from 0 (strict) to 4294967295")
        link = None
        if stream is not None:
            self._interop()
            link = _lib.CudaStream()
            link.head.struct_size = C.sizeof(link)
            link.head.type = _lib.EXT_CUDA_STREAM
            link.stream = stream or None
            o.next = C.pointer(link.head)
        ind = None
        if indirect is not None:
            buf, off = (indirect, 0) if isinstance(indirect, Resident) else \
                (tuple(indirect) + (0,))[:2] if isinstance(indirect, (tuple, list)) else (None, 0)
            if not isinstance(buf, Resident):
                raise invalid("indirect %r is not a Resident or (Resident, byte offset). Fix: "
                              "pass the resident buffer holding the three u32 counts x y z"
                              % (indirect,))
            if buf.backend is not self:
                raise invalid("indirect is a resident buffer of another backend instance. Fix: "
                              "allocate it on this one")
            off = _ints.u64(off, "indirect byte offset",
                            fix="pass the offset of the three u32 counts in the buffer")
            ind = _lib.Indirect()
            ind.head.struct_size = C.sizeof(ind)
            ind.head.type = _lib.EXT_INDIRECT
            ind.head.next = o.next
            ind.buffer, ind.offset = call.use(buf), off
            o.next = C.pointer(ind.head)
        return o, (link, ind)

    @staticmethod
    def _stream_handle(stream):
        """A stream argument as a CUstream int: an int, a torch.cuda.Stream
        (.cuda_stream) or a CuPy stream (.ptr)."""
        if stream is None:
            return None
        if not isinstance(stream, int):
            for attr in ("cuda_stream", "ptr", "handle"):
                v = getattr(stream, attr, None)
                if isinstance(v, int) and not isinstance(v, bool):
                    stream = v
                    break
            else:
                raise invalid("stream %r is not a CUDA stream. Fix: pass a torch.cuda.Stream, a "
                              "cupy.cuda.Stream or a CUstream handle as an int" % (stream,))
        return _ints.checked(stream, "ptr", "stream", fix="pass a torch.cuda.Stream, a "
                             "cupy.cuda.Stream or a CUstream handle (0: the legacy default)")

    # Host dispatch -------------------------------------------------------------

    def _inputs(self, prog, inputs):
        if len(inputs) != len(prog.inputs):
            raise invalid("%s takes %d input(s) (%s), %d given. Fix: pass one buffer per "
                          "input buffer, in declaration order" % (
                              prog.name, len(prog.inputs),
                              ", ".join(b.name for b in prog.inputs) or "none", len(inputs)))
        arr = (_lib.Input * max(len(inputs), 1))()
        keep = []
        for i, (obj, binfo) in enumerate(zip(inputs, prog.inputs)):
            ptr, n, k = _host_in(obj, binfo, "input %d '%s'" % (i, binfo.name))
            arr[i].data = ptr
            arr[i].size = n
            keep.append(k)
        return arr, keep

    def _take_outputs(self, out, prog):
        try:
            res = []
            o = out.contents
            for i in range(o.count):
                dt = prog.outputs[i].dtype if i < len(prog.outputs) else None
                res.append(_to_host_array(o.items[i].data, o.items[i].size, dt))
            return res
        finally:
            self._vt.outputs_free(self._b, out)

    def dispatch(self, program, *inputs, out=None, workgroup=None, grid=None, fixpoint=None,
                 ulp=None, timing=False, stream=None):
        """Run `program` on host buffers and wait.

        inputs: one per input buffer (ro, uniform, rw without the output
        flag) in declaration order: NumPy arrays of the buffer's dtype,
        bytes, bytearray, memoryview, array.array, any buffer-protocol
        object (raw little-endian bytes), lists, or a Python number for a
        one-element buffer.  Returns the outputs in declaration order, a
        list of new NumPy arrays (bytearrays without NumPy); with out= (one
        writable buffer per output) they are written there and out's
        objects are returned.  timing=True returns (outputs, Timing).
        workgroup/grid override the program's; fixpoint: launches on the
        same buffers; ulp: the transcendental budget (0 = strict); stream:
        a CUDA stream to order the call on (CUDA backend).
        """
        with Call(self) as call:
            self._need("dispatch")
            ref, prog = self._ref(program, call)
            arr, keep = self._inputs(prog, inputs)
            opts, link = self._options(call, workgroup, grid, fixpoint, ulp,
                                       self._stream_handle(stream))
            t = _new_timing() if timing else None
            err = _lib.new_error()
            if out is None:
                res = C.POINTER(_lib.Outputs)()
                call.hold()
                check(self._vt.dispatch(self._b, C.byref(ref), arr, len(inputs),
                                        C.byref(opts) if opts else None, C.byref(res),
                                        C.byref(t) if t else None, C.byref(err)), err, "dispatch")
                outputs = self._take_outputs(res, prog)
            else:
                outputs = self._dispatch_into(call, ref, prog, arr, inputs, opts, out, t, keep)
            del keep, link
        return (outputs, Timing(t)) if t else outputs

    def _dispatch_into(self, call, ref, prog, arr, inputs, opts, out, t, keep):
        self._need("dispatch_into")
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(out) != len(prog.outputs):
            raise invalid("%s has %d output(s) (%s), out= gives %d. Fix: pass one writable "
                          "buffer per output" % (prog.name, len(prog.outputs),
                                                 ", ".join(b.name for b in prog.outputs), len(out)))
        slots = (_lib.OutputSlot * max(len(out), 1))()
        for i, (o, binfo) in enumerate(zip(out, prog.outputs)):
            ptr, cap, k = _host_out(o, binfo, "out[%d] '%s'" % (i, binfo.name))
            slots[i].data, slots[i].capacity = ptr, cap
            keep.append(k)
        err = _lib.new_error()
        call.hold()
        check(self._vt.dispatch_into(self._b, C.byref(ref), arr, len(inputs),
                                     C.byref(opts) if opts else None, slots, len(out),
                                     C.byref(t) if t else None, C.byref(err)), err,
              "dispatch_into")
        return out

    def dispatch_async(self, program, *inputs, workgroup=None, grid=None, fixpoint=None,
                       ulp=None, timing=False, stream=None):
        """Enqueue a dispatch (inputs as dispatch; they are copied before this
        returns) and return a Pending; Pending.wait() gives the outputs."""
        with Call(self) as call:
            self._need("dispatch_async")
            ref, prog = self._ref(program, call)
            arr, keep = self._inputs(prog, inputs)
            opts, link = self._options(call, workgroup, grid, fixpoint, ulp,
                                       self._stream_handle(stream))
            h = C.c_uint64()
            err = _lib.new_error()
            call.hold()
            check(self._vt.dispatch_async(self._b, C.byref(ref), arr, len(inputs),
                                          C.byref(opts) if opts else None, C.byref(h),
                                          C.byref(err)), err, "dispatch_async")
            del keep, link
            return Pending(self, h.value, prog, timing)

    # Resident buffers --------------------------------------------------------------

    def alloc(self, size, dtype=None):
        """A new zero-filled resident buffer of `size` bytes (a Resident);
        dtype: the NumPy dtype name its download() returns."""
        size = _ints.u64(size, "resident size", fix="pass a byte count from 0 to 2**64-1")
        with Call(self):
            self._need("resident_alloc")
            h = C.c_uint64()
            err = _lib.new_error()
            check(self._vt.resident_alloc(self._b, size, C.byref(h), C.byref(err)), err,
                  "resident_alloc")
            return Resident(self, h.value, size, str(dtype) if dtype is not None else None)

    def upload(self, data, dtype=None):
        """A new resident buffer holding a copy of host `data` (NumPy array,
        bytes, any buffer); it remembers a NumPy array's dtype for download()."""
        d = dtype if dtype is not None else _dtype_of(data)
        ptr, n, keep = _host_in(data, _AnyBuffer(None), "upload data")
        del ptr, keep
        r = self.alloc(n, d)
        try:
            r.upload(data)
        except Exception:
            r.free()
            raise
        return r

    def _interop(self):
        """Inside a Call: the CUDA interop table, or Unsupported."""
        if self._cu is None:
            if not _lib.vyre_host_vtable_has(self._b, _lib.Vtable.get_extension.offset):
                raise unsupported("backend %s serves no extensions (ABI 1.0), and device arrays "
                                  "and streams need vyre.cuda.interop@1. Fix: use the cuda "
                                  "backend (vyre.open('cuda'))" % self.id)
            t = C.c_void_p()
            err = _lib.new_error()
            st = self._vt.get_extension(self._b, _lib.CUDA_INTEROP_NAME, _lib.CUDA_INTEROP_VERSION,
                                        C.byref(t), C.byref(err))
            if st != 0 or not t:
                raise unsupported(
                    "backend %s does not serve the CUDA interop extension vyre.cuda.interop@1 "
                    "(%s), which device arrays and streams need. Fix: use the cuda backend "
                    "(vyre.open('cuda'))" % (self.id, err.message.decode("utf-8", "replace")
                                             .split(". Fix:")[0] or "no table"))
            self._cu = C.cast(t, C.POINTER(_lib.CudaInterop)).contents
        return self._cu

    def cuda_context(self):
        """(CUcontext as an int, CUdevice ordinal) the instance runs in (CUDA interop)."""
        with Call(self):
            cu = self._interop()
            ctx, dev = C.c_void_p(), C.c_int32()
            err = _lib.new_error()
            check(cu.context(self._native, C.byref(ctx), C.byref(dev), C.byref(err)), err,
                  "context")
        return ctx.value or 0, dev.value

    def import_device(self, array, dtype=None):
        """Wrap a device array (PyTorch/CuPy tensor, any __cuda_array_interface__
        or CUDA DLPack producer) as a Resident without copying (CUDA interop).
        The Resident keeps `array` alive; its memory stays the framework's.
        It must be C-contiguous, 16-byte aligned and on this backend's device.
        A read-only array (DLPack READ_ONLY flag, __cuda_array_interface__
        read-only data) gives a read-only Resident (Resident.readonly)."""
        with Call(self):
            arr = self._device_array(array, "the device array", None, None)
            return self._import(arr, dtype)

    def _device_array(self, obj, what, binfo, stream):
        self._interop()
        arr = interop.device_array(obj, what, stream)
        try:
            if binfo is not None:
                interop.check_type(arr, binfo, what)
            if arr.device is not None and arr.device != self.device:
                raise invalid("%s is on CUDA device %d, backend %s runs on device %d. Fix: move "
                              "it (tensor.to('cuda:%d')) or vyre.open('%s', device=%d)" % (
                                  what, arr.device, self.id, self.device, self.device, self.id,
                                  arr.device))
            if arr.nbytes == 0:
                raise invalid("%s is empty. Fix: pass a tensor with at least one element" % what)
        except Exception:
            arr.release()
            raise
        return arr

    def _import(self, arr, dtype=None):
        h = C.c_uint64()
        err = _lib.new_error()
        try:  # inside a Call
            check(self._interop().resident_import(self._native, arr.ptr, arr.nbytes, C.byref(h),
                                                  C.byref(err)), err, "resident_import")
        except Exception:
            arr.release()
            raise
        np_dtype = dtype or {"f32": "float32", "f16": "float16", "u32": "uint32",
                             "i32": "int32", "u64": "uint64", "i64": "int64", "u16": "uint16",
                             "i16": "int16", "u8": "uint8", "i8": "int8"}.get(arr.type)
        return Resident(self, h.value, arr.nbytes, np_dtype, imported=arr)

    def _auto_stream(self, buffers, stream):
        """The stream a call with these buffers runs on: `stream` when given,
        else the current stream of the first PyTorch tensor's or CuPy array's
        framework, else the first array's __cuda_array_interface__ stream,
        else, when a device array is among them, the legacy default stream
        (0: what a DLPack producer is told); None = no chain."""
        if stream is not None:
            return self._stream_handle(stream)
        arrays = []
        for obj in buffers:
            if isinstance(obj, Resident):
                obj = obj._source.obj if obj._source is not None else None
            if obj is not None and interop.is_device_array(obj):
                arrays.append(obj)
        for obj in arrays:
            s = interop.framework_stream(obj)
            if s is not None:
                return self._stream_handle(s)
        for obj in arrays:
            s = interop.cai_stream(obj)
            if s is not None:
                return 0 if s == 1 else s  # 1: the legacy default stream, NULL to vyre
        return 0 if arrays else None

    def _resident_handles(self, call, prog, buffers, stream, temps):
        """Handles for a resident dispatch's buffers (Residents use()d by
        `call`); device arrays are imported into `temps` (freed by the
        caller after the call)."""
        if len(buffers) != len(prog.kernel_buffers):
            raise invalid("%s takes %d buffer(s) for a resident dispatch (%s), %d given. Fix: "
                          "pass one Resident or device array per non-workgroup buffer, in "
                          "declaration order" % (
                              prog.name, len(prog.kernel_buffers),
                              ", ".join(b.name for b in prog.kernel_buffers), len(buffers)))
        hs = (C.c_uint64 * max(len(buffers), 1))()
        for i, (obj, binfo) in enumerate(zip(buffers, prog.kernel_buffers)):
            what = "buffer %d '%s'" % (i, binfo.name)
            if isinstance(obj, Resident):
                if obj.backend is not self:
                    raise invalid("%s is a resident buffer of another backend instance. Fix: "
                                  "allocate it on this one" % what)
                if obj.readonly and binfo.access in ("rw", "wo"):
                    raise invalid("%s imports a read-only array and the program writes '%s'. "
                                  "Fix: pass a writable array" % (what, binfo.name))
                hs[i] = call.use(obj)
                continue
            if not interop.is_device_array(obj):
                raise invalid("%s (%s) is neither a Resident nor a device array. Fix: upload "
                              "host data first (Backend.upload) or pass a CUDA tensor"
                              % (what, type(obj).__name__))
            arr = self._device_array(obj, what, binfo, stream)
            if arr.readonly and binfo.access in ("rw", "wo"):
                arr.release()
                raise invalid("%s is read-only and the program writes '%s'. Fix: pass a "
                              "writable array" % (what, binfo.name))
            r = self._import(arr)
            temps.append(r)
            hs[i] = r.handle
        return hs

    @staticmethod
    def _free_temps(call, temps):
        """After the call: give back what it held, then its per-call imports
        (a DLPack deleter is the producer's code)."""
        call.drop()
        for r in temps:
            src = r._source
            r.free()
            if src is not None:
                src.release()

    def dispatch_resident(self, program, *buffers, workgroup=None, grid=None, fixpoint=None,
                          ulp=None, timing=False, stream=None, indirect=None):
        """Run `program` over resident buffers and wait; returns None (a Timing
        with timing=True).

        buffers: one per non-workgroup buffer in declaration order (outputs
        included), each a Resident of this backend or a device array (a
        PyTorch or CuPy CUDA tensor, any __cuda_array_interface__ or CUDA
        DLPack producer), imported zero copy for the call: the program reads
        and writes the framework's memory in place.  Contents are used as
        they are (nothing is zeroed).  stream: the CUDA stream to order the
        call on; by default the framework's current stream of the first
        device array (torch.cuda.current_stream(), cupy's current stream).
        indirect: a Resident, or (Resident, byte offset), holding three u32
        workgroup counts x y z that the dispatch reads when it runs, within
        the bound the derived grid (or grid=) sets (docs/abi.md, "Indirect
        dispatch"; the backend must offer "indirect_dispatch").
        """
        with Call(self) as call:
            self._need("dispatch_resident")
            ref, prog = self._ref(program, call)
            s = self._auto_stream(buffers, stream)
            temps = []
            try:
                hs = self._resident_handles(call, prog, buffers, s, temps)
                opts, link = self._options(call, workgroup, grid, fixpoint, ulp, s, indirect)
                t = _new_timing() if timing else None
                err = _lib.new_error()
                call.hold()
                check(self._vt.dispatch_resident(self._b, C.byref(ref), hs, len(buffers),
                                                 C.byref(opts) if opts else None,
                                                 C.byref(t) if t else None, C.byref(err)), err,
                      "dispatch_resident")
                del link
            finally:
                self._free_temps(call, temps)
        return Timing(t) if t else None

    def sequence(self, steps, repeat=1, reads=(), timing=False, stream=None):
        """Run `steps` (Step objects, or (program, buffers) tuples) in order on
        one queue, the whole list `repeat` times, with one synchronisation;
        then read back `reads`: each a Resident (whole) or (Resident, offset,
        nbytes).  Returns the reads as a list of arrays (the Resident's
        dtype, else uint8; bytearrays without NumPy), with timing=True
        (reads, Timing).  Device arrays among a step's buffers are imported
        for the call; stream orders it (the first step's options)."""
        repeat = _ints.u32(repeat, "repeat", fix="pass a count from 0 to 4294967295 (0 or 1: once)")
        steps = [s if isinstance(s, Step) else Step(*s) for s in steps]
        _ints.u32(len(steps), "step count", low=1,
                  fix="pass [Step(program, buffers), ...]: at least one step")
        with Call(self) as call:
            self._need("dispatch_sequence")
            strm = self._auto_stream([b for s in steps for b in s.buffers], stream)
            temps, keep = [], []
            carr = (_lib.SequenceStep * len(steps))()
            try:
                for i, s in enumerate(steps):
                    ref, prog = self._ref(s.program, call)
                    hs = self._resident_handles(call, prog, s.buffers, strm, temps)
                    opts, link = self._options(call, stream=strm if i == 0 else None, **s.options)
                    keep += [ref, hs, opts, link]
                    carr[i].struct_size = C.sizeof(_lib.SequenceStep)
                    carr[i].buffer_count = len(s.buffers)
                    carr[i].program = C.pointer(ref)
                    carr[i].buffers = C.cast(hs, C.POINTER(C.c_uint64))
                    carr[i].options = C.pointer(opts) if opts else None
                rarr, results = _sequence_reads(call, reads, keep)
                t = _new_timing() if timing else None
                err = _lib.new_error()
                call.hold()
                check(self._vt.dispatch_sequence(self._b, carr, len(steps), repeat,
                                                 rarr if reads else None, len(reads),
                                                 C.byref(t) if t else None, C.byref(err)), err,
                      "dispatch_sequence")
            finally:
                self._free_temps(call, temps)
        out = [_to_host_array(C.addressof(d), n, dt) for d, n, dt in results]
        return (out, Timing(t)) if timing else out

    def compile(self, program, workgroup=None, ulp=None):
        """Compile ahead (validate, lower, load) once; returns a Pipeline."""
        with Call(self) as call:
            self._need("pipeline_create")
            ref, prog = self._ref(program, call)
            opts, link = self._options(call, workgroup=workgroup, ulp=ulp)
            h = C.c_uint64()
            err = _lib.new_error()
            call.hold()
            check(self._vt.pipeline_create(self._b, C.cast(prog._image, C.c_void_p), prog.size,
                                           C.byref(opts) if opts else None, C.byref(h),
                                           C.byref(err)), err, "pipeline_create")
            return Pipeline(self, h.value, prog)
