/* gpu_ptxmath.c -- runs every ptxmath function on the GPU over a strided sweep of all f32 and checks it against the C model (bit for bit) and the correctly rounded reference (within the bound). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vyre/vyre_program.h>

#include "plugin/ptxmath/ptxmath.h"
#include "plugin/ptxmath/ptxmath_model.h"
#include "cudrv.h"
#include "ptxmath_ref.h"

/*
 * usage: gpu_ptxmath [-s STRIDE] [-t THREADS]   (env PM_GPU_STRIDE too)
 *        gpu_ptxmath -p    print the PTX module it would load, and exit
 * Exit: 0 all good, 1 a mismatch or a bound exceeded, 77 no driver/GPU.
 * Inputs: the canonical f32 among 0, STRIDE, 2*STRIDE, ... (default 64,
 * i.e. 2^26 patterns; -s 16 is the long run) plus special values.
 * Accurate and correctly rounded (cr) variants must equal the C model bit
 * for bit (that proves the PTX implements the model) and be within
 * pm_ulp_bound (0 for cr) of the correctly rounded reference; fast
 * variants (hardware .approx) only the latter.
 * libcuda.so.1 is loaded with dlopen; cuda.h supplies only types.
 */

#define CHUNK (1u << 24)

static const uint32_t ops[] = {VYRE_OP_RSQRT, VYRE_OP_EXP,  VYRE_OP_EXP2, VYRE_OP_LOG,  VYRE_OP_LOG2,
                               VYRE_OP_SIN,   VYRE_OP_COS,  VYRE_OP_TAN,  VYRE_OP_ASIN, VYRE_OP_ACOS,
                               VYRE_OP_ATAN,  VYRE_OP_SINH, VYRE_OP_COSH, VYRE_OP_TANH};
#define NOPS (sizeof ops / sizeof *ops)
#define NFUNC (3 * NOPS)

#define errname cudrv_errname

#define CU_OK(call)                                                                       \
  do {                                                                                    \
    CUresult rc_ = (call);                                                                \
    if (rc_ != CUDA_SUCCESS) {                                                            \
      fprintf(stderr, "gpu_ptxmath: %s failed: %s (%d)\n", #call, errname(rc_), (int)rc_); \
      goto fail;                                                                          \
    }                                                                                     \
  } while (0)

typedef struct func {
  uint32_t op;
  pm_variant variant;
  char name[32];
  CUfunction fn;
  uint64_t inputs, mismatches, not_cr, undecided;
  uint32_t max_ulp, worst, first_mismatch, first_gpu, first_model;
} func;

static char *build_module(func *f, size_t *nf) {
  strbuf sb;
  vyre__sb_init(&sb);
  vyre__sb_puts(&sb, ".version 6.0\n.target sm_70\n.address_size 64\n\n");
  size_t n = 0;
  for (size_t i = 0; i < NOPS; i++)
    for (int v = PM_ACCURATE; v <= PM_CR; v++) {
      if (pm_emit_func(&sb, ops[i], (pm_variant)v, f[n].name) != 0) continue;
      f[n].op = ops[i];
      f[n].variant = (pm_variant)v;
      n++;
    }
  for (size_t i = 0; i < n; i++)
    vyre__sb_printf(&sb,
              ".visible .entry k_%s(.param .u64 pin, .param .u64 pout, .param .u32 pn)\n{\n"
              "\t.reg .u64 %%a<4>;\n\t.reg .b32 %%i<5>;\n\t.reg .f32 %%x<2>;\n\t.reg .pred %%q;\n"
              "\tmov.u32 %%i0, %%ctaid.x;\n\tmov.u32 %%i1, %%ntid.x;\n\tmov.u32 %%i2, %%tid.x;\n"
              "\tmad.lo.u32 %%i3, %%i0, %%i1, %%i2;\n\tld.param.u32 %%i4, [pn];\n"
              "\tsetp.ge.u32 %%q, %%i3, %%i4;\n\t@%%q bra DONE;\n"
              "\tld.param.u64 %%a0, [pin];\n\tld.param.u64 %%a1, [pout];\n"
              "\tcvta.to.global.u64 %%a0, %%a0;\n\tcvta.to.global.u64 %%a1, %%a1;\n"
              "\tmul.wide.u32 %%a2, %%i3, 4;\n\tadd.u64 %%a3, %%a0, %%a2;\n\tld.global.f32 %%x0, [%%a3];\n"
              "\tcall.uni (%%x1), %s, (%%x0);\n\tadd.u64 %%a3, %%a1, %%a2;\n\tst.global.f32 [%%a3], %%x1;\n"
              "DONE:\n\tret;\n}\n",
              f[i].name, f[i].name);
  *nf = n;
  return vyre__sb_take(&sb, NULL);
}

typedef struct work {
  func *f;
  const uint32_t *in, *out;
  size_t begin, end;
  uint64_t mismatches, not_cr, undecided;
  uint32_t max_ulp, worst, first_mismatch, first_gpu, first_model;
  int have_mismatch;
} work;

static void *check_slice(void *arg) {
  work *w = arg;
  int exact = pm_model_bit_exact(w->f->op, w->f->variant);
  for (size_t i = w->begin; i < w->end; i++) {
    uint32_t x = w->in[i], g = w->out[i];
    if (exact) {
      uint32_t m;
      pm_model(w->f->op, w->f->variant, x, &m);
      if (m != g) {
        if (!w->have_mismatch) w->first_mismatch = x, w->first_gpu = g, w->first_model = m, w->have_mismatch = 1;
        w->mismatches++;
      }
    }
    int unc;
    uint32_t r = pm_ref(w->f->op, x, &unc);
    if (unc) {
      w->undecided++;
      continue;
    }
    uint32_t d = pm_ulp_dist(g, r);
    if (d) w->not_cr++;
    if (d > w->max_ulp) w->max_ulp = d, w->worst = x;
  }
  return NULL;
}

/* Special values and their neighbours, appended to every sweep. */
static size_t add_specials(uint32_t *in, size_t n) {
  static const uint32_t s[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x3F800000u,
                               0xBF800000u, 0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x5922AA80u,
                               0x7E967699u, 0x3FC90FDBu, 0x40490FDBu, 0x3F490FDBu, 0x42B17218u, 0xC2AEAC50u,
                               0x43000000u, 0xC3150000u, 0x41A00000u, 0x48000000u, 0x47FFFFFFu, 0x3F000000u};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++)
    for (int d = -2; d <= 2; d++) {
      uint32_t x = pm_canon(s[i] + (uint32_t)d);
      in[n++] = x;
    }
  for (uint32_t e = 1; e < 255; e++) in[n++] = e << 23, in[n++] = (e << 23) | 0x80000000u;
  return n;
}

