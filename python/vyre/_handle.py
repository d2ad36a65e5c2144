"""_handle.py -- what every handle of the package shares (Backend, Resident, Pipeline, Pending): the closed check, close(), the context manager and release when collected."""
from .errors import make


class Handle(object):
    """A handle on something the C side owns.  A subclass says how to
    release it (_release, idempotent), when it is open (_is_open) and what
    using it after close says (_closed_text: what failed. Fix: how).
    close() releases it; a context manager: leaving the block closes it;
    collected, it is closed (errors then are dropped)."""

    def _is_open(self):
        return bool(self.handle)

    def _closed_text(self):
        return "this handle is released. Fix: make a new one"

    def _check_open(self):
        """Raise InvalidHandle (VYRE_INVALID_HANDLE) when the handle is closed."""
        if not self._is_open():
            raise make("VYRE_INVALID_HANDLE", self._closed_text())

    def _release(self):
        raise NotImplementedError

    def close(self):
        """Release the handle (a Backend: destroy the instance, and with it every
        handle it made).  Idempotent."""
        self._release()

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
