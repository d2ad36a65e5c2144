/* check_codegen.c -- codegen: PTX structure, errors, and (with $PTXAS) assembly of every op and of random programs. */
/*
 * Two programs are built from this file: check_codegen (everything but
 * ptxas) and ptxas_codegen (-DCHECK_PTXAS_ONLY: the "ptxas" case alone,
 * which SKIPs, exit 77, when PTXAS names no ptxas).
 * Environment: PTXAS (set by make check from configure) is the ptxas
 * the "ptxas" case runs; VYRE_PROGEN_COUNT (default 2500) sets how many random
 * programs it assembles; VYRE_BUILD_DIR is where the batch files go.
 * A failing batch keeps its .ptx and .log next to the printed report.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/support/file.h"
#include "plugin/codegen/codegen.h"
#include "host-stub/fuzz/progen.h"
#include "plugin/ptxmath/ptxmath.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */
static vyre_program *finish(vyre_builder *b) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_builder_finish(b, &bytes, &size, &err) == VYRE_OK, "builder: %s",
                err.message);
  vyre_builder_free(b);
  vyre_program *p = NULL;
  ck_assert_msg(vyre_program_decode(bytes, size, &p, &err) == VYRE_OK,
                "a test program must validate: %s", err.message);
  free(bytes);
  return p;
}

static cg_options opts(uint32_t major, uint32_t minor, const vyre_program *p) {
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = major;
  o.sm_minor = minor;
  o.ulp_budget = 4;
  for (int k = 0; k < 3; k++) o.workgroup[k] = p->header.workgroup_size[k];
  return o;
}

/* The text is plain PTX: no line over 200 characters, none that starts or
 * ends with a run of 3 or more blanks (the header once sat in a gap padded
 * with ~1,500 blanks, which vyre emit-ptx printed as a line). */
static void check_lines(const char *ptx, const char *what) {
  for (const char *line = ptx; *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    ck_assert_msg(n <= 200, "%s: a PTX line of %zu characters (at most 200): %.60s...", what, n,
                  line);
    size_t lead = 0, trail = 0;
    while (lead < n && line[lead] == ' ') lead++;
    while (trail < n - lead && line[n - 1 - trail] == ' ') trail++;
    ck_assert_msg(lead < 3 && trail < 3,
                  "%s: a PTX line with %zu leading and %zu trailing blanks (a padding run)", what,
                  lead, trail);
    line += n + (end != NULL);
  }
}

/* PTX of p for sm_90 (fails the test on error). */
static char *emit(const vyre_program *p, cg_kernel_info *info, uint32_t flags) {
  cg_options o = opts(9, 0, p);
  o.flags = flags;
  char *ptx = NULL;
  size_t len = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(cg_emit_ptx(p, &o, &ptx, &len, info, &err) == VYRE_OK, "codegen: %s",
                err.message);
  ck_assert_msg(ptx && strlen(ptx) == len, "length must be the strlen of the text");
  check_lines(ptx, "emit");
  return ptx;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle)) n++;
  return n;
}

/* On failure the PTX goes to stderr (Check messages are short). */
static int has_text(const char *ptx, const char *s, int want) {
  int found = strstr(ptx, s) != NULL;
  if (found != want) fprintf(stderr, "---- PTX ----\n%s\n", ptx);
  return found == want;
}
#define HAS(ptx, s) ck_assert_msg(has_text((ptx), (s), 1), "PTX should contain '%s' (PTX on stderr)", (s))
#define HASNT(ptx, s) ck_assert_msg(has_text((ptx), (s), 0), "PTX should not contain '%s' (PTX on stderr)", (s))

/* saxpy: y[i] = a[0] * x[i] + y[i] under i < buflen(y). */
static vyre_program *saxpy(vyre_type t) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, t, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, t, 0, 0);
  uint32_t a = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_F32, 1, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, y)));
  uint32_t av = vyre_b_load(b, a, vyre_b_u32(b, 0));
  uint32_t xv = vyre_b_load(b, x, g), yv = vyre_b_load(b, y, g);
  if (t != VYRE_T_F32 && t != VYRE_T_F16 && t != VYRE_T_BF16) {
    xv = vyre_b_cast(b, VYRE_T_F32, xv);
    yv = vyre_b_cast(b, VYRE_T_F32, yv);
  }
  uint32_t r = vyre_b_fma(b, av, xv, yv);
  if (t != VYRE_T_F32 && t != VYRE_T_F16 && t != VYRE_T_BF16)
    r = vyre_b_cast(b, (vyre_type)vyre_type_compute(t), r);
  vyre_b_store(b, y, g, r);
  vyre_b_end(b);
  return finish(b);
}

/* ------------------------------------------------------------------ */
/* core: structure of the generated PTX                                */
/* ------------------------------------------------------------------ */
START_TEST(test_source_id) {
  /* The build's checksum of the generator's sources (a cache key part):
   * "CRC-LENGTH", both decimal. */
  size_t n = strlen(cg_source_id), digits = strspn(cg_source_id, "0123456789");
  ck_assert_msg(digits > 0 && cg_source_id[digits] == '-' &&
                    strspn(cg_source_id + digits + 1, "0123456789") == n - digits - 1 &&
                    n > digits + 1,
                "cg_source_id '%s' is cksum's CRC-LENGTH", cg_source_id);
}
END_TEST

START_TEST(test_signature_and_target) {
  vyre_program *p = saxpy(VYRE_T_F32);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  HAS(ptx, ".version 7.8");
  HAS(ptx, ".target sm_90");
  HAS(ptx, ".address_size 64");
  char entry[96];
  snprintf(entry, sizeof entry, ".visible .entry %s(", info.entry);
  HAS(ptx, entry);
  ck_assert_msg(count_of(ptx, ".param .u64") == 4, "3 buffers + params = 4 .u64 params");
  HAS(ptx, ".param .u64 params");
  /* The count words by value: word 0 and one per buffer. */
  HAS(ptx, ".param .align 4 .b8 counts[16],");
  HASNT(ptx, "ld.global.u32 %len");
  ck_assert_uint_eq(info.kernel_buffers, 3);
  ck_assert_uint_eq(info.params_words, 1 + 3 + 2 + 2);
  ck_assert_uint_eq(info.ptx_isa_major, 7);
  ck_assert_uint_eq(info.ptx_isa_minor, 8);
  HASNT(ptx, ".local");
  free(ptx);

  static const struct {
    uint32_t major, minor;
    const char *version, *target;
  } targets[] = {{7, 0, ".version 6.0", ".target sm_70"}, {7, 5, ".version 6.3", ".target sm_75"},
                 {8, 0, ".version 7.0", ".target sm_80"}, {8, 6, ".version 7.1", ".target sm_86"},
                 {8, 9, ".version 7.8", ".target sm_89"}};
  for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
    cg_options o = opts(targets[k].major, targets[k].minor, p);
    vyre_error err = VYRE_ERROR_INIT;
    size_t len;
    ck_assert_int_eq(cg_emit_ptx(p, &o, &ptx, &len, &info, &err), VYRE_OK);
    HAS(ptx, targets[k].version);
    HAS(ptx, targets[k].target);
    free(ptx);
  }
  vyre_program_free(p);
}
END_TEST

START_TEST(test_elementwise_saxpy) {
  vyre_program *p = saxpy(VYRE_T_F32);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  ck_assert_msg(info.grid_mode == CG_GRID_ELEMENTWISE, "saxpy takes the elementwise path");
  ck_assert_uint_eq(info.elements_per_thread, 8);
  HAS(ptx, "ld.global.nc.v4.f32");
  HAS(ptx, "ld.global.v4.f32");
  HAS(ptx, "st.global.v4.f32");
  HASNT(ptx, ".local");
  free(ptx);
  ptx = emit(p, &info, CG_NO_FASTPATH);
  ck_assert_msg(info.grid_mode == CG_GRID_LOGICAL, "CG_NO_FASTPATH keeps the logical grid");
  ck_assert_uint_eq(info.elements_per_thread, 1);
  HASNT(ptx, ".v4.");
  /* The guard gid < buflen(y) proves y[gid] in bounds: no check for y. */
  HAS(ptx, "fma.rn.ftz.f32");
  free(ptx);
  vyre_program_free(p);
  static const vyre_type storage[] = {VYRE_T_F16, VYRE_T_BF16, VYRE_T_U8, VYRE_T_I16,
                                      VYRE_T_U64, VYRE_T_I64, VYRE_T_BOOL};
  for (size_t k = 0; k < sizeof storage / sizeof storage[0]; k++) {
    if (storage[k] == VYRE_T_BOOL) continue; /* bool cannot cast to f32 math above; covered by ptxas suite */
    p = saxpy(storage[k]);
    ptx = emit(p, &info, 0);
    ck_assert_msg(info.grid_mode == CG_GRID_ELEMENTWISE, "saxpy over %s is elementwise",
                  vyre_type_name(storage[k]));
    free(ptx);
    vyre_program_free(p);
  }
}
END_TEST