int main(int argc, char **argv) {
  uint64_t stride = 64;
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("PM_GPU_STRIDE");
  if (env && *env) stride = strtoull(env, NULL, 0);
  int opt, print_only = 0;
  while ((opt = getopt(argc, argv, "s:t:p")) != -1) {
    if (opt == 's') stride = strtoull(optarg, NULL, 0);
    else if (opt == 't') threads = strtol(optarg, NULL, 0);
    else if (opt == 'p') print_only = 1;
    else {
      fprintf(stderr, "usage: %s [-s STRIDE] [-t THREADS] | -p\n", argv[0]);
      return 2;
    }
  }
  if (print_only) {
    func pf[NFUNC];
    size_t pn = 0;
    char *text = build_module(pf, &pn);
    if (!text) return 1;
    fputs(text, stdout);
    free(text);
    return 0;
  }
  if (stride == 0 || threads < 1 || threads > 256) {
    fprintf(stderr, "gpu_ptxmath: bad arguments: stride must be > 0 and threads in 1..256\n");
    return 2;
  }
  if (cudrv_load("gpu_ptxmath") != 0) return 77;
  CUresult rc = cu.Init(0);
  int ndev = 0;
  if (rc != CUDA_SUCCESS || cu.DeviceGetCount(&ndev) != CUDA_SUCCESS || ndev == 0) {
    fprintf(stderr, "gpu_ptxmath: SKIP: no CUDA device (cuInit: %s)\n", errname(rc));
    return 77;
  }

  int status = 1;
  CUdevice dev = 0;
  CUcontext ctx = NULL;
  CUmodule mod = NULL;
  CUdeviceptr din = 0, dout = 0;
  uint32_t *in = NULL, *out = NULL;
  char *ptx = NULL;
  func f[NFUNC];
  memset(f, 0, sizeof f);
  size_t nf = 0;
  char jit_log[8192] = "";

  CU_OK(cu.DeviceGet(&dev, 0));
  char devname[256] = "?";
  cu.DeviceGetName(devname, sizeof devname, dev);
  CU_OK(cu.DevicePrimaryCtxRetain(&ctx, dev));
  CU_OK(cu.CtxSetCurrent(ctx));
  ptx = build_module(f, &nf);
  if (!ptx) {
    fprintf(stderr, "gpu_ptxmath: building the PTX module failed: out of memory\n");
    goto fail;
  }
  {
    CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *ov[2] = {jit_log, (void *)(uintptr_t)sizeof jit_log};
    rc = cu.ModuleLoadDataEx(&mod, ptx, 2, o, ov);
    if (rc != CUDA_SUCCESS) {
      fprintf(stderr, "gpu_ptxmath: cuModuleLoadDataEx failed: %s. JIT log:\n%s\n", errname(rc), jit_log);
      goto fail;
    }
  }
  for (size_t i = 0; i < nf; i++) {
    char kname[48];
    snprintf(kname, sizeof kname, "k_%s", f[i].name);
    CU_OK(cu.ModuleGetFunction(&f[i].fn, mod, kname));
  }
  in = malloc((CHUNK + 1024) * sizeof *in);
  out = malloc((CHUNK + 1024) * sizeof *out);
  if (!in || !out) {
    fprintf(stderr, "gpu_ptxmath: host buffers of %u inputs: out of memory\n", CHUNK);
    goto fail;
  }
  CU_OK(cu.MemAlloc(&din, (CHUNK + 1024) * sizeof *in));
  CU_OK(cu.MemAlloc(&dout, (CHUNK + 1024) * sizeof *out));
  printf("gpu_ptxmath: %s, stride %llu, %ld threads\n", devname, (unsigned long long)stride, threads);
  time_t t0 = time(NULL);

  uint64_t next = 0;
  int specials_done = 0;
  while (next <= 0xFFFFFFFFu || !specials_done) {
    size_t n = 0;
    while (n < CHUNK && next <= 0xFFFFFFFFu) {
      uint32_t x = (uint32_t)next;
      next += stride;
      if (pm_canon(x) == x) in[n++] = x;
    }
    if (next > 0xFFFFFFFFu && !specials_done) {
      n = add_specials(in, n);
      specials_done = 1;
    }
    if (n == 0) continue;
    CU_OK(cu.MemcpyHtoD(din, in, n * sizeof *in));
    for (size_t k = 0; k < nf; k++) {
      unsigned nn = (unsigned)n;
      void *args[] = {&din, &dout, &nn};
      CU_OK(cu.LaunchKernel(f[k].fn, (nn + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
      CU_OK(cu.CtxSynchronize());
      CU_OK(cu.MemcpyDtoH(out, dout, n * sizeof *out));
      work w[256];
      pthread_t tid[256];
      for (long t = 0; t < threads; t++) {
        w[t] = (work){.f = &f[k], .in = in, .out = out, .begin = n * (size_t)t / (size_t)threads,
                      .end = n * (size_t)(t + 1) / (size_t)threads};
        pthread_create(&tid[t], NULL, check_slice, &w[t]);
      }
      for (long t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        if (w[t].have_mismatch && !f[k].mismatches) {
          f[k].first_mismatch = w[t].first_mismatch;
          f[k].first_gpu = w[t].first_gpu;
          f[k].first_model = w[t].first_model;
        }
        f[k].mismatches += w[t].mismatches;
        f[k].not_cr += w[t].not_cr;
        f[k].undecided += w[t].undecided;
        if (w[t].max_ulp > f[k].max_ulp) f[k].max_ulp = w[t].max_ulp, f[k].worst = w[t].worst;
      }
      f[k].inputs += n;
    }
  }

  printf("%-6s %-8s %11s %7s %5s %10s %10s %10s %9s\n", "op", "variant", "inputs", "max_ulp", "bound", "worst_x",
         "vs_model", "not_cr", "undecided");
  status = 0;
  for (size_t k = 0; k < nf; k++) {
    uint32_t bound = pm_ulp_bound(f[k].op, f[k].variant);
    int exact = pm_model_bit_exact(f[k].op, f[k].variant);
    char vm[16];
    if (exact) snprintf(vm, sizeof vm, "%llu", (unsigned long long)f[k].mismatches);
    else snprintf(vm, sizeof vm, "n/a");
    int bad = f[k].max_ulp > bound || (exact && f[k].mismatches);
    printf("%-6s %-8s %11llu %7u %5u %10.8x %10s %10llu %9llu%s\n", pm_ref_name(f[k].op),
           f[k].variant == PM_FAST ? "fast" : f[k].variant == PM_CR ? "cr" : "accurate", (unsigned long long)f[k].inputs, f[k].max_ulp, bound,
           f[k].worst, vm, (unsigned long long)f[k].not_cr, (unsigned long long)f[k].undecided, bad ? "  FAIL" : "");
    if (exact && f[k].mismatches)
      printf("       first mismatch: x=0x%08x gpu=0x%08x model=0x%08x\n", f[k].first_mismatch, f[k].first_gpu,
             f[k].first_model);
    if (bad) status = 1;
  }
  printf("gpu_ptxmath: %s in %lld s\n", status ? "FAILED" : "all within bounds, accurate variants bit-identical to the model",
         (long long)(time(NULL) - t0));

fail:
  if (din) cu.MemFree(din);
  if (dout) cu.MemFree(dout);
  if (mod) cu.ModuleUnload(mod);
  if (ctx) cu.DevicePrimaryCtxRelease(dev);
  free(in);
  free(out);
  free(ptx);
  return status;
}
