"""vyretest.py -- what the Python package's tests share: the source tree, the reference backend, example programs."""
import os
import unittest

import vyre

SRC = os.environ.get("VYRE_SRC_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLES = os.path.join(SRC, "examples")


def example(name):
    """A Program from examples/NAME.vyre."""
    return vyre.load(os.path.join(EXAMPLES, name + ".vyre"))


class RefCase(unittest.TestCase):
    """A test case with the reference backend open as self.be (one instance per class)."""

    @classmethod
    def setUpClass(cls):
        cls.be = vyre.open("reference")

    @classmethod
    def tearDownClass(cls):
        cls.be.close()