START_TEST(test_early_exit_guard) {
  /* if (gid >= buflen(y)) return; y[gid] = x[gid] * 2: elementwise, and
   * on the logical path the guard proves y[gid] in bounds. */
  vyre_builder *b = vyre_builder_new(128, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_I32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GE, g, vyre_b_buflen(b, y)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_store(b, y, g, vyre_b_bin(b, VYRE_OP_MUL, vyre_b_load(b, x, g), vyre_b_i32(b, 2)));
  vyre_program *p = finish(b);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  ck_assert_msg(info.grid_mode == CG_GRID_ELEMENTWISE, "an early-exit guard keeps the fast path");
  HAS(ptx, "st.global.v4.u32");
  HAS(ptx, "bra $EWCONT;"); /* the tail's return moves on to the next element */
  free(ptx);
  ptx = emit(p, &info, CG_NO_FASTPATH);
  ck_assert_msg(count_of(ptx, "setp.lt.u32") == 1, "only x[gid] needs a check after the guard");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_semantic_sequences) {
  /* Integer edge cases become explicit select sequences. */
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_I32, 0, 0);
  uint32_t fo = vyre_b_buffer(b, "fo", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t x = vyre_b_load(b, in, g), y = vyre_b_load(b, in, vyre_b_u32(b, 0));
  uint32_t d = vyre_b_bin(b, VYRE_OP_DIV, x, y);
  uint32_t s = vyre_b_bin(b, VYRE_OP_SHL, d, y);
  vyre_b_store(b, out, g, s);
  uint32_t f = vyre_b_load(b, fo, g);
  uint32_t m = vyre_b_bin(b, VYRE_OP_MIN, f, vyre_b_f32(b, 0.0f));
  vyre_b_store(b, fo, g, m);
  vyre_b_store(b, out, vyre_b_u32(b, 5), vyre_b_cast(b, VYRE_T_I32, m));
  vyre_program *p = finish(b);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  ck_assert_msg(info.grid_mode == CG_GRID_LOGICAL, "a constant-index store is not elementwise");
  HAS(ptx, "div.s32");
  HAS(ptx, "setp.eq.s32");      /* x/0 and MIN/-1 guards */
  HAS(ptx, "and.b32");          /* shift amount mod 32 */
  HAS(ptx, "min.ftz.f32");      /* signed zeros ordered by the hardware on sm_90 */
  HAS(ptx, "0x7fc00000");       /* NaN canonicalised at the f32 store */
  HAS(ptx, "cvt.rzi.s32.f32");
  HAS(ptx, "setp.lt.u32");      /* bounds checks: no guard proves them */
  HASNT(ptx, ".local");
  free(ptx);
  /* Targets whose signed-zero min/max and NaN cvt were not checked on
   * hardware get the explicit fix-ups. */
  cg_options o = opts(7, 5, p);
  size_t len;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cg_emit_ptx(p, &o, &ptx, &len, &info, &err), VYRE_OK);
  HAS(ptx, "setp.eq.ftz.f32");  /* min(-0,+0) fix-up */
  HAS(ptx, "testp.notanumber"); /* NaN -> 0 before the cvt result is used */
  free(ptx);
  vyre_program_free(p);

  /* i8/i16 loads sign-extend with cvt.s32.s8/s16, never bfe.s32: CUDA
   * 13.0's ptxas fuses bfe.s32 + cvt.rn.f32.u32 into I2F.S8 (docs/codegen.md). */
  for (int k = 0; k < 2; k++) {
    b = vyre_builder_new(64, 1, 1);
    uint32_t src = vyre_b_buffer(b, "src", UINT32_MAX, VYRE_ACCESS_READ_ONLY,
                                 k ? VYRE_T_I16 : VYRE_T_I8, 0, 0);
    uint32_t dst = vyre_b_buffer(b, "dst", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
    g = vyre_b_gid(b, 0);
    uint32_t u = vyre_b_cast(b, VYRE_T_U32, vyre_b_load(b, src, g));
    vyre_b_store(b, dst, g, vyre_b_cast(b, VYRE_T_F32, u));
    p = finish(b);
    for (uint32_t fl = 0; fl <= CG_NO_FASTPATH; fl += CG_NO_FASTPATH) {
      ptx = emit(p, &info, fl);
      HAS(ptx, k ? "cvt.s32.s16" : "cvt.s32.s8");
      HASNT(ptx, "bfe.s32");
      free(ptx);
    }
    vyre_program_free(p);
  }

  /* Shuffle sources pass through %opz, a run-time zero, so ptxas cannot
   * fold a shuffle of a known value (CUDA 13.0 folds it wrongly). */
  b = vyre_builder_new(1, 1, 1);
  uint32_t so = vyre_b_buffer(b, "so", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, 4, VYRE_BUF_OUTPUT);
  g = vyre_b_gid(b, 0);
  uint32_t m1 = vyre_b_i32(b, -1);
  uint32_t sh = vyre_b_shuffle(b, m1, vyre_b_u32(b, 0));
  vyre_b_store(b, so, g, vyre_b_bin(b, VYRE_OP_ADD, m1, sh));
  p = finish(b);
  ptx = emit(p, &info, 0);
  HAS(ptx, "mov.u32 %opz, %dynamic_smem_size;");
  HAS(ptx, "%opz;\n\tshfl.sync.idx.b32");
  free(ptx);
  vyre_program_free(p);

  /* f32 constants pass through %opz too: the 580 driver's JIT folds f32
   * arithmetic on known values with a wrong rounding (fuzz seed 2026
   * program 52782: 642^3 - 2*642^2 gave 263784944, not 263784960), in the
   * general and the elementwise lowering alike. */
  b = vyre_builder_new(64, 1, 1);
  uint32_t fk = vyre_b_buffer(b, "fk", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  g = vyre_b_gid(b, 0);
  uint32_t k642 = vyre_b_const(b, VYRE_T_F32, 0x44208000u);
  uint32_t sq = vyre_b_bin(b, VYRE_OP_MUL, k642, k642);
  vyre_b_store(b, fk, g, vyre_b_bin(b, VYRE_OP_SUB, vyre_b_bin(b, VYRE_OP_MUL, k642, sq),
                                   vyre_b_bin(b, VYRE_OP_ADD, sq, sq)));
  p = finish(b);
  for (uint32_t fl = 0; fl <= CG_NO_FASTPATH; fl += CG_NO_FASTPATH) {
    ptx = emit(p, &info, fl);
    HAS(ptx, "mov.u32 %opz, %dynamic_smem_size;");
    HAS(ptx, ", %opz, 0x44208000;");
    HASNT(ptx, "mov.b32 %v1, 0x44208000;");
    free(ptx);
  }
  vyre_program_free(p);

  /* i32 saturating add/sub go through 64-bit arithmetic, not add/sub.sat. */
  b = vyre_builder_new(64, 1, 1);
  uint32_t si = vyre_b_buffer(b, "si", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, 0, 0);
  g = vyre_b_gid(b, 0);
  uint32_t lv = vyre_b_load(b, si, g);
  vyre_b_store(b, si, g, vyre_b_bin(b, VYRE_OP_SAT_SUB, vyre_b_bin(b, VYRE_OP_SAT_ADD, lv, lv), lv));
  p = finish(b);
  ptx = emit(p, &info, CG_NO_FASTPATH);
  HASNT(ptx, ".sat.s32");
  HAS(ptx, "max.s64");
  free(ptx);
  vyre_program_free(p);

  /* f32 -> i64/u64: cvt.rzi.s64/u64.f32 turns NaN into 0x8000000000000000
   * even on sm_90 (seen on an H200), so NaN -> 0 stays explicit there. */
  for (int k = 0; k < 2; k++) {
    vyre_type t = k ? VYRE_T_U64 : VYRE_T_I64;
    b = vyre_builder_new(64, 1, 1);
    uint32_t src = vyre_b_buffer(b, "src", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
    uint32_t dst = vyre_b_buffer(b, "dst", UINT32_MAX, VYRE_ACCESS_READ_WRITE, t, 0, 0);
    g = vyre_b_gid(b, 0);
    vyre_b_store(b, dst, g, vyre_b_cast(b, t, vyre_b_load(b, src, g)));
    p = finish(b);
    ptx = emit(p, &info, CG_NO_FASTPATH);
    HAS(ptx, k ? "cvt.rzi.u64.f32" : "cvt.rzi.s64.f32");
    HAS(ptx, "testp.notanumber.f32");
    free(ptx);
    vyre_program_free(p);
  }
}
END_TEST

START_TEST(test_atomics_subgroups_barriers) {
  vyre_builder *b = vyre_builder_new(48, 1, 1); /* partial last warp */
  uint32_t cnt = vyre_b_buffer(b, "cnt", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 4, VYRE_BUF_OUTPUT);
  uint32_t big = vyre_b_buffer(b, "big", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I64, 0, 0);
  uint32_t sh = vyre_b_buffer(b, "sh", 0, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, 48, 0);
  uint32_t g = vyre_b_gid(b, 0), l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  uint32_t one = vyre_b_u32(b, 1);
  uint32_t a0 = vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, cnt, vyre_b_u32(b, 0), one, VYRE_ORDER_ACQ_REL);
  uint32_t a1 = vyre_b_atomic(b, VYRE_OP_ATOMIC_MAX, big, g, vyre_b_i64(b, -5), VYRE_ORDER_SEQ_CST);
  uint32_t a2 = vyre_b_cas(b, sh, l, one, a0, VYRE_ORDER_RELAXED);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  uint32_t bal = vyre_b_ballot(b, vyre_b_bin(b, VYRE_OP_GT, a2, one));
  uint32_t red = vyre_b_reduce(b, VYRE_REDUCE_ADD, vyre_b_cast(b, VYRE_T_F32, bal));
  uint32_t shf = vyre_b_shuffle(b, a1, vyre_b_u32(b, 40));
  vyre_b_store(b, big, g, shf);
  vyre_b_store(b, cnt, vyre_b_u32(b, 1), vyre_b_cast(b, VYRE_T_U32, red));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  vyre_b_store(b, cnt, vyre_b_u32(b, 2), vyre_b_u32(b, 1));
  vyre_program *p = finish(b);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  HAS(ptx, "atom.acq_rel.gpu.global.add.u32");
  HAS(ptx, "fence.sc.gpu");
  HAS(ptx, "atom.acq_rel.gpu.global.max.s64");
  HAS(ptx, "atom.relaxed.cta.shared.cas.b32");
  HAS(ptx, "bar.sync 0");
  HAS(ptx, "vote.sync.ballot.b32");
  HAS(ptx, "shfl.sync.down.b32");
  HAS(ptx, "shfl.sync.idx.b32");
  HAS(ptx, "%lmask"); /* member mask of the partial warp */
  HAS(ptx, "ld.acquire.gpu.global.u32");
  HAS(ptx, ".shared .align 16 .b8 vyre_smem[192]");
  HAS(ptx, "st.shared.v4.b32"); /* workgroup memory zeroed at start */
  ck_assert_msg(info.uses_grid_barrier == 1, "a grid barrier needs a cooperative launch");
  ck_assert_msg(info.grid_mode == CG_GRID_LOGICAL, "barriers keep the logical grid");
  ck_assert_uint_eq(info.shared_bytes, 192);
  HASNT(ptx, ".local");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_return_between_grid_barriers) {
  /* A workgroup that leaves between two grid barriers still arrives at
   * the second one (else every other workgroup waits forever). */
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_u32(b, 1));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 0)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 1)));
  vyre_b_trap(b, 5);
  vyre_b_end(b);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_u32(b, 2));
  vyre_program *p = finish(b);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  if (count_of(ptx, "bra $GB1;") != 3) fputs(ptx, stderr);
  ck_assert_msg(count_of(ptx, "bra $GB1;") == 3, "return and trap jump to the second grid barrier (and done workgroups skip on to it)");
  HAS(ptx, "@%done bra $GB1;");
  HAS(ptx, "@%done exit;");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_workgroup_layout) {
  /* Buffer i of workgroup memory lives at its shared_offset. */
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  uint32_t s1 = vyre_b_buffer(b, "s1", 0, VYRE_ACCESS_WORKGROUP, VYRE_T_U8, 5, 0);
  uint32_t s2 = vyre_b_buffer(b, "s2", 0, VYRE_ACCESS_WORKGROUP, VYRE_T_U64, 3, 0);
  uint32_t l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
  vyre_b_store(b, s2, l, vyre_b_cast(b, VYRE_T_U64, l));
  vyre_b_store(b, s1, l, l);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  uint32_t v = vyre_b_cast(b, VYRE_T_U32, vyre_b_load(b, s2, vyre_b_u32(b, 2)));
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_bin(b, VYRE_OP_ADD, v, vyre_b_load(b, s1, l)));
  vyre_program *p = finish(b);
  ck_assert_uint_eq(p->buffers[s2].shared_offset, 16);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  HAS(ptx, ", 16;");                 /* s2's offset is added */
  HAS(ptx, "st.shared.u64");
  HAS(ptx, "st.shared.u8");
  HAS(ptx, "vyre_smem[48]");         /* 5 bytes, pad to 16, 24 bytes, round to 16 */
  ck_assert_uint_eq(info.shared_bytes, 40);
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* The whole file as a C string (free()), or NULL. */
static char *read_all(const char *path) {
  void *data = NULL;
  size_t size = 0;
  return vyre__file_read(path, 1u << 26, NULL, &data, &size, NULL) == VYRE_OK ? data : NULL;
}

