"""vyre -- the vyre portable GPU compute IR from Python: list and open backends, build or assemble programs, dispatch on NumPy arrays, buffers and (CUDA) PyTorch/CuPy device tensors, zero copy.

Pure ctypes over the installed libvyre and libvyre-host (docs/python.md,
installed as share/doc/vyre/python.md).  Quick start:

    import numpy as np, vyre
    prog = vyre.load("examples/saxpy.vyre")
    with vyre.open() as be:                       # the best backend
        (y,) = be.dispatch(prog, 2.0, np.arange(4, dtype=np.float32),
                           np.ones(4, dtype=np.float32))
"""
from . import _lib
from .errors import VyreError, status_name
from .errors import *  # noqa: F401,F403  (one exception class per status)
from .errors import __all__ as _error_names
from .program import Program, BufferInfo, assemble, load, TYPES, NUMPY_DTYPE
from .builder import Builder, Value, Buffer, Local
from .backend import (Backend, BackendInfo, Profile, Timing, Resident, Pipeline, Pending, Step,
                      backends, open)
from .interop import is_device_array

__version__ = "1.0.0"


def version():
    """(libvyre release, (ABI major, ABI minor)) of the library loaded."""
    major, minor = _lib.C.c_uint32(), _lib.C.c_uint32()
    rel = _lib.vyre_version(_lib.C.byref(major), _lib.C.byref(minor)).decode()
    return rel, (major.value, minor.value)


def library_paths():
    """Where libvyre and libvyre-host were loaded from: (description, libvyre path, libvyre-host path)."""
    return _lib.LOADED_FROM, _lib.vyre._name, _lib.host._name


__all__ = ["Program", "BufferInfo", "assemble", "load", "Builder", "Value", "Buffer", "Local",
           "Backend", "BackendInfo", "Profile", "Timing", "Resident", "Pipeline", "Pending",
           "Step", "backends", "open", "is_device_array", "version", "library_paths",
           "TYPES", "NUMPY_DTYPE"] + list(_error_names)
