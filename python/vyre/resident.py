"""resident.py -- host buffers in and out of calls, and the handles a backend makes: resident buffers, pipelines, pending dispatches; the steps of a sequence."""
import ctypes as C

from . import _ints, _lib, dlpack, interop
from ._handle import Call, OwnedHandle
from .errors import Unsupported, check, invalid  # noqa: F401 (Unsupported: generated)
from .host import Timing, _new_timing, _np

# ---------------------------------------------------------------------------
# Host buffers
# ---------------------------------------------------------------------------


def _dtype_mismatch(what, have, binfo, np):
    return invalid("%s is %s, the program's buffer '%s' is %s. Fix: pass an array of NumPy "
                   "dtype %s (x.astype(numpy.%s))" % (what, have, binfo.name, binfo.type,
                                                      binfo.dtype, binfo.dtype))


def _host_in(obj, binfo, what):
    """(pointer, nbytes, keepalive) of a host input for buffer binfo."""
    np = _np()
    if isinstance(obj, Resident) or interop.is_device_array(obj):
        raise invalid("%s is device memory; dispatch takes host buffers. Fix: pass device "
                      "tensors and Resident buffers to dispatch_resident (one per buffer, "
                      "outputs included, written in place)" % what)
    if binfo.dtype is None and isinstance(obj, (bool, int, float, list, tuple)):
        raise invalid("%s is a Python number or list: its element type is unknown. Fix: pass a "
                      "NumPy array of the type you mean (numpy.array(v, dtype=numpy.float32))"
                      % what)
    if isinstance(obj, (bool, int, float)):
        if np is None:
            raise invalid("%s is a Python number; without NumPy only buffers are taken. Fix: "
                          "pass bytes (struct.pack) or install NumPy" % what)
        try:
            obj = np.array([obj], dtype=binfo.dtype)
        except (OverflowError, ValueError):
            raise invalid("%s = %r does not fit buffer '%s' (%s). Fix: pass a value in range"
                          % (what, obj, binfo.name, binfo.type))
    elif isinstance(obj, (list, tuple)):
        if np is None:
            raise invalid("%s is a list; without NumPy only buffers are taken. Fix: pass bytes "
                          "or install NumPy" % what)
        try:
            obj = np.array(obj, dtype=binfo.dtype)
        except (OverflowError, ValueError, TypeError):
            raise invalid("%s does not convert to %s. Fix: pass numbers in the range of %s"
                          % (what, binfo.dtype, binfo.type))
    if (np is None or not isinstance(obj, np.ndarray)) and not _is_buffer(obj) and \
            interop.cpu_dlpack(obj):
        arr = interop.host_array(obj, what)  # read for the call, given back after
        if binfo.dtype is not None and binfo.type not in ("raw", arr.type) and \
                not (binfo.type == "bool" and arr.type in ("u32", "i32")):
            arr.release()
            raise invalid("%s holds %s elements, the program's buffer '%s' is %s. Fix: pass a "
                          "tensor of NumPy dtype %s" % (what, arr.type, binfo.name, binfo.type,
                                                        binfo.dtype))
        return (arr.ptr if arr.nbytes else None), arr.nbytes, arr
    if np is not None and not isinstance(obj, np.ndarray) and not _is_buffer(obj) and \
            hasattr(obj, "__array__"):
        obj = np.asarray(obj)
    if np is not None and isinstance(obj, np.ndarray):
        want = np.dtype(binfo.dtype) if binfo.dtype is not None else obj.dtype
        if obj.dtype != want:
            if binfo.type == "bool" and obj.dtype == np.bool_:
                obj = obj.astype(np.uint32)
            else:
                raise _dtype_mismatch(what, obj.dtype, binfo, np)
        a = np.ascontiguousarray(obj)
        return (a.ctypes.data if a.nbytes else None), a.nbytes, a
    try:
        mv = memoryview(obj)
    except TypeError:
        raise invalid("%s (%s) is no buffer. Fix: pass a NumPy array, bytes, bytearray, "
                      "memoryview or array.array" % (what, type(obj).__name__))
    if not mv.c_contiguous:
        mv = memoryview(mv.tobytes())
    mv = mv.cast("B")
    n = mv.nbytes
    if n == 0:
        return None, 0, mv
    if np is not None:
        a = np.frombuffer(mv, dtype=np.uint8)
        return a.ctypes.data, n, (a, mv)
    if mv.readonly:
        c = (C.c_char * n).from_buffer_copy(mv)
    else:
        c = (C.c_char * n).from_buffer(mv)
    return C.addressof(c), n, (c, mv)