/* A program from its text form (fails the test when it does not assemble). */
static vyre_program *from_text(const char *text) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_text_assemble(text, strlen(text), "test", &bytes, &size, &err) == VYRE_OK,
                "a test program must assemble: %s", err.message);
  vyre_program *p = NULL;
  ck_assert_msg(vyre_program_decode(bytes, size, &p, &err) == VYRE_OK, "decode: %s", err.message);
  free(bytes);
  return p;
}

/* Lowering-only programs of the compute-bound path (also assembled by the
 * ptxas case, from suite()). */
static const char *const unroll_text =
    "workgroup 64\n"
    "buffer out rw u32 [64]\n"
    "buffer big rw u32 [64]\n"
    "%z = const u32 0\n%four = const u32 4\n%hundred = const u32 100\n"
    "let s %z\n"
    "loop k %z %four\n"                 /* 4 trips: unrolled */
    "  %kv = get k\n  %lt = lt %kv %four\n"
    "  if %lt\n    %s0 = get s\n    %s1 = add %s0 %kv\n    assign s %s1\n  end\n"
    "end\n"
    "loop j %z %hundred\n"              /* 100 trips: stays a loop */
    "  %jv = get j\n  %t0 = get s\n  %t1 = xor %t0 %jv\n  assign s %t1\n"
    "end\n"
    "%l = lid.x\n%r = get s\nstore out %l %r\n";

static const char *const vector_text =
    "workgroup 64\n"
    "buffer out rw f32 [64]\n"
    "buffer x ro f32\n"
    "buffer ws workgroup f32 [256]\n"
    "buffer wu workgroup f32 [260]\n"
    "%l = lid.x\n%c1 = const u32 1\n%c2 = const u32 2\n%c3 = const u32 3\n%c4 = const u32 4\n"
    "%g = gid.x\n%xv = load x %g\n"       /* stored: keeps its flush */
    "%l4 = mul %l %c4\n"
    "store ws %l4 %xv\n"
    "barrier\n"
    "%i1 = add %l4 %c1\n%i2 = add %l4 %c2\n%i3 = add %l4 %c3\n"
    "%a0 = load ws %l4\n%a1 = load ws %i1\n%a2 = load ws %i2\n%a3 = load ws %i3\n"  /* one v4 */
    "%u1 = add %l %c1\n"
    "%b0 = load wu %l\n%b1 = load wu %u1\n"  /* lid is not even: two scalar loads */
    "%y = load x %u1\n"                     /* used by add only: no flush */
    "%s1 = add %a0 %a1\n%s2 = add %s1 %a2\n%s3 = add %s2 %a3\n%s4 = add %s3 %b0\n"
    "%s5 = add %s4 %b1\n%s6 = add %s5 %y\n"
    "store out %l %s6\n";

static const char *const gvector_text =
    "workgroup 64\n"
    "buffer out rw f32 [64]\n"
    "buffer x ro f32\n"
    "buffer y rw u32\n"
    "buffer w ro f32\n"
    "%l = lid.x\n%g = gid.x\n%c1 = const u32 1\n%c2 = const u32 2\n%c3 = const u32 3\n"
    "%c4 = const u32 4\n"
    "%b = mul %g %c4\n%i1 = add %b %c1\n%i2 = add %b %c2\n%i3 = add %b %c3\n"
    "%x0 = load x %b\n%x1 = load x %i1\n%x2 = load x %i2\n%x3 = load x %i3\n" /* one v4 */
    "%s1 = add %x0 %x1\n%s2 = add %s1 %x2\n%s3 = mul %s2 %x3\n"
    "%y0 = load y %b\n%y1 = load y %i1\n"                                /* one v2 */
    "%y2 = add %y0 %y1\n%yf = cast f32 %y2\n%s4 = add %s3 %yf\n"
    "store y %b %y2\n"                                                   /* ends y's run */
    "%y3 = load y %i2\n%y4 = load y %i3\n"                              /* a second v2 */
    "%y5 = add %y3 %y4\n%y6 = cast f32 %y5\n%s5 = add %s4 %y6\n"
    "%w0 = load w %b\n%w1 = load w %i1\n"  /* need a flush (select): scalar */
    "%pw = lt %w0 %w1\n%wm = select %pw %w0 %w1\n%s6 = add %s5 %wm\n"
    "store out %l %s6\n";

