#!/usr/bin/env python3
"""fused_sgd.py -- a custom fused kernel inside a PyTorch training step: SGD with momentum as one vyre program that updates each parameter and its momentum buffer in place, zero copy, on torch's stream; checked against torch.optim.SGD.

    PYTHONPATH=BUILD/python python3 examples/python/fused_sgd.py [--steps N] [--cpu]

With a GPU, PyTorch and the CUDA backend: two copies of a small MLP learn
the same regression; one steps with torch.optim.SGD(momentum=0.9), the
other with the vyre kernel, dispatched on the parameter tensors
themselves (pointer identity is checked every step).  The parameters of
the two copies must stay within a few float32 ulps of each other (PyTorch
may contract p - lr * v into one fma; the vyre program rounds twice, as
PyTorch's formula is written).  Without a GPU or PyTorch (or with --cpu)
the same program runs on the CPU reference backend on NumPy arrays and is
checked bit for bit against the same update written in NumPy.
Exit 1 when a check fails.
"""
import argparse
import sys
import time

import numpy as np

import vyre


def fused_sgd_program():
    """v = momentum * v + g; p = p - lr * v, for every element, in place.

    Buffers in declaration order: cfg (uniform f32 [2]: lr, momentum),
    g (ro f32: the gradient), v (rw f32: the momentum buffer), p (rw f32:
    the parameter).  Each multiply and add rounds on its own, as
    torch.optim.SGD's formula does (buf.mul_(momentum).add_(grad);
    p.add_(buf, alpha=-lr)).
    """
    b = vyre.Builder(256)
    cfg = b.buffer("cfg", "f32", "uniform", count=2)
    g = b.buffer("g", "f32", "ro")
    v = b.buffer("v", "f32", "rw")
    p = b.buffer("p", "f32", "rw")
    i = b.gid()
    with b.if_(i < p.len()):
        lr = cfg[b.u32(0)]
        mu = cfg[b.u32(1)]
        vi = mu * v[i] + g[i]
        v[i] = vi
        p[i] = p[i] - lr * vi
    return b.finish(name="fused_sgd")


def run_torch(steps, lr, mu):
    import torch
    torch.manual_seed(0)
    dev = torch.device("cuda")
    be = vyre.open("cuda")
    prog = fused_sgd_program()

    def model():
        torch.manual_seed(1)
        return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                   torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                   torch.nn.Linear(256, 1)).to(dev)
    ref, mine = model(), model()
    opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=mu)
    bufs = [torch.zeros_like(p) for p in mine.parameters()]
    cfg = torch.tensor([lr, mu], dtype=torch.float32, device=dev)
    ptrs = [p.data_ptr() for p in mine.parameters()]
    X = torch.randn(4096, 64, device=dev)
    Y = (X[:, :8].sum(1, keepdim=True) ** 2) * 0.1
    worst = 0.0
    t_vyre = t_torch = 0.0
    ok = True
    for step in range(steps):
        for net in (ref, mine):
            net.zero_grad(set_to_none=False)
            loss = torch.nn.functional.mse_loss(net(X), Y)
            loss.backward()
            if net is ref:
                loss_ref = loss.item()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.step()
        torch.cuda.synchronize()
        t_torch += time.perf_counter() - t0
        t0 = time.perf_counter()
        with torch.no_grad():
            for p, v in zip(mine.parameters(), bufs):
                # In place on the parameter, its gradient and its momentum
                # buffer, ordered on torch's current stream.
                be.dispatch_resident(prog, cfg, p.grad, v, p)
        torch.cuda.synchronize()
        t_vyre += time.perf_counter() - t0
        ok &= [p.data_ptr() for p in mine.parameters()] == ptrs
        for a, b in zip(ref.parameters(), mine.parameters()):
            worst = max(worst, (a - b).abs().max().item())
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            print("step %3d  loss %.6f  max |torch param - vyre param| %.3g" % (
                step, loss_ref, worst))
    close = all(torch.allclose(a, b, rtol=1e-5, atol=1e-6)
                for a, b in zip(ref.parameters(), mine.parameters()))
    print("parameters updated in place (same data_ptr every step): %s" % ok)
    print("fused vyre update %.3f ms/step vs torch.optim.SGD %.3f ms/step (%d tensors)" % (
        t_vyre / steps * 1e3, t_torch / steps * 1e3, len(ptrs)))
    be.close()
    return ok and close


def run_numpy(steps, lr, mu, backend):
    rng = np.random.default_rng(0)
    be = vyre.open(backend)
    print("no GPU path: %s on %s, NumPy arrays" % (be.id, be.profile().name))
    prog = fused_sgd_program()
    # Linear regression y = X w with a hand-written gradient.
    X = rng.standard_normal((512, 32)).astype(np.float32)
    w_true = rng.standard_normal(32).astype(np.float32)
    Y = X @ w_true
    w_np = np.zeros(32, np.float32)
    v_np = np.zeros(32, np.float32)
    cfg = np.float32([lr, mu])
    lr32, mu32 = np.float32(lr), np.float32(mu)
    with be.upload(np.zeros(32, np.float32)) as w, be.upload(np.zeros(32, np.float32)) as v, \
            be.upload(cfg) as c, be.alloc(32 * 4, dtype="float32") as g:
        ok = True
        for step in range(steps):
            wv = w.download()
            grad = (2.0 / len(X) * X.T @ (X @ wv - Y)).astype(np.float32)
            g.upload(grad)
            be.dispatch_resident(prog, c, g, v, w)  # in place on the resident buffers
            # The same update in NumPy, each operation rounded to f32.
            v_np = mu32 * v_np + grad
            w_np = w_np - lr32 * v_np
            ok &= w.download().tobytes() == w_np.tobytes() and v.download().tobytes() == \
                v_np.tobytes()
            if step % max(1, steps // 5) == 0 or step == steps - 1:
                loss = float(np.mean((X @ w.download() - Y) ** 2))
                print("step %3d  loss %.6f  bit-exact with NumPy so far: %s" % (step, loss, ok))
    be.close()
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--cpu", action="store_true", help="the NumPy variant even with a GPU")
    ap.add_argument("--backend", default="reference", help="backend of the NumPy variant")
    args = ap.parse_args()
    gpu = False
    if not args.cpu:
        try:
            import torch
            gpu = torch.cuda.is_available() and any(
                b.id == "cuda" and b.status == "ready" for b in vyre.backends())
        except ImportError:
            gpu = False
    if gpu:
        ok = run_torch(args.steps, args.lr, args.momentum)
    else:
        ok = run_numpy(args.steps, args.lr, args.momentum, args.backend)
    print("fused_sgd: %s" % ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
