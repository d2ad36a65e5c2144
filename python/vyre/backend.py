"""backend.py -- backends through libvyre-host: listing, opening, dispatch, resident buffers, sequences, pipelines, device-array interop."""
import ctypes as C
import threading

from . import _lib, interop
from .errors import check, invalid, make, unsupported
from .program import Program

_np_mod = []


def _np():
    """NumPy, or None when it cannot be imported."""
    if not _np_mod:
        try:
            import numpy
            _np_mod.append(numpy)
        except ImportError:
            _np_mod.append(None)
    return _np_mod[0]


# ---------------------------------------------------------------------------
# The host: one per process, opened on first use
# ---------------------------------------------------------------------------

_host_lock = threading.Lock()
_host = []


def _get_host():
    with _host_lock:
        if not _host:
            h = C.c_void_p()
            err = _lib.new_error()
            check(_lib.vyre_host_open(None, C.byref(h), C.byref(err)), err, "vyre_host_open")
            _host.append(h)
        return _host[0]


def _cap_names(bits):
    out = []
    for bit in range(64):
        if bits >> bit & 1:
            name = _lib.vyre_capability_name(bit)
            out.append(name.decode() if name else "bit%d" % bit)
    return out


def _s(p):
    return p.decode("utf-8", "replace") if p else ""


class BackendInfo(object):
    """One backend candidate that libvyre-host found (what `vyre list` prints).

    Attributes: index, id, version, description, path, build_id, status
    ("loaded", "ready", "unavailable", "skipped"), reason (why skipped or
    unavailable, else ""), origin ("options", "VYRE_BACKEND_PATH",
    "build tree", "plugin dir"), precedence (lower wins), abi ((major,
    minor) agreed), capabilities (list of names, "f16", "resident", ...),
    extensions (list of "name@version"), op_count.
    """

    def __init__(self, index, c):
        self.index = index
        self.id = _s(c.id)
        self.version = _s(c.version)
        self.description = _s(c.description)
        self.path = _s(c.path)
        self.build_id = _s(c.build_id)
        self.status = _lib.vyre_host_status_name(c.status).decode()
        self.reason = _s(c.reason)
        self.origin = _lib.vyre_host_origin_name(c.origin).decode()
        self.precedence = c.precedence
        self.abi = (c.abi_major, c.abi_minor)
        self.capabilities = _cap_names(c.capabilities)
        self.extensions = _s(c.extensions).split() if c.struct_size >= C.sizeof(c) else []
        self.op_count = c.op_count

    def __repr__(self):
        return "<vyre.BackendInfo %s %s %s%s>" % (self.id or "?", self.version, self.status,
                                                  (": " + self.reason) if self.reason else "")


def _info(index):
    c = _lib.HostCandidate()
    c.struct_size = C.sizeof(c)
    err = _lib.new_error()
    check(_lib.vyre_host_backend_info(_get_host(), index, C.byref(c), C.byref(err)), err,
          "vyre_host_backend_info")
    return BackendInfo(index, c)


def backends(probe=True):
    """Every backend candidate found, in search order (skipped ones included).

    probe=True first tries each registered backend's factory once (device
    0), so that status is "ready" or "unavailable" rather than "loaded".
    """
    h = _get_host()
    if probe:
        _lib.vyre_host_probe(h)
    return [_info(i) for i in range(_lib.vyre_host_backend_count(h))]


def open(id=None, device=0):
    """Create an instance of backend `id` ("cuda", "reference") on device
    ordinal `device`; id None takes $VYRE_BACKEND when set, else the best
    backend that works (lowest precedence).  Raises the host's error (with
    every reason) when none can be created."""
    if id is not None and not isinstance(id, str):
        raise invalid("backend id %r is not a string. Fix: pass e.g. 'cuda' or 'reference'" % (id,))
    if not isinstance(device, int) or device < 0:
        raise invalid("device %r is not an ordinal. Fix: pass 0, 1, ..." % (device,))
    opts = _lib.BackendOptions()
    opts.struct_size = C.sizeof(opts)
    opts.device_ordinal = device
    out = _lib.BP()
    index = C.c_uint32()
    err = _lib.new_error()
    check(_lib.vyre_host_create(_get_host(), id.encode() if id else None, C.byref(opts),
                                C.byref(out), C.byref(index), C.byref(err)), err,
          "vyre_host_create")
    return Backend(out, _info(index.value), device)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