START_TEST(test_global_vectors) {
  vyre_program *p = from_text(gvector_text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  /* gid*4 is a multiple of 4, x and y are 16-byte aligned (kernel ABI):
   * one 16-byte load of x, two 8-byte loads of y (the store between them
   * ends the first group), each behind one run-time test of its last
   * element with a one-by-one fallback. */
  ck_assert_msg(count_of(ptx, "ld.global.nc.v4.b32") == 1, "x[gid*4 + 0..3] is one 16-byte load");
  ck_assert_msg(count_of(ptx, "ld.global.v2.b32") == 2, "y[gid*4 + 0..1], y[gid*4 + 2..3]");
  ck_assert_msg(count_of(ptx, "$VL") == 6, "three vector loads, each with its label and a "
                "branch to it");
  /* x's loads only feed .ftz arithmetic: no flush; w's two loads need one
   * each, and so stay scalar (no v2 of w behind a branch). */
  ck_assert_msg(count_of(ptx, "0x7f800000") == 2, "only w's loads are flushed");
  ck_assert_msg(count_of(ptx, "ld.global.nc.v2") == 0, "w[gid*4 + 0..1] stays two loads");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* Offset addressing: x + k shares x's 64-bit address where x + k cannot
 * wrap (x < 1000 inside the if, so 3x + 1 is far below 2^32; 4s is a
 * multiple of 4 and 4s + 3 never wraps), and not where it may (3 gid + 2
 * outside the if: gid is unbounded). */
static const char *const offset_text =
    "workgroup 64\n"
    "buffer x ro u32\n"
    "buffer out rw u32 [64]\n"
    "%g = gid.x\n%c1 = const u32 1\n%c2 = const u32 2\n%c3 = const u32 3\n"
    "%n = const u32 1000\n%in = lt %g %n\n"
    "%b = mul %g %c3\n%b1 = add %b %c1\n%b2 = add %b %c2\n"
    "if %in\n"
    "  %x0 = load x %b\n  %x1 = load x %b1\n"     /* [a], [a+4] */
    "  %s = add %x0 %x1\n  %q = shl %s %c2\n  %q3 = add %q %c3\n"
    "  atomic_add out %q3 %c1\n"                  /* q < 64, [..+12] */
    "end\n"
    "%x2 = load x %b2\n"                          /* its own address */
    "%l = lid.x\nstore out %l %x2\n";

START_TEST(test_offset_addressing) {
  vyre_program *p = from_text(offset_text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  ck_assert_msg(count_of(ptx, "+4];") - count_of(ptx, "[counts+4]") == 1,
                "x[3g + 1] under g < 1000 addresses x[3g] + 4");
  ck_assert_msg(count_of(ptx, "+12],") == 1, "out[4s + 3] addresses out[4s] + 12");
  /* 4s + 3 < 64 is 4s < 61, and for a multiple of 4 that is 4s < 64 (61
   * rounded up to a multiple of 4), the test of out[4s] itself. */
  HAS(ptx, "setp.lt.u32 %q2, %v13, 64;");
  HASNT(ptx, ", 61;");
  ck_assert_msg(count_of(ptx, "+8]") == 0, "x[3g + 2] outside the if may wrap: no offset");
  ck_assert_msg(count_of(ptx, "mul.wide.u32 %u0, %v6, 4;") == 1 &&
                count_of(ptx, "mul.wide.u32 %u2, %v6, 4;") == 1,
                "x[3g] and x[3g + 1] both scale 3g (%%v6), which ptxas then shares");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* Masks and compares on masked values (expr.c). */
static const char *const mask_text =
    "workgroup 64\n"
    "buffer x ro u32\n"
    "buffer out rw u32 [64]\n"
    "%l = lid.x\n%c7 = const u32 7\n%c3 = const u32 3\n%c4 = const u32 4\n"
    "%v = load x %l\n"
    "%a = and %v %c7\n"
    "%b = and %c3 %a\n"          /* (v & 7) & 3: v & 3 */
    "%o = or %v %c7\n%d = and %o %c3\n"   /* an or inside: stays */
    "%e = and %a %v\n"           /* no constant outside: stays */
    "%lt = lt %a %c4\n%ge = ge %a %c4\n"
    "%s = select %lt %b %d\n%t = select %ge %s %e\n%u = add %t %b\n"
    "%w = and %v %c4\n%lt2 = lt %w %c4\n"
    "%c2 = const u32 2\n%lt8 = lt %a %c2\n%lt3 = lt %a %c3\n" /* 7 >= 2 * 2; 3: no power of 2 */
    "%z0 = select %lt2 %u %t\n%z1 = select %lt8 %z0 %u\n%z = select %lt3 %z1 %t\n"
    "store out %l %z\n";

/* A loop counter below min(v, 100) indexes a 100-element buffer: the
 * loop's fact k < e and e <= 100 (its range) prove the store in bounds. */
static const char *const loop_range_text =
    "workgroup 64\n"
    "buffer out rw u32 [100]\nbuffer x ro u32\n"
    "%z = const u32 0\n%c100 = const u32 100\n%l = lid.x\n%v = load x %l\n"
    "%e = min %v %c100\n"
    "loop k %z %e\n  %kv = get k\n  store out %kv %l\nend\n"
    "%f = add %e %c100\n"
    "loop j %z %f\n  %jv = get j\n  store out %jv %l\nend\n"; /* j < 200: checked */

START_TEST(test_region_ranges) {
  vyre_program *p = from_text(loop_range_text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  ck_assert_msg(count_of(ptx, "setp.lt.u32") == 2, "x's load and out[j] are checked, out[k] "
                "is not");
  ck_assert_msg(count_of(ptx, ", 100;") == 1, "one test against out's 100 elements (of j)");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_mask_folding) {
  vyre_program *p = from_text(mask_text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  HAS(ptx, "and.b32 %v6, %v4, 3;"); /* %b reads the load %v4 with the mask 7 & 3 */
  ck_assert_msg(count_of(ptx, ", 3;") == 1, "only (v & 7) & 3 folds: not (v | 7) & 3, nor "
                "(v & 7) & v");
  HAS(ptx, "and.b32 %v8, %v7, %v2;");
  HAS(ptx, "and.b32 %v9, %v5, %v4;");
  /* (v & 7) < 4 and >= 4: bit 2 of v; (v & 4) < 4 too; no setp.lt/ge is left. */
  ck_assert_msg(count_of(ptx, "and.b32 %t") == 3 && count_of(ptx, "%v4, 4;") == 3,
                "three bit tests of v & 4");
  HAS(ptx, "setp.eq.u32 %p10, %t");
  HAS(ptx, "setp.ne.u32 %p11, %t");
  HAS(ptx, "setp.eq.u32 %p16, %t");
  HASNT(ptx, "setp.ge.u32");
  ck_assert_msg(count_of(ptx, "setp.lt.u32") == 3, "left as compares: the bounds test of x, "
                "(v & 7) < 2 (7 is not below 2 * 2) and (v & 7) < 3 (3 is not a power of 2)");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* Zeroing workgroup memory: 36 bytes (3 chunks) for 256 threads is one
 * predicated store; 40,000 bytes (2,500 chunks) for 64 threads, 40 a
 * thread, stays a loop. */
START_TEST(test_zero_workgroup_memory) {
  static const char *const small =
      "workgroup 256\nbuffer out rw u32 [256]\nbuffer w workgroup u32 [9]\n"
      "%l = lid.x\n%z = const u32 0\n%v = load w %z\nstore out %l %v\n";
  static const char *const large =
      "workgroup 64\nbuffer out rw u32 [64]\nbuffer w workgroup u32 [10000]\n"
      "%l = lid.x\n%v = load w %l\nstore out %l %v\n";
  cg_kernel_info info;
  vyre_program *p = from_text(small);
  char *ptx = emit(p, &info, 0);
  HASNT(ptx, "$ZERO");
  HAS(ptx, "setp.lt.u32 %q0, %ltid, 3;");
  ck_assert_msg(count_of(ptx, "@%q0 st.shared.v4.b32 [%t1+0], {0, 0, 0, 0};") == 1,
                "chunks 0..2: one store, by threads 0..2");
  free(ptx);
  vyre_program_free(p);
  p = from_text(large);
  ptx = emit(p, &info, 0);
  HAS(ptx, "$ZERO:");
  ck_assert_msg(count_of(ptx, "st.shared.v4.b32") == 1, "40 chunks a thread: the loop stays");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* 64-bit workgroup add/and/or/xor/min/max are written as a CAS loop
 * (docs/codegen.md, "Toolchain workarounds"); exchange, CAS, 32-bit and
 * global atomics stay one atom. */
START_TEST(test_shared_atomic64_loop) {
  static const char *const text =
      "workgroup 32\nbuffer out rw u64 [32]\nbuffer w workgroup u64 [4]\n"
      "buffer v workgroup u32 [4]\n"
      "%l = lid.x\n%three = const u32 3\n%s = and %l %three\n%one = const u64 1\n"
      "%a = atomic_add.acq_rel w %s %one\n%b = atomic_max w %s %one\n"
      "%c = atomic_xchg w %s %one\n%u = const u32 1\n%d = atomic_add v %s %u\n"
      "%ab = add %a %b\n%abc = add %ab %c\nstore out %l %abc\nstore out %s %abc\n";
  vyre_program *p = from_text(text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  HASNT(ptx, "shared.add.u64");
  HASNT(ptx, "shared.max.u64");
  HAS(ptx, "atom.acq_rel.cta.shared.cas.b64");
  HAS(ptx, "atom.relaxed.cta.shared.cas.b64");
  HAS(ptx, "add.u64 %u");
  HAS(ptx, "max.u64 %u");
  HAS(ptx, "atom.relaxed.cta.shared.exch.b64");
  HAS(ptx, "atom.relaxed.cta.shared.add.u32");
  ck_assert_msg(count_of(ptx, "ld.relaxed.cta.shared.b64") == 2, "one loop for the add, one for the max");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_unroll) {
  vyre_program *p = from_text(unroll_text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  /* The 4-trip loop: four copies, each with its counter as a constant and
   * its own labels; the 100-trip loop keeps its back edge. */
  for (int k = 0; k < 4; k++) {
    char want[48];
    snprintf(want, sizeof want, "mov.b32 %%lv1, %d;", k);
    HAS(ptx, want);
  }
  ck_assert_msg(count_of(ptx, "$T") == 2, "only the 100-trip loop keeps a loop label (its "
                "label and its back edge)");
  ck_assert_msg(count_of(ptx, "add.u32 %lv2, %lv2, 1;") == 1, "the long loop still counts");
  ck_assert_msg(count_of(ptx, "setp.lt.u32") == 4, "each copy tests k < 4 (the if); no bounds "
                "check is left for lid into 64 elements");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_ranges_and_vectors) {
  vyre_program *p = from_text(vector_text);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  /* lid*4 + 3 <= 255 < 256: proven in bounds, aligned to 4: one v4 load. */
  ck_assert_msg(count_of(ptx, "ld.shared.v4.b32") == 1, "ws[lid*4 + 0..3] is one 16-byte load");
  ck_assert_msg(count_of(ptx, "ld.shared.f32") + count_of(ptx, "ld.shared.u32") == 2,
                "wu[lid], wu[lid+1] stay scalar (lid may be odd)");
  /* Workgroup indices are all proven (lid*4 < 256, lid + 1 <= 64 < 260):
   * the two bounds checks left are of x (sized by its input). */
  ck_assert_msg(count_of(ptx, "setp.lt.u32") - count_of(ptx, "setp.lt.u32 %q0, %ltid, 1;") == 2,
                "only the loads of x are checked (besides the zeroing of chunk 128 of 129)");
  /* x[gid] is stored to workgroup memory: flushed; x[lid+1] only feeds an
   * add.ftz: not flushed; workgroup loads are never flushed. */
  ck_assert_msg(count_of(ptx, "0x7f800000") == 1, "one subnormal flush (the stored load)");
  /* The f32 store to workgroup memory keeps the value's bits; the global
   * store canonicalises NaN. */
  ck_assert_msg(count_of(ptx, "testp.notanumber") == 1, "one NaN fix-up (the global store)");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

START_TEST(test_trap_and_return) {
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_U32, 8, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, g, vyre_b_u32(b, 3)));
  vyre_b_trap(b, 42);
  vyre_b_end(b);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GT, g, vyre_b_u32(b, 5)));
  vyre_b_return(b);
  vyre_b_end(b);
  vyre_b_store(b, o, g, g);
  vyre_program *p = finish(b);
  cg_kernel_info info;
  char *ptx = emit(p, &info, 0);
  ck_assert_msg(info.uses_trap == 1, "trap reported in info");
  HAS(ptx, "atom.global.cas.b32");
  HAS(ptx, ", 42;");
  HASNT(ptx, "\ttrap;");
  HAS(ptx, "exit;");
  /* params: 1 + 1 buffer, trap words at 2 and 3 -> byte offsets 8 and 12. */
  HAS(ptx, "[%pp+12], 0, 5;"); /* instruction index 4 + 1 */
  HAS(ptx, "[%pp+8], 42;");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* CG_INDIRECT (indirect dispatch): the `indirect` parameter, the prologue
 * that reads the counts, lets workgroups past them leave and reports an
 * over-bound count in the trap words; the general path; the grid barrier
 * waits for the workgroups that run. */
START_TEST(test_indirect_prologue) {
  vyre_program *sx = saxpy(VYRE_T_F32);
  cg_kernel_info info;
  char *ptx = emit(sx, &info, 0);
  HASNT(ptx, "indirect");
  ck_assert_msg(info.grid_mode == CG_GRID_ELEMENTWISE && info.uses_trap == 0,
                "without the flag saxpy stays on the elementwise path, no trap words");
  free(ptx);
  ptx = emit(sx, &info, CG_INDIRECT);
  ck_assert_msg(info.grid_mode == CG_GRID_LOGICAL,
                "an indirect kernel runs the logical grid (workgroups are what the count counts)");
  ck_assert_msg(info.uses_trap == 1, "an indirect kernel reports an over-bound count in its trap words");
  HAS(ptx, "\t.param .u64 params,\n\t.param .u64 indirect\n)");
  HAS(ptx, "ld.global.u32 %ic0, [%ip+0];");
  HAS(ptx, "ld.global.u32 %ic2, [%ip+8];");
  HAS(ptx, "setp.gt.u32 %iq0, %ic0, %ic4;");
  HAS(ptx, "setp.ge.u32 %iq0, %ic4, %ic2;");
  /* saxpy: 3 buffers -> trap words 4 and 5 (bytes 16 and 20). */
  HAS(ptx, "atom.global.cas.b32 %ic5, [%pp+20], 0, %ic4;");
  HAS(ptx, "st.global.u32 [%pp+16], %ic5;");
  char add[64];
  snprintf(add, sizeof add, "add.u32 %%ic4, %%ic3, %u;", CG_INDIRECT_TRAP);
  HAS(ptx, add);
  ck_assert_msg(cg_elementwise_query(sx, &(cg_options){9, 0, 4, {256, 1, 1}, CG_INDIRECT}) == 0,
                "the elementwise query agrees: no fast path under CG_INDIRECT");
  free(ptx);
  vyre_program_free(sx);
  /* The grid barrier counts the workgroups of the count, not of the launch. */
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_u32(b, 1));
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  vyre_b_store(b, o, vyre_b_gid(b, 0), vyre_b_u32(b, 2));
  vyre_program *gp = finish(b);
  ptx = emit(gp, &info, CG_INDIRECT);
  HAS(ptx, "mul.lo.u32 %icn, %icn, %ic2;");
  HAS(ptx, ", %icn;");
  free(ptx);
  ptx = emit(gp, &info, 0);
  HASNT(ptx, "%icn");
  HAS(ptx, "%nctaid.z;");
  free(ptx);
  vyre_program_free(gp);
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors                                                              */
/* ------------------------------------------------------------------ */
START_TEST(test_errors) {
  vyre_program *p = saxpy(VYRE_T_F32);
  cg_options o = opts(6, 1, p);
  char *ptx = (char *)1;
  size_t len = 99;
  cg_kernel_info info;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(cg_emit_ptx(p, &o, &ptx, &len, &info, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_msg(ptx == NULL && len == 0, "outputs cleared on failure");
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "error has a Fix: %s", err.message);
  o = opts(9, 0, p);
  o.workgroup[0] = 0;
  ck_assert_int_eq(cg_emit_ptx(p, &o, &ptx, &len, &info, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(cg_emit_ptx(NULL, &o, &ptx, &len, &info, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(cg_emit_ptx(p, NULL, &ptx, &len, &info, &err), VYRE_INVALID_ARGUMENT);
  vyre_program_free(p);

  /* A transcendental under a strict budget takes the correctly rounded
   * variant (PM_CR), a function of its own. */
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  vyre_b_store(b, x, g, vyre_b_un(b, VYRE_OP_EXP, vyre_b_load(b, x, g)));
  p = finish(b);
  o = opts(9, 0, p);
  o.ulp_budget = 0;
  ck_assert_msg(pm_has(VYRE_OP_EXP, PM_CR), "exp has a correctly rounded variant");
  ck_assert_msg(cg_emit_ptx(p, &o, &ptx, &len, &info, &err) == VYRE_OK,
                "exp under strict lowers: %s", err.message);
  HAS(ptx, ".func (.reg .f32 %res) vyre_pm_exp_cr (");
  HAS(ptx, "correctly rounded");
  ck_assert_msg(strstr(ptx, "vyre_pm_exp_acc") == NULL && strstr(ptx, "vyre_pm_exp_fast") == NULL,
                "strict calls only the correctly rounded variant");
  char *strict = ptx;
  /* The accurate bound works and names its function; a large budget
   * takes the fast variant, a different function. */
  uint32_t acc = pm_ulp_bound(VYRE_OP_EXP, PM_ACCURATE), fast = pm_ulp_bound(VYRE_OP_EXP, PM_FAST);
  ck_assert_msg(acc > 0, "exp has an accurate variant");
  o.ulp_budget = acc;
  ck_assert_msg(cg_emit_ptx(p, &o, &ptx, &len, &info, &err) == VYRE_OK, "budget %u: %s", acc,
                err.message);
  HAS(ptx, ".func");
  HAS(ptx, "call (");
  HAS(ptx, "vyre_pm_exp_acc");
  ck_assert_msg(strcmp(ptx, strict) != 0, "the accurate variant is another function");
  free(strict);
  char *accurate = ptx;
  if (fast) {
    o.ulp_budget = fast > acc ? fast : acc + 1000;
    ck_assert_int_eq(cg_emit_ptx(p, &o, &ptx, &len, &info, &err), VYRE_OK);
    ck_assert_msg(strcmp(ptx, accurate) != 0, "the fast variant is another function");
    free(ptx);
  }
  free(accurate);
  vyre_program_free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* ptxas: every op x type, control flow, atomics, subgroups, random     */
/* ------------------------------------------------------------------ */
typedef struct batch_file {
  char path[300];
  pid_t pid;            /* ptxas running on it, 0 = none */
  uint32_t entries;
  char *names[100];     /* entries in the file (dedup, error report) */
  char *texts[100];     /* PTX of each entry (printed on failure) */
} batch_file;

typedef struct batch {
  const char *ptxas;
  const char *arch;     /* -arch */
  uint32_t major, minor; /* emitted target */
  char dir[256];
  FILE *f;
  batch_file cur, flight; /* being written; being assembled (in the background) */
  uint32_t files, total, failures, spills_checked;
  int verbose;          /* run ptxas -v and require 0 spill bytes */
} batch;

static void batch_flush(batch *bt);

static void batch_add(batch *bt, const vyre_program *p, const char *what, uint32_t flags) {
  cg_options o = opts(bt->major, bt->minor, p);
  o.flags = flags;
  char *ptx = NULL;
  size_t len = 0;
  cg_kernel_info info;
  vyre_error err = VYRE_ERROR_INIT;
  vyre_status st = cg_emit_ptx(p, &o, &ptx, &len, &info, &err);
  if (st == VYRE_UNSUPPORTED && (p->features & VYRE_FEAT_TRANSCENDENTAL)) return;
  ck_assert_msg(st == VYRE_OK, "codegen of %s failed: %s", what, err.message);
  if (flags) {
    /* Same program, other lowering: give the entry its own name. */
    char *at = strstr(ptx, info.entry);
    size_t el = strlen(info.entry);
    ck_assert_msg(at && el >= 3, "the entry is named in the PTX");
    memcpy(at + el - 3, "_nf", 3);
    memcpy(info.entry + el - 3, "_nf", 3);
  }
  /* Kernels calling math functions each define the same .func names: give
   * them a file of their own. */
  int own_file = strstr(ptx, ".func") != NULL;
  if (own_file) batch_flush(bt);
  batch_file *bf = &bt->cur;
  for (uint32_t k = 0; k < bf->entries; k++) {
    if (strcmp(bf->names[k], info.entry) == 0) {
      free(ptx);
      return;
    }
  }
  if (!bt->f) {
    snprintf(bf->path, sizeof bf->path, "%s/batch_%s_target%u%u_%u.ptx", bt->dir, bt->arch,
             bt->major, bt->minor, bt->files++);
    bt->f = fopen(bf->path, "w");
    ck_assert_msg(bt->f != NULL, "cannot write %s", bf->path);
    /* The header of the first kernel serves the whole file. */
    const char *body = strstr(ptx, ".address_size 64\n");
    fwrite(ptx, 1, (size_t)(body - ptx), bt->f);
    fputs(".address_size 64\n", bt->f);
  }
  const char *body = strstr(ptx, ".address_size 64\n") + strlen(".address_size 64\n");
  fputs(body, bt->f);
  bf->names[bf->entries] = strdup(info.entry);
  bf->texts[bf->entries] = ptx;
  bf->entries++;
  bt->total++;
  if (bf->entries == 100 || own_file) batch_flush(bt);
}


/* Wait for the file in flight and judge its ptxas run. */
static void batch_collect(batch *bt) {
  batch_file *bf = &bt->flight;
  if (!bf->pid) return;
  int status = 0;
  waitpid(bf->pid, &status, 0);
  bf->pid = 0;
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
  char log[320];
  snprintf(log, sizeof log, "%s.log", bf->path);
  char *out = read_all(log);
  if (rc != 0) {
    /* Print the failing kernel(s): those the log names, or the first. */
    fprintf(stderr, "ptxas -arch=%s failed on %s:\n%s\n", bt->arch, bf->path, out ? out : "");
    int shown = 0;
    for (uint32_t k = 0; k < bf->entries && out; k++) {
      if (strstr(out, bf->names[k])) {
        fprintf(stderr, "---- %s ----\n%s\n", bf->names[k], bf->texts[k]);
        shown = 1;
      }
    }
    if (!shown && bf->entries) fprintf(stderr, "---- first entry ----\n%s\n", bf->texts[0]);
    bt->failures++;
  } else if (bt->verbose && out) {
    for (const char *s = strstr(out, "bytes spill"); s; s = strstr(s + 1, "bytes spill")) {
      const char *q = s;
      while (q > out && q[-1] == ' ') q--;
      while (q > out && q[-1] >= '0' && q[-1] <= '9') q--;
      ck_assert_msg(atoi(q) == 0, "ptxas reports spills in %s:\n%s", bf->path, out);
      bt->spills_checked++;
    }
  }
  free(out);
  for (uint32_t k = 0; k < bf->entries; k++) {
    free(bf->names[k]);
    free(bf->texts[k]);
  }
  bf->entries = 0;
  if (rc == 0) {
    unlink(bf->path);
    unlink(log);
  }
}

/* Close the file being written and start ptxas on it in the background
 * (one file in flight per batch, so two batches keep both cores busy). */
static void batch_flush(batch *bt) {
  if (!bt->f) return;
  fclose(bt->f);
  bt->f = NULL;
  batch_collect(bt);
  bt->flight = bt->cur;
  memset(&bt->cur, 0, sizeof bt->cur);
  batch_file *bf = &bt->flight;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "exec '%s' %s-arch=%s -o /dev/null '%s' > '%s.log' 2>&1", bt->ptxas,
           bt->verbose ? "-v " : "", bt->arch, bf->path, bf->path);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_msg(pid >= 0, "fork for ptxas failed");
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  bf->pid = pid;
}

static void batch_init(batch *bt, const char *ptxas, const char *arch, uint32_t major,
                       uint32_t minor, const char *dir, int verbose) {
  memset(bt, 0, sizeof *bt);
  bt->ptxas = ptxas;
  bt->arch = arch;
  bt->major = major;
  bt->minor = minor;
  bt->verbose = verbose;
  snprintf(bt->dir, sizeof bt->dir, "%s", dir);
}

static void batch_done(batch *bt) {
  batch_flush(bt);
  batch_collect(bt);
}

/* The systematic suite: a program per (op, type) and per feature. */
typedef void (*suite_fn)(void *ctx, const vyre_program *p, const char *what);

static vyre_builder *io_program(uint32_t wg, vyre_type in_t, vyre_type out_t, uint32_t *in,
                                uint32_t *out) {
  vyre_builder *b = vyre_builder_new(wg, 1, 1);
  *in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, in_t, 0, 0);
  *out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, out_t, 0, 0);
  return b;
}

static void suite(suite_fn fn, void *ctx) {
  static const vyre_type vts[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U64,
                                  VYRE_T_I32, VYRE_T_I64, VYRE_T_F32};
  static const vyre_type sts[] = {VYRE_T_BOOL, VYRE_T_U8,  VYRE_T_U16, VYRE_T_U32,
                                  VYRE_T_U64,  VYRE_T_I8,  VYRE_T_I16, VYRE_T_I32,
                                  VYRE_T_I64,  VYRE_T_F16, VYRE_T_BF16, VYRE_T_F32};
  char what[160];
  uint32_t nops;
  const vyre_op_info *ops = vyre_op_all(&nops);
  for (uint32_t k = 0; k < nops; k++) {
    const vyre_op_info *op = &ops[k];
    int cls = op->op_class;
    if (cls != VYRE_OC_BINARY && cls != VYRE_OC_COMPARE && cls != VYRE_OC_UNARY &&
        cls != VYRE_OC_PREDICATE && cls != VYRE_OC_SELECT && cls != VYRE_OC_CAST &&
        cls != VYRE_OC_FMA && cls != VYRE_OC_CONST)
      continue;
    for (size_t ti = 0; ti < sizeof vts / sizeof vts[0]; ti++) {
      vyre_type t = vts[ti];
      if (!(op->type_mask & VYRE_TBIT(t))) continue;
      if (cls == VYRE_OC_CAST) {
        for (size_t fi = 0; fi < sizeof vts / sizeof vts[0]; fi++) {
          uint32_t in, out;
          vyre_builder *b = io_program(64, vts[fi], t, &in, &out);
          uint32_t g = vyre_b_gid(b, 0);
          vyre_b_store(b, out, g, vyre_b_cast(b, t, vyre_b_load(b, in, g)));
          vyre_program *p = finish(b);
          snprintf(what, sizeof what, "cast %s -> %s", vyre_type_name(vts[fi]), vyre_type_name(t));
          fn(ctx, p, what);
          vyre_program_free(p);
        }
        continue;
      }
      int pred = cls == VYRE_OC_COMPARE || cls == VYRE_OC_PREDICATE;
      uint32_t in, out;
      vyre_builder *b = io_program(64, t, pred ? VYRE_T_BOOL : t, &in, &out);
      uint32_t g = vyre_b_gid(b, 0);
      uint32_t x = vyre_b_load(b, in, g);
      uint32_t y = vyre_b_load(b, in, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)));
      uint32_t r;
      switch (cls) {
      case VYRE_OC_CONST: {
        static const uint64_t bits[] = {0, 1, 0x7fc00000u, 0xff800000u, 0x80000000u,
                                        0xffffffffffffffffull};
        r = x;
        for (size_t c = 0; c < sizeof bits / sizeof bits[0]; c++) {
          uint64_t v = bits[c];
          if (t == VYRE_T_BOOL) v &= 1u;
          else if (t == VYRE_T_F32) v = vyre_f32_canonical_bits((uint32_t)v);
          else if (t != VYRE_T_U64 && t != VYRE_T_I64) v &= 0xffffffffu;
          uint32_t cv = vyre_b_const(b, t, v);
          r = vyre_b_select(b, vyre_b_bool(b, (int)(c & 1)), cv, r);
        }
        break;
      }
      case VYRE_OC_BINARY:
      case VYRE_OC_COMPARE: r = vyre_b_bin(b, (vyre_op)op->id, x, y); break;
      case VYRE_OC_UNARY:
      case VYRE_OC_PREDICATE: r = vyre_b_un(b, (vyre_op)op->id, x); break;
      case VYRE_OC_SELECT:
        r = vyre_b_select(b, vyre_b_bin(b, VYRE_OP_NE, x, y), x, y);
        break;
      default: r = vyre_b_fma(b, x, y, x); break;
      }
      vyre_b_store(b, out, g, r);
      vyre_program *p = finish(b);
      snprintf(what, sizeof what, "%s.%s", op->mnemonic, vyre_type_name(t));
      fn(ctx, p, what);
      vyre_program_free(p);
    }
  }
  /* Storage types: global and workgroup, in and out of bounds, literal indices. */
  for (size_t si = 0; si < sizeof sts / sizeof sts[0]; si++) {
    vyre_type st = sts[si];
    vyre_type ct = (vyre_type)vyre_type_compute(st);
    for (int shared = 0; shared < 2; shared++) {
      vyre_builder *b = vyre_builder_new(64, 1, 1);
      uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_WRITE, st, 0, 0);
      uint32_t fixed = vyre_b_buffer(b, "fixed", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, st, 16, 0);
      uint32_t wg = shared ? vyre_b_buffer(b, "wg", 0, VYRE_ACCESS_WORKGROUP, st, 40, 0) : fixed;
      uint32_t g = vyre_b_gid(b, 0), l = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
      uint32_t v = vyre_b_load(b, in, g);
      vyre_b_store(b, wg, l, v);
      if (shared) vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
      uint32_t w = vyre_b_load(b, shared ? wg : in, vyre_b_u32(b, 3));
      uint32_t oob = vyre_b_load(b, shared ? wg : in, vyre_b_u32(b, 1000));
      vyre_b_store(b, fixed, vyre_b_u32(b, 15), w);
      vyre_b_store(b, fixed, vyre_b_u32(b, 16), oob);
      vyre_b_store(b, in, g, vyre_b_select(b, vyre_b_bool(b, 1), w, vyre_b_load(b, in, g)));
      (void)ct;
      vyre_program *p = finish(b);
      snprintf(what, sizeof what, "storage %s %s", vyre_type_name(st), shared ? "workgroup" : "global");
      fn(ctx, p, what);
      vyre_program_free(p);
    }
  }
  /* Atomics: every op x type x order x space. */
  static const vyre_type ats[] = {VYRE_T_U32, VYRE_T_I32, VYRE_T_U64, VYRE_T_I64};
  for (size_t ti = 0; ti < 4; ti++) {
    for (int shared = 0; shared < 2; shared++) {
      vyre_builder *b = vyre_builder_new(96, 1, 1);
      uint32_t buf = shared ? vyre_b_buffer(b, "a", 0, VYRE_ACCESS_WORKGROUP, ats[ti], 64, 0)
                            : vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_WRITE, ats[ti], 0, 0);
      uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, ats[ti], 0, 0);
      uint32_t g = vyre_b_gid(b, 0);
      uint32_t idx = vyre_b_bin(b, VYRE_OP_AND, g, vyre_b_u32(b, 127));
      uint32_t v = vyre_b_load(b, out, g), acc = v;
      for (uint32_t order = 0; order < VYRE_ORDER_COUNT_; order++) {
        for (uint32_t aop = VYRE_OP_ATOMIC_ADD; aop <= VYRE_OP_ATOMIC_EXCHANGE; aop++) {
          uint32_t r = vyre_b_atomic(b, (vyre_op)aop, buf, idx, acc, (vyre_order)order);
          acc = vyre_b_bin(b, VYRE_OP_XOR, acc, r);
        }
        uint32_t r = vyre_b_cas(b, buf, idx, v, acc, (vyre_order)order);
        acc = vyre_b_bin(b, VYRE_OP_ADD, acc, r);
      }
      vyre_b_store(b, out, g, acc);
      vyre_program *p = finish(b);
      snprintf(what, sizeof what, "atomics %s %s", vyre_type_name(ats[ti]), shared ? "workgroup" : "global");
      fn(ctx, p, what);
      vyre_program_free(p);
    }
  }
  /* Subgroups with full and partial warps, 1-D and 3-D workgroups. */
  static const uint32_t shapes[][3] = {{64, 1, 1}, {48, 1, 1}, {1, 1, 1}, {7, 3, 1}, {4, 4, 2}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    for (size_t ti = 0; ti < sizeof vts / sizeof vts[0]; ti++) {
      vyre_type t = vts[ti];
      vyre_builder *b = vyre_builder_new(shapes[si][0], shapes[si][1], shapes[si][2]);
      uint32_t in = vyre_b_buffer(b, "in", UINT32_MAX, VYRE_ACCESS_READ_ONLY, t, 0, 0);
      uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, t, 0, 0);
      uint32_t bal = vyre_b_buffer(b, "bal", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
      uint32_t g = vyre_b_gid(b, 0);
      uint32_t x = vyre_b_load(b, in, g);
      uint32_t lane = vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0);
      uint32_t s = vyre_b_shuffle(b, x, vyre_b_bin(b, VYRE_OP_ADD, lane, vyre_b_u32(b, 3)));
      uint32_t r = s;
      if (t != VYRE_T_BOOL) {
        uint32_t kinds = t == VYRE_T_F32 ? 3 : 6;
        for (uint32_t kd = 0; kd < kinds; kd++) {
          uint32_t red = vyre_b_reduce(b, (vyre_reduce)kd, x);
          r = vyre_b_select(b, vyre_b_bin(b, VYRE_OP_EQ, lane, vyre_b_u32(b, kd)), red, r);
        }
      }
      uint32_t c = t == VYRE_T_BOOL ? x : vyre_b_bin(b, VYRE_OP_LT, x, s);
      vyre_b_store(b, bal, g, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_ballot(b, c),
                                         vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0)));
      vyre_b_store(b, out, g, r);
      vyre_program *p = finish(b);
      snprintf(what, sizeof what, "subgroup %s wg %ux%ux%u", vyre_type_name(t), shapes[si][0],
               shapes[si][1], shapes[si][2]);
      fn(ctx, p, what);
      vyre_program_free(p);
    }
  }
  /* Control flow, ids, barriers, grid barriers, trap, return. */
  for (int variant = 0; variant < 6; variant++) {
    vyre_builder *b = vyre_builder_new(variant == 3 ? 8 : 128, variant == 3 ? 4 : 1, variant == 3 ? 2 : 1);
    uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
    uint32_t aux = vyre_b_buffer(b, "aux", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I32, 32, VYRE_BUF_OUTPUT);
    uint32_t sum = vyre_b_local(b, VYRE_T_U32), ctr = vyre_b_local(b, VYRE_T_U32),
             ictr = vyre_b_local(b, VYRE_T_I32);
    uint32_t g = vyre_b_gid(b, 0);
    vyre_b_let(b, sum, vyre_b_u32(b, 0));
    vyre_b_loop(b, ctr, vyre_b_u32(b, 0), vyre_b_buflen(b, out));
    vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, vyre_b_get(b, ctr), vyre_b_u32(b, 4)));
    vyre_b_assign(b, sum, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, sum), vyre_b_load(b, out, vyre_b_get(b, ctr))));
    vyre_b_else(b);
    vyre_b_block(b);
    vyre_b_assign(b, sum, vyre_b_bin(b, VYRE_OP_XOR, vyre_b_get(b, sum), vyre_b_get(b, ctr)));
    vyre_b_end(b);
    vyre_b_end(b);
    vyre_b_end(b);
    vyre_b_loop(b, ictr, vyre_b_i32(b, -3), vyre_b_i32(b, 2));
    vyre_b_store(b, aux, vyre_b_cast(b, VYRE_T_U32, vyre_b_get(b, ictr)), vyre_b_get(b, ictr));
    vyre_b_end(b);
    for (uint32_t axis = 0; axis < 3; axis++) {
      uint32_t ids = vyre_b_bin(b, VYRE_OP_ADD, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, axis),
                                vyre_b_builtin(b, VYRE_OP_LOCAL_ID, axis));
      vyre_b_assign(b, sum, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, sum), vyre_b_bin(b, VYRE_OP_ADD, ids, vyre_b_gid(b, axis))));
    }
    if (variant == 1) {
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 1)));
      vyre_b_return(b); /* uniform return before grid barriers */
      vyre_b_end(b);
    }
    if (variant == 2) {
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), vyre_b_u32(b, 2)));
      vyre_b_trap(b, 9);
      vyre_b_end(b);
    }
    if (variant >= 1 && variant <= 3) {
      vyre_b_store(b, out, g, vyre_b_get(b, sum));
      vyre_b_barrier(b, VYRE_BARRIER_GRID);
      vyre_b_assign(b, sum, vyre_b_load(b, out, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_gid(b, 0), vyre_b_u32(b, 1))));
      vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
      vyre_b_barrier(b, VYRE_BARRIER_GRID);
    }
    if (variant == 4) {
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GT, g, vyre_b_u32(b, 100)));
      vyre_b_trap(b, 1234);
      vyre_b_end(b);
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GT, g, vyre_b_u32(b, 50)));
      vyre_b_return(b);
      vyre_b_end(b);
    }
    if (variant == 5) {
      /* Deep nesting. */
      for (int d = 0; d < 20; d++) vyre_b_if(b, vyre_b_bin(b, VYRE_OP_NE, vyre_b_get(b, sum), vyre_b_u32(b, (uint32_t)d)));
      vyre_b_assign(b, sum, vyre_b_u32(b, 7));
      for (int d = 0; d < 20; d++) vyre_b_end(b);
    }
    vyre_b_store(b, out, vyre_b_gid(b, 0), vyre_b_get(b, sum));
    vyre_program *p = finish(b);
    snprintf(what, sizeof what, "control flow variant %d", variant);
    fn(ctx, p, what);
    vyre_program_free(p);
  }
  /* The compute-bound lowerings: unrolled loops, vector workgroup loads,
   * and the tuned examples (from $srcdir, which make check sets). */
  const char *texts[] = {unroll_text, vector_text, gvector_text, offset_text, mask_text};
  static const char *const names[] = {"unrolled loops", "vector workgroup loads",
                                      "vector global loads", "offset addressing",
                                      "mask folding"};
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
    vyre_program *p = from_text(texts[k]);
    fn(ctx, p, names[k]);
    vyre_program_free(p);
  }
  static const char *const files[] = {"examples/matmul_tiled.vyre", "examples/sum.vyre",
                                      "examples/matmul.vyre", "examples/reduce.vyre"};
  const char *src = getenv("srcdir");
  for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", src && *src ? src : ".", files[k]);
    char *text = read_all(path);
    ck_assert_msg(text != NULL, "%s must be readable (srcdir '%s')", path, src ? src : "");
    vyre_program *p = from_text(text);
    free(text);
    fn(ctx, p, files[k]);
    vyre_program_free(p);
  }
}

