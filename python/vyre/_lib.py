"""_lib.py -- loads libvyre and libvyre-host with ctypes and mirrors the C structs of abi/vyre/*.h.

Nothing here is public: the rest of the package calls these prototypes.
Every struct below has the layout of its C twin; tests/python/test_layout.py
checks each size and offset that the headers' VYRE_STATIC_ASSERTs state.
"""
import ctypes as C
import os

# ---------------------------------------------------------------------------
# Finding the libraries
# ---------------------------------------------------------------------------

# vyre.h's VYRE_ABI_MAJOR and VYRE_ABI_MINOR, the ABI this package speaks.
ABI_MAJOR = 1
ABI_MINOR = 1

# The sonames: their major is the ABI major (share/doc/vyre/abi.md,
# "Library versions and sonames").
LIBVYRE = "libvyre.so.%d" % ABI_MAJOR
LIBVYRE_HOST = "libvyre-host.so.%d" % ABI_MAJOR


def _build_tree_dirs():
    """The build tree this package copy lives in (<top>/python/vyre), or None."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    abi = os.path.join(top, "abi", ".libs")
    host = os.path.join(top, "host-stub", "loader", ".libs")
    if os.path.isfile(os.path.join(abi, LIBVYRE)) and os.path.isfile(os.path.join(host, LIBVYRE_HOST)):
        return abi, host
    return None


def _candidates():
    """(where, libvyre path, libvyre-host path) in the order they are tried.

    VYRE_LIB_DIR, when set, is the only place: a directory that is wrong
    is an error, not a silent fall back to another copy."""
    env = os.environ.get("VYRE_LIB_DIR")
    if env:
        return [("VYRE_LIB_DIR=" + env, os.path.join(env, LIBVYRE), os.path.join(env, LIBVYRE_HOST))]
    out = []
    tree = _build_tree_dirs()
    if tree:
        out.append(("the build tree", os.path.join(tree[0], LIBVYRE), os.path.join(tree[1], LIBVYRE_HOST)))
    try:
        from . import _paths  # written by make from _paths.py.in
        libdir = _paths.LIBDIR
    except ImportError:
        libdir = None
    if libdir and os.path.isfile(os.path.join(libdir, LIBVYRE_HOST)):
        out.append(("the install libdir " + libdir, os.path.join(libdir, LIBVYRE),
                    os.path.join(libdir, LIBVYRE_HOST)))
    out.append(("the system's dynamic linker", LIBVYRE, LIBVYRE_HOST))
    return out


_PHNUM_MAX = 4096  # more program headers than any real shared object has


def _elf_why(fd, size):
    """Why a library of `size` bytes open on `fd` cannot be mapped whole, or None.

    The check of abi/support/file.c's vyre__file_check_library, in Python
    since it runs before any library is loaded: this process's class and
    byte order, ET_DYN, the program headers, every segment's file contents
    and the section headers inside the file (dlopen maps what the program
    headers describe; a page past the end of a truncated file is SIGBUS)."""
    import struct
    import sys
    head = os.pread(fd, 64, 0)
    if len(head) < 16 or head[:4] != b"\x7fELF":
        return "not an ELF file (%d bytes%s)" % (size, ", too short" if len(head) < 16 else "")
    is64 = head[4] == 2
    want64 = C.sizeof(C.c_void_p) == 8
    big = head[5] == 2
    if head[4] not in (1, 2) or head[5] not in (1, 2) or is64 != want64 or big != (sys.byteorder == "big"):
        return "built for another ELF class or byte order than this %d-bit %s-endian process" % (
            64 if want64 else 32, sys.byteorder)
    e = ">" if big else "<"
    need = 64 if is64 else 52
    if len(head) < need:
        return "truncated: %d bytes, the ELF header alone needs %d" % (size, need)
    if is64:
        etype, = struct.unpack_from(e + "H", head, 16)
        phoff, shoff = struct.unpack_from(e + "QQ", head, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", head, 54)
    else:
        etype, = struct.unpack_from(e + "H", head, 16)
        phoff, shoff = struct.unpack_from(e + "II", head, 28)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", head, 42)
    if etype != 3:
        return "not a shared library (ELF type %d)" % etype
    if phentsize != (56 if is64 else 32) or phnum == 0 or phnum > _PHNUM_MAX:
        return "corrupt ELF file: %d program headers of %d bytes" % (phnum, phentsize)
    if phoff + phnum * phentsize > size:
        return "truncated: %d bytes, its program headers end at %d" % (size, phoff + phnum * phentsize)
    table = os.pread(fd, phnum * phentsize, phoff)
    if len(table) != phnum * phentsize:
        return "cannot read its program headers"
    loads = 0
    for i in range(phnum):
        at = i * phentsize
        if is64:
            ptype, _, offset, _, _, filesz = struct.unpack_from(e + "IIQQQQ", table, at)
        else:
            ptype, offset, _, _, filesz = struct.unpack_from(e + "IIIII", table, at)
        loads += ptype == 1
        if filesz and offset + filesz > size:
            return "truncated: %d bytes, its %s %d ends at %d" % (
                size, "PT_LOAD segment" if ptype == 1 else "program header", i, offset + filesz)
    if not loads:
        return "corrupt ELF file: no PT_LOAD segment"
    if shoff and shnum * shentsize and shoff + shnum * shentsize > size:
        return "truncated: %d bytes, its section headers end at %d" % (size, shoff + shnum * shentsize)
    return None


def _check_library(path):
    """None when `path` (one with a '/': a bare soname is the dynamic
    linker's to find) is a regular file holding a complete shared library
    for this process; else why not.  Opened with O_NONBLOCK, so a FIFO
    never blocks, and read, never mapped."""
    import stat
    if "/" not in path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        return "cannot open %s: %s" % (path, exc.strerror)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                    else "not a plain file")
            return "%s is not a regular file (%s)" % (path, kind)
        why = _elf_why(fd, st.st_size)
        return None if why is None else "%s: %s" % (path, why)
    except OSError as exc:
        return "cannot read %s: %s" % (path, exc.strerror)
    finally:
        os.close(fd)


def _load():
    tried = []
    for where, vyre_path, host_path in _candidates():
        # Judged from their files first: dlopen of a FIFO blocks and of a
        # truncated library raises SIGBUS, which no except clause catches.
        why = _check_library(vyre_path) or _check_library(host_path)
        if why:
            tried.append("%s: %s" % (where, why))
            continue
        try:
            # libvyre first and global: libvyre-host's DT_NEEDED (LIBVYRE)
            # then resolves to this very copy, whatever its run path says.
            vyre = C.CDLL(vyre_path, mode=C.RTLD_GLOBAL)
            host = C.CDLL(host_path)
            return vyre, host, where
        except OSError as exc:
            tried.append("%s: %s" % (where, exc))
    if os.environ.get("VYRE_LIB_DIR"):
        fix = ("set VYRE_LIB_DIR to the directory holding complete copies of %s and %s (a build's "
               "abi/.libs and host-stub/loader/.libs, or the install libdir), or unset it"
               % (LIBVYRE, LIBVYRE_HOST))
    else:
        fix = ("build the tree (make) and import vyre from <build>/python, install vyre (make "
               "install) and add its libdir to the dynamic linker's path, or set VYRE_LIB_DIR to "
               "the directory holding %s and %s" % (LIBVYRE, LIBVYRE_HOST))
    raise ImportError("vyre: cannot load libvyre and libvyre-host (tried %s). Fix: %s"
                      % ("; ".join(tried), fix))


vyre, host, LOADED_FROM = _load()

# ---------------------------------------------------------------------------
# vyre.h
# ---------------------------------------------------------------------------

ERROR_MESSAGE_MAX = 2048


class Error(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("status", C.c_int32),
                ("native_code", C.c_int64), ("message", C.c_char * ERROR_MESSAGE_MAX)]


def new_error():
    e = Error()
    e.struct_size = C.sizeof(Error)
    return e


class DeviceProfile(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("ordinal", C.c_uint32),
                ("name", C.c_char * 128), ("backend_id", C.c_char * 32),
                ("compute_major", C.c_uint32), ("compute_minor", C.c_uint32),
                ("compute_units", C.c_uint32), ("subgroup_size", C.c_uint32),
                ("max_workgroup_size", C.c_uint32 * 3),
                ("max_invocations_per_workgroup", C.c_uint32),
                ("max_workgroups", C.c_uint32 * 3),
                ("shared_memory_per_workgroup", C.c_uint32),
                ("total_memory", C.c_uint64), ("free_memory", C.c_uint64),
                ("l2_bytes", C.c_uint64), ("memory_bus_bits", C.c_uint32),
                ("memory_clock_khz", C.c_uint32), ("driver_version", C.c_uint32),
                ("device_count", C.c_uint32), ("capabilities", C.c_uint64),
                ("resident_budget", C.c_uint64),
                ("uuid", C.c_uint8 * 16)]  # appended within ABI 1.1


class Ext(C.Structure):
    pass


Ext._fields_ = [("struct_size", C.c_uint32), ("type", C.c_uint32), ("next", C.POINTER(Ext))]


class ProgramRef(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("flags", C.c_uint32), ("bytes", C.c_void_p),
                ("size", C.c_uint64), ("pipeline", C.c_uint64)]


class Input(C.Structure):
    _fields_ = [("data", C.c_void_p), ("size", C.c_uint64)]


class Output(C.Structure):
    _fields_ = [("data", C.c_void_p), ("size", C.c_uint64)]


class Outputs(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("count", C.c_uint32), ("items", C.POINTER(Output))]


class OutputSlot(C.Structure):
    _fields_ = [("data", C.c_void_p), ("capacity", C.c_uint64), ("size", C.c_uint64)]


TIMING_WALL, TIMING_DEVICE, TIMING_ENQUEUE, TIMING_WAIT = 1, 2, 4, 8


class Timing(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("valid", C.c_uint32), ("wall_ns", C.c_uint64),
                ("device_ns", C.c_uint64), ("enqueue_ns", C.c_uint64), ("wait_ns", C.c_uint64)]


class DispatchOptions(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("flags", C.c_uint32),
                ("workgroup", C.c_uint32 * 3), ("grid", C.c_uint32 * 3),
                ("fixpoint_iterations", C.c_uint32), ("ulp_budget", C.c_uint32),
                ("next", C.POINTER(Ext))]


class ResidentCopy(C.Structure):
    _fields_ = [("buffer", C.c_uint64), ("offset", C.c_uint64), ("host", C.c_void_p),
                ("size", C.c_uint64)]


class SequenceStep(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("buffer_count", C.c_uint32),
                ("program", C.POINTER(ProgramRef)), ("buffers", C.POINTER(C.c_uint64)),
                ("options", C.POINTER(DispatchOptions))]


class Metric(C.Structure):
    _fields_ = [("name", C.c_char * 56), ("value", C.c_uint64)]


class Backend(C.Structure):
    pass


BP = C.POINTER(Backend)
EP = C.POINTER(Error)
ST = C.c_int  # vyre_status
u64p = C.POINTER(C.c_uint64)

# The vtable's entries after struct_size/reserved, in order (vyre.h).
VTABLE = [
    ("destroy", C.CFUNCTYPE(None, BP)),
    ("device_profile", C.CFUNCTYPE(ST, BP, C.POINTER(DeviceProfile), EP)),
    ("prepare", C.CFUNCTYPE(ST, BP, EP)),
    ("shutdown", C.CFUNCTYPE(ST, BP, EP)),
    ("metrics", C.CFUNCTYPE(ST, BP, C.POINTER(Metric), C.c_uint32, C.POINTER(C.c_uint32), EP)),
    ("dispatch", C.CFUNCTYPE(ST, BP, C.POINTER(ProgramRef), C.POINTER(Input), C.c_uint32,
                             C.POINTER(DispatchOptions), C.POINTER(C.POINTER(Outputs)),
                             C.POINTER(Timing), EP)),
    ("dispatch_into", C.CFUNCTYPE(ST, BP, C.POINTER(ProgramRef), C.POINTER(Input), C.c_uint32,
                                  C.POINTER(DispatchOptions), C.POINTER(OutputSlot), C.c_uint32,
                                  C.POINTER(Timing), EP)),
    ("dispatch_async", C.CFUNCTYPE(ST, BP, C.POINTER(ProgramRef), C.POINTER(Input), C.c_uint32,
                                   C.POINTER(DispatchOptions), u64p, EP)),
    ("pending_poll", C.CFUNCTYPE(ST, BP, C.c_uint64, C.POINTER(C.c_int), EP)),
    ("pending_wait", C.CFUNCTYPE(ST, BP, C.c_uint64, C.POINTER(C.POINTER(Outputs)),
                                 C.POINTER(Timing), EP)),
    ("pending_release", C.CFUNCTYPE(ST, BP, C.c_uint64, EP)),
    ("outputs_free", C.CFUNCTYPE(None, BP, C.POINTER(Outputs))),
    ("resident_alloc", C.CFUNCTYPE(ST, BP, C.c_uint64, u64p, EP)),
    ("resident_free", C.CFUNCTYPE(ST, BP, C.c_uint64, EP)),
    ("resident_size", C.CFUNCTYPE(ST, BP, C.c_uint64, u64p, EP)),
    ("resident_upload", C.CFUNCTYPE(ST, BP, C.c_uint64, C.c_void_p, C.c_uint64, EP)),
    ("resident_upload_at", C.CFUNCTYPE(ST, BP, C.c_uint64, C.c_uint64, C.c_void_p, C.c_uint64, EP)),
    ("resident_download", C.CFUNCTYPE(ST, BP, C.c_uint64, C.c_void_p, C.c_uint64, EP)),
    ("resident_download_range", C.CFUNCTYPE(ST, BP, C.c_uint64, C.c_uint64, C.c_void_p,
                                            C.c_uint64, EP)),
    ("resident_upload_many", C.CFUNCTYPE(ST, BP, C.POINTER(ResidentCopy), C.c_uint32, EP)),
    ("resident_download_many", C.CFUNCTYPE(ST, BP, C.POINTER(ResidentCopy), C.c_uint32, EP)),
    ("dispatch_resident", C.CFUNCTYPE(ST, BP, C.POINTER(ProgramRef), u64p, C.c_uint32,
                                      C.POINTER(DispatchOptions), C.POINTER(Timing), EP)),
    ("dispatch_sequence", C.CFUNCTYPE(ST, BP, C.POINTER(SequenceStep), C.c_uint32, C.c_uint32,
                                      C.POINTER(ResidentCopy), C.c_uint32, C.POINTER(Timing), EP)),
    ("pipeline_create", C.CFUNCTYPE(ST, BP, C.c_void_p, C.c_uint64, C.POINTER(DispatchOptions),
                                    u64p, EP)),
    ("pipeline_release", C.CFUNCTYPE(ST, BP, C.c_uint64, EP)),
    ("get_extension", C.CFUNCTYPE(ST, BP, C.c_char_p, C.c_uint32, C.POINTER(C.c_void_p), EP)),
]


class Vtable(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("reserved", C.c_uint32)] + VTABLE


Backend._fields_ = [("struct_size", C.c_uint32), ("reserved", C.c_uint32),
                    ("vt", C.POINTER(Vtable))]


class BackendOptions(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("device_ordinal", C.c_uint32),
                ("flags", C.c_uint32), ("abi_minor", C.c_uint32), ("next", C.POINTER(Ext))]


class ExtensionHead(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("version", C.c_uint32)]


class Registration(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("abi_major", C.c_uint16),
                ("abi_minor", C.c_uint16), ("id", C.c_char_p), ("version", C.c_char_p),
                ("description", C.c_char_p), ("precedence", C.c_int32),
                ("op_count", C.c_uint32), ("ops", C.POINTER(C.c_uint16)),
                ("capabilities", C.c_uint64), ("storage_types", C.c_uint64),
                ("create", C.CFUNCTYPE(ST, C.POINTER(BackendOptions), C.POINTER(BP), EP)),
                ("op_types", C.POINTER(C.c_uint32)), ("extensions", C.c_char_p)]


class Descriptor(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("magic", C.c_uint32), ("abi_major", C.c_uint16),
                ("abi_minor_min", C.c_uint16), ("abi_minor_max", C.c_uint16),
                ("release", C.c_uint16), ("registration_size", C.c_uint32),
                ("vtable_size", C.c_uint32), ("build_id", C.c_char * 64)]


# ---------------------------------------------------------------------------
# vyre_cuda.h
# ---------------------------------------------------------------------------

INDIRECT_NAME = b"vyre.indirect"
INDIRECT_VERSION = 1
EXT_INDIRECT = 0x56590002


class Indirect(C.Structure):
    """vyre_indirect (vyre.h): the workgroup count read from a resident buffer."""
    _fields_ = [("head", Ext), ("buffer", C.c_uint64), ("offset", C.c_uint64)]


CUDA_INTEROP_NAME = b"vyre.cuda.interop"
CUDA_INTEROP_VERSION = 1
EXT_CUDA_STREAM = 0x43550001


class CudaStream(C.Structure):
    _fields_ = [("head", Ext), ("stream", C.c_void_p)]


class CudaInterop(C.Structure):
    _fields_ = [("head", ExtensionHead),
                ("context", C.CFUNCTYPE(ST, BP, C.POINTER(C.c_void_p), C.POINTER(C.c_int32), EP)),
                ("resident_import", C.CFUNCTYPE(ST, BP, C.c_uint64, C.c_uint64, u64p, EP)),
                ("resident_pointer", C.CFUNCTYPE(ST, BP, C.c_uint64, u64p, u64p, EP))]


# ---------------------------------------------------------------------------
# vyre_program.h
# ---------------------------------------------------------------------------

PROGRAM_MAGIC = 0x50525956
MAX_BUFFERS = 64
MAX_NAME = 63


class ProgramHeader(C.Structure):
    _fields_ = [("magic", C.c_uint32), ("version", C.c_uint16), ("header_size", C.c_uint16),
                ("total_size", C.c_uint32), ("flags", C.c_uint32),
                ("workgroup_size", C.c_uint32 * 3), ("buffer_count", C.c_uint32),
                ("buffer_offset", C.c_uint32), ("local_count", C.c_uint32),
                ("local_offset", C.c_uint32), ("inst_count", C.c_uint32),
                ("inst_offset", C.c_uint32), ("string_size", C.c_uint32),
                ("string_offset", C.c_uint32), ("reserved", C.c_uint32)]


class BufferDecl(C.Structure):
    _fields_ = [("name_offset", C.c_uint32), ("name_size", C.c_uint32), ("binding", C.c_uint32),
                ("access", C.c_uint8), ("elem_type", C.c_uint8), ("flags", C.c_uint8),
                ("reserved0", C.c_uint8), ("count", C.c_uint32),
                ("out_range_offset", C.c_uint32), ("out_range_size", C.c_uint32),
                ("reserved1", C.c_uint32)]


class Inst(C.Structure):
    _fields_ = [("op", C.c_uint16), ("type", C.c_uint8), ("mod", C.c_uint8),
                ("a", C.c_uint32), ("b", C.c_uint32), ("c", C.c_uint32), ("d", C.c_uint32)]


class BufferInfo(C.Structure):
    _fields_ = [("decl", BufferDecl), ("name", C.c_char * (MAX_NAME + 1)), ("role", C.c_uint8),
                ("is_output", C.c_uint8), ("reserved", C.c_uint8 * 2),
                ("input_index", C.c_int32), ("output_index", C.c_int32),
                ("elem_size", C.c_uint32), ("kernel_index", C.c_uint32),
                ("shared_offset", C.c_uint32)]


class Program(C.Structure):
    _fields_ = [("header", ProgramHeader), ("buffer_count", C.c_uint32),
                ("buffers", C.POINTER(BufferInfo)), ("local_count", C.c_uint32),
                ("local_types", C.POINTER(C.c_uint8)), ("inst_count", C.c_uint32),
                ("insts", C.POINTER(Inst)), ("value_type", C.POINTER(C.c_uint8)),
                ("match", C.POINTER(C.c_uint32)), ("uniform", C.POINTER(C.c_uint8)),
                ("depth", C.POINTER(C.c_uint8)), ("input_count", C.c_uint32),
                ("output_count", C.c_uint32), ("kernel_buffer_count", C.c_uint32),
                ("shared_bytes", C.c_uint32), ("features", C.c_uint32),
                ("required_caps", C.c_uint64), ("max_depth", C.c_uint32),
                ("reserved", C.c_uint32), ("sha256", C.c_uint8 * 32), ("bytes", C.c_void_p),
                ("size", C.c_uint64)]


class OpInfo(C.Structure):
    _fields_ = [("id", C.c_uint16), ("op_class", C.c_uint8), ("flags", C.c_uint8),
                ("type_mask", C.c_uint32), ("name", C.c_char_p), ("mnemonic", C.c_char_p)]


# ---------------------------------------------------------------------------
# vyre_host.h
# ---------------------------------------------------------------------------

HOST_REASON_MAX = 512


class HostOptions(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("flags", C.c_uint32),
                ("search_path", C.c_char_p), ("backend", C.c_char_p)]


class HostCandidate(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("status", C.c_uint32), ("id", C.c_char_p),
                ("version", C.c_char_p), ("description", C.c_char_p), ("path", C.c_char_p),
                ("build_id", C.c_char_p), ("origin", C.c_uint32), ("search_index", C.c_uint32),
                ("precedence", C.c_int32), ("abi_major", C.c_uint16), ("abi_minor", C.c_uint16),
                ("plugin_minor_min", C.c_uint16), ("plugin_minor_max", C.c_uint16),
                ("op_count", C.c_uint32), ("ops", C.POINTER(C.c_uint16)),
                ("capabilities", C.c_uint64), ("storage_types", C.c_uint64),
                ("registration_size", C.c_uint32), ("vtable_size", C.c_uint32),
                ("reason", C.c_char * HOST_REASON_MAX),
                ("op_types", C.POINTER(C.c_uint32)), ("unknown_op_count", C.c_uint32),
                ("registration_minor", C.c_uint16), ("release", C.c_uint16),
                ("unknown_capabilities", C.c_uint64), ("extensions", C.c_char_p)]


# ---------------------------------------------------------------------------
# Prototypes
# ---------------------------------------------------------------------------


def _proto(lib, name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


vp = C.c_void_p
sz = C.c_size_t
u32 = C.c_uint32
vyre_version = _proto(vyre, "vyre_version", C.c_char_p, C.POINTER(u32), C.POINTER(u32))
vyre_status_name = _proto(vyre, "vyre_status_name", C.c_char_p, C.c_int)
vyre_status_text = _proto(vyre, "vyre_status_text", C.c_char_p, C.c_int)
vyre_type_name = _proto(vyre, "vyre_type_name", C.c_char_p, u32)
vyre_type_size = _proto(vyre, "vyre_type_size", u32, u32)
vyre_type_by_name = _proto(vyre, "vyre_type_by_name", C.c_int, C.c_char_p, sz)
vyre_access_name = _proto(vyre, "vyre_access_name", C.c_char_p, u32)
vyre_access_by_name = _proto(vyre, "vyre_access_by_name", C.c_int, C.c_char_p, sz)
vyre_order_name = _proto(vyre, "vyre_order_name", C.c_char_p, u32)
vyre_reduce_name = _proto(vyre, "vyre_reduce_name", C.c_char_p, u32)
vyre_capability_name = _proto(vyre, "vyre_capability_name", C.c_char_p, u32)
vyre_op_by_mnemonic = _proto(vyre, "vyre_op_by_mnemonic", C.POINTER(OpInfo), C.c_char_p, sz)
vyre_program_decode = _proto(vyre, "vyre_program_decode", ST, vp, sz,
                             C.POINTER(C.POINTER(Program)), EP)
vyre_program_free = _proto(vyre, "vyre_program_free", None, C.POINTER(Program))
vyre_program_hash_hex = _proto(vyre, "vyre_program_hash_hex", None, C.POINTER(Program),
                               C.c_char * 65)
vyre_text_assemble = _proto(vyre, "vyre_text_assemble", ST, C.c_char_p, sz, C.c_char_p,
                            C.POINTER(vp), C.POINTER(sz), EP)
vyre_text_disassemble = _proto(vyre, "vyre_text_disassemble", ST, vp, sz,
                               C.POINTER(C.POINTER(C.c_char)), EP)

# The builder (vyre_support.h).
vyre_builder_new = _proto(vyre, "vyre_builder_new", vp, u32, u32, u32)
vyre_builder_free = _proto(vyre, "vyre_builder_free", None, vp)
vyre_builder_set_workgroup = _proto(vyre, "vyre_builder_set_workgroup", None, vp, u32, u32, u32)
vyre_builder_finish = _proto(vyre, "vyre_builder_finish", ST, vp, C.POINTER(vp), C.POINTER(sz), EP)
vyre_b_buffer = _proto(vyre, "vyre_b_buffer", u32, vp, C.c_char_p, u32, u32, u32, u32, u32)
vyre_b_buffer_range = _proto(vyre, "vyre_b_buffer_range", None, vp, u32, u32, u32)
vyre_b_local = _proto(vyre, "vyre_b_local", u32, vp, u32)
vyre_b_type_of = _proto(vyre, "vyre_b_type_of", u32, vp, u32)
vyre_b_const = _proto(vyre, "vyre_b_const", u32, vp, u32, C.c_uint64)
vyre_b_builtin = _proto(vyre, "vyre_b_builtin", u32, vp, u32, u32)
vyre_b_load = _proto(vyre, "vyre_b_load", u32, vp, u32, u32)
vyre_b_buflen = _proto(vyre, "vyre_b_buflen", u32, vp, u32)
vyre_b_get = _proto(vyre, "vyre_b_get", u32, vp, u32)
vyre_b_bin = _proto(vyre, "vyre_b_bin", u32, vp, u32, u32, u32)
vyre_b_un = _proto(vyre, "vyre_b_un", u32, vp, u32, u32)
vyre_b_select = _proto(vyre, "vyre_b_select", u32, vp, u32, u32, u32)
vyre_b_cast = _proto(vyre, "vyre_b_cast", u32, vp, u32, u32)
vyre_b_fma = _proto(vyre, "vyre_b_fma", u32, vp, u32, u32, u32)
vyre_b_atomic = _proto(vyre, "vyre_b_atomic", u32, vp, u32, u32, u32, u32, u32)
vyre_b_cas = _proto(vyre, "vyre_b_cas", u32, vp, u32, u32, u32, u32, u32)
vyre_b_ballot = _proto(vyre, "vyre_b_ballot", u32, vp, u32)
vyre_b_shuffle = _proto(vyre, "vyre_b_shuffle", u32, vp, u32, u32)
vyre_b_reduce = _proto(vyre, "vyre_b_reduce", u32, vp, u32, u32)
vyre_b_let = _proto(vyre, "vyre_b_let", None, vp, u32, u32)
vyre_b_assign = _proto(vyre, "vyre_b_assign", None, vp, u32, u32)
vyre_b_store = _proto(vyre, "vyre_b_store", None, vp, u32, u32, u32)
vyre_b_if = _proto(vyre, "vyre_b_if", None, vp, u32)
vyre_b_else = _proto(vyre, "vyre_b_else", None, vp)
vyre_b_end = _proto(vyre, "vyre_b_end", None, vp)
vyre_b_loop = _proto(vyre, "vyre_b_loop", None, vp, u32, u32, u32)
vyre_b_block = _proto(vyre, "vyre_b_block", None, vp)
vyre_b_return = _proto(vyre, "vyre_b_return", None, vp)
vyre_b_barrier = _proto(vyre, "vyre_b_barrier", None, vp, u32)
vyre_b_trap = _proto(vyre, "vyre_b_trap", None, vp, u32)

# libc's free, for what libvyre malloc'd (vyre_text_*, vyre_builder_finish).
libc_free = _proto(C.CDLL(None), "free", None, vp)

# libvyre-host.
HostP = vp
vyre_host_version = _proto(host, "vyre_host_version", C.c_char_p, C.POINTER(u32), C.POINTER(u32))
vyre_host_open = _proto(host, "vyre_host_open", ST, C.POINTER(HostOptions), C.POINTER(HostP), EP)
vyre_host_close = _proto(host, "vyre_host_close", None, HostP)
vyre_host_backend_count = _proto(host, "vyre_host_backend_count", u32, HostP)
vyre_host_backend_info = _proto(host, "vyre_host_backend_info", ST, HostP, u32,
                                C.POINTER(HostCandidate), EP)
vyre_host_create = _proto(host, "vyre_host_create", ST, HostP, C.c_char_p,
                          C.POINTER(BackendOptions), C.POINTER(BP), C.POINTER(u32), EP)
vyre_host_create_for = _proto(host, "vyre_host_create_for", ST, HostP, C.c_void_p, C.c_uint64,
                              C.POINTER(DispatchOptions), C.POINTER(BackendOptions),
                              C.POINTER(BP), C.POINTER(u32), EP)
vyre_host_probe = _proto(host, "vyre_host_probe", u32, HostP)
vyre_host_forced_id = _proto(host, "vyre_host_forced_id", C.c_char_p, HostP)
vyre_host_vtable_has = _proto(host, "vyre_host_vtable_has", C.c_int, BP, sz)
vyre_host_backend_native = _proto(host, "vyre_host_backend_native", BP, BP)
vyre_host_status_name = _proto(host, "vyre_host_status_name", C.c_char_p, u32)
vyre_host_origin_name = _proto(host, "vyre_host_origin_name", C.c_char_p, u32)

# The status codes by number: VYRE_STATUS_MAP's order, from the library.
STATUS_NAMES = []
for _code in range(64):
    _name = vyre_status_name(_code).decode()
    if _name == "VYRE_UNKNOWN_STATUS":
        break
    STATUS_NAMES.append(_name)
