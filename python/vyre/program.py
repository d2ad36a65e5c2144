"""program.py -- programs: assemble text, load files, decode and validate bytes, disassemble; the types table."""
import ctypes as C
import os

from . import _lib
from .errors import check, invalid, make

# vyre_type, in VYRE_TYPE_MAP's order (the library's names are the truth;
# tests/python/test_layout.py compares).
# The mat_* types are those of matrix locals only (the MMA ops).
TYPES = ["void", "bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "bf16", "f32",
         "mat_a_f16", "mat_a_bf16", "mat_a_i8", "mat_a_u8", "mat_b_f16", "mat_b_bf16", "mat_b_i8",
         "mat_b_u8", "mat_acc_f32", "mat_acc_i32"]
ACCESS = ["ro", "rw", "wo", "uniform", "workgroup"]
ROLES = ["input", "inout", "output", "shared"]

# The NumPy dtype that holds each storage type's elements: bool occupies 4
# bytes (u32 0/1), and bf16, which NumPy lacks, travels as its raw u16 bits.
NUMPY_DTYPE = {"bool": "uint32", "u8": "uint8", "u16": "uint16", "u32": "uint32",
               "u64": "uint64", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
               "f16": "float16", "bf16": "uint16", "f32": "float32"}


def type_id(name):
    """vyre_type number of a type name ("f32" -> 12); InvalidArgument for an unknown name."""
    if isinstance(name, int) and not isinstance(name, bool):
        if 0 < name < len(TYPES):
            return name
        raise invalid("type %d is not a vyre type. Fix: use one of %s" % (name, " ".join(TYPES[1:])))
    raw = str(name).encode()
    t = _lib.vyre_type_by_name(raw, len(raw))
    if t <= 0:
        raise invalid("'%s' is not a vyre type. Fix: use one of %s" % (name, " ".join(TYPES[1:])))
    return t


class BufferInfo(object):
    """One buffer declaration of a program, as the validator sees it.

    Attributes: name, type (storage type name, "f32"), access ("ro", "rw",
    "wo", "uniform", "workgroup"), count (elements, 0 = sized by its input),
    binding, is_output (returned after a host dispatch), output_flag (the
    declaration's `output` flag), role ("input", "inout", "output",
    "shared"), input_index and output_index (position among the inputs /
    outputs of a host dispatch, or -1), kernel_index (position among the
    buffers of a resident dispatch, or -1 for workgroup buffers),
    elem_size (bytes), dtype (the NumPy dtype name that holds its elements).
    """

    __slots__ = ("name", "type", "access", "count", "binding", "is_output", "output_flag", "role",
                 "input_index", "output_index", "kernel_index", "elem_size", "dtype", "index")

    def __repr__(self):
        return "BufferInfo(%r, %s %s [%d], %s)" % (self.name, self.access, self.type, self.count,
                                                  self.role)


def _read_bytes(data):
    if isinstance(data, Program):
        return data.bytes
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    try:
        return memoryview(data).tobytes()
    except TypeError:
        raise invalid("a program is bytes or a buffer, not %s. Fix: pass the program image "
                      "(vyre.assemble(text).bytes, a .vyrb file's contents)" % type(data).__name__)