static void count_cb(void *ctx, const vyre_program *p, const char *what) {
  (void)p;
  (void)what;
  (*(uint32_t *)ctx)++;
}

/* Structure-only run of the whole suite (no ptxas): every program lowers. */
static void lower_cb(void *ctx, const vyre_program *p, const char *what) {
  (void)ctx;
  static const uint32_t targets[][2] = {{9, 0}, {7, 5}, {7, 0}};
  for (int k = 0; k < 3; k++) {
    cg_options o = opts(targets[k][0], targets[k][1], p);
    char *ptx = NULL;
    size_t len;
    cg_kernel_info info;
    vyre_error err = VYRE_ERROR_INIT;
    vyre_status st = cg_emit_ptx(p, &o, &ptx, &len, &info, &err);
    if (st == VYRE_UNSUPPORTED && (p->features & VYRE_FEAT_TRANSCENDENTAL) && !ptx) continue;
    ck_assert_msg(st == VYRE_OK, "codegen of %s for sm_%u%u: %s", what, targets[k][0],
                  targets[k][1], err.message);
    ck_assert_msg(strstr(ptx, ".local") == NULL, "%s uses local memory", what);
    ck_assert_msg(strlen(ptx) == len, "%s: length must be the strlen of the text", what);
    check_lines(ptx, what);
    free(ptx);
  }
}

