"""test_threads.py -- calls and close() synchronise per object: closing a backend, freeing a resident buffer, releasing a pipeline or a pending dispatch, or closing a builder while other threads use it never frees the C object under them (issue 24, finding 10: a heap-use-after-free under ASan before).  Every call either completes, bit-exact, or raises InvalidHandle."""
import gc
import os
import random
import threading
import time
import unittest

import numpy as np

import vyre
from vyretest import example

N = 1 << 14      # a saxpy of N elements takes about 2 ms on the reference backend
# The backend raced: python.test races the reference; on a GPU machine
# VYRE_THREADS_BACKEND=cuda races the CUDA backend (not on the fake driver,
# whose kernels do not run).
BACKEND = os.environ.get("VYRE_THREADS_BACKEND", "reference")


def live_buffers(be):
    """Resident buffers alive on `be` (the reference's and the CUDA backend's counter)."""
    m = be.metrics()
    return m.get("resident.live.buffers", m.get("resident.buffers"))
ROUNDS = 32      # open, race, close: each round is one chance to free under a call
WORKERS = 3


class Race(object):
    """Run fn(i) in WORKERS threads until each raises; collect what they raised."""

    def __init__(self, fn):
        self.fn, self.done, self.errors, self.unexpected = fn, 0, [], []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(i,)) for i in range(WORKERS)]
        for t in self.threads:
            t.start()

    def _run(self, i):
        try:
            while True:
                self.fn(i)
                with self.lock:
                    self.done += 1
        except vyre.InvalidHandle as e:
            with self.lock:
                self.errors.append(e)
        except BaseException as e:  # anything else is a failure of the test
            with self.lock:
                self.unexpected.append(e)

    def join(self):
        for t in self.threads:
            t.join(60)
            if t.is_alive():
                raise AssertionError("a worker is still running 60 s after close")