class Timing(object):
    """Timing of one call, in nanoseconds; a field the backend did not fill is None.
    wall_ns (call entry to results ready), device_ns (first launch start to
    last launch end, device events), enqueue_ns, wait_ns."""

    __slots__ = ("wall_ns", "device_ns", "enqueue_ns", "wait_ns")

    def __init__(self, t):
        self.wall_ns = t.wall_ns if t.valid & _lib.TIMING_WALL else None
        self.device_ns = t.device_ns if t.valid & _lib.TIMING_DEVICE else None
        self.enqueue_ns = t.enqueue_ns if t.valid & _lib.TIMING_ENQUEUE else None
        self.wait_ns = t.wait_ns if t.valid & _lib.TIMING_WAIT else None

    def __repr__(self):
        return "Timing(wall_ns=%s, device_ns=%s, enqueue_ns=%s, wait_ns=%s)" % (
            self.wall_ns, self.device_ns, self.enqueue_ns, self.wait_ns)


def _new_timing():
    t = _lib.Timing()
    t.struct_size = C.sizeof(t)
    return t


class Profile(object):
    """The device profile of an instance (vyre_device_profile): name, backend_id,
    ordinal, compute_capability ((major, minor), (0, 0) on a CPU),
    compute_units, subgroup_size, max_workgroup_size, max_invocations_per_workgroup,
    max_workgroups, shared_memory_per_workgroup, total_memory, free_memory,
    l2_bytes, memory_bus_bits, memory_clock_khz, driver_version,
    capabilities (list of names), resident_budget."""

    def __init__(self, p):
        self.name = _s(p.name)
        self.backend_id = _s(p.backend_id)
        self.ordinal = p.ordinal
        self.compute_capability = (p.compute_major, p.compute_minor)
        self.compute_units = p.compute_units
        self.subgroup_size = p.subgroup_size
        self.max_workgroup_size = tuple(p.max_workgroup_size)
        self.max_invocations_per_workgroup = p.max_invocations_per_workgroup
        self.max_workgroups = tuple(p.max_workgroups)
        self.shared_memory_per_workgroup = p.shared_memory_per_workgroup
        self.total_memory = p.total_memory
        self.free_memory = p.free_memory
        self.l2_bytes = p.l2_bytes
        self.memory_bus_bits = p.memory_bus_bits
        self.memory_clock_khz = p.memory_clock_khz
        self.driver_version = p.driver_version
        self.capabilities = _cap_names(p.capabilities)
        self.resident_budget = p.resident_budget

    def __repr__(self):
        return "<vyre.Profile %s on %s>" % (self.backend_id, self.name)


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


