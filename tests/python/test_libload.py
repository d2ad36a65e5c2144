"""test_libload.py -- how `import vyre` finds its libraries: VYRE_LIB_DIR is the only place when set, and a library there that is truncated, a FIFO or missing is an ImportError naming why (never a SIGBUS or a hang in dlopen, never a silent fall back to the build tree)."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import vyre

# A blocked import fails the test instead of hanging it.
TIMEOUT = 60


def import_vyre(lib_dir):
    """(returncode, stdout, stderr) of `import vyre` in a child with VYRE_LIB_DIR=lib_dir."""
    env = dict(os.environ, VYRE_LIB_DIR=lib_dir)
    code = "import vyre; print(vyre.library_paths()[0])"
    p = subprocess.run([sys.executable, "-B", "-c", code], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


class LibDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vyre-libload-")
        _, self.libvyre, self.libhost = vyre.library_paths()
        for path in (self.libvyre, self.libhost):
            shutil.copy(path, os.path.join(self.dir, os.path.basename(path)))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, which):
        return os.path.join(self.dir, os.path.basename(which))

    def refused(self, why):
        rc, _, err = import_vyre(self.dir)
        self.assertNotEqual(rc, -signal.SIGBUS, "a SIGBUS in dlopen: %s" % err)
        self.assertEqual(rc, 1, "import vyre fails with an exception: %s" % err)
        self.assertIn("ImportError: vyre: cannot load libvyre and libvyre-host", err)
        self.assertIn(why, err)
        self.assertIn("Fix: set VYRE_LIB_DIR", err)
        self.assertNotIn("the build tree", err, "no fall back past VYRE_LIB_DIR")

    def test_whole_copies_load(self):
        rc, out, err = import_vyre(self.dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.strip(), "VYRE_LIB_DIR=" + self.dir)

    def test_truncated_libvyre(self):
        for cut in (10, 4096, os.path.getsize(self.libvyre) // 2):
            with open(self.libvyre, "rb") as src, open(self.path(self.libvyre), "wb") as dst:
                dst.write(src.read(cut))
            self.refused("libvyre.so.1: ")

    def test_truncated_libvyre_host(self):
        with open(self.libhost, "rb") as src, open(self.path(self.libhost), "wb") as dst:
            dst.write(src.read(os.path.getsize(self.libhost) - 100))
        self.refused("truncated: ")

    def test_fifo(self):
        os.remove(self.path(self.libvyre))
        os.mkfifo(self.path(self.libvyre))
        self.refused("is not a regular file (a FIFO)")

    def test_missing_dir(self):
        shutil.rmtree(self.dir)
        os.mkdir(self.dir)  # for tearDown
        rc, _, err = import_vyre(os.path.join(self.dir, "nonexistent"))
        self.assertEqual(rc, 1, err)
        self.assertIn("No such file or directory", err)
        self.assertNotIn("the build tree", err, "no silent fall back to the build tree")


if __name__ == "__main__":
    unittest.main()
