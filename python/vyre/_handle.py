"""_handle.py -- what every handle of the package shares (Backend, Resident, Pipeline, Pending): one lock per object that orders its calls against its close(), the closed check, the context manager and release when collected."""
import threading

from .errors import invalid, make

OPEN, CLOSING, CLOSED = "open", "closing", "closed"


class Handle(object):
    """A handle on something the C side owns, with one lock per object so
    that close() never releases the C object under a call in flight.

    A subclass says how to release it (_release, called once), when it is
    open (_is_open) and what using it after close says (_closed_text:
    what failed. Fix: how).  close() releases it; a context manager:
    leaving the block closes it; collected, it is closed (errors then are
    dropped).  SharedHandle and OwnedHandle say how calls synchronise."""

    def __init__(self):
        # Re-entrant: the cyclic garbage collector may run a handle's __del__
        # (a Resident's free enters its backend) at an allocation made while
        # this thread is inside a block that holds the lock (notify_all makes
        # a deque); a plain Lock would deadlock there.  Every such block
        # leaves the state consistent at each allocation it makes.
        self._lock = threading.RLock()
        self._cv = threading.Condition(self._lock)
        self._state = OPEN
        self._waiting = 0  # threads in _wait(): notify only when there are some

    def _wait(self):
        """Wait on the handle's condition (its lock held)."""
        self._waiting += 1
        try:
            self._cv.wait()
        finally:
            self._waiting -= 1

    def _wake(self):
        """Wake the waiting threads (the lock held); nothing to do without any."""
        if self._waiting:
            self._cv.notify_all()

    def _is_open(self):
        return self._state == OPEN

    def _closed_text(self):
        return "this handle is released. Fix: make a new one"

    def _closed(self):
        return make("VYRE_INVALID_HANDLE", self._closed_text())

    def _check_open(self):
        """Raise InvalidHandle (VYRE_INVALID_HANDLE) when the handle is closed or closing."""
        if not self._is_open():
            raise self._closed()

    def _release(self):
        raise NotImplementedError

    def _finish_close(self):
        try:
            self._release()
        finally:
            with self._lock:
                self._state = CLOSED
                self._wake()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            if getattr(self, "_lock", None) is not None:
                self.close()
        except Exception:
            pass


class SharedHandle(Handle):
    """A handle any number of threads may call at once (a Backend: the C
    instance is free-threaded).  Each call is counted in flight
    (_enter/_leave, or a Call); close() refuses new calls at once
    (InvalidHandle), waits for those in flight, then releases.  A close()
    made by a thread from inside one of its own calls on this handle (a
    device array's __dlpack__ or __cuda_array_interface__ closing the
    backend) cannot wait for itself: the last call to leave releases."""

    def __init__(self):
        Handle.__init__(self)
        self._calls = {}  # thread ident -> calls in flight on that thread
        self._deferred = False

    def _enter(self):
        """Count a call in flight; InvalidHandle when closed or closing."""
        me = threading.get_ident()
        with self._lock:
            ok = self._state == OPEN
            if ok:
                self._calls[me] = self._calls.get(me, 0) + 1
        if not ok:
            raise self._closed()

    def _try_enter(self):
        """_enter() that answers False instead of raising."""
        try:
            self._enter()
            return True
        except Exception:
            return False

    def _leave(self):
        me = threading.get_ident()
        with self._lock:
            n = self._calls[me] - 1
            if n:
                self._calls[me] = n
            else:
                del self._calls[me]
            run = not self._calls and self._deferred
            self._deferred = False if run else self._deferred
            if not self._calls:
                self._wake()
        if run:
            self._finish_close()

    def close(self):
        """Release the handle once no call is in flight (waiting for them);
        calls made after close() began raise InvalidHandle.  Idempotent."""
        me = threading.get_ident()
        with self._lock:
            if self._state != OPEN:
                while self._state != CLOSED and me not in self._calls:
                    self._wait()
                return
            self._state = CLOSING
            if me in self._calls:
                self._deferred = True
                return
            while self._calls:
                self._wait()
        self._finish_close()


class OwnedHandle(Handle):
    """A handle one thread uses at a time (Resident, Pipeline, Pending:
    abi.md section 8).  A call holds it (_hold/_drop, or Call.hold) and
    another thread's call waits; close() holds it as a call does, so it
    waits for the call in flight, and later calls raise InvalidHandle."""

    def __init__(self):
        Handle.__init__(self)
        self._holder = None  # the thread ident holding it

    def _hold(self):
        """Hold the handle for one call (waiting while another thread holds
        it); InvalidHandle when it is closed."""
        me = threading.get_ident()
        with self._lock:
            mine = self._holder == me
            while self._holder is not None and not mine:
                self._wait()
            ok = self._state == OPEN and not mine
            if ok:
                self._holder = me
        if mine:
            raise invalid("%r is already in use by this thread's call. Fix: do not pass one "
                          "handle where the call that holds it runs code of yours" % self)
        if not ok:
            raise self._closed()

    def _drop(self):
        with self._lock:
            self._holder = None
            self._wake()

    def _retire(self):
        """Mark the handle closed while this thread holds it (a call that
        consumes it: Pending.wait)."""
        with self._lock:
            self._state = CLOSED

    def close(self):
        """Release the handle, after the call in flight on it.  Idempotent."""
        me = threading.get_ident()
        with self._lock:
            mine = self._holder == me
            while self._holder is not None and not mine:
                self._wait()
            if mine or self._state != OPEN:
                go = False
            else:
                go, self._state, self._holder = True, CLOSING, me
        if mine:
            raise invalid("%r is closed inside a call that holds it. Fix: close it after "
                          "that call returns" % self)
        if not go:
            return
        try:
            self._finish_close()
        finally:
            self._drop()


class Call(object):
    """One call on a backend: the backend counted in flight from the start,
    then the owned handles the call passes to C (use()), held together by
    hold() in one order (so that two calls holding the same handles cannot
    deadlock) until the call ends.  A context manager."""

    __slots__ = ("backend", "_want", "_held")

    def __init__(self, backend):
        backend._enter()
        self.backend, self._want, self._held = backend, [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.drop()
        self.backend._leave()
        return False

    def drop(self):
        """Give back the handles held (the call into C is over)."""
        held, self._held = self._held, []
        for h in reversed(held):
            h._drop()

    def use(self, handle):
        """handle.handle (InvalidHandle when closed now), to be held at hold().
        Its value stays while the handle is open, so hold() checking it is
        still open makes the value read here safe to pass."""
        handle._check_open()
        for h in self._want:
            if h is handle:
                break
        else:
            self._want.append(handle)
        return handle.handle

    def hold(self):
        """Hold every handle use()d (waiting for other threads' calls on them),
        in the order of their ids; InvalidHandle when one was closed meanwhile."""
        want, self._want = self._want, []
        if len(want) > 1:
            want.sort(key=id)
        for h in want:
            h._hold()
            self._held.append(h)