START_TEST(test_suite_lowers) {
  uint32_t n = 0;
  suite(count_cb, &n);
  ck_assert_msg(n > 300, "the suite covers every op x type (%u programs)", n);
  suite(lower_cb, NULL);
}
END_TEST

START_TEST(test_progen_lowers) {
  /* Random programs lower on every target (ptxas checks them below when available). */
  for (uint64_t seed = 1; seed <= 300; seed++) {
    progen_options po;
    memset(&po, 0, sizeof po);
    po.flags = (seed % 3 == 0) ? PROGEN_ELEMENTWISE : 0;
    po.elements = 37;
    progen_program pp;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(fz_progen_generate(seed, &po, &pp, &err) == VYRE_OK, "progen %llu: %s",
                  (unsigned long long)seed, err.message);
    vyre_program *p;
    ck_assert_int_eq(vyre_program_decode(pp.bytes, pp.size, &p, &err), VYRE_OK);
    cg_options o = opts(9, 0, p);
    char *ptx = NULL;
    size_t len;
    cg_kernel_info info;
    vyre_status st = cg_emit_ptx(p, &o, &ptx, &len, &info, &err);
    ck_assert_msg(st == VYRE_OK || (st == VYRE_UNSUPPORTED && (p->features & VYRE_FEAT_TRANSCENDENTAL)),
                  "codegen of progen seed %llu: %s", (unsigned long long)seed, err.message);
    if (seed % 3 == 0 && st == VYRE_OK)
      ck_assert_msg(info.grid_mode == CG_GRID_ELEMENTWISE,
                    "progen elementwise seed %llu should take the fast path",
                    (unsigned long long)seed);
    if (st == VYRE_OK) check_lines(ptx, "progen");
    /* The inputs fit the program: a dispatch geometry exists. */
    ck_assert_int_eq(pp.input_count, p->input_count);
    uint64_t sizes[VYRE_MAX_BUFFERS];
    for (uint32_t k = 0; k < p->input_count; k++) sizes[k] = pp.inputs[k].size;
    vyre_geometry geo;
    ck_assert_msg(vyre_geometry_derive(p, sizes, NULL, NULL, &geo, &err) == VYRE_OK,
                  "progen inputs of seed %llu fit: %s", (unsigned long long)seed, err.message);
    free(ptx);
    vyre_program_free(p);
    fz_progen_program_free(&pp);
  }
}
END_TEST

