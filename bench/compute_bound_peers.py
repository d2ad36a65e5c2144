# compute_bound_peers.py -- the peers of bench/compute_bound.sh: torch.matmul / addmm fp32 (TF32 off) at 4096^3 and torch.sum of 256 Mi f32, CUDA events, median.
import json, sys, torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
def timeit(fn, reps):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts)//2], ts[0]
n = 4096
A = torch.rand(n, n, device="cuda") * 2 - 1; B = torch.rand(n, n, device="cuda") * 2 - 1; C = torch.rand(n, n, device="cuda")
med, mn = timeit(lambda: torch.addmm(C, A, B), 20)
print(json.dumps({"case": "torch_addmm_fp32_tf32_off", "n": n, "median_ms": round(med, 4), "min_ms": round(mn, 4), "tflops": round(2*n**3/(med*1e-3)/1e12, 2)}))
med, mn = timeit(lambda: torch.matmul(A, B), 20)
print(json.dumps({"case": "torch_matmul_fp32_tf32_off", "n": n, "median_ms": round(med, 4), "min_ms": round(mn, 4), "tflops": round(2*n**3/(med*1e-3)/1e12, 2)}))
del A, B, C
x = torch.rand(256 * 1024 * 1024, device="cuda")
med, mn = timeit(lambda: torch.sum(x), 30)
print(json.dumps({"case": "torch_sum", "n": x.numel(), "median_us": round(med*1e3, 1), "min_us": round(mn*1e3, 1), "GBps": round(x.numel()*4/(med*1e-3)/1e9, 1)}))
