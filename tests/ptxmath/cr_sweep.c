/* cr_sweep.c -- the exhaustive sweep: every one of the 2^32 f32 bit patterns through a ptxmath function on the GPU, compared with an independent oracle (cr_oracle.cu). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vyre/vyre_program.h>

#include "abi/support/file.h"
#include "plugin/ptxmath/ptxmath.h"
#include "cudrv.h"

/*
 * usage: cr_sweep -o ORACLE.ptx [-v cr|acc] [-r RECORDS] [-c CHUNKS] [OP...]
 *
 * For each OP (default: all fourteen) the emitted ptxmath function of the
 * variant (default cr, the correctly rounded one) runs on every bit
 * pattern 0 .. 2^32-1, read as vyre reads an f32 operand (a subnormal as
 * the zero of its sign, any NaN as 0x7FC00000), in chunks of 2^28; the
 * oracle kernel (nvcc -ptx of tests/ptxmath/cr_oracle.cu, libdevice f64)
 * decides the correctly rounded result where f64 can, and records the
 * rest.  -c N stops after N chunks (16 = all; for a quick look).
 *
 * Prints one line per op: patterns, decided mismatches, undecided inputs;
 * and writes every record to RECORDS (default cr_sweep.records) as
 *     OP VARIANT KIND X OURS ORACLE
 * (KIND "mismatch" or "undecided"; hex bits), which cr_resolve.py decides
 * in multiple precision.  Exit: 0 when no decided mismatch was found and
 * no record was dropped, 1 otherwise, 2 bad usage, 77 no GPU.
 */

#define CHUNK_LOG 28
#define CHUNK (1u << CHUNK_LOG)
#define MAXREC (1u << 22)

static const uint32_t all_ops[] = {VYRE_OP_RSQRT, VYRE_OP_EXP,  VYRE_OP_EXP2, VYRE_OP_LOG,  VYRE_OP_LOG2,
                                   VYRE_OP_SIN,   VYRE_OP_COS,  VYRE_OP_TAN,  VYRE_OP_ASIN, VYRE_OP_ACOS,
                                   VYRE_OP_ATAN,  VYRE_OP_SINH, VYRE_OP_COSH, VYRE_OP_TANH};
#define NOPS (sizeof all_ops / sizeof *all_ops)

