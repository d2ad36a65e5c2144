/* check_mma.c -- codegen of the MMA ops and cp.async staging: the PTX each path emits, the refusals, and (with $PTXAS) ptxas -arch=sm_90 on every case and the matmul examples. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/support/file.h"
#include "plugin/codegen/codegen.h"
#include "vyre/vyre_support.h"
#include "vyre/vyre_text.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */
static vyre_program *from_text(const char *text) {
  void *bytes = NULL;
  size_t size = 0;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_text_assemble(text, strlen(text), "test", &bytes, &size, &err) == VYRE_OK,
                "a test program must assemble: %s\n%s", err.message, text);
  vyre_program *p = NULL;
  ck_assert_msg(vyre_program_decode(bytes, size, &p, &err) == VYRE_OK,
                "a test program must validate: %s\n%s", err.message, text);
  free(bytes);
  return p;
}

static cg_options opts(uint32_t major, const vyre_program *p) {
  cg_options o;
  memset(&o, 0, sizeof o);
  o.sm_major = major;
  o.ulp_budget = 4;
  for (int k = 0; k < 3; k++) o.workgroup[k] = p->header.workgroup_size[k];
  return o;
}

static char *emit(const vyre_program *p) {
  cg_options o = opts(9, p);
  char *ptx = NULL;
  size_t len = 0;
  cg_kernel_info info;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(cg_emit_ptx(p, &o, &ptx, &len, &info, &err) == VYRE_OK, "codegen: %s",
                err.message);
  return ptx;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle)) n++;
  return n;
}

/* ------------------------------------------------------------------ */
/* The cases: a program per type x layout x buffer x path              */
/* ------------------------------------------------------------------ */
typedef struct mcase {
  const char *comp;   /* f16 bf16 i8 u8 */
  int shared;         /* A and B from workgroup memory (copied there first) */
  const char *la, *lb;/* layouts */
  unsigned stride;    /* elements */
  int lane_index;     /* index from lid.x (not uniform: broadcast from lane 0) */
  const char *want[4];/* substrings the PTX must hold */
  const char *never[3];
} mcase;