class Resident(object):
    """A resident buffer: device memory (or the reference backend's host
    memory) that stays between dispatches.  Made by Backend.alloc,
    Backend.upload or Backend.import_device.  Attributes: handle, size
    (bytes), dtype (NumPy dtype name download() returns, or None for uint8),
    imported (True for device memory borrowed from a framework), backend.
    A context manager: leaving the block frees it.  One thread at a time."""

    def __init__(self, backend, handle, size, dtype=None, imported=None):
        self.backend = backend
        self.handle = handle
        self.size = size
        self.dtype = dtype
        self.imported = imported is not None
        self._source = imported  # the framework array whose memory this is

    def _h(self):
        if not self.handle:
            raise make("VYRE_INVALID_HANDLE", "this resident buffer is freed. Fix: allocate a "
                       "new one (Backend.alloc / upload / import_device)")
        self.backend._live()
        return self.handle

    def upload(self, data, offset=0):
        """Copy host data (NumPy array, bytes, any buffer) into the buffer at byte `offset`."""
        b = self.backend
        ptr, n, keep = _host_in(data, _AnyBuffer(None), "upload data")
        err = _lib.new_error()
        if offset == 0 and n == self.size:
            check(b._vt.resident_upload(b._b, self._h(), ptr, n, C.byref(err)), err,
                  "resident_upload")
        else:
            b._need("resident_upload_at")
            check(b._vt.resident_upload_at(b._b, self._h(), offset, ptr, n, C.byref(err)), err,
                  "resident_upload_at")
        del keep

    def download(self, out=None, offset=0, size=None, dtype=None):
        """The buffer's bytes [offset, offset + size) (size None: to the end),
        as a new NumPy array of `dtype` (default: the buffer's dtype, else
        uint8; a bytearray without NumPy), or written into the writable
        buffer `out` (then size defaults to out's size) and out returned."""
        b = self.backend
        err = _lib.new_error()
        h = self._h()
        if out is not None:
            ptr, cap, keep = _host_out(out, _AnyBuffer(None), "download out")
            n = cap if size is None else size
            if n > cap:
                raise invalid("download of %d bytes into a buffer of %d. Fix: pass a larger out"
                              % (n, cap))
        else:
            n = (self.size - offset) if size is None else size
            if n < 0:
                raise invalid("download offset %d is past the buffer's %d bytes. Fix: pass an "
                              "offset below its size" % (offset, self.size))
            keep = C.create_string_buffer(max(n, 1))
            ptr = C.addressof(keep)
        if offset == 0 and n == self.size:
            check(b._vt.resident_download(b._b, h, ptr, n, C.byref(err)), err, "resident_download")
        else:
            b._need("resident_download_range")
            check(b._vt.resident_download_range(b._b, h, offset, ptr, n, C.byref(err)), err,
                  "resident_download_range")
        if out is not None:
            return out
        return _to_host_array(ptr, n, dtype or self.dtype)

    @property
    def device_ptr(self):
        """The buffer's device address (CUDA interop extension); Unsupported elsewhere."""
        cu = self.backend._interop()
        ptr = C.c_uint64()
        err = _lib.new_error()
        check(cu.resident_pointer(self.backend._native, self._h(), C.byref(ptr), None,
                                  C.byref(err)), err, "resident_pointer")
        return ptr.value

    def free(self):
        """Release the handle (an imported buffer's memory stays the framework's).  Idempotent."""
        h, self.handle = self.handle, 0
        b = self.backend
        if h and b._b:
            err = _lib.new_error()
            st = b._vt.resident_free(b._b, h, C.byref(err))
            self._source = None
            check(st, err, "resident_free")
        self._source = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

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


class Pipeline(object):
    """A program compiled ahead on one backend (Backend.compile); pass it
    wherever a program goes on that backend.  Attributes: program, handle.
    A context manager: leaving the block releases it."""

    def __init__(self, backend, handle, program):
        self.backend, self.handle, self.program = backend, handle, program

    def release(self):
        h, self.handle = self.handle, 0
        b = self.backend
        if h and b._b:
            err = _lib.new_error()
            check(b._vt.pipeline_release(b._b, h, C.byref(err)), err, "pipeline_release")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


class Pending(object):
    """A dispatch in flight (Backend.dispatch_async): poll(), wait(), release()."""

    def __init__(self, backend, handle, program, timing):
        self.backend, self.handle, self.program, self._timing = backend, handle, program, timing

    def _h(self):
        if not self.handle:
            raise make("VYRE_INVALID_HANDLE", "this pending dispatch was waited or released. "
                       "Fix: wait() once per dispatch_async")
        self.backend._live()
        return self.handle

    def poll(self):
        """True once the dispatch has completed (or failed)."""
        ready = C.c_int()
        err = _lib.new_error()
        b = self.backend
        check(b._vt.pending_poll(b._b, self._h(), C.byref(ready), C.byref(err)), err,
              "pending_poll")
        return bool(ready.value)

    def wait(self):
        """Wait and return the outputs (as Backend.dispatch; with timing, (outputs, Timing))."""
        b = self.backend
        h = self._h()
        self.handle = 0
        out = C.POINTER(_lib.Outputs)()
        t = _new_timing() if self._timing else None
        err = _lib.new_error()
        check(b._vt.pending_wait(b._b, h, C.byref(out), C.byref(t) if t else None, C.byref(err)),
              err, "pending_wait")
        res = b._take_outputs(out, self.program)
        return (res, Timing(t)) if t else res

    def release(self):
        """Drop the dispatch (it completes on its own).  Idempotent."""
        h, self.handle = self.handle, 0
        b = self.backend
        if h and b._b:
            err = _lib.new_error()
            check(b._vt.pending_release(b._b, h, C.byref(err)), err, "pending_release")

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