#define CU_OK(call)                                                                                   \
  do {                                                                                                \
    CUresult rc_ = (call);                                                                            \
    if (rc_ != CUDA_SUCCESS) {                                                                        \
      fprintf(stderr, "cr_sweep: %s failed: %s (%d)\n", #call, cudrv_errname(rc_), (int)rc_);       \
      status = 1;                                                                                     \
      goto fail;                                                                                      \
    }                                                                                                 \
  } while (0)

static const char *op_name(uint32_t op) {
  const vyre_op_info *info = vyre_op_lookup(op);
  return info ? info->mnemonic : "?";
}

/* The module under test: every op's function and a kernel k_OP(out, base, n)
 * storing f(canon(base + i)) for i < n. */
static char *build_module(const uint32_t *ops, size_t nops, pm_variant v) {
  strbuf sb;
  vyre__sb_init(&sb);
  vyre__sb_puts(&sb, ".version 6.0\n.target sm_70\n.address_size 64\n\n");
  for (size_t i = 0; i < nops; i++) {
    char name[32];
    if (pm_emit_func(&sb, ops[i], v, name) != 0) {
      vyre__sb_free(&sb);
      return NULL;
    }
    vyre__sb_printf(&sb,
                    ".visible .entry k_%s(.param .u64 pout, .param .u32 pbase, .param .u32 pn)\n{\n"
                    "\t.reg .u64 %%a<4>;\n\t.reg .b32 %%i<9>;\n\t.reg .f32 %%x<2>;\n\t.reg .pred %%q<3>;\n"
                    "\tmov.u32 %%i0, %%ctaid.x;\n\tmov.u32 %%i1, %%ntid.x;\n\tmov.u32 %%i2, %%tid.x;\n"
                    "\tmad.lo.u32 %%i3, %%i0, %%i1, %%i2;\n\tld.param.u32 %%i4, [pn];\n"
                    "\tsetp.ge.u32 %%q0, %%i3, %%i4;\n\t@%%q0 bra DONE;\n"
                    "\tld.param.u32 %%i5, [pbase];\n\tadd.u32 %%i5, %%i5, %%i3;\n"
                    "\tand.b32 %%i6, %%i5, 0x7FFFFFFF;\n\tsetp.gt.u32 %%q1, %%i6, 0x7F800000;\n"
                    "\tsetp.lt.u32 %%q2, %%i6, 0x00800000;\n\tand.b32 %%i7, %%i5, 0x80000000;\n"
                    "\tselp.b32 %%i5, %%i7, %%i5, %%q2;\n\tselp.b32 %%i5, 0x7FC00000, %%i5, %%q1;\n"
                    "\tmov.b32 %%x0, %%i5;\n\tcall.uni (%%x1), %s, (%%x0);\n"
                    "\tld.param.u64 %%a0, [pout];\n\tcvta.to.global.u64 %%a0, %%a0;\n"
                    "\tmul.wide.u32 %%a2, %%i3, 4;\n\tadd.u64 %%a3, %%a0, %%a2;\n\tst.global.f32 [%%a3], %%x1;\n"
                    "DONE:\n\tret;\n}\n\n",
                    op_name(ops[i]), name);
  }
  return vyre__sb_take(&sb, NULL);
}

static int load_module(CUmodule *mod, const char *ptx, const char *what) {
  char log[8192] = "";
  CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *ov[2] = {log, (void *)(uintptr_t)sizeof log};
  CUresult rc = cu.ModuleLoadDataEx(mod, ptx, 2, o, ov);
  if (rc == CUDA_SUCCESS) return 0;
  fprintf(stderr, "cr_sweep: loading %s failed: %s. JIT log:\n%s\n", what, cudrv_errname(rc), log);
  return -1;
}

int main(int argc, char **argv) {
  const char *oracle_path = NULL, *rec_path = "cr_sweep.records";
  pm_variant variant = PM_CR;
  unsigned chunks = 1u << (32 - CHUNK_LOG);
  int opt;
  while ((opt = getopt(argc, argv, "o:v:r:c:")) != -1) {
    if (opt == 'o') oracle_path = optarg;
    else if (opt == 'r') rec_path = optarg;
    else if (opt == 'c') chunks = (unsigned)strtoul(optarg, NULL, 0);
    else if (opt == 'v' && strcmp(optarg, "cr") == 0) variant = PM_CR;
    else if (opt == 'v' && strcmp(optarg, "acc") == 0) variant = PM_ACCURATE;
    else {
      fprintf(stderr, "usage: %s -o ORACLE.ptx [-v cr|acc] [-r RECORDS] [-c CHUNKS] [OP...]\n", argv[0]);
      return 2;
    }
  }
  if (!oracle_path || chunks == 0 || chunks > (1u << (32 - CHUNK_LOG))) {
    fprintf(stderr, "cr_sweep: -o ORACLE.ptx is required (nvcc -ptx -arch=sm_90 tests/ptxmath/cr_oracle.cu); "
                    "CHUNKS is 1..16\n");
    return 2;
  }
  uint32_t ops[NOPS];
  size_t nops = 0;
  for (int i = optind; i < argc; i++) {
    size_t k = 0;
    while (k < NOPS && strcmp(op_name(all_ops[k]), argv[i]) != 0) k++;
    if (k == NOPS || nops == NOPS) {
      fprintf(stderr, "cr_sweep: unknown op '%s'. Fix: use rsqrt exp exp2 log log2 sin cos tan asin acos atan "
                      "sinh cosh tanh\n", argv[i]);
      return 2;
    }
    ops[nops++] = all_ops[k];
  }
  if (!nops) memcpy(ops, all_ops, sizeof all_ops), nops = NOPS;

  char *oracle_ptx = NULL;
  size_t oracle_len = 0;
  vyre_error rerr = VYRE_ERROR_INIT;
  if (vyre__file_read(oracle_path, 64u << 20, "pass the PTX nvcc -ptx wrote", (void **)&oracle_ptx, &oracle_len,
                      &rerr) != VYRE_OK) {
    fprintf(stderr, "cr_sweep: %s\n", rerr.message);
    return 2;
  }
  if (cudrv_load("cr_sweep") != 0) return free(oracle_ptx), 77;
  int ndev = 0;
  if (cu.Init(0) != CUDA_SUCCESS || cu.DeviceGetCount(&ndev) != CUDA_SUCCESS || ndev == 0) {
    fprintf(stderr, "cr_sweep: SKIP: no CUDA device\n");
    free(oracle_ptx);
    return 77;
  }

  int status = 1;
  CUdevice dev = 0;
  CUcontext ctx = NULL;
  CUmodule mod = NULL, omod = NULL;
  CUfunction check = NULL;
  CUdeviceptr dout = 0, drec = 0, dcnt = 0;
  uint32_t *rec = NULL;
  FILE *rf = NULL;
  char *ptx = build_module(ops, nops, variant);
  const char *vname = variant == PM_CR ? "cr" : "acc";
  if (!ptx) {
    fprintf(stderr, "cr_sweep: emitting the functions failed\n");
    goto fail;
  }
  CU_OK(cu.DeviceGet(&dev, 0));
  char devname[256] = "?";
  cu.DeviceGetName(devname, sizeof devname, dev);
  CU_OK(cu.DevicePrimaryCtxRetain(&ctx, dev));
  CU_OK(cu.CtxSetCurrent(ctx));
  if (load_module(&mod, ptx, "the ptxmath module") != 0 || load_module(&omod, oracle_ptx, oracle_path) != 0) {
    status = 1;
    goto fail;
  }
  CU_OK(cu.ModuleGetFunction(&check, omod, "cr_check"));
  CU_OK(cu.MemAlloc(&dout, (size_t)CHUNK * 4));
  CU_OK(cu.MemAlloc(&drec, (size_t)MAXREC * 16));
  CU_OK(cu.MemAlloc(&dcnt, 8 * sizeof(unsigned long long)));
  rec = malloc((size_t)MAXREC * 16);
  rf = fopen(rec_path, "w");
  if (!rec || !rf) {
    fprintf(stderr, "cr_sweep: cannot allocate the records or write %s\n", rec_path);
    status = 1;
    goto fail;
  }
  fprintf(rf, "# cr_sweep records: OP VARIANT KIND X OURS ORACLE (%s)\n", devname);
  printf("cr_sweep: %s, variant %s, %u chunk(s) of 2^%d patterns per op\n", devname, vname, chunks, CHUNK_LOG);
  printf("%-6s %-4s %12s %10s %10s %8s %7s\n", "op", "var", "patterns", "mismatch", "undecided", "dropped", "sec");
  status = 0;
  for (size_t k = 0; k < nops; k++) {
    time_t t0 = time(NULL);
    char kname[48];
    snprintf(kname, sizeof kname, "k_%s", op_name(ops[k]));
    CUfunction fn;
    CU_OK(cu.ModuleGetFunction(&fn, mod, kname));
    CU_OK(cu.MemsetD8(dcnt, 0, 8 * sizeof(unsigned long long)));
    int idx = 0; /* the oracle's index: the op's place in all_ops (the op numbers have gaps) */
    while (all_ops[idx] != ops[k]) idx++;
    unsigned maxrec = MAXREC, n = CHUNK;
    for (unsigned ch = 0; ch < chunks; ch++) {
      unsigned base = ch << CHUNK_LOG;
      void *a1[] = {&dout, &base, &n};
      CU_OK(cu.LaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, NULL, a1, NULL));
      void *a2[] = {&idx, &base, &dout, &n, &drec, &dcnt, &maxrec};
      CU_OK(cu.LaunchKernel(check, n / 256, 1, 1, 256, 1, 1, 0, NULL, a2, NULL));
    }
    CU_OK(cu.CtxSynchronize());
    unsigned long long cnt[8];
    CU_OK(cu.MemcpyDtoH(cnt, dcnt, sizeof cnt));
    size_t nrec = cnt[4] < MAXREC ? (size_t)cnt[4] : MAXREC;
    if (nrec) CU_OK(cu.MemcpyDtoH(rec, drec, nrec * 16));
    for (size_t r = 0; r < nrec; r++)
      fprintf(rf, "%s %s %s %08x %08x %08x\n", op_name(ops[k]), vname, rec[4 * r + 3] ? "undecided" : "mismatch",
              rec[4 * r], rec[4 * r + 1], rec[4 * r + 2]);
    printf("%-6s %-4s %12llu %10llu %10llu %8llu %7lld%s\n", op_name(ops[k]), vname,
           (unsigned long long)chunks << CHUNK_LOG, cnt[2], cnt[1], cnt[3], (long long)(time(NULL) - t0),
           cnt[2] || cnt[3] ? "  FAIL" : "");
    fflush(stdout);
    if (cnt[2] || cnt[3]) status = 1;
  }
  printf("cr_sweep: %s; the undecided inputs are in %s for cr_resolve.py\n",
         status ? "decided mismatches (or dropped records) found" : "no decided mismatch", rec_path);

fail:
  if (rf && fclose(rf) != 0) status = 1;
  if (dout) cu.MemFree(dout);
  if (drec) cu.MemFree(drec);
  if (dcnt) cu.MemFree(dcnt);
  if (mod) cu.ModuleUnload(mod);
  if (omod) cu.ModuleUnload(omod);
  if (ctx) cu.DevicePrimaryCtxRelease(dev);
  free(rec);
  free(ptx);
  free(oracle_ptx);
  return status;
}