START_TEST(test_progen_coverage) {
  /* Over a few hundred seeds the generator reaches every op, every buffer
   * type, every memory order and every reduction. */
  uint8_t seen[VYRE_OP_ID_LIMIT] = {0}, types[VYRE_T_COUNT_] = {0}, orders[VYRE_ORDER_COUNT_] = {0},
          kinds[VYRE_REDUCE_COUNT_] = {0};
  uint32_t feats = 0;
  for (uint64_t seed = 1; seed <= 600; seed++) {
    progen_options po;
    memset(&po, 0, sizeof po);
    po.max_insts = 150;
    progen_program pp;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(fz_progen_generate(seed, &po, &pp, &err), VYRE_OK);
    vyre_program *p;
    ck_assert_int_eq(vyre_program_decode(pp.bytes, pp.size, &p, &err), VYRE_OK);
    feats |= p->features;
    for (uint32_t i = 0; i < p->inst_count; i++) {
      const vyre_inst *in = &p->insts[i];
      seen[in->op] = 1;
      const vyre_op_info *info = vyre_op_lookup(in->op);
      if (info->op_class == VYRE_OC_ATOMIC || info->op_class == VYRE_OC_ATOMIC_CAS) orders[in->mod] = 1;
      if (in->op == VYRE_OP_SUBGROUP_REDUCE) kinds[in->mod] = 1;
    }
    for (uint32_t b = 0; b < p->buffer_count; b++) types[p->buffers[b].decl.elem_type] = 1;
    vyre_program_free(p);
    fz_progen_program_free(&pp);
  }
  uint32_t nops;
  const vyre_op_info *ops = vyre_op_all(&nops);
  /* The MMA ops and matrix types (locals only) are not in the generator's
   * default mix; tests/codegen/check_mma.c covers their lowering. */
  for (uint32_t k = 0; k < nops; k++)
    ck_assert_msg(seen[ops[k].id] || (ops[k].flags & VYRE_OPF_MMA), "progen never generated '%s'",
                  ops[k].mnemonic);
  for (uint32_t t = VYRE_T_BOOL; t < VYRE_T_COUNT_; t++)
    ck_assert_msg(types[t] || vyre_type_matrix_use(t), "progen never declared a %s buffer",
                  vyre_type_name(t));
  for (uint32_t k = 0; k < VYRE_ORDER_COUNT_; k++)
    ck_assert_msg(orders[k], "progen never used order %s", vyre_order_name(k));
  for (uint32_t k = 0; k < VYRE_REDUCE_COUNT_; k++)
    ck_assert_msg(kinds[k], "progen never used reduce %s", vyre_reduce_name(k));
  uint32_t want = VYRE_FEAT_BARRIER | VYRE_FEAT_GRID_BARRIER | VYRE_FEAT_SUBGROUP |
                  VYRE_FEAT_ATOMIC | VYRE_FEAT_ATOMIC64 | VYRE_FEAT_TRAP |
                  VYRE_FEAT_TRANSCENDENTAL | VYRE_FEAT_F16 | VYRE_FEAT_BF16 |
                  VYRE_FEAT_WORKGROUP_MEMORY | VYRE_FEAT_RETURN | VYRE_FEAT_LOOP;
  ck_assert_msg((feats & want) == want, "progen features 0x%x miss 0x%x", feats, want & ~feats);

  /* Exclusion flags hold. */
  for (uint64_t seed = 1; seed <= 200; seed++) {
    progen_options po;
    memset(&po, 0, sizeof po);
    po.flags = PROGEN_NO_TRANSCENDENTAL | PROGEN_NO_TRAP | PROGEN_NO_GRID_BARRIER |
               PROGEN_NO_ATOMICS | PROGEN_NO_SUBGROUP | PROGEN_NO_WORKGROUP_MEMORY |
               PROGEN_NO_LOOPS | PROGEN_NO_STORAGE_TYPES | PROGEN_NO_RETURN | PROGEN_NO_BARRIER;
    progen_program pp;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(fz_progen_generate(seed, &po, &pp, &err), VYRE_OK);
    vyre_program *p;
    ck_assert_int_eq(vyre_program_decode(pp.bytes, pp.size, &p, &err), VYRE_OK);
    ck_assert_msg(p->features == 0, "seed %llu: features 0x%x despite the exclusions",
                  (unsigned long long)seed, p->features);
    vyre_program_free(p);
    /* Same seed, same bytes. */
    progen_program again;
    ck_assert_int_eq(fz_progen_generate(seed, &po, &again, &err), VYRE_OK);
    ck_assert_msg(pp.size == again.size && memcmp(pp.bytes, again.bytes, pp.size) == 0,
                  "seed %llu must reproduce its program", (unsigned long long)seed);
    fz_progen_program_free(&again);
    fz_progen_program_free(&pp);
  }
}
END_TEST