def _is_buffer(obj):
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def _host_out(obj, binfo, what):
    """(pointer, capacity, keepalive) of a caller's writable output buffer."""
    np = _np()
    if (np is None or not isinstance(obj, np.ndarray)) and not _is_buffer(obj) and \
            interop.cpu_dlpack(obj):
        arr = interop.host_array(obj, what)
        if arr.readonly:
            arr.release()
            raise invalid("%s is read-only (its DLPack tensor has the READ_ONLY flag) and vyre "
                          "writes into it. Fix: pass a writable tensor, or let the call return "
                          "a new array" % what)
        return (arr.ptr if arr.nbytes else None), arr.nbytes, arr
    if np is not None and isinstance(obj, np.ndarray):
        if binfo.dtype is not None and obj.dtype != np.dtype(binfo.dtype):
            raise _dtype_mismatch(what, obj.dtype, binfo, np)
        if not obj.flags.c_contiguous or not obj.flags.writeable:
            raise invalid("%s is not a writable C-contiguous array. Fix: pass numpy.empty(n, "
                          "dtype=numpy.%s)" % (what, binfo.dtype))
        return (obj.ctypes.data if obj.nbytes else None), obj.nbytes, obj
    try:
        mv = memoryview(obj)
    except TypeError:
        raise invalid("%s (%s) is no buffer. Fix: pass a NumPy array, bytearray, writable "
                      "memoryview or array.array" % (what, type(obj).__name__))
    if mv.readonly or not mv.c_contiguous:
        raise invalid("%s is read-only or not contiguous. Fix: pass a bytearray, a NumPy array "
                      "or another writable contiguous buffer" % what)
    mv = mv.cast("B")
    if mv.nbytes == 0:
        return None, 0, mv
    c = (C.c_char * mv.nbytes).from_buffer(mv)
    return C.addressof(c), mv.nbytes, (c, mv)


