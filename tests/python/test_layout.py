"""test_layout.py -- the ctypes structs mirror the C headers: every size and offset the headers' VYRE_STATIC_ASSERTs state, and the tables the package keeps (types, statuses), its release and the sonames it loads."""
import ctypes as C
import os
import unittest

import vyre
from vyre import _lib, interop, program

P = C.sizeof(C.c_void_p)
F = C.sizeof(C.c_void_p)  # a function pointer


def off(struct, field):
    return getattr(struct, field).offset


class Layout(unittest.TestCase):
    def test_vyre_h(self):
        # abi/vyre/vyre.h
        self.assertEqual(C.sizeof(_lib.Error), 16 + 2048)
        self.assertEqual(off(_lib.Error, "native_code"), 8)
        self.assertEqual(off(_lib.Error, "message"), 16)
        self.assertEqual(C.sizeof(_lib.DeviceProfile), 288)
        self.assertEqual(off(_lib.DeviceProfile, "device_count"), 252)
        self.assertEqual(off(_lib.DeviceProfile, "uuid"), 272)
        self.assertEqual(off(_lib.DeviceProfile, "compute_major"), 168)
        self.assertEqual(off(_lib.DeviceProfile, "total_memory"), 216)
        self.assertEqual(off(_lib.DeviceProfile, "capabilities"), 256)
        self.assertEqual(C.sizeof(_lib.Timing), 40)
        self.assertEqual(off(_lib.Timing, "device_ns"), 16)
        self.assertEqual(off(_lib.DispatchOptions, "next"), 40)
        self.assertEqual(C.sizeof(_lib.DispatchOptions), 40 + P)
        self.assertEqual(off(_lib.DispatchOptions, "fixpoint_iterations"), 32)
        self.assertEqual(off(_lib.DispatchOptions, "ulp_budget"), 36)
        self.assertEqual(C.sizeof(_lib.Metric), 64)
        self.assertEqual(off(_lib.Metric, "value"), 56)
        self.assertEqual(off(_lib.BackendOptions, "next"), 16)
        self.assertEqual(off(_lib.Descriptor, "release"), 14)
        self.assertEqual(off(_lib.Descriptor, "registration_size"), 16)
        self.assertEqual(off(_lib.Descriptor, "build_id"), 24)
        self.assertEqual(C.sizeof(_lib.Descriptor), 88)
        self.assertEqual(off(_lib.ProgramRef, "bytes"), 8)
        self.assertEqual(off(_lib.ProgramRef, "pipeline"), 8 + P + (4 if P == 4 else 0) + 8)
        self.assertEqual(C.sizeof(_lib.Input), 16)
        self.assertEqual(C.sizeof(_lib.Output), 16)
        self.assertEqual(C.sizeof(_lib.OutputSlot), 24)
        self.assertEqual(off(_lib.Ext, "next"), 8)
        self.assertEqual(C.sizeof(_lib.ExtensionHead), 8)
        self.assertEqual(off(_lib.Backend, "vt"), 8)
        self.assertEqual(off(_lib.Vtable, "destroy"), 8)
        self.assertEqual(off(_lib.Vtable, "get_extension"), 8 + 25 * F)
        self.assertEqual(C.sizeof(_lib.Vtable), 8 + 26 * F)
        self.assertEqual(off(_lib.Registration, "id"), 8)
        self.assertEqual(off(_lib.Registration, "op_types"), 8 + 3 * P + 8 + P + 16 + F)
        self.assertEqual(C.sizeof(_lib.Registration), 8 + 5 * P + 8 + P + 16 + F)
        self.assertEqual(C.sizeof(_lib.ResidentCopy), 24 + P + (4 if P == 4 else 0))

    def test_vtable_order(self):
        # The entries in vyre.h's order (the offsets of a few landmarks).
        names = [n for n, _ in _lib.VTABLE]
        self.assertEqual(len(names), 26)
        self.assertEqual(names[0], "destroy")
        self.assertEqual(names[5], "dispatch")
        self.assertEqual(names[13], "resident_free")
        self.assertEqual(names[21], "dispatch_resident")
        self.assertEqual(names[25], "get_extension")
        for i, n in enumerate(names):
            self.assertEqual(off(_lib.Vtable, n), 8 + i * F, n)

    def test_vyre_cuda_h(self):
        self.assertEqual(off(_lib.CudaStream, "stream"), 8 + P)
        self.assertEqual(off(_lib.CudaInterop, "context"), 8)
        self.assertEqual(C.sizeof(_lib.CudaInterop), 8 + 3 * F)
        self.assertEqual(_lib.EXT_CUDA_STREAM, 0x43550001)

    def test_vyre_program_h(self):
        self.assertEqual(C.sizeof(_lib.ProgramHeader), 64)
        self.assertEqual(off(_lib.ProgramHeader, "workgroup_size"), 16)
        self.assertEqual(off(_lib.ProgramHeader, "inst_offset"), 48)
        self.assertEqual(C.sizeof(_lib.BufferDecl), 32)
        self.assertEqual(off(_lib.BufferDecl, "count"), 16)
        self.assertEqual(C.sizeof(_lib.Inst), 20)
        self.assertEqual(off(_lib.Inst, "a"), 4)
        # vyre_buffer_info and vyre_program (no assert in the header: the
        # natural C layout, which ctypes reproduces; checked field by field).
        self.assertEqual(off(_lib.BufferInfo, "name"), 32)
        self.assertEqual(off(_lib.BufferInfo, "role"), 96)
        self.assertEqual(off(_lib.BufferInfo, "input_index"), 100)
        self.assertEqual(C.sizeof(_lib.BufferInfo), 120)
        self.assertEqual(off(_lib.Program, "buffer_count"), 64)
        self.assertEqual(off(_lib.Program, "buffers"), 64 + P)
        if P == 8:
            self.assertEqual(off(_lib.Program, "required_caps"), 168)
            self.assertEqual(off(_lib.Program, "sha256"), 184)
            self.assertEqual(C.sizeof(_lib.Program), 232)

    def test_vyre_host_h(self):
        self.assertEqual(off(_lib.HostOptions, "search_path"), 8)
        self.assertEqual(C.sizeof(_lib.HostOptions), 8 + 2 * P)
        self.assertEqual(off(_lib.HostCandidate, "id"), 8)
        self.assertEqual(off(_lib.HostCandidate, "origin"), 8 + 5 * P)
        self.assertEqual(off(_lib.HostCandidate, "reason"), 56 + 6 * P)
        self.assertEqual(off(_lib.HostCandidate, "op_types"),
                         off(_lib.HostCandidate, "reason") + 512)

    def test_dlpack(self):
        # dlpack.h: DLTensor is 48 bytes on LP64, DLManagedTensor 64.
        if P == 8:
            self.assertEqual(C.sizeof(interop.DLTensor), 48)
            self.assertEqual(C.sizeof(interop.DLManagedTensor), 64)
            # DLPack 1.x: {version, manager_ctx, deleter, flags, dl_tensor}.
            V = interop.DLManagedTensorVersioned
            self.assertEqual(off(V, "manager_ctx"), 8)
            self.assertEqual(off(V, "deleter"), 16)
            self.assertEqual(off(V, "flags"), 24)
            self.assertEqual(off(V, "dl_tensor"), 32)
            self.assertEqual(C.sizeof(V), 80)

    def test_tables_match_the_library(self):
        for t, name in enumerate(program.TYPES):
            if t:
                self.assertEqual(_lib.vyre_type_name(t).decode(), name)
        # ... and it is complete: the next number names no type.
        self.assertEqual(_lib.vyre_type_name(len(program.TYPES)).decode(), "?")
        for a, name in enumerate(program.ACCESS):
            self.assertEqual(_lib.vyre_access_name(a).decode(), name)
        self.assertEqual(len(_lib.STATUS_NAMES), 16, _lib.STATUS_NAMES)
        self.assertEqual(_lib.STATUS_NAMES[0], "VYRE_OK")
        self.assertEqual(_lib.STATUS_NAMES[13], "VYRE_TRAP")
        self.assertEqual(vyre.version()[1], (_lib.ABI_MAJOR, _lib.ABI_MINOR))

    def test_release_and_sonames(self):
        # The package and the libvyre it loads are one release, and it loads
        # the libraries by their sonames, whose major is the ABI major.
        self.assertEqual(vyre.__version__, vyre.version()[0],
                         "python/vyre/__init__.py's __version__ is configure.ac's release")
        _, libvyre, host = vyre.library_paths()
        self.assertEqual(os.path.basename(libvyre), "libvyre.so.%d" % vyre.version()[1][0])
        self.assertEqual(os.path.basename(host), "libvyre-host.so.%d" % vyre.version()[1][0])


if __name__ == "__main__":
    unittest.main()