typedef struct ptx_ctx {
  batch *bts;
  uint32_t nbt;
  uint32_t seen;
} ptx_ctx;

static void ptx_cb(void *ctx, const vyre_program *p, const char *what) {
  ptx_ctx *pc = ctx;
  for (uint32_t k = 0; k < pc->nbt; k++) batch_add(&pc->bts[k], p, what, 0);
  /* The logical path of elementwise programs too. */
  for (uint32_t k = 0; k < pc->nbt; k++) batch_add(&pc->bts[k], p, what, CG_NO_FASTPATH);
  /* The indirect prologue (every 8th program). */
  if (pc->seen++ % 8 == 0)
    for (uint32_t k = 0; k < pc->nbt; k++) batch_add(&pc->bts[k], p, what, CG_INDIRECT);
}

static const char *ptxas_path(void) {
  const char *s = getenv("PTXAS");
  return s && *s ? s : NULL;
}

static void make_dir(char *dir, size_t n, const char *tag) {
  const char *base = getenv("VYRE_BUILD_DIR");
  snprintf(dir, n, "%s/tests/ptxas-%s-%ld", base ? base : "/tmp", tag, (long)getpid());
  char parent[300];
  snprintf(parent, sizeof parent, "%s/tests", base ? base : "/tmp");
  mkdir(parent, 0755);
  mkdir(dir, 0755);
}

START_TEST(test_ptxas_suite) {
  const char *ptxas = ptxas_path();
  ck_assert_msg(ptxas != NULL, "the ptxas cases run only with $PTXAS (main skips them)");
  char dir[256];
  make_dir(dir, sizeof dir, "suite");
  batch bts[3];
  batch_init(&bts[0], ptxas, "sm_90", 9, 0, dir, 1);
  batch_init(&bts[1], ptxas, "sm_75", 7, 5, dir, 1);
  batch_init(&bts[2], ptxas, "sm_75", 7, 0, dir, 0); /* .target sm_70 text */
  ptx_ctx pc = {bts, 3, 0};
  suite(ptx_cb, &pc);
  uint32_t failures = 0, total = 0, spills = 0;
  for (int k = 0; k < 3; k++) {
    batch_done(&bts[k]);
    failures += bts[k].failures;
    total += bts[k].total;
    spills += bts[k].spills_checked;
  }
  printf("ptxas suite: %u kernels assembled (sm_90, sm_75, sm_70 text), %u spill reports all 0\n",
         total, spills);
  ck_assert_msg(failures == 0, "%u ptxas batches failed (see stderr)", failures);
  rmdir(dir);
}
END_TEST

/* Every 8th suite program for the other targets the code generator knows. */
typedef struct targets_ctx {
  batch *bts;
  uint32_t nbt, seen;
} targets_ctx;

static void targets_cb(void *ctx, const vyre_program *p, const char *what) {
  targets_ctx *tc = ctx;
  if (tc->seen++ % 8) return;
  for (uint32_t k = 0; k < tc->nbt; k++) batch_add(&tc->bts[k], p, what, 0);
}

START_TEST(test_ptxas_targets) {
  const char *ptxas = ptxas_path();
  ck_assert_msg(ptxas != NULL, "the ptxas cases run only with $PTXAS (main skips them)");
  char dir[256];
  make_dir(dir, sizeof dir, "targets");
  static const struct {
    const char *arch;
    uint32_t major, minor;
  } targets[] = {{"sm_80", 8, 0}, {"sm_86", 8, 6}, {"sm_89", 8, 9}, {"sm_100", 10, 0},
                 {"sm_120", 12, 0}};
  batch bts[5];
  for (int k = 0; k < 5; k++)
    batch_init(&bts[k], ptxas, targets[k].arch, targets[k].major, targets[k].minor, dir, 0);
  targets_ctx tc = {bts, 5, 0};
  suite(targets_cb, &tc);
  uint32_t failures = 0, total = 0;
  for (int k = 0; k < 5; k++) {
    batch_done(&bts[k]);
    failures += bts[k].failures;
    total += bts[k].total;
  }
  printf("ptxas targets: %u kernels assembled for sm_80, sm_86, sm_89, sm_100, sm_120\n", total);
  ck_assert_msg(failures == 0, "%u ptxas batches failed (see stderr)", failures);
  rmdir(dir);
}
END_TEST

START_TEST(test_ptxas_progen) {
  const char *ptxas = ptxas_path();
  ck_assert_msg(ptxas != NULL, "the ptxas cases run only with $PTXAS (main skips them)");
  const char *env = getenv("VYRE_PROGEN_COUNT");
  uint32_t count = env ? (uint32_t)atoi(env) : 2500;
  char dir[256];
  make_dir(dir, sizeof dir, "progen");
  batch bts[2];
  batch_init(&bts[0], ptxas, "sm_90", 9, 0, dir, 0);
  batch_init(&bts[1], ptxas, "sm_75", 7, 5, dir, 0);
  for (uint64_t seed = 1000; seed < 1000 + count; seed++) {
    progen_options po;
    memset(&po, 0, sizeof po);
    po.flags = (seed % 4 == 0) ? PROGEN_ELEMENTWISE : 0;
    /* A quarter of the kernels call the math library (elementwise ones too). */
    if (seed % 8 != 1 && seed % 8 != 4) po.flags |= PROGEN_NO_TRANSCENDENTAL;
    po.max_insts = 40 + (uint32_t)(seed % 120);
    progen_program pp;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(fz_progen_generate(seed, &po, &pp, &err) == VYRE_OK, "progen %llu: %s",
                  (unsigned long long)seed, err.message);
    vyre_program *p;
    ck_assert_int_eq(vyre_program_decode(pp.bytes, pp.size, &p, &err), VYRE_OK);
    char what[64];
    snprintf(what, sizeof what, "progen seed %llu", (unsigned long long)seed);
    batch_add(&bts[0], p, what, 0);
    if (seed & 1) batch_add(&bts[1], p, what, 0);
    vyre_program_free(p);
    fz_progen_program_free(&pp);
  }
  uint32_t failures = 0, total = 0;
  for (int k = 0; k < 2; k++) {
    batch_done(&bts[k]);
    failures += bts[k].failures;
    total += bts[k].total;
  }
  printf("ptxas progen: %u programs, %u kernels assembled (all for sm_90, every other one "
         "also for sm_75)\n", count, total);
  ck_assert_msg(failures == 0, "%u ptxas batches failed (see stderr)", failures);
  rmdir(dir);
}
END_TEST

#ifdef CHECK_PTXAS_ONLY
enum { PTXAS_ONLY = 1 };
#else
enum { PTXAS_ONLY = 0 };
#endif

static Suite *codegen_suite(void) {
  Suite *s = suite_create("codegen");
  if (PTXAS_ONLY) {
    TCase *ptxas = tcase_create("ptxas");
    tcase_set_timeout(ptxas, 600);
    tcase_add_test(ptxas, test_ptxas_suite);
    tcase_add_test(ptxas, test_ptxas_targets);
    tcase_add_test(ptxas, test_ptxas_progen);
    suite_add_tcase(s, ptxas);
    return s;
  }
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_source_id);
  tcase_add_test(core, test_signature_and_target);
  tcase_add_test(core, test_elementwise_saxpy);
  tcase_add_test(core, test_semantic_sequences);
  tcase_add_test(core, test_early_exit_guard);
  tcase_add_test(core, test_atomics_subgroups_barriers);
  tcase_add_test(core, test_trap_and_return);
  tcase_add_test(core, test_indirect_prologue);
  tcase_add_test(core, test_workgroup_layout);
  tcase_add_test(core, test_unroll);
  tcase_add_test(core, test_ranges_and_vectors);
  tcase_add_test(core, test_global_vectors);
  tcase_add_test(core, test_offset_addressing);
  tcase_add_test(core, test_mask_folding);
  tcase_add_test(core, test_region_ranges);
  tcase_add_test(core, test_zero_workgroup_memory);
  tcase_add_test(core, test_shared_atomic64_loop);
  tcase_add_test(core, test_return_between_grid_barriers);
  tcase_add_test(core, test_suite_lowers);
  tcase_add_test(core, test_progen_lowers);
  tcase_add_test(core, test_progen_coverage);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_errors);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  const char *ptxas = ptxas_path();
  if (PTXAS_ONLY && (!ptxas || access(ptxas, X_OK) != 0)) {
    printf("ptxas_codegen: SKIP: no ptxas ($PTXAS is '%s'). Fix: install the CUDA toolkit and "
           "re-run configure\n", ptxas ? ptxas : "");
    return 77;
  }
  SRunner *sr = srunner_create(codegen_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