def _to_host_array(ptr, size, dtype):
    """A new NumPy array (bytearray without NumPy) holding `size` bytes at ptr."""
    np = _np()
    if np is None:
        return bytearray(C.string_at(ptr, size)) if size else bytearray()
    dt = np.dtype(dtype or "uint8")
    if size % dt.itemsize:
        dt = np.dtype("uint8")
    a = np.empty(size // dt.itemsize, dtype=dt)
    if size:
        C.memmove(a.ctypes.data, ptr, size)
    return a


# ---------------------------------------------------------------------------
# Handles: resident buffers, pipelines, pending dispatches
# ---------------------------------------------------------------------------


class Resident(OwnedHandle):
    """A resident buffer: device memory (or the reference backend's host
    memory) that stays between dispatches.  Made by Backend.alloc,
    Backend.upload or Backend.import_device.  Attributes: handle, size
    (bytes), dtype (NumPy dtype name download() returns, or None for uint8),
    imported (True for device memory borrowed from a framework), backend.
    readonly: True for an import of a read-only array (vyre never writes
    it: upload and program buffers the program writes are refused).
    A DLPack producer (__dlpack__, __dlpack_device__: torch.from_dlpack,
    numpy.from_dlpack, ...; docs/python.md, "DLPack").
    A context manager: leaving the block frees it.  Calls that use it run
    one at a time (threads wait for each other); free() waits for them."""

    def __init__(self, backend, handle, size, dtype=None, imported=None):
        OwnedHandle.__init__(self)
        self.backend = backend
        self.handle = handle
        self.size = size
        self.dtype = dtype
        self.imported = imported is not None
        self.readonly = bool(imported is not None and imported.readonly)
        self._source = imported  # the framework array whose memory this is

    def _closed_text(self):
        return ("this resident buffer is freed. Fix: allocate a new one (Backend.alloc / "
                "upload / import_device)")

    def upload(self, data, offset=0):
        """Copy host data (NumPy array, bytes, any buffer) into the buffer at byte `offset`."""
        b = self.backend
        if self.readonly:
            raise invalid("this resident buffer imports a read-only array; vyre does not write "
                          "it. Fix: import a writable array, or upload into a new buffer "
                          "(Backend.upload)")
        offset = _ints.u64(offset, "upload offset", fix="pass a byte offset inside the buffer")
        ptr, n, keep = _host_in(data, _AnyBuffer(None), "upload data")
        err = _lib.new_error()
        with Call(b) as call:
            h = call.use(self)
            whole = offset == 0 and n == self.size
            if not whole:
                b._need("resident_upload_at")
            call.hold()
            if whole:
                check(b._vt.resident_upload(b._b, h, ptr, n, C.byref(err)), err,
                      "resident_upload")
            else:
                check(b._vt.resident_upload_at(b._b, h, offset, ptr, n, C.byref(err)), err,
                      "resident_upload_at")
        del keep

    def download(self, out=None, offset=0, size=None, dtype=None):
        """The buffer's bytes [offset, offset + size) (size None: to the end),
        as a new NumPy array of `dtype` (default: the buffer's dtype, else
        uint8; a bytearray without NumPy), or written into the writable
        buffer `out` (then size defaults to out's size) and out returned."""
        b = self.backend
        offset = _ints.u64(offset, "download offset", fix="pass a byte offset inside the buffer")
        if size is not None:
            size = _ints.u64(size, "download size", fix="pass a byte count")
        if out is not None:
            ptr, cap, keep = _host_out(out, _AnyBuffer(None), "download out")
            n = cap if size is None else size
            if n > cap:
                raise invalid("download of %d bytes into a buffer of %d. Fix: pass a larger out"
                              % (n, cap))
        else:
            n = (self.size - offset) if size is None else size
            if n < 0 or offset + n > self.size:
                raise invalid("download of [%d, %d) is past the buffer's %d bytes. Fix: pass an "
                              "offset and size inside it" % (offset, offset + n, self.size))
            keep = C.create_string_buffer(max(n, 1))
            ptr = C.addressof(keep)
        err = _lib.new_error()
        with Call(b) as call:
            h = call.use(self)
            whole = offset == 0 and n == self.size
            if not whole:
                b._need("resident_download_range")
            call.hold()
            if whole:
                check(b._vt.resident_download(b._b, h, ptr, n, C.byref(err)), err,
                      "resident_download")
            else:
                check(b._vt.resident_download_range(b._b, h, offset, ptr, n, C.byref(err)), err,
                      "resident_download_range")
        if out is not None:
            return out
        return _to_host_array(ptr, n, dtype or self.dtype)

    @property
    def device_ptr(self):
        """The buffer's device address (CUDA interop extension); Unsupported elsewhere."""
        b = self.backend
        ptr = C.c_uint64()
        err = _lib.new_error()
        with Call(b) as call:
            cu = b._interop()
            h = call.use(self)
            call.hold()
            check(cu.resident_pointer(b._native, h, C.byref(ptr), None, C.byref(err)), err,
                  "resident_pointer")
        return ptr.value

    # DLPack export ---------------------------------------------------------

    def _dl_home(self):
        """(device type, id) where the buffer lives for DLPack, and whether
        its memory can be handed out: CUDA memory (the interop extension)
        yes; a backend without it keeps buffers inside the plugin (the
        reference backend: host memory, exported as a copy)."""
        self._check_open()
        try:
            return (dlpack.KDL_CUDA, self.backend.cuda_context()[1]), True
        except Unsupported:  # no CUDA interop extension
            return (dlpack.KDL_CPU, 0), False

    def __dlpack_device__(self):
        """(kDLCUDA = 2, CUDA ordinal) on the CUDA backend, (kDLCPU = 1, 0) elsewhere."""
        return self._dl_home()[0]

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the buffer as a 1-D tensor of its dtype (uint8
        without one): "dltensor_versioned" (DLPack 1.0, flags READ_ONLY for
        a read-only import, IS_COPIED for a copy) when max_version >= (1, 0),
        else "dltensor".  On CUDA the tensor is the buffer's memory (zero
        copy; stream needs no wait: vyre's waiting calls finish their device
        work before they return; wait a dispatch_async first); copy=True
        there raises BufferError.  dl_device=(1, 0) (kDLCPU), and every
        export on the reference backend, is a host copy made now; copy=False
        then raises BufferError.  The tensor keeps this object alive; free()
        or closing the backend while a consumer holds it is the caller's
        mistake (as with any framework's buffer)."""
        home, zero_copy = self._dl_home()
        if stream is not None and (not isinstance(stream, int) or isinstance(stream, bool)):
            raise BufferError("__dlpack__: stream %r is not an int or None" % (stream,))
        want = home if dl_device is None else (int(dl_device[0]), int(dl_device[1]))
        versioned = max_version is not None and tuple(max_version)[0] >= dlpack.VERSION[0]
        if want == home and zero_copy and copy is not True:
            flags = dlpack.FLAG_READ_ONLY if self.readonly else 0
            return dlpack.export(self.device_ptr, self.size, self.dtype, home, flags, self,
                                 versioned)
        if want == (dlpack.KDL_CPU, 0) and copy is not False:
            host = self.download()
            if isinstance(host, bytearray):  # no NumPy
                ptr = C.addressof((C.c_char * len(host)).from_buffer(host)) if host else 0
            else:
                ptr = host.ctypes.data
            return dlpack.export(ptr, self.size, self.dtype, want, dlpack.FLAG_IS_COPIED,
                                 (self, host), versioned)
        if want == home or want == (dlpack.KDL_CPU, 0):
            raise BufferError(
                "__dlpack__(copy=%r): %s. Fix: %s" % (
                    copy, "the reference backend keeps resident buffers inside the plugin, so "
                    "only a host copy can be exported" if not zero_copy else
                    "vyre makes no device copy of a resident buffer",
                    "pass copy=None (a copy is made) or download()" if not zero_copy else
                    "export without copy and clone it (torch.from_dlpack(r).clone()), or "
                    "dl_device=(1, 0) for a host copy"))
        raise BufferError("__dlpack__: the buffer is on device %r; dl_device %r is not offered. "
                          "Fix: ask for %r, or (1, 0) for a host copy" % (home, want, home))

    def free(self):
        """Release the handle (an imported buffer's memory stays the framework's),
        after the call in flight on it.  Idempotent."""
        self.close()

    def _release(self):
        self._source = None
        _release_through(self, "resident_free")

    def __repr__(self):
        return "<vyre.Resident %#x, %d bytes%s%s>" % (self.handle, self.size,
                                                      ", imported" if self.imported else "",
                                                      "" if self.handle else ", freed")


class _AnyBuffer(object):
    """A stand-in BufferInfo for uploads and downloads: the dtype is the buffer's own."""

    def __init__(self, dtype):
        self.dtype = dtype  # None: any dtype, taken as raw bytes
        self.type = "raw"
        self.name = "resident"


def _dtype_of(obj):
    np = _np()
    if np is not None and isinstance(obj, np.ndarray):
        return str(obj.dtype)
    return None


def _release_through(handle, entry):
    """Release handle.handle once through the backend's vtable entry
    `entry` (resident_free, pipeline_release, pending_release); a closed
    or closing backend owns nothing any more (destroy releases every
    handle), so there is nothing to release then."""
    h, handle.handle = handle.handle, 0
    b = handle.backend
    if h and b._try_enter():
        try:
            err = _lib.new_error()
            check(getattr(b._vt, entry)(b._b, h, C.byref(err)), err, entry)
        finally:
            b._leave()


class Pipeline(OwnedHandle):
    """A program compiled ahead on one backend (Backend.compile); pass it
    wherever a program goes on that backend.  Attributes: program, handle.
    A context manager: leaving the block releases it.  Calls that use it
    run one at a time; release() waits for them."""

    def __init__(self, backend, handle, program):
        OwnedHandle.__init__(self)
        self.backend, self.handle, self.program = backend, handle, program

    def _closed_text(self):
        return "the pipeline is released. Fix: compile it again"

    def release(self):
        """Release the pipeline.  Idempotent."""
        self.close()

    def _release(self):
        _release_through(self, "pipeline_release")


class Pending(OwnedHandle):
    """A dispatch in flight (Backend.dispatch_async): poll(), wait(), release().
    One call at a time; release() waits for a poll() in flight."""

    def __init__(self, backend, handle, program, timing):
        OwnedHandle.__init__(self)
        self.backend, self.handle, self.program, self._timing = backend, handle, program, timing

    def _closed_text(self):
        return "this pending dispatch was waited or released. Fix: wait() once per dispatch_async"

    def poll(self):
        """True once the dispatch has completed (or failed)."""
        ready = C.c_int()
        err = _lib.new_error()
        b = self.backend
        with Call(b) as call:
            h = call.use(self)
            call.hold()
            check(b._vt.pending_poll(b._b, h, C.byref(ready), C.byref(err)), err, "pending_poll")
        return bool(ready.value)

    def wait(self):
        """Wait and return the outputs (as Backend.dispatch; with timing, (outputs, Timing))."""
        b = self.backend
        out = C.POINTER(_lib.Outputs)()
        t = _new_timing() if self._timing else None
        err = _lib.new_error()
        with Call(b) as call:
            h = call.use(self)
            call.hold()
            self.handle = 0  # pending_wait releases it, whatever it answers
            self._retire()
            check(b._vt.pending_wait(b._b, h, C.byref(out), C.byref(t) if t else None,
                                     C.byref(err)), err, "pending_wait")
            res = b._take_outputs(out, self.program)
        return (res, Timing(t)) if t else res

    def release(self):
        """Drop the dispatch (it completes on its own).  Idempotent."""
        self.close()

    def _release(self):
        _release_through(self, "pending_release")


class Step(object):
    """One step of a resident sequence: program (Program or Pipeline) over
    `buffers` (Resident buffers or device arrays, one per non-workgroup
    buffer in declaration order), with the dispatch options workgroup,
    grid, fixpoint and ulp, and indirect: a Resident, or (Resident, byte
    offset), whose three u32 words x y z are the step's workgroup count,
    read when the step runs (after the steps before it)."""

    def __init__(self, program, buffers, workgroup=None, grid=None, fixpoint=None, ulp=None,
                 indirect=None):
        self.program, self.buffers = program, list(buffers)
        self.options = dict(workgroup=workgroup, grid=grid, fixpoint=fixpoint, ulp=ulp,
                            indirect=indirect)


def _sequence_reads(call, reads, keep):
    """(vyre_resident_copy array, [(host buffer, nbytes, dtype)]) for a
    sequence's reads (each Resident use()d by `call`)."""
    reads = list(reads)
    _ints.u32(len(reads), "read count")
    rarr = (_lib.ResidentCopy * max(len(reads), 1))()
    results = []
    for i, r in enumerate(reads):
        t = (r,) if isinstance(r, Resident) else tuple(r) if isinstance(r, (tuple, list)) else ()
        buf, off, n = (t + (None, 0, None)[len(t):])[:3] if len(t) <= 3 else (None, 0, None)
        if not isinstance(buf, Resident):
            raise invalid("read %d is not a Resident or (Resident, offset, nbytes). Fix: "
                          "pass resident buffers" % i)
        if buf.backend is not call.backend:
            raise invalid("read %d is a resident buffer of another backend instance. Fix: read "
                          "buffers of the backend that runs the sequence" % i)
        off = _ints.u64(off, "read %d offset" % i, fix="pass a byte offset inside the buffer")
        n = buf.size - off if n is None else _ints.u64(n, "read %d size" % i,
                                                        fix="pass a byte count")
        if n < 0 or off + n > buf.size:
            raise invalid("read %d of [%d, %d) is past the buffer's %d bytes. Fix: pass an "
                          "offset and size inside it" % (i, off, off + n, buf.size))
        dst = C.create_string_buffer(max(n, 1))
        keep.append(dst)
        rarr[i].buffer, rarr[i].offset = call.use(buf), off
        rarr[i].host, rarr[i].size = C.cast(dst, C.c_void_p), n
        results.append((dst, n, buf.dtype))
    return rarr, results
