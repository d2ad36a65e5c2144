"""host.py -- the process's libvyre-host (opened on first use): the backends it found (BackendInfo), and what calls report (Timing, Profile)."""
import ctypes as C
import threading

from . import _lib
from .errors import check

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
    capabilities (list of names), resident_budget, device_count (0: not
    reported), uuid ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", or None
    when the backend reports none: the reference backend)."""

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
        self.device_count = p.device_count
        self.uuid = uuid_text(bytes(p.uuid))

    def __repr__(self):
        return "<vyre.Profile %s on %s>" % (self.backend_id, self.name)


# ---------------------------------------------------------------------------
# Device UUIDs (the C side's abi/support/uuid.c, for the CLI)
# ---------------------------------------------------------------------------

_HEX = "0123456789abcdef"


def uuid_text(raw):
    """16 bytes as NVIDIA writes them, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    None for all zero (not reported)."""
    if not any(raw):
        return None
    h = raw.hex()
    return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def uuid_prefix(text):
    """The lower-case hex digits of a UUID or a prefix of one as a user
    writes it ("GPU-" optional, any case, dashes only where the canonical
    form has them), or None when `text` is no such thing."""
    if not isinstance(text, str):
        return None
    t = text[4:] if text[:4].upper() == "GPU-" else text
    digits = []
    for i, ch in enumerate(t):
        if ch == "-":
            if len(digits) not in (8, 12, 16, 20) or (i and t[i - 1] == "-"):
                return None
            continue
        if ch.lower() not in _HEX or len(digits) == 32:
            return None
        digits.append(ch.lower())
    return "".join(digits) or None