class CloseRaces(unittest.TestCase):
    def setUp(self):
        self.saxpy = example("saxpy")
        self.x = np.arange(N, dtype=np.float32)
        self.y = np.ones(N, dtype=np.float32)
        self.want = (2 * self.x + 1).tobytes()
        self.rng = random.Random(24)

    def settle(self, race, what):
        race.join()
        self.assertEqual(race.unexpected, [], "%s: only InvalidHandle may end a worker" % what)
        for e in race.errors:
            self.assertIn("Fix:", e.message)

    def test_backend_close_while_dispatching(self):
        calls = 0
        for _ in range(ROUNDS):
            be = vyre.open(BACKEND)

            def work(i):
                (out,) = be.dispatch(self.saxpy, 2.0, self.x, self.y)
                self.assertEqual(out.tobytes(), self.want)
            race = Race(work)
            time.sleep(self.rng.uniform(0, 0.004))
            be.close()
            self.settle(race, "dispatch")
            calls += race.done
            for e in race.errors:
                self.assertIn("backend %s is closed" % BACKEND, e.message)
        self.assertGreater(calls, 0, "some dispatches ran before the closes")

    def test_backend_close_under_resident_work(self):
        for _ in range(ROUNDS):
            be = vyre.open(BACKEND)
            bufs = [[be.upload(np.float32([2.0])), be.upload(self.x), be.alloc(4 * N)]
                    for _ in range(WORKERS)]

            def work(i):
                a, x, y = bufs[i]
                y.upload(self.y)
                p = be.dispatch_async(self.saxpy, 2.0, self.x, self.y)
                be.dispatch_resident(self.saxpy, a, x, y)
                self.assertEqual(y.download().tobytes(), self.want)
                p.poll()
                self.assertEqual(p.wait()[0].tobytes(), self.want)
            race = Race(work)
            time.sleep(self.rng.uniform(0, 0.006))
            be.close()
            self.settle(race, "resident work")
            for trio in bufs:
                for r in trio:
                    r.free()  # after the backend: nothing left to free, no error

    def test_free_and_release_while_in_use(self):
        be = vyre.open(BACKEND)
        try:
            for _ in range(ROUNDS):
                a, x = be.upload(np.float32([2.0])), be.upload(self.x)
                ys = [be.alloc(4 * N) for _ in range(WORKERS)]
                pl = be.compile(self.saxpy)

                def work(i):
                    be.dispatch_resident(pl, a, x, ys[i])
                    be.sequence([(self.saxpy, [a, x, ys[i]])], reads=[ys[i]])
                race = Race(work)
                time.sleep(self.rng.uniform(0, 0.004))
                for h in [pl, x, a] + ys:
                    h.close()
                self.settle(race, "free/release")
            self.assertEqual(live_buffers(be), 0, "every buffer freed")
        finally:
            be.close()

    def test_pending_wait_release_poll(self):
        be = vyre.open(BACKEND)
        try:
            for _ in range(ROUNDS):
                p = be.dispatch_async(self.saxpy, 2.0, self.x, self.y)
                got = []

                def wait():
                    try:
                        got.append(p.wait()[0].tobytes())
                    except vyre.InvalidHandle:
                        got.append(None)
                threads = [threading.Thread(target=wait) for _ in range(2)] + \
                    [threading.Thread(target=p.release)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(60)
                self.assertLessEqual(sum(1 for g in got if g is not None), 1,
                                     "one wait() at most gets the outputs")
                self.assertTrue(all(g in (None, self.want) for g in got))
                with self.assertRaises(vyre.InvalidHandle):
                    p.poll()
        finally:
            be.close()

    def test_builder_close_while_building(self):
        for _ in range(ROUNDS):
            b = vyre.Builder(64)
            buf = b.buffer("y", "u32", "rw")

            def work(i):
                buf[b.gid()] = b.u32(i) + b.lid()
            race = Race(work)
            time.sleep(self.rng.uniform(0, 0.002))
            b.close()
            race.join()
            self.assertTrue(all(isinstance(e, vyre.InvalidArgument) for e in race.unexpected),
                            "a closed builder refuses with InvalidArgument: %r" % race.unexpected)

    def test_collected_inside_a_call(self):
        # A resident buffer in a reference cycle is freed by the cyclic
        # collector, which may run at any allocation, also one made while
        # its backend's lock is held (notify_all makes a deque): its free
        # enters that backend and must not deadlock on the lock.
        be = vyre.open(BACKEND)
        done = []

        def collect_under_the_lock():
            cycle = [be.alloc(16)]
            cycle.append(cycle)
            del cycle
            with be._lock:  # where _leave's notify_all may collect
                gc.collect()
            done.append(live_buffers(be))
        t = threading.Thread(target=collect_under_the_lock, daemon=True)
        t.start()
        t.join(20)
        self.assertFalse(t.is_alive(), "the collector's free deadlocked on the backend's lock")
        self.assertEqual(done, [0], "the collected buffer was freed")
        be.close()

    def test_close_from_inside_a_call(self):
        # An input's __array__ runs while dispatch holds the backend: closing
        # it there cannot wait for that call; the call completes and the
        # instance is destroyed when it leaves.
        be = vyre.open(BACKEND)

        class Closing(object):
            def __array__(self, dtype=None, copy=None):
                be.close()
                return np.ones(N, dtype=np.float32)
        (out,) = be.dispatch(self.saxpy, 2.0, self.x, Closing())
        self.assertEqual(out.tobytes(), self.want, "the call in flight completed")
        self.assertIsNone(be._b, "the instance was destroyed as the call left")
        with self.assertRaises(vyre.InvalidHandle):
            be.metrics()
        be.close()

        # A pipeline released from inside a call that passes it is not
        # passed: the call holds its handles after the conversions, finds it
        # released and raises; the instance goes on.
        be = vyre.open(BACKEND)
        try:
            pl = be.compile(self.saxpy)

            class Releasing(object):
                def __array__(self, dtype=None, copy=None):
                    pl.release()
                    return np.ones(N, dtype=np.float32)
            with self.assertRaises(vyre.InvalidHandle) as cm:
                be.dispatch(pl, 2.0, self.x, Releasing())
            self.assertIn("the pipeline is released", cm.exception.message)
            self.assertEqual(be.dispatch(self.saxpy, 2.0, self.x, self.y)[0].tobytes(), self.want)
        finally:
            be.close()


if __name__ == "__main__":
    unittest.main()