static const mcase cases[] = {
    /* workgroup memory, 16-byte aligned rows: ldmatrix, .trans where k is not contiguous */
    {"f16", 1, "row", "col", 40, 0, {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"}, {"ld.shared.u16", "shfl.sync", ".trans"}},
    {"bf16", 1, "row", "row", 40, 0, {"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}, {"ld.shared.u16"}},
    {"f16", 1, "col", "row", 40, 0, {"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"}, {"ld.shared.u16"}},
    {"i8", 1, "row", "col", 80, 0, {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"}, {"ld.shared.u8", ".trans", "satfinite"}},
    {"u8", 1, "row", "col", 80, 0, {"mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"}, {"ld.shared.u8"}},
    /* 8-bit with k not contiguous: no ldmatrix.trans for bytes, the element path */
    {"i8", 1, "row", "row", 80, 0, {"ld.shared.u8", "prmt.b32"}, {".trans"}},
    {"u8", 1, "col", "col", 80, 0, {"ld.shared.u8"}, {0}},
    /* unaligned stride: the run-time test, both paths */
    {"f16", 1, "row", "col", 33, 0, {"bra.uni $MG", "ldmatrix", "ld.shared.u16"}, {0}},
    /* a per-lane index: broadcast from lane 0 */
    {"bf16", 1, "row", "col", 40, 1, {"shfl.sync.idx.b32", "ldmatrix"}, {0}},
    /* storage buffers: 4-byte loads where k is contiguous, else elements */
    {"f16", 0, "row", "col", 64, 0, {"ld.global.b32", "ld.global.u16"}, {"ldmatrix"}},
    {"bf16", 0, "col", "row", 64, 0, {"ld.global.u16"}, {"ldmatrix", "ld.global.b32"}},
    {"i8", 0, "row", "col", 64, 0, {"ld.global.b32"}, {"ldmatrix"}},
    {"u8", 0, "col", "row", 64, 0, {"ld.global.u8"}, {"ldmatrix"}},
};

/* The text of case k: A and B (16 x 16 x K tiles, stride `stride`) into
 * a and b, D = A * B + C with C from mma_fill, D stored to C (row, with
 * stride 24: the v2 path) and, col, to C2 (the element path). */
static char *case_text_as(const mcase *m, const char *buf, const char *accbuf, int grouped) {
  int i8 = m->comp[1] == '8';
  const char *acc = i8 ? "i32" : "f32";
  if (!buf) buf = m->comp;
  if (!accbuf) accbuf = acc;
  char *t = malloc(8192);
  int n = snprintf(t, 8192,
                   "workgroup 64\nbuffer A ro %s\nbuffer B ro %s\nbuffer C rw %s\nbuffer C2 rw %s\n",
                   buf, buf, accbuf, accbuf);
  if (m->shared)
    n += snprintf(t + n, 8192 - n, "buffer As workgroup %s [2048]\nbuffer Bs workgroup %s [2048]\n",
                  buf, buf);
  n += snprintf(t + n, 8192 - n,
                "local a mat_a_%s\nlocal b mat_b_%s\nlocal acc mat_acc_%s\n"
                "%%c0 = const u32 0\n%%c1 = const u32 1\n%%s = const u32 %u\n%%s24 = const u32 24\n"
                "%%z = const %s %s\n%%lid = lid.x\n",
                m->comp, m->comp, acc, m->stride, acc, i8 ? "0" : "0.0");
  if (m->shared) {
    /* stage: every invocation copies 8 adjacent elements of A and of B */
    n += snprintf(t + n, 8192 - n, "%%c8 = const u32 8\n%%base = mul %%lid %%c8\n");
    for (int e = 0; e < 8; e++)
      n += snprintf(t + n, 8192 - n, "%%k%d = const u32 %d\n%%gi%d = add %%base %%k%d\n", e, e, e, e);
    /* interleaved A, B copies (each its own), or with `grouped` the 8 of
     * A then the 8 of B (cp.async groups of 16 bytes or less) */
    for (int h = 0; h < (grouped ? 2 : 1); h++)
      for (int e = 0; e < 8; e++) {
        if (!grouped || h == 0)
          n += snprintf(t + n, 8192 - n, "%%va%d = load A %%gi%d\nstore As %%gi%d %%va%d\n", e, e, e, e);
        if (!grouped || h == 1)
          n += snprintf(t + n, 8192 - n, "%%vb%d = load B %%gi%d\nstore Bs %%gi%d %%vb%d\n", e, e, e, e);
      }
    n += snprintf(t + n, 8192 - n, "barrier\n");
  }
  const char *src_a = m->shared ? "As" : "A", *src_b = m->shared ? "Bs" : "B";
  n += snprintf(t + n, 8192 - n, "%%ix = %s\n", m->lane_index ? "and %lid %c1" : "add %c0 %c0");
  n += snprintf(t + n, 8192 - n,
                "mma_load.%s a %s %%ix %%s\nmma_load.%s b %s %%ix %%s\nmma_fill acc %%z\n"
                "mma acc a b acc\nmma_store.row C %%c0 %%s24 acc\nmma_store.col C2 %%c0 %%s acc\n",
                m->la, src_a, m->lb, src_b);
  return t;
}

static char *case_text(const mcase *m) { return case_text_as(m, NULL, NULL, 0); }

/* Tiles in integer buffers of the component's size (A, B and the staging
 * buffers `buf`, C and C2 `accbuf`, f32 for float tiles: an f32
 * accumulator is stored into f32 only): the same paths, and u16 copies of a
 * bf16 tile (staged in cp.async groups) are bit copies, so its mma_load
 * flushes nothing (no cvt.rn.bf16x2.f32); the bf16-staged case beside it
 * does. */
typedef struct rcase {
  mcase m;
  const char *buf, *accbuf;
} rcase;

static const rcase raw_cases[] = {
    {{"bf16", 1, "row", "col", 40, 0, {"cp.async.cg.shared.global", "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}, {"cvt.rn.bf16x2.f32", "ld.shared.u16"}}, "u16", "f32"},
    {{"bf16", 1, "row", "col", 40, 0, {"cp.async.cg.shared.global", "cvt.rn.bf16x2.f32"}, {0}}, "bf16", "f32"},
    {{"bf16", 1, "row", "col", 33, 0, {"cp.async", "bra.uni $MG", "ldmatrix", "ld.shared.u16"}, {"cvt.rn.bf16x2.f32"}}, "i16", "f32"},
    {{"f16", 1, "col", "row", 40, 0, {"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"}, {"ld.shared.u16"}}, "u16", "f32"},
    {{"f16", 0, "row", "col", 64, 0, {"ld.global.b32", "ld.global.u16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"}, {"ldmatrix"}}, "u16", "f32"},
    {{"bf16", 0, "col", "row", 64, 0, {"ld.global.u16"}, {"ldmatrix", "ld.global.b32", "cvt.rn.bf16x2.f32"}}, "i16", "f32"},
    {{"i8", 1, "row", "col", 80, 0, {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"}, {"ld.shared.u8"}}, "u8", "u32"},
    {{"u8", 1, "row", "row", 80, 0, {"ld.shared.u8", "prmt.b32", "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"}, {".trans"}}, "i8", "u32"},
    {{"i8", 0, "row", "col", 64, 0, {"ld.global.b32", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"}, {"ldmatrix"}}, "u8", "u32"},
};

START_TEST(test_raw_paths) {
  const rcase *r = &raw_cases[_i];
  const mcase *m = &r->m;
  char *text = case_text_as(m, r->buf, r->accbuf, 1);
  vyre_program *p = from_text(text);
  char *ptx = emit(p);
  for (int k = 0; k < 4 && m->want[k]; k++)
    ck_assert_msg(strstr(ptx, m->want[k]) != NULL, "raw case %d (%s tiles in %s, %s): the PTX "
                  "must hold '%s'", _i, m->comp, r->buf, m->shared ? "workgroup" : "storage",
                  m->want[k]);
  for (int k = 0; k < 3 && m->never[k]; k++)
    ck_assert_msg(strstr(ptx, m->never[k]) == NULL, "raw case %d (%s tiles in %s): the PTX must "
                  "not hold '%s'", _i, m->comp, r->buf, m->never[k]);
  ck_assert_msg(count_of(ptx, "mma.sync.aligned") == 2, "raw case %d: an mma is two mma.sync", _i);
  ck_assert_msg(strstr(ptx, "st.global.v2.b32") && strstr(ptx, "st.global.b32"),
                "raw case %d: the accumulator in %s: v2 stores (row), b32 stores (col)", _i,
                r->accbuf);
  free(ptx);
  vyre_program_free(p);
  free(text);
}
END_TEST

START_TEST(test_paths) {
  const mcase *m = &cases[_i];
  char *text = case_text(m);
  vyre_program *p = from_text(text);
  char *ptx = emit(p);
  for (int k = 0; k < 4 && m->want[k]; k++)
    ck_assert_msg(strstr(ptx, m->want[k]) != NULL, "case %d (%s %s/%s %s stride %u): the PTX must "
                  "hold '%s'", _i, m->comp, m->la, m->lb, m->shared ? "workgroup" : "storage",
                  m->stride, m->want[k]);
  for (int k = 0; k < 3 && m->never[k]; k++)
    ck_assert_msg(strstr(ptx, m->never[k]) == NULL, "case %d (%s %s/%s): the PTX must not hold "
                  "'%s'", _i, m->comp, m->la, m->lb, m->never[k]);
  /* one mma: two m16n8 instructions */
  ck_assert_msg(count_of(ptx, "mma.sync.aligned") == 2, "case %d: an mma is two mma.sync", _i);
  /* the accumulator: 8-byte stores in row layout, elements in col layout */
  ck_assert_msg(strstr(ptx, "st.global.v2.b32") && strstr(ptx, "st.global.b32"),
                "case %d: mma_store.row uses v2 stores, .col per-element stores", _i);
  free(ptx);
  vyre_program_free(p);
  free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* cp.async staging                                                     */
/* ------------------------------------------------------------------ */
static char *copy_text(const char *type, int n, int with_use, const char *after) {
  char *t = malloc(8192);
  int k = snprintf(t, 8192,
                   "workgroup 32\nbuffer G ro %s\nbuffer O rw %s\nbuffer W workgroup %s [512]\n"
                   "%%lid = lid.x\n%%c16 = const u32 16\n%%base = mul %%lid %%c16\n",
                   type, type, type);
  for (int e = 0; e < n; e++)
    k += snprintf(t + k, 8192 - k,
                  "%%k%d = const u32 %d\n%%i%d = add %%base %%k%d\n%%v%d = load G %%i%d\n"
                  "store W %%i%d %%v%d\n",
                  e, e, e, e, e, e, e, e);
  if (with_use) k += snprintf(t + k, 8192 - k, "store O %%lid %%v0\n");
  k += snprintf(t + k, 8192 - k, "%s\n%%r = load W %%lid\nstore O %%lid %%r\n", after);
  return t;
}

START_TEST(test_cp_async) {
  static const struct {
    const char *type;
    int n, with_use;
    const char *after, *want, *never;
    int waits;
  } cp[] = {
      /* 8 adjacent f16: one 16-byte cp.async, zero-filled past the end; wait before the barrier */
      {"f16", 8, 0, "barrier", "cp.async.cg.shared.global", NULL, 1},
      {"bf16", 8, 0, "barrier", "cp.async.cg.shared.global", NULL, 1},
      {"u8", 16, 0, "barrier", "cp.async.cg.shared.global", NULL, 1},
      /* 2 x 4 bytes of i32: one 8-byte copy */
      {"i32", 2, 0, "barrier", "cp.async.ca.shared.global", NULL, 1},
      /* 4 u16: 8 bytes */
      {"u16", 4, 0, "barrier", "], 8", NULL, 1},
      /* no barrier: the load of W waits */
      {"f16", 8, 0, "", "cp.async.wait_group", NULL, 1},
      /* an if right after: waits at the block boundary */
      {"i8", 16, 0, "%t = lt %lid %c16\nif %t\nend", "cp.async.wait_group", NULL, 1},
      /* f32: a load flushes subnormals, so no copy */
      {"f32", 4, 0, "barrier", "ld.global", "cp.async", 0},
      /* the loaded value is used twice: no copy */
      {"f16", 8, 1, "barrier", "st.shared.u16", "cp.async", 0},
  };
  for (size_t k = 0; k < sizeof cp / sizeof cp[0]; k++) {
    char *text = copy_text(cp[k].type, cp[k].n, cp[k].with_use, cp[k].after);
    vyre_program *p = from_text(text);
    char *ptx = emit(p);
    ck_assert_msg(strstr(ptx, cp[k].want) != NULL, "copy case %zu (%s x %d): the PTX must hold "
                  "'%s'", k, cp[k].type, cp[k].n, cp[k].want);
    if (cp[k].never)
      ck_assert_msg(strstr(ptx, cp[k].never) == NULL, "copy case %zu: no '%s'", k, cp[k].never);
    ck_assert_msg(count_of(ptx, "cp.async.wait_group") == cp[k].waits,
                  "copy case %zu: %d waits, not %d", k, cp[k].waits,
                  count_of(ptx, "cp.async.wait_group"));
    if (cp[k].waits)
      ck_assert_msg(count_of(ptx, "cp.async.cg") + count_of(ptx, "cp.async.ca") == 1,
                    "copy case %zu: the adjacent copies are one cp.async", k);
    free(ptx);
    vyre_program_free(p);
    free(text);
  }
}
END_TEST

/* Two groups into distinct ranges of one buffer stay in flight together;
 * into a range that may overlap, the second waits first. */
START_TEST(test_cp_async_overlap) {
  static const char *const head =
      "workgroup 32\nbuffer G ro f16\nbuffer O rw f16\nbuffer W workgroup f16 [1024]\n"
      "%%lid = lid.x\n%%c8 = const u32 8\n%%base = mul %%lid %%c8\n%%far = const u32 %u\n"
      "%%b2 = add %%base %%far\n";
  for (int far = 0; far < 2; far++) {
    char text[8192];
    int k = snprintf(text, sizeof text, head, far ? 256u : 4u);
    for (int g = 0; g < 2; g++)
      for (int e = 0; e < 8; e++)
        k += snprintf(text + k, sizeof text - k,
                      "%%k%d_%d = const u32 %d\n%%i%d_%d = add %s %%k%d_%d\n%%v%d_%d = load G "
                      "%%i%d_%d\nstore W %%i%d_%d %%v%d_%d\n",
                      g, e, e, g, e, g ? "%b2" : "%base", g, e, g, e, g, e, g, e, g, e);
    snprintf(text + k, sizeof text - k, "barrier\n%%r = load W %%lid\nstore O %%lid %%r\n");
    vyre_program *p = from_text(text);
    char *ptx = emit(p);
    int waits = count_of(ptx, "cp.async.wait_group");
    ck_assert_msg(waits == (far ? 1 : 2), "groups %s apart: %d waits (%s)", far ? "256" : "4",
                  waits, far ? "distinct ranges: one wait at the barrier"
                             : "overlapping: a wait between the groups too");
    free(ptx);
    vyre_program_free(p);
  }
}
END_TEST

/* A storage write between the load and its store keeps the load where it
 * is (another binding may share the read buffer's memory): no cp.async. */
START_TEST(test_cp_async_write_between) {
  static const char *const text =
      "workgroup 32\nbuffer G ro u32\nbuffer O rw u32\nbuffer W workgroup u32 [64]\n"
      "%lid = lid.x\n%v = load G %lid\nstore O %lid %lid\nstore W %lid %v\nbarrier\n"
      "%r = load W %lid\nstore O %lid %r\n";
  vyre_program *p = from_text(text);
  char *ptx = emit(p);
  ck_assert_msg(strstr(ptx, "cp.async") == NULL, "a store to O between: the load stays a load");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* Three buffers, one per stage: each barrier waits only for the stage
 * read after it (wait_group 1: the newest copy stays in flight; before
 * the loop, the loop's body up to its first barrier is what follows), and
 * the copies cross the back edge (the body ends with what it began with). */
START_TEST(test_cp_async_stages) {
  char text[16384];
  int k = snprintf(text, sizeof text,
                   "workgroup 32\nbuffer n uniform u32 [1]\nbuffer G ro f16\nbuffer O rw f16\n"
                   "buffer W0 workgroup f16 [256]\nbuffer W1 workgroup f16 [256]\n"
                   "buffer W2 workgroup f16 [256]\n%%lid = lid.x\n%%c0 = const u32 0\n"
                   "%%c8 = const u32 8\n%%base = mul %%lid %%c8\n%%nt = load n %%c0\n");
  int u = 0;
#define COPY(w, ind)                                                                        \
  for (int e = 0; e < 8; e++, u++)                                                          \
    k += snprintf(text + k, sizeof text - k,                                                \
                  "%s%%k%d = const u32 %d\n%s%%i%d = add %%base %%k%d\n%s%%v%d = load G %%i%d\n" \
                  "%sstore W%d %%i%d %%v%d\n",                                              \
                  ind, u, e, ind, u, u, ind, u, u, ind, w, u, u)
#define READ(w, ind)                                                                        \
  k += snprintf(text + k, sizeof text - k, "%s%%r%d = load W%d %%lid\n%sstore O %%lid %%r%d\n", \
                ind, u, w, ind, u), u++
  COPY(0, "");
  COPY(1, "");
  k += snprintf(text + k, sizeof text - k, "barrier\nloop t %%c0 %%nt\n");
  for (int s = 0; s < 3; s++) {
    COPY((s + 2) % 3, "  ");
    READ(s, "  ");
    k += snprintf(text + k, sizeof text - k, "  barrier\n");
  }
  snprintf(text + k, sizeof text - k, "end\n");
#undef COPY
#undef READ
  vyre_program *p = from_text(text);
  char *ptx = emit(p);
  ck_assert_msg(count_of(ptx, "cp.async.wait_group 1;") == 4,
                "each barrier in the loop leaves the newest stage in flight (%d wait_group 1)",
                count_of(ptx, "cp.async.wait_group 1;"));
  ck_assert_msg(count_of(ptx, "cp.async.wait_group 0;") == 0,
                "no barrier waits for all, nor the loop's end (%d)",
                count_of(ptx, "cp.async.wait_group 0;"));
  ck_assert_msg(count_of(ptx, "cp.async.commit_group;") == 5, "one commit per 16-byte copy");
  free(ptx);
  vyre_program_free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Refusals                                                             */
/* ------------------------------------------------------------------ */
static const char *const float_mma =
    "workgroup 32\nbuffer A ro f16\nbuffer C rw f32\nlocal a mat_a_f16\nlocal b mat_b_f16\n"
    "local acc mat_acc_f32\n%c0 = const u32 0\n%s = const u32 16\nmma_load a A %c0 %s\n"
    "mma_load.col b A %c0 %s\nmma acc a b acc\nmma_store C %c0 %s acc\n";
static const char *const int_mma =
    "workgroup 32\nbuffer A ro i8\nbuffer C rw i32\nlocal a mat_a_i8\nlocal b mat_b_i8\n"
    "local acc mat_acc_i32\n%c0 = const u32 0\n%s = const u32 32\nmma_load a A %c0 %s\n"
    "mma_load.col b A %c0 %s\nmma acc a b acc\nmma_store C %c0 %s acc\n";

static vyre_status try_emit(const vyre_program *p, uint32_t major, uint32_t budget, uint32_t wgx,
                            vyre_error *err) {
  cg_options o = opts(major, p);
  o.ulp_budget = budget;
  if (wgx) o.workgroup[0] = wgx;
  char *ptx = NULL;
  size_t len;
  cg_kernel_info info;
  vyre_status st = cg_emit_ptx(p, &o, &ptx, &len, &info, err);
  free(ptx);
  return st;
}

START_TEST(test_refusals) {
  vyre_program *f = from_text(float_mma), *i = from_text(int_mma);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(try_emit(f, 7, 4, 0, &err) == VYRE_UNSUPPORTED && strstr(err.message, "Fix:"),
                "sm_75 has no mma.sync m16n8k16: UNSUPPORTED with a Fix (%s)", err.message);
  ck_assert_msg(try_emit(f, 9, 0, 0, &err) == VYRE_UNSUPPORTED &&
                    strstr(err.message, "strict") && strstr(err.message, "ulp budget"),
                "a float mma under strict is refused (%s)", err.message);
  ck_assert_msg(try_emit(i, 9, 0, 0, &err) == VYRE_OK, "integer mma is exact: allowed under strict");
  ck_assert_msg(try_emit(i, 8, 0, 0, &err) == VYRE_OK, "sm_80 lowers the MMA ops");
  ck_assert_msg(try_emit(i, 9, 0, 48, &err) == VYRE_INVALID_ARGUMENT && strstr(err.message, "32"),
                "a workgroup of 48 is not whole subgroups (%s)", err.message);
  vyre_program_free(f);
  vyre_program_free(i);
}
END_TEST

/* ------------------------------------------------------------------ */
/* ptxas                                                                */
/* ------------------------------------------------------------------ */
/* The whole file as a C string (free()), or NULL. */
static char *read_all(const char *path) {
  void *data = NULL;
  size_t size = 0;
  return vyre__file_read(path, 1u << 26, NULL, &data, &size, NULL) == VYRE_OK ? data : NULL;
}

/* ptxas -arch=sm_90 on the PTX of p: 1 when it assembles (its log on failure). */
static int assembles(const char *ptxas, const vyre_program *p, const char *what) {
  char *ptx = emit(p);
  char path[256], cmd[700];
  snprintf(path, sizeof path, "/tmp/check_mma_%ld.ptx", (long)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_msg(f != NULL, "cannot write %s", path);
  fputs(ptx, f);
  fclose(f);
  free(ptx);
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -o /dev/null '%s' 2>&1", ptxas, path);
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "ptxas failed on %s: %s kept\n", what, path);
  else unlink(path);
  return rc == 0;
}

START_TEST(test_ptxas) {
  const char *ptxas = getenv("PTXAS");
  if (!ptxas || !*ptxas) return; /* main skips the case without it */
  int bad = 0, total = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char *text = case_text(&cases[k]);
    vyre_program *p = from_text(text);
    bad += !assembles(ptxas, p, text);
    total++;
    vyre_program_free(p);
    free(text);
  }
  for (size_t k = 0; k < sizeof raw_cases / sizeof raw_cases[0]; k++) {
    char *text = case_text_as(&raw_cases[k].m, raw_cases[k].buf, raw_cases[k].accbuf, 1);
    vyre_program *p = from_text(text);
    bad += !assembles(ptxas, p, text);
    total++;
    vyre_program_free(p);
    free(text);
  }
  for (int k = 0; k < 3; k++) {
    char *text = copy_text(k == 0 ? "bf16" : k == 1 ? "u8" : "i32", k == 1 ? 16 : 8, 0, "barrier");
    vyre_program *p = from_text(text);
    bad += !assembles(ptxas, p, text);
    total++;
    vyre_program_free(p);
    free(text);
  }
  static const char *const files[] = {"examples/matmul_mma_bf16.vyre",
                                      "examples/matmul_mma_f16.vyre",
                                      "examples/matmul_mma_i8.vyre"};
  const char *src = getenv("srcdir");
  for (size_t k = 0; k < 3; k++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", src && *src ? src : ".", files[k]);
    char *text = read_all(path);
    ck_assert_msg(text != NULL, "%s must be readable", path);
    vyre_program *p = from_text(text);
    bad += !assembles(ptxas, p, files[k]);
    total++;
    vyre_program_free(p);
    free(text);
  }
  printf("ptxas -arch=sm_90: %d MMA kernels, %d failed\n", total, bad);
  ck_assert_msg(bad == 0, "%d of %d MMA kernels fail ptxas (see stderr)", bad, total);
}
END_TEST

static Suite *mma_suite(void) {
  Suite *s = suite_create("codegen-mma");
  TCase *core = tcase_create("core");
  tcase_set_timeout(core, 300);
  tcase_add_loop_test(core, test_paths, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_loop_test(core, test_raw_paths, 0, (int)(sizeof raw_cases / sizeof raw_cases[0]));
  tcase_add_test(core, test_cp_async);
  tcase_add_test(core, test_cp_async_overlap);
  tcase_add_test(core, test_cp_async_stages);
  tcase_add_test(core, test_cp_async_write_between);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_refusals);
  suite_add_tcase(s, errors);
  TCase *ptxas = tcase_create("ptxas");
  tcase_set_timeout(ptxas, 600);
  tcase_add_test(ptxas, test_ptxas);
  suite_add_tcase(s, ptxas);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(mma_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