class Program(object):
    """A validated program image.

    Program(data) decodes and validates `data` (bytes or any buffer holding
    a program image, program-format.md) and raises InvalidProgram (or
    LimitExceeded) with the validator's message when it is not a valid
    program.  Attributes: bytes (the image), size, hash (SHA-256, 64 hex
    digits), workgroup (x, y, z), buffers (BufferInfo list in declaration
    order), inputs / outputs (the BufferInfo of a host dispatch's inputs and
    outputs, in order), kernel_buffers (what a resident dispatch takes, in
    order), inst_count, local_count, name (a label for messages).
    """

    def __init__(self, data, name=None):
        self.bytes = _read_bytes(data)
        self.name = name or "program"
        err = _lib.new_error()
        out = C.POINTER(_lib.Program)()
        buf = C.create_string_buffer(self.bytes, len(self.bytes))
        check(_lib.vyre_program_decode(buf, len(self.bytes), C.byref(out), C.byref(err)), err,
              "vyre_program_decode")
        try:
            self._read(out.contents)
        finally:
            _lib.vyre_program_free(out)
        # A private copy that lives as long as the program: what dispatches point at.
        self._image = buf

    def _read(self, p):
        hx = (C.c_char * 65)()
        _lib.vyre_program_hash_hex(C.byref(p), hx)
        self.hash = hx.value.decode()
        self.size = len(self.bytes)
        self.workgroup = tuple(p.header.workgroup_size)
        self.inst_count = p.header.inst_count
        self.local_count = p.header.local_count
        self.buffers = []
        for i in range(p.buffer_count):
            b = p.buffers[i]
            info = BufferInfo()
            info.index = i
            info.name = b.name.decode()
            info.type = TYPES[b.decl.elem_type] if b.decl.elem_type < len(TYPES) else "?"
            info.access = ACCESS[b.decl.access] if b.decl.access < len(ACCESS) else "?"
            info.count = b.decl.count
            info.binding = b.decl.binding
            info.output_flag = bool(b.decl.flags & 1)
            info.is_output = bool(b.is_output)
            info.role = ROLES[b.role] if b.role < len(ROLES) else "?"
            info.input_index = b.input_index
            info.output_index = b.output_index
            info.kernel_index = b.kernel_index if b.kernel_index != 0xFFFFFFFF else -1
            info.elem_size = b.elem_size
            info.dtype = NUMPY_DTYPE.get(info.type, "uint8")
            self.buffers.append(info)
        self.inputs = sorted((b for b in self.buffers if b.input_index >= 0),
                             key=lambda b: b.input_index)
        self.outputs = sorted((b for b in self.buffers if b.output_index >= 0),
                              key=lambda b: b.output_index)
        self.kernel_buffers = sorted((b for b in self.buffers if b.kernel_index >= 0),
                                     key=lambda b: b.kernel_index)

    def validate(self):
        """Decode and validate the image again (the constructor did already); returns self."""
        Program(self.bytes)
        return self

    def encode(self):
        """The program image (bytes), as a .vyrb file holds it."""
        return self.bytes

    def disassemble(self):
        """The canonical text form (str); assembling it gives identical bytes."""
        err = _lib.new_error()
        text = C.POINTER(C.c_char)()
        check(_lib.vyre_text_disassemble(self._image, self.size, C.byref(text), C.byref(err)), err,
              "vyre_text_disassemble")
        try:
            return C.string_at(text).decode()
        finally:
            _lib.libc_free(C.cast(text, C.c_void_p))

    def save(self, path):
        """Write the image (path ending .vyre: the text form) to `path`."""
        data = self.disassemble().encode() if str(path).endswith(".vyre") else self.bytes
        with open(path, "wb") as f:
            f.write(data)

    def buffer(self, name):
        """The BufferInfo named `name`; InvalidArgument when there is none."""
        for b in self.buffers:
            if b.name == name:
                return b
        raise invalid("%s has no buffer '%s'. Fix: use one of %s" % (
            self.name, name, ", ".join(b.name for b in self.buffers)))

    def __eq__(self, other):
        return isinstance(other, Program) and other.bytes == self.bytes

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.bytes)

    def __repr__(self):
        return "<vyre.Program %s: %d buffers, %d instructions, workgroup %s, %s>" % (
            self.name, len(self.buffers), self.inst_count, "x".join(map(str, self.workgroup)),
            self.hash[:12])


def assemble(text, filename=None):
    """Assemble program text (str or bytes, program-text.md) into a Program.

    `filename` only names the source in error messages ("FILE:LINE:COL:
    ...").  Raises InvalidProgram (or LimitExceeded) with the assembler's
    message on bad text.
    """
    raw = text.encode() if isinstance(text, str) else bytes(text)
    err = _lib.new_error()
    out = C.c_void_p()
    size = C.c_size_t()
    check(_lib.vyre_text_assemble(raw, len(raw), filename.encode() if filename else None,
                                  C.byref(out), C.byref(size), C.byref(err)), err,
          "vyre_text_assemble")
    try:
        data = C.string_at(out, size.value)
    finally:
        _lib.libc_free(out)
    return Program(data, name=os.path.basename(filename) if filename else None)


def load(path):
    """A Program from a file: the binary image (it starts with the magic "VYRP"), else text."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise make("VYRE_IO", "cannot read program %s: %s. Fix: name an existing .vyre or "
                   ".vyrb file" % (path, exc.strerror))
    if data[:4] == b"VYRP":
        return Program(data, name=os.path.basename(path))
    return assemble(data, filename=str(path))