class Step(object):
    """One step of a resident sequence: program (Program or Pipeline) over
    `buffers` (Resident buffers or device arrays, one per non-workgroup
    buffer in declaration order), with the dispatch options workgroup,
    grid, fixpoint and ulp."""

    def __init__(self, program, buffers, workgroup=None, grid=None, fixpoint=None, ulp=None):
        self.program, self.buffers = program, list(buffers)
        self.options = dict(workgroup=workgroup, grid=grid, fixpoint=fixpoint, ulp=ulp)


def _triple(v, what):
    if v is None:
        return (0, 0, 0)
    t = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(t) <= 3 or any(not isinstance(x, int) or x < 1 for x in t):
        raise invalid("%s %r is not 1 to 3 positive ints. Fix: pass e.g. 256 or (16, 16)"
                      % (what, v))
    return t + (1,) * (3 - len(t))


# ---------------------------------------------------------------------------
# The backend instance
# ---------------------------------------------------------------------------


class Backend(object):
    """A backend instance (vyre.open).  Free-threaded like the C instance;
    a context manager: leaving the block closes it.  Attributes: id, info
    (BackendInfo), device (ordinal)."""

    def __init__(self, ptr, info, device):
        self._b = ptr
        self._vt = ptr.contents.vt.contents
        self._native = _lib.vyre_host_backend_native(ptr)
        self._cu = None
        self.info = info
        self.id = info.id
        self.device = device

    # Life ----------------------------------------------------------------

    def _live(self):
        if not self._b:
            raise make("VYRE_INVALID_HANDLE", "backend %s is closed. Fix: vyre.open() a new one"
                       % self.id)

    def has(self, entry):
        """True when the instance provides vtable entry `entry` ("dispatch_async", ...)."""
        self._live()
        field = getattr(_lib.Vtable, entry, None)
        if field is None or entry in ("struct_size", "reserved"):
            raise invalid("'%s' is no entry of the backend's function table. Fix: use a name "
                          "of vyre.h's vyre_backend_vtable" % entry)
        return bool(_lib.vyre_host_vtable_has(self._b, field.offset))

    def _need(self, entry):
        if not self.has(entry):
            raise unsupported("backend %s does not provide %s. Fix: use a backend that does "
                              "(vyre.backends() lists their capabilities)" % (self.id, entry))

    def close(self):
        """Destroy the instance (every handle it made is released).  Idempotent."""
        b, self._b = self._b, None
        if b:
            self._vt.destroy(b)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<vyre.Backend %s (device %d)%s>" % (self.id, self.device,
                                                    "" if self._b else " closed")

    # Queries ---------------------------------------------------------------

    def profile(self):
        """The device profile (a Profile)."""
        self._need("device_profile")
        p = _lib.DeviceProfile()
        p.struct_size = C.sizeof(p)
        err = _lib.new_error()
        check(self._vt.device_profile(self._b, C.byref(p), C.byref(err)), err, "device_profile")
        return Profile(p)

    @property
    def capabilities(self):
        """The capability names this instance's device has (profile().capabilities)."""
        return self.profile().capabilities

    def metrics(self):
        """The backend's counters: a dict name -> int."""
        self._need("metrics")
        err = _lib.new_error()
        count = C.c_uint32()
        check(self._vt.metrics(self._b, None, 0, C.byref(count), C.byref(err)), err, "metrics")
        arr = (_lib.Metric * max(count.value, 1))()
        check(self._vt.metrics(self._b, arr, count.value, C.byref(count), C.byref(err)), err,
              "metrics")
        return {m.name.decode(): m.value for m in arr[:min(count.value, len(arr))]}

    def prepare(self):
        """Warm up (contexts, streams) so the first dispatch is not slow."""
        self._need("prepare")
        err = _lib.new_error()
        check(self._vt.prepare(self._b, C.byref(err)), err, "prepare")

    def shutdown(self):
        """Wait for all work and release cached resources; the instance stays usable."""
        self._need("shutdown")
        err = _lib.new_error()
        check(self._vt.shutdown(self._b, C.byref(err)), err, "shutdown")

    # Programs and options ----------------------------------------------------

    def _ref(self, program):
        """(vyre_program_ref, Program) for a Program, Pipeline or program bytes."""
        if isinstance(program, Pipeline):
            if program.backend is not self:
                raise invalid("the pipeline was compiled on another backend instance. Fix: "
                              "compile it on this one (Backend.compile)")
            if not program.handle:
                raise make("VYRE_INVALID_HANDLE", "the pipeline is released. Fix: compile it "
                           "again")
            return _lib.ProgramRef(C.sizeof(_lib.ProgramRef), 0, None, 0, program.handle), \
                program.program
        if isinstance(program, (bytes, bytearray, memoryview)):
            program = Program(program)
        if not isinstance(program, Program):
            raise invalid("%r is not a program. Fix: pass a vyre.Program (vyre.assemble(text), "
                          "vyre.load(path), Builder.finish()) or a Pipeline" % (program,))
        ref = _lib.ProgramRef(C.sizeof(_lib.ProgramRef), 0,
                              C.cast(program._image, C.c_void_p), program.size, 0)
        return ref, program

    def _options(self, workgroup=None, grid=None, fixpoint=None, ulp=None, stream=None):
        """(DispatchOptions or None, keepalive) for the call's options; stream
        (a CUstream as an int) chains vyre_cuda_stream."""
        if workgroup is None and grid is None and fixpoint is None and ulp is None and \
                stream is None:
            return None, None
        o = _lib.DispatchOptions()
        o.struct_size = C.sizeof(o)
        o.workgroup[:] = _triple(workgroup, "workgroup")
        o.grid[:] = _triple(grid, "grid")
        for name, v in (("fixpoint", fixpoint), ("ulp", ulp)):
            if v is not None and (not isinstance(v, int) or v < 0 or v > 0xFFFFFFFF):
                raise invalid("%s %r is not a u32 count. Fix: pass a non-negative int" % (name, v))
        o.fixpoint_iterations = fixpoint or 0
        o.ulp_budget = ulp or 0
        link = None
        if stream is not None:
            self._interop()
            link = _lib.CudaStream()
            link.head.struct_size = C.sizeof(link)
            link.head.type = _lib.EXT_CUDA_STREAM
            link.stream = stream or None
            o.next = C.pointer(link.head)
        return o, link

    @staticmethod
    def _stream_handle(stream):
        """A stream argument as a CUstream int: an int, a torch.cuda.Stream
        (.cuda_stream) or a CuPy stream (.ptr)."""
        if stream is None or isinstance(stream, int):
            return stream
        for attr in ("cuda_stream", "ptr", "handle"):
            v = getattr(stream, attr, None)
            if isinstance(v, int):
                return v
        raise invalid("stream %r is not a CUDA stream. Fix: pass a torch.cuda.Stream, a "
                      "cupy.cuda.Stream or a CUstream handle as an int" % (stream,))

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
        self._need("dispatch")
        ref, prog = self._ref(program)
        arr, keep = self._inputs(prog, inputs)
        opts, link = self._options(workgroup, grid, fixpoint, ulp, self._stream_handle(stream))
        t = _new_timing() if timing else None
        err = _lib.new_error()
        if out is None:
            res = C.POINTER(_lib.Outputs)()
            check(self._vt.dispatch(self._b, C.byref(ref), arr, len(inputs),
                                    C.byref(opts) if opts else None, C.byref(res),
                                    C.byref(t) if t else None, C.byref(err)), err, "dispatch")
            outputs = self._take_outputs(res, prog)
        else:
            self._need("dispatch_into")
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(out) != len(prog.outputs):
                raise invalid("%s has %d output(s) (%s), out= gives %d. Fix: pass one writable "
                              "buffer per output" % (prog.name, len(prog.outputs),
                                                     ", ".join(b.name for b in prog.outputs),
                                                     len(out)))
            slots = (_lib.OutputSlot * max(len(out), 1))()
            for i, (o, binfo) in enumerate(zip(out, prog.outputs)):
                ptr, cap, k = _host_out(o, binfo, "out[%d] '%s'" % (i, binfo.name))
                slots[i].data, slots[i].capacity = ptr, cap
                keep.append(k)
            check(self._vt.dispatch_into(self._b, C.byref(ref), arr, len(inputs),
                                         C.byref(opts) if opts else None, slots, len(out),
                                         C.byref(t) if t else None, C.byref(err)), err,
                  "dispatch_into")
            outputs = out
        del keep, link
        return (outputs, Timing(t)) if t else outputs

    def dispatch_async(self, program, *inputs, workgroup=None, grid=None, fixpoint=None,
                       ulp=None, timing=False, stream=None):
        """Enqueue a dispatch (inputs as dispatch; they are copied before this
        returns) and return a Pending; Pending.wait() gives the outputs."""
        self._live()
        self._need("dispatch_async")
        ref, prog = self._ref(program)
        arr, keep = self._inputs(prog, inputs)
        opts, link = self._options(workgroup, grid, fixpoint, ulp, self._stream_handle(stream))
        h = C.c_uint64()
        err = _lib.new_error()
        check(self._vt.dispatch_async(self._b, C.byref(ref), arr, len(inputs),
                                      C.byref(opts) if opts else None, C.byref(h), C.byref(err)),
              err, "dispatch_async")
        del keep, link
        return Pending(self, h.value, prog, timing)

    # Resident buffers --------------------------------------------------------------

    def alloc(self, size, dtype=None):
        """A new zero-filled resident buffer of `size` bytes (a Resident);
        dtype: the NumPy dtype name its download() returns."""
        self._live()
        self._need("resident_alloc")
        if not isinstance(size, int) or size < 0:
            raise invalid("resident size %r is not a byte count. Fix: pass a non-negative int"
                          % (size,))
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
        """The CUDA interop table, or Unsupported."""
        self._live()
        if self._cu is None:
            if not self.has("get_extension"):
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
        cu = self._interop()
        ctx, dev = C.c_void_p(), C.c_int32()
        err = _lib.new_error()
        check(cu.context(self._native, C.byref(ctx), C.byref(dev), C.byref(err)), err, "context")
        return ctx.value or 0, dev.value

    def import_device(self, array, dtype=None):
        """Wrap a device array (PyTorch/CuPy tensor, any __cuda_array_interface__
        or CUDA DLPack producer) as a Resident without copying (CUDA interop).
        The Resident keeps `array` alive; its memory stays the framework's.
        It must be C-contiguous, 16-byte aligned and on this backend's device."""
        arr = self._device_array(array, "the device array", None, None)
        return self._import(arr, dtype)

    def _device_array(self, obj, what, binfo, stream):
        cu = self._interop()
        del cu
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
        cu = self._interop()
        h = C.c_uint64()
        err = _lib.new_error()
        try:
            check(cu.resident_import(self._native, arr.ptr, arr.nbytes, C.byref(h), C.byref(err)),
                  err, "resident_import")
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
                return s
        for obj in arrays:
            cai, _ = interop._cai(obj)
            if cai is not None and cai.get("stream") is not None:
                v = int(cai["stream"])
                return 0 if v == 1 else v  # 1: the legacy default stream, NULL to vyre
        return 0 if arrays else None

    def _resident_handles(self, prog, buffers, stream, temps):
        """Handles for a resident dispatch's buffers; device arrays are imported
        into `temps` (freed by the caller after the call)."""
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
                hs[i] = obj._h()
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

    def dispatch_resident(self, program, *buffers, workgroup=None, grid=None, fixpoint=None,
                          ulp=None, timing=False, stream=None):
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
        """
        self._live()
        self._need("dispatch_resident")
        ref, prog = self._ref(program)
        s = self._auto_stream(buffers, stream)
        temps = []
        try:
            hs = self._resident_handles(prog, buffers, s, temps)
            opts, link = self._options(workgroup, grid, fixpoint, ulp, s)
            t = _new_timing() if timing else None
            err = _lib.new_error()
            check(self._vt.dispatch_resident(self._b, C.byref(ref), hs, len(buffers),
                                             C.byref(opts) if opts else None,
                                             C.byref(t) if t else None, C.byref(err)), err,
                  "dispatch_resident")
            del link
        finally:
            for r in temps:
                src = r._source
                r.free()
                if src is not None:
                    src.release()
        return Timing(t) if t else None

    def sequence(self, steps, repeat=1, reads=(), timing=False, stream=None):
        """Run `steps` (Step objects, or (program, buffers) tuples) in order on
        one queue, the whole list `repeat` times, with one synchronisation;
        then read back `reads`: each a Resident (whole) or (Resident, offset,
        nbytes).  Returns the reads as a list of arrays (the Resident's
        dtype, else uint8; bytearrays without NumPy), with timing=True
        (reads, Timing).  Device arrays among a step's buffers are imported
        for the call; stream orders it (the first step's options)."""
        self._live()
        self._need("dispatch_sequence")
        if not isinstance(repeat, int) or repeat < 0:
            raise invalid("repeat %r is not a count. Fix: pass an int >= 1" % (repeat,))
        steps = [s if isinstance(s, Step) else Step(*s) for s in steps]
        if not steps:
            raise invalid("a sequence needs at least one step. Fix: pass [Step(program, "
                          "buffers), ...]")
        allbufs = [b for s in steps for b in s.buffers]
        strm = self._auto_stream(allbufs, stream)
        temps, keep = [], []
        carr = (_lib.SequenceStep * len(steps))()
        try:
            for i, s in enumerate(steps):
                ref, prog = self._ref(s.program)
                hs = self._resident_handles(prog, s.buffers, strm, temps)
                opts, link = self._options(stream=strm if i == 0 else None, **s.options)
                keep += [ref, hs, opts, link]
                carr[i].struct_size = C.sizeof(_lib.SequenceStep)
                carr[i].buffer_count = len(s.buffers)
                carr[i].program = C.pointer(ref)
                carr[i].buffers = C.cast(hs, C.POINTER(C.c_uint64))
                carr[i].options = C.pointer(opts) if opts else None
            rarr = (_lib.ResidentCopy * max(len(reads), 1))()
            results = []
            for i, r in enumerate(reads):
                buf, off, n = (r, 0, None) if isinstance(r, Resident) else (tuple(r) + (None,))[:3]
                if not isinstance(buf, Resident):
                    raise invalid("read %d is not a Resident or (Resident, offset, nbytes). Fix: "
                                  "pass resident buffers" % i)
                n = buf.size - off if n is None else n
                dst = C.create_string_buffer(max(n, 1))
                keep.append(dst)
                rarr[i].buffer, rarr[i].offset = buf._h(), off
                rarr[i].host, rarr[i].size = C.cast(dst, C.c_void_p), n
                results.append((dst, n, buf.dtype))
            t = _new_timing() if timing else None
            err = _lib.new_error()
            check(self._vt.dispatch_sequence(self._b, carr, len(steps), repeat,
                                             rarr if reads else None, len(reads),
                                             C.byref(t) if t else None, C.byref(err)), err,
                  "dispatch_sequence")
        finally:
            for r in temps:
                src = r._source
                r.free()
                if src is not None:
                    src.release()
        out = [_to_host_array(C.addressof(d), n, dt) for d, n, dt in results]
        return (out, Timing(t)) if timing else out

    def compile(self, program, workgroup=None, ulp=None):
        """Compile ahead (validate, lower, load) once; returns a Pipeline."""
        self._live()
        self._need("pipeline_create")
        ref, prog = self._ref(program)
        opts, link = self._options(workgroup=workgroup, ulp=ulp)
        h = C.c_uint64()
        err = _lib.new_error()
        check(self._vt.pipeline_create(self._b, C.cast(prog._image, C.c_void_p), prog.size,
                                       C.byref(opts) if opts else None, C.byref(h), C.byref(err)),
              err, "pipeline_create")
        return Pipeline(self, h.value, prog)
