/* check_text.c -- the text form: canonical round trips over every op and type, literals, errors at FILE:LINE:COL, and fuzzed input. */
#include <check.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_corpus.h"
#include "abi/text/literal.h"
#include "vyre/vyre_text.h"

/* Check's ck_assert_msg records a mark point through a pipe on every
 * success; loops of many thousand checks use this instead. */
#define EXPECT(expr, ...)                   \
  do {                                      \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */
static void assemble_ok(const char *src, uint8_t **bytes, size_t *size) {
  vyre_error err = VYRE_ERROR_INIT;
  void *out = NULL;
  vyre_status st = vyre_text_assemble(src, strlen(src), "t.vy", &out, size, &err);
  EXPECT(st == VYRE_OK, "the text assembles, got %s: %s\n--- text ---\n%s", vyre_status_name(st),
         err.message, src);
  *bytes = out;
}

static char *disassemble_ok(const void *bytes, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  char *text = NULL;
  vyre_status st = vyre_text_disassemble(bytes, size, &text, &err);
  EXPECT(st == VYRE_OK && text, "a valid image disassembles: %s", err.message);
  return text;
}

/* image -> text -> image is identical, and so is the text of both. */
static void check_round_trip(const uint8_t *bytes, size_t size, const char *what) {
  char *text = disassemble_ok(bytes, size);
  uint8_t *again;
  size_t again_size;
  assemble_ok(text, &again, &again_size);
  EXPECT(again_size == size && memcmp(again, bytes, size) == 0,
         "%s: disassembly re-assembles to identical bytes\n--- text ---\n%s", what, text);
  char *text2 = disassemble_ok(again, again_size);
  EXPECT(strcmp(text, text2) == 0, "%s: the canonical text is stable", what);
  free(text2);
  free(again);
  free(text);
}

static void finish(vyre_builder *b, uint8_t **bytes, size_t *size) {
  vyre_error err = VYRE_ERROR_INIT;
  void *out = NULL;
  vyre_status st = vyre_builder_finish(b, &out, size, &err);
  vyre_builder_free(b);
  EXPECT(st == VYRE_OK, "builder: %s", err.message);
  *bytes = out;
}

/* ------------------------------------------------------------------ */
/* core                                                                */
/* ------------------------------------------------------------------ */
static const char saxpy_src[] =
    "; saxpy: y[i] = a*x[i] + y[i]\n"
    "program saxpy\n"
    "workgroup 256            # y and z default to 1\n"
    "buffer x ro f32          ; count omitted: sized by input\n"
    "buffer y rw f32\n"
    "buffer hist rw u32 [256] output @4\n"
    "buffer out wo f16 [1024] range 0 64\n"
    "buffer tile workgroup f32 [256]\n"
    "buffer k uniform u64[2]\n"
    "local acc f32\n"
    "\n"
    "%g  = gid.x\n"
    "%n  = buflen x\n"
    "%in = lt %g %n\n"
    "if %in\n"
    "  %a  = const f32 0x1p1   ; 2.0 as a hex float\n"
    "  %xv = load x %g\n"
    "  %yv=load y %g\n"
    "  %r  = fma %a %xv %yv\n"
    "  store y %g %r\n"
    "  let acc %r\n"
    "else\n"
    "  %t = const u32 7        ; %t is reused below once this block ends\n"
    "end\n"
    "%t  = const u32 0\n"
    "%hi = const u32 4\n"
    "loop i %t %hi            ; declares local i (u32, from %t)\n"
    "  %iv  = get i\n"
    "  %one = const u32 1\n"
    "  %old = atomic_add hist %iv %one\n"
    "  barrier workgroup\n"
    "end\n"
    "return\n";

/* The same program through the builder. */
static void saxpy_built(uint8_t **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(256, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t hist = vyre_b_buffer(b, "hist", 4, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 256, VYRE_BUF_OUTPUT);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F16, 1024, 0);
  vyre_b_buffer_range(b, out, 0, 64);
  vyre_b_buffer(b, "tile", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_F32, 256, 0);
  vyre_b_buffer(b, "k", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_U64, 2, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_F32);
  uint32_t g = vyre_b_gid(b, 0);
  uint32_t n = vyre_b_buflen(b, x);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, n));
  uint32_t a = vyre_b_f32(b, 2.0f);
  uint32_t xv = vyre_b_load(b, x, g);
  uint32_t yv = vyre_b_load(b, y, g);
  uint32_t r = vyre_b_fma(b, a, xv, yv);
  vyre_b_store(b, y, g, r);
  vyre_b_let(b, acc, r);
  vyre_b_else(b);
  vyre_b_u32(b, 7);
  vyre_b_end(b);
  uint32_t t = vyre_b_u32(b, 0), hi = vyre_b_u32(b, 4);
  uint32_t i = vyre_b_local(b, VYRE_T_U32);
  vyre_b_loop(b, i, t, hi);
  uint32_t iv = vyre_b_get(b, i);
  uint32_t one = vyre_b_u32(b, 1);
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, hist, iv, one, VYRE_ORDER_RELAXED);
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_end(b);
  vyre_b_return(b);
  finish(b, bytes, size);
}

static const char saxpy_canonical[] =
    "workgroup 256 1 1\n"
    "buffer x ro f32\n"
    "buffer y rw f32\n"
    "buffer hist rw u32 [256] output @4\n"
    "buffer out wo f16 [1024] range 0 64\n"
    "buffer tile workgroup f32 [256]\n"
    "buffer k uniform u64 [2]\n"
    "local l0 f32\n"
    "local l1 u32\n"
    "\n"
    "%0 = gid.x\n"
    "%1 = buflen x\n"
    "%2 = lt %0 %1\n"
    "if %2\n"
    "  %4 = const f32 2.0\n"
    "  %5 = load x %0\n"
    "  %6 = load y %0\n"
    "  %7 = fma %4 %5 %6\n"
    "  store y %0 %7\n"
    "  let l0 %7\n"
    "else\n"
    "  %11 = const u32 7\n"
    "end\n"
    "%13 = const u32 0\n"
    "%14 = const u32 4\n"
    "loop l1 %13 %14\n"
    "  %16 = get l1\n"
    "  %17 = const u32 1\n"
    "  %18 = atomic_add.relaxed hist %16 %17\n"
    "  barrier\n"
    "end\n"
    "return\n";

START_TEST(text_matches_builder) {
  uint8_t *from_text, *from_builder;
  size_t text_size, builder_size;
  assemble_ok(saxpy_src, &from_text, &text_size);
  saxpy_built(&from_builder, &builder_size);
  ck_assert_msg(text_size == builder_size && memcmp(from_text, from_builder, text_size) == 0,
                "the text and the builder encode the same program identically");
  char *text = disassemble_ok(from_text, text_size);
  /* The canonical text: the hash comment, then the golden body. */
  vyre_program *p = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_program_decode(from_text, text_size, &p, &err), VYRE_OK);
  char hash[65], first[160];
  vyre_program_hash_hex(p, hash);
  snprintf(first, sizeof first, "; vyre program text (docs/program-text.md), sha256 %s\n", hash);
  vyre_program_free(p);
  ck_assert_msg(strncmp(text, first, strlen(first)) == 0, "the text starts with the hash comment:\n%s", text);
  ck_assert_msg(strcmp(text + strlen(first), saxpy_canonical) == 0, "canonical text:\n%s", text);
  check_round_trip(from_text, text_size, "saxpy");
  free(text);
  free(from_text);
  free(from_builder);
}
END_TEST

/* One 16x16 f32 tile of C = A x B from f16 inputs (the example of
 * docs/program-text.md, "Matrix multiply-accumulate"): the text and the
 * builder encode it identically, and the disassembly declares the
 * matrix locals and spells the layouts. */
static const char mma_src[] =
    "workgroup 32\n"
    "buffer a ro f16          ; A: 16 x K, row-major\n"
    "buffer b ro f16          ; B: K x 16, row-major\n"
    "buffer c wo f32 [256]    ; C: 16 x 16\n"
    "local acc mat_acc_f32\n"
    "local ta mat_a_f16\n"
    "local tb mat_b_f16\n"
    "%zero = const f32 0.0\n"
    "mma_fill acc %zero\n"
    "%len = buflen a\n"
    "%c16 = const u32 16\n"
    "%c256 = const u32 256\n"
    "%k = div %len %c16\n"
    "%steps = div %len %c256\n"
    "%start = const u32 0\n"
    "loop s %start %steps\n"
    "  %s = get s\n"
    "  %ai = mul %s %c16\n"
    "  mma_load ta a %ai %k\n"
    "  %bi = mul %s %c256\n"
    "  mma_load.row tb b %bi %c16\n"
    "  mma acc ta tb acc\n"
    "end\n"
    "mma_store c %start %c16 acc\n";

static void mma_built(uint8_t **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(32, 1, 1);
  uint32_t a = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F16, 0, 0);
  uint32_t bb = vyre_b_buffer(b, "b", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F16, 0, 0);
  uint32_t c = vyre_b_buffer(b, "c", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 256, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_F32), ta = vyre_b_local(b, VYRE_T_MAT_A_F16);
  uint32_t tb = vyre_b_local(b, VYRE_T_MAT_B_F16);
  vyre_b_mma_fill(b, acc, vyre_b_f32(b, 0.0f));
  uint32_t len = vyre_b_buflen(b, a), c16 = vyre_b_u32(b, 16), c256 = vyre_b_u32(b, 256);
  uint32_t k = vyre_b_bin(b, VYRE_OP_DIV, len, c16), steps = vyre_b_bin(b, VYRE_OP_DIV, len, c256);
  uint32_t start = vyre_b_u32(b, 0), s = vyre_b_local(b, VYRE_T_U32);
  vyre_b_loop(b, s, start, steps);
  uint32_t sv = vyre_b_get(b, s);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, ta, a, vyre_b_bin(b, VYRE_OP_MUL, sv, c16), k);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, tb, bb, vyre_b_bin(b, VYRE_OP_MUL, sv, c256), c16);
  vyre_b_mma(b, acc, ta, tb, acc);
  vyre_b_end(b);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, c, start, c16, acc);
  finish(b, bytes, size);
}

START_TEST(text_mma_matches_builder) {
  uint8_t *from_text, *from_builder;
  size_t text_size, builder_size;
  assemble_ok(mma_src, &from_text, &text_size);
  mma_built(&from_builder, &builder_size);
  ck_assert_msg(text_size == builder_size && memcmp(from_text, from_builder, text_size) == 0,
                "the text and the builder encode the MMA program identically");
  vyre_program *p = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_program_decode(from_text, text_size, &p, &err), VYRE_OK);
  /* The text form leaves the type unwritten; the assembler set the components. */
  static const struct { uint32_t inst, op, type, mod; } want[] = {
      {1, VYRE_OP_MMA_FILL, VYRE_T_F32, 0},   {11, VYRE_OP_MMA_LOAD, VYRE_T_F16, VYRE_LAYOUT_ROW},
      {13, VYRE_OP_MMA_LOAD, VYRE_T_F16, 0}, {14, VYRE_OP_MMA, VYRE_T_F16, 0},
      {16, VYRE_OP_MMA_STORE, VYRE_T_F32, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const vyre_inst *in = &p->insts[want[i].inst];
    EXPECT(in->op == want[i].op && in->type == want[i].type && in->mod == want[i].mod,
           "instruction %u is %s with type %s", want[i].inst, vyre_op_lookup(want[i].op)->mnemonic,
           vyre_type_name(want[i].type));
  }
  EXPECT((p->required_caps & VYRE_CAP_TENSOR_CORES) && (p->features & VYRE_FEAT_MMA),
         "the program needs tensor_cores");
  vyre_program_free(p);
  char *text = disassemble_ok(from_text, text_size);
  static const char *const lines[] = {"local l0 mat_acc_f32\n", "local l1 mat_a_f16\n",
                                      "local l2 mat_b_f16\n", "mma_fill l0 %0\n",
                                      "  mma_load.row l1 a %10 %5\n", "  mma_load.row l2 b %12 %3\n",
                                      "  mma l0 l1 l2 l0\n", "mma_store.row c %7 %3 l0\n"};
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
    EXPECT(strstr(text, lines[i]) != NULL, "the disassembly has \"%s\":\n%s", lines[i], text);
  check_round_trip(from_text, text_size, "mma");
  free(text);
  free(from_text);
  free(from_builder);
}
END_TEST

START_TEST(text_forms_that_mean_the_same) {
  /* Pairs of sources that must give the same image. */
  static const char *const pairs[][2] = {
      {"workgroup 64\nreturn\n", "workgroup 64 1 1\r\nreturn"},
      {"workgroup 8 8\nreturn", "  workgroup\t8 8 1   ; tab and comment\n\n# only a comment\nreturn\n"},
      {"workgroup 1\nbuffer a ro u32\nbuffer b ro u32\nreturn", "workgroup 1\nbuffer a ro u32 @0\nbuffer b ro u32 [0] @1\nreturn"},
      {"workgroup 1\nbuffer a ro u32 @5\nbuffer b ro u32\nreturn", "workgroup 1\nbuffer a ro u32 @0x5\nbuffer b ro u32 @6\nreturn"},
      {"workgroup 1\nbuffer h rw u32 [4] output range 0 8\nreturn", "workgroup 1\nbuffer h rw u32 range 0 8 output [4]\nreturn"},
      {"workgroup 1\n%a = const f32 2.5\n", "workgroup 1\n%x=const f32 0x40200000"},
      {"workgroup 1\n%a = const f32 2.5\n", "workgroup 1\n%x = const f32 0x1.4p1"},
      {"workgroup 1\n%a = const f32 -0.0\n", "workgroup 1\n%x = const f32 0x80000000"},
      {"workgroup 1\n%a = const i32 -1\n", "workgroup 1\n%x = const i32 0xffffffff"},
      {"workgroup 1\n%a = const bool true\n", "workgroup 1\n%x = const bool 1"},
      {"workgroup 1\n%a = const u64 0x100000000\n", "workgroup 1\n%x = const u64 4294967296"},
      {"workgroup 1\n%a = const f32 inf\n", "workgroup 1\n%x = const f32 +inf"},
      {"workgroup 1\n%a = const f32 0.1\n", "workgroup 1\n%x = const f32 0.100000001490116119384765625"},
      {"workgroup 1\nbuffer c rw u32\n%i = const u32 0\n%o = atomic_max c %i %i",
       "workgroup 1\nbuffer c rw u32\n%i = const u32 0\natomic_max.relaxed c %i %i"},
      {"workgroup 1\nbarrier\n", "workgroup 1\nbarrier workgroup\n"},
      {"workgroup 1\nlocal n u32\n%a = const u32 1\nlet n %a",
       "workgroup 1\n%a = const u32 1\nlet n %a ; implicit declaration"},
      {"workgroup 1\n%a = const i32 1\nloop c %a %a\nend", "workgroup 1\n%a = const i32 1\nloop c i32 %a %a\nend"},
      {"workgroup 1\nlocal c i32\n%a = const i32 1\nloop c %a %a\nend",
       "workgroup 1\nprogram named\nlocal c i32\n%a = const i32 1\nloop c i32 %a %a\nend"},
      {"workgroup 32\nbuffer x ro i8\nlocal t mat_b_i8\n%i = const u32 0\nmma_load t x %i %i",
       "workgroup 32\nbuffer x ro i8\nlocal t mat_b_i8\n%i = const u32 0\nmma_load.row t x %i %i"},
  };
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    uint8_t *a, *b;
    size_t sa, sb;
    assemble_ok(pairs[k][0], &a, &sa);
    assemble_ok(pairs[k][1], &b, &sb);
    EXPECT(sa == sb && memcmp(a, b, sa) == 0, "pair %zu encodes the same:\n%s\n---\n%s", k,
           pairs[k][0], pairs[k][1]);
    check_round_trip(a, sa, pairs[k][0]);
    free(a);
    free(b);
  }
}
END_TEST

START_TEST(text_names_and_scopes) {
  /* Names are free-form; a name may be reused after its block ends or
   * a grid barrier; locals and buffers have separate name spaces. */
  const char *src =
      "workgroup 32\n"
      "buffer acc rw i64 [1] output\n"
      "buffer u32 ro u32          ; a buffer may be called u32\n"
      "%0 = const u32 9          ; a numeric name is just a name\n"
      "%zero = const u32 0\n"
      "block\n"
      "  %t = load u32 %zero\n"
      "end\n"
      "block\n"
      "  %t = buflen u32         ; reuse: the first %t ended with its block\n"
      "  let acc %t              ; local 'acc', buffer 'acc': separate name spaces\n"
      "end\n"
      "barrier grid\n"
      "%zero = const u32 0\n"
      "%m1 = const i64 -1\n"
      "%old = atomic_cas.seq_cst acc %zero %m1 %m1\n";
  uint8_t *bytes;
  size_t size;
  assemble_ok(src, &bytes, &size);
  vyre_program *p = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_program_decode(bytes, size, &p, &err), VYRE_OK);
  ck_assert_uint_eq(p->inst_count, 13);
  ck_assert_uint_eq(p->insts[0].op, VYRE_OP_CONST);
  ck_assert_uint_eq(p->insts[0].a, 9);
  ck_assert_uint_eq(p->insts[6].op, VYRE_OP_BUF_LEN);
  ck_assert_uint_eq(p->insts[7].b, 6); /* let acc takes the second %t */
  ck_assert_uint_eq(p->insts[12].op, VYRE_OP_ATOMIC_CAS);
  ck_assert_uint_eq(p->insts[12].mod, VYRE_ORDER_SEQ_CST);
  ck_assert_uint_eq(p->insts[12].b, 10); /* the %zero after the grid barrier */
  ck_assert_uint_eq(p->local_count, 1);
  vyre_program_free(p);
  check_round_trip(bytes, size, "names");
  free(bytes);
}
END_TEST

/* The largest binding: the builder reads UINT32_MAX as "the next one",
 * the text form must still express it. */
START_TEST(text_binding_max) {
  for (int k = 0; k < 2; k++) {
    vyre_builder *b = vyre_builder_new(1, 1, 1);
    if (k) vyre_b_buffer(b, "a", 0xfffffffeu, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
    vyre_b_buffer(b, "top", k ? UINT32_MAX : 7, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
    vyre_b_return(b);
    uint8_t *bytes;
    size_t size;
    finish(b, &bytes, &size);
    uint32_t max = UINT32_MAX;
    memcpy(bytes + VYRE_PROGRAM_HEADER_SIZE + (size_t)k * sizeof(vyre_buffer_decl) +
               offsetof(vyre_buffer_decl, binding), &max, 4);
    check_round_trip(bytes, size, "binding 4294967295");
    char *text = disassemble_ok(bytes, size);
    ck_assert_msg(strstr(text, k ? "buffer top rw u32\n" : "buffer top rw u32 @4294967295\n") != NULL,
                  "case %d:\n%s", k, text);
    free(text);
    free(bytes);
  }
}
END_TEST

START_TEST(text_api_arguments) {
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = (void *)1;
  size_t size = 1;
  char *text = (char *)1;
  ck_assert_int_eq(vyre_text_assemble("workgroup 1\nreturn", 18, NULL, NULL, &size, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vyre_text_assemble(NULL, 5, NULL, &bytes, &size, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_ptr_null(bytes);
  ck_assert_int_eq(vyre_text_assemble(NULL, 0, NULL, &bytes, &size, &err), VYRE_INVALID_PROGRAM);
  ck_assert_msg(strncmp(err.message, "<input>:1:1: no workgroup", 25) == 0, "%s", err.message);
  /* The length, not a NUL, ends the text. */
  ck_assert_int_eq(vyre_text_assemble("workgroup 1\nreturn\ntrash", 18, "f", &bytes, &size, &err), VYRE_OK);
  free(bytes);
  ck_assert_int_eq(vyre_text_disassemble("x", 1, NULL, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_int_eq(vyre_text_disassemble("not a program", 13, &text, &err), VYRE_INVALID_PROGRAM);
  ck_assert_ptr_null(text);
  ck_assert_msg(strncmp(err.message, "disassemble: invalid program", 28) == 0 && strstr(err.message, "Fix:"),
                "%s", err.message);
  /* NULL error records are fine. */
  ck_assert_int_eq(vyre_text_assemble("bogus", 5, NULL, &bytes, &size, NULL), VYRE_INVALID_PROGRAM);
  ck_assert_int_eq(vyre_text_disassemble(NULL, 0, &text, NULL), VYRE_INVALID_PROGRAM);
}
END_TEST

/* The examples in docs/program-text.md assemble and round-trip. */
START_TEST(text_doc_examples) {
  const char *src_dir = getenv("VYRE_SRC_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/docs/program-text.md", src_dir ? src_dir : VYRE_TEST_SRCDIR);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  static char doc[65536];
  size_t n = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[n] = '\0';
  int examples = 0;
  for (char *at = strstr(doc, "```\n"); at; at = strstr(at, "```\n")) {
    char *body = at + 4, *end = strstr(body, "```");
    if (!end) break;
    if (strncmp(body, "workgroup", 9) == 0 || strncmp(body, "; saxpy", 7) == 0) {
      uint8_t *bytes;
      size_t size;
      char saved = *end;
      *end = '\0';
      assemble_ok(body, &bytes, &size);
      check_round_trip(bytes, size, "doc example");
      free(bytes);
      *end = saved;
      examples++;
    }
    at = end + 3;
  }
  ck_assert_msg(examples >= 4, "found the %d program examples of docs/program-text.md (saxpy, histogram, loop, mma)", examples);
}
END_TEST

/* ------------------------------------------------------------------ */
/* ops: every op x type combination the validator accepts             */
/* ------------------------------------------------------------------ */
typedef struct combo_stats {
  uint32_t accepted[VYRE_OP_ID_LIMIT];
  uint32_t total_accepted, total_rejected;
} combo_stats;

static const uint8_t value_types[] = {VYRE_T_BOOL, VYRE_T_U32, VYRE_T_U64, VYRE_T_I32, VYRE_T_I64, VYRE_T_F32};

static uint64_t sample_bits(uint32_t type, uint32_t k) {
  static const uint32_t f32s[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0x7f800000u, 0xff800000u,
                                  0x7fc00000u, 0x7f7fffffu, 0x00800000u, 0x80800000u, 0x3dcccccdu,
                                  0x4b800001u, 0xc2f6e979u, 0x5f800000u, 0x2f800000u};
  switch (type) {
  case VYRE_T_BOOL: return k & 1;
  case VYRE_T_U32: return (uint32_t[]){0, 1, 0xffffffffu, 123456789u}[k % 4];
  case VYRE_T_I32: return (uint32_t[]){0, 0xffffffffu, 0x80000000u, 0x7fffffffu}[k % 4];
  case VYRE_T_U64: return (uint64_t[]){0, UINT64_MAX, 1ull << 32, 0x123456789abcdef0ull}[k % 4];
  case VYRE_T_I64: return (uint64_t[]){1ull << 63, (1ull << 63) - 1, (uint64_t)-2, 5}[k % 4];
  case VYRE_T_F32: return f32s[k % (sizeof f32s / sizeof f32s[0])];
  default: return 1;
  }
}

/* Finish, decode; when accepted, round-trip through the text and count. */
static int combo(combo_stats *cs, vyre_builder *b, uint32_t op, const char *what) {
  uint8_t *bytes;
  size_t size;
  finish(b, &bytes, &size);
  vyre_program *p = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  int ok = vyre_program_decode(bytes, size, &p, &err) == VYRE_OK;
  vyre_program_free(p);
  if (ok) {
    check_round_trip(bytes, size, what);
    char *text = disassemble_ok(bytes, size);
    const char *mn = vyre_op_lookup(op)->mnemonic;
    EXPECT(strstr(text, mn) != NULL, "%s: the text spells %s", what, mn);
    free(text);
    cs->accepted[op]++;
    cs->total_accepted++;
  } else {
    cs->total_rejected++;
  }
  free(bytes);
  return ok;
}

static vyre_builder *new_b(void) { return vyre_builder_new(32, 1, 1); }

static uint32_t buffer_for(vyre_builder *b, uint32_t access, uint32_t elem, uint32_t flags) {
  uint32_t count = access == VYRE_ACCESS_WORKGROUP || access == VYRE_ACCESS_WRITE_ONLY ||
                           (flags & VYRE_BUF_OUTPUT) ? 8u : 0u;
  return vyre_b_buffer(b, "buf", UINT32_MAX, (vyre_access)access, (vyre_type)elem, count, flags);
}

/* The MMA ops: every matrix type against every storage type, access and
 * layout (loads and stores), every A x B x accumulator (mma), both
 * accumulators (fill); accepted exactly where docs/program-format.md says. */
static void mma_combos(combo_stats *cs, const vyre_op_info *op) {
  char what[96];
  for (uint32_t m = 1; m < VYRE_T_COUNT_; m++) {
    int use = vyre_type_matrix_use(m);
    uint32_t comp = vyre_type_matrix_component(m);
    if (!use) continue;
    if (op->op_class == VYRE_OC_MMA_FILL) {
      for (uint32_t k = 0; k < sizeof value_types; k++) {
        uint32_t t = value_types[k];
        vyre_builder *b = new_b();
        uint32_t s = vyre_b_local(b, (vyre_type)m);
        vyre_b_inst(b, VYRE_OP_MMA_FILL, t, 0, s, vyre_b_const(b, (vyre_type)t, sample_bits(t, 2)), 0, 0);
        snprintf(what, sizeof what, "mma_fill %s %s", vyre_type_name(m), vyre_type_name(t));
        EXPECT(combo(cs, b, op->id, what) == (use == VYRE_MAT_ACC && t == comp),
               "%s accepted iff an accumulator filled with its component", what);
      }
    } else if (op->op_class == VYRE_OC_MMA && use == VYRE_MAT_A) {
      for (uint32_t bt = 1; bt < VYRE_T_COUNT_; bt++)
        for (uint32_t ct = 1; ct < VYRE_T_COUNT_; ct++) {
          if (vyre_type_matrix_use(bt) != VYRE_MAT_B || vyre_type_matrix_use(ct) != VYRE_MAT_ACC) continue;
          vyre_builder *b = new_b();
          uint32_t d = vyre_b_local(b, (vyre_type)ct), a = vyre_b_local(b, (vyre_type)m);
          uint32_t bm = vyre_b_local(b, (vyre_type)bt);
          vyre_b_mma(b, d, a, bm, d);
          uint32_t acc = comp == VYRE_T_F16 || comp == VYRE_T_BF16 ? VYRE_T_F32 : VYRE_T_I32;
          snprintf(what, sizeof what, "mma %s %s %s", vyre_type_name(ct), vyre_type_name(m), vyre_type_name(bt));
          EXPECT(combo(cs, b, op->id, what) ==
                     (vyre_type_matrix_component(bt) == comp && vyre_type_matrix_component(ct) == acc),
                 "%s accepted iff A and B agree and the accumulator is theirs", what);
        }
    } else if (op->op_class == VYRE_OC_MMA_LOAD || op->op_class == VYRE_OC_MMA_STORE) {
      int load = op->op_class == VYRE_OC_MMA_LOAD;
      for (uint32_t acc = 0; acc < VYRE_ACCESS_COUNT_; acc++)
        for (uint32_t t = 1; t < VYRE_T_COUNT_; t++) {
          if (!(VYRE_TM_STORAGE & VYRE_TBIT(t))) continue;
          /* The component, or an integer storage type of its size (bits moved). */
          int holds = vyre_type_size(t) == vyre_type_size(comp) &&
                      (t == comp || t == VYRE_T_U8 || t == VYRE_T_U16 || t == VYRE_T_U32 ||
                       t == VYRE_T_I8 || t == VYRE_T_I16 || t == VYRE_T_I32);
          /* An f32 accumulator is stored into f32 only (its bound applies to floats). */
          if (!load && comp == VYRE_T_F32 && t != VYRE_T_F32) holds = 0;
          int want = holds && (load ? acc != VYRE_ACCESS_WRITE_ONLY
                                        : use == VYRE_MAT_ACC && acc != VYRE_ACCESS_READ_ONLY &&
                                              acc != VYRE_ACCESS_UNIFORM);
          for (uint32_t layout = 0; layout < (want ? 2u : 1u); layout++) {
            vyre_builder *b = new_b();
            uint32_t buf = buffer_for(b, acc, t, 0), s = vyre_b_local(b, (vyre_type)m);
            uint32_t i = vyre_b_u32(b, 0), stride = vyre_b_u32(b, 16);
            if (load) vyre_b_mma_load(b, (vyre_layout)layout, s, buf, i, stride);
            else vyre_b_mma_store(b, (vyre_layout)layout, buf, i, stride, s);
            snprintf(what, sizeof what, "%s.%s %s %s %s", op->mnemonic, vyre_layout_name(layout),
                     vyre_type_name(m), vyre_access_name(acc), vyre_type_name(t));
            EXPECT(combo(cs, b, op->id, what) == want, "%s accepted iff the buffer holds the "
                   "component or an integer of its size and the access allows it", what);
          }
        }
    }
  }
}

START_TEST(text_every_op_and_type) {
  static combo_stats cs;
  memset(&cs, 0, sizeof cs);
  uint32_t nops;
  const vyre_op_info *all = vyre_op_all(&nops);
  char what[96];
  for (uint32_t o = 0; o < nops; o++) {
    const vyre_op_info *op = &all[o];
    vyre_op code = (vyre_op)op->id;
    snprintf(what, sizeof what, "%s", op->mnemonic);
    switch ((vyre_op_class)op->op_class) {
    case VYRE_OC_CONST:
      for (uint32_t t = 1; t < VYRE_T_COUNT_; t++)
        for (uint32_t k = 0; k < 14; k++) {
          vyre_builder *b = new_b();
          vyre_b_const(b, (vyre_type)t, sample_bits(t, k));
          int ok = combo(&cs, b, op->id, what);
          EXPECT(ok == vyre_type_is_value(t), "const %s accepted iff a value type", vyre_type_name(t));
        }
      break;
    case VYRE_OC_LOCAL_GET:
    case VYRE_OC_LET:
    case VYRE_OC_ASSIGN:
      for (uint32_t k = 0; k < sizeof value_types; k++) {
        vyre_builder *b = new_b();
        uint32_t s = vyre_b_local(b, (vyre_type)value_types[k]);
        uint32_t v = vyre_b_const(b, (vyre_type)value_types[k], sample_bits(value_types[k], 1));
        vyre_b_let(b, s, v);
        vyre_b_assign(b, s, v);
        vyre_b_get(b, s);
        EXPECT(combo(&cs, b, op->id, what), "let/assign/get %s", vyre_type_name(value_types[k]));
      }
      break;
    case VYRE_OC_LOAD:
    case VYRE_OC_STORE:
    case VYRE_OC_BUF_LEN:
      for (uint32_t acc = 0; acc < VYRE_ACCESS_COUNT_; acc++)
        for (uint32_t t = 1; t < VYRE_T_COUNT_; t++)
          for (uint32_t flags = 0; flags <= (acc == VYRE_ACCESS_READ_WRITE ? 1u : 0u); flags++) {
            if (!(VYRE_TM_STORAGE & VYRE_TBIT(t))) continue; /* matrix types: mma_combos */
            vyre_builder *b = new_b();
            uint32_t buf = buffer_for(b, acc, t, flags);
            uint32_t i = vyre_b_u32(b, 3);
            int want;
            if (op->op_class == VYRE_OC_LOAD) {
              vyre_b_load(b, buf, i);
              want = acc != VYRE_ACCESS_WRITE_ONLY;
            } else if (op->op_class == VYRE_OC_STORE) {
              uint32_t ct = vyre_type_compute(t);
              vyre_b_store(b, buf, i, vyre_b_const(b, (vyre_type)ct, sample_bits(ct, 1)));
              want = acc != VYRE_ACCESS_READ_ONLY && acc != VYRE_ACCESS_UNIFORM;
            } else {
              vyre_b_buflen(b, buf);
              want = 1;
            }
            snprintf(what, sizeof what, "%s %s %s%s", op->mnemonic, vyre_access_name(acc),
                     vyre_type_name(t), flags ? " output" : "");
            EXPECT(combo(&cs, b, op->id, what) == want, "%s accepted iff the access allows it", what);
          }
      break;
    case VYRE_OC_BUILTIN:
      for (uint32_t axis = 0; axis < 4; axis++) {
        vyre_builder *b = new_b();
        vyre_b_builtin(b, code, axis);
        int axis_op = code != VYRE_OP_SUBGROUP_LANE && code != VYRE_OP_SUBGROUP_SIZE;
        EXPECT(combo(&cs, b, op->id, what) == (axis_op ? axis < 3 : axis == 0), "%s axis %u", what, axis);
      }
      break;
    case VYRE_OC_BINARY:
    case VYRE_OC_COMPARE:
    case VYRE_OC_UNARY:
    case VYRE_OC_PREDICATE:
      for (uint32_t k = 0; k < sizeof value_types; k++) {
        uint32_t t = value_types[k];
        vyre_builder *b = new_b();
        uint32_t x = vyre_b_const(b, (vyre_type)t, sample_bits(t, 2));
        uint32_t y = vyre_b_const(b, (vyre_type)t, sample_bits(t, 3));
        if (op->op_class == VYRE_OC_BINARY || op->op_class == VYRE_OC_COMPARE) vyre_b_bin(b, code, x, y);
        else vyre_b_un(b, code, x);
        snprintf(what, sizeof what, "%s %s", op->mnemonic, vyre_type_name(t));
        int want = (op->type_mask & VYRE_TBIT(t)) != 0;
        EXPECT(combo(&cs, b, op->id, what) == want, "%s is accepted iff the op table lists %s",
               what, vyre_type_name(t));
      }
      break;
    case VYRE_OC_SELECT:
    case VYRE_OC_SHUFFLE:
      for (uint32_t k = 0; k < sizeof value_types; k++) {
        uint32_t t = value_types[k];
        vyre_builder *b = new_b();
        uint32_t x = vyre_b_const(b, (vyre_type)t, sample_bits(t, 0));
        uint32_t y = vyre_b_const(b, (vyre_type)t, sample_bits(t, 1));
        if (code == VYRE_OP_SELECT) vyre_b_select(b, vyre_b_bool(b, 1), x, y);
        else vyre_b_shuffle(b, x, vyre_b_u32(b, 5));
        EXPECT(combo(&cs, b, op->id, what), "%s over %s", what, vyre_type_name(t));
      }
      break;
    case VYRE_OC_CAST:
      for (uint32_t k = 0; k < sizeof value_types; k++)
        for (uint32_t j = 0; j < sizeof value_types; j++) {
          vyre_builder *b = new_b();
          uint32_t x = vyre_b_const(b, (vyre_type)value_types[k], sample_bits(value_types[k], 2));
          vyre_b_cast(b, (vyre_type)value_types[j], x);
          EXPECT(combo(&cs, b, op->id, what), "cast %s -> %s", vyre_type_name(value_types[k]),
                 vyre_type_name(value_types[j]));
        }
      break;
    case VYRE_OC_FMA: {
      vyre_builder *b = new_b();
      uint32_t x = vyre_b_f32(b, 1.5f);
      vyre_b_fma(b, x, x, x);
      EXPECT(combo(&cs, b, op->id, what), "fma f32");
      break;
    }
    case VYRE_OC_ATOMIC:
    case VYRE_OC_ATOMIC_CAS:
      for (uint32_t acc = 0; acc < VYRE_ACCESS_COUNT_; acc++)
        for (uint32_t t = 1; t < VYRE_T_COUNT_; t++) {
          int want = (acc == VYRE_ACCESS_READ_WRITE || acc == VYRE_ACCESS_WORKGROUP) &&
                     (VYRE_TM_INT & VYRE_TBIT(t));
          for (uint32_t order = 0; order < (want ? VYRE_ORDER_COUNT_ : 1u); order++) {
            vyre_builder *b = new_b();
            uint32_t buf = buffer_for(b, acc, t, 0);
            uint32_t ct = vyre_type_compute(t);
            uint32_t i = vyre_b_u32(b, 1), v = vyre_b_const(b, (vyre_type)ct, sample_bits(ct, 1));
            if (op->op_class == VYRE_OC_ATOMIC) vyre_b_atomic(b, code, buf, i, v, (vyre_order)order);
            else vyre_b_cas(b, buf, i, v, v, (vyre_order)order);
            snprintf(what, sizeof what, "%s.%s %s %s", op->mnemonic, vyre_order_name(order),
                     vyre_access_name(acc), vyre_type_name(t));
            EXPECT(combo(&cs, b, op->id, what) == want, "%s accepted iff rw/workgroup integers", what);
          }
        }
      break;
    case VYRE_OC_BALLOT: {
      vyre_builder *b = new_b();
      vyre_b_ballot(b, vyre_b_bool(b, 0));
      EXPECT(combo(&cs, b, op->id, what), "ballot");
      break;
    }
    case VYRE_OC_REDUCE:
      for (uint32_t kind = 0; kind < VYRE_REDUCE_COUNT_; kind++)
        for (uint32_t k = 0; k < sizeof value_types; k++) {
          uint32_t t = value_types[k];
          vyre_builder *b = new_b();
          vyre_b_reduce(b, (vyre_reduce)kind, vyre_b_const(b, (vyre_type)t, sample_bits(t, 1)));
          int want = (kind < VYRE_REDUCE_AND ? VYRE_TM_NUM : VYRE_TM_INT) & VYRE_TBIT(t);
          snprintf(what, sizeof what, "reduce.%s %s", vyre_reduce_name(kind), vyre_type_name(t));
          EXPECT(combo(&cs, b, op->id, what) == !!want, "%s", what);
        }
      break;
    case VYRE_OC_IF:
    case VYRE_OC_ELSE:
    case VYRE_OC_END:
    case VYRE_OC_BLOCK: {
      vyre_builder *b = new_b();
      vyre_b_if(b, vyre_b_bool(b, 1));
      vyre_b_block(b);
      vyre_b_end(b);
      if (code != VYRE_OP_IF) vyre_b_else(b);
      vyre_b_end(b);
      EXPECT(combo(&cs, b, op->id, what), "if/else/block/end");
      break;
    }
    case VYRE_OC_LOOP:
      for (uint32_t k = 0; k < sizeof value_types; k++) {
        uint32_t t = value_types[k];
        vyre_builder *b = new_b();
        uint32_t s = vyre_b_local(b, (vyre_type)t), v = vyre_b_const(b, (vyre_type)t, sample_bits(t, 1));
        vyre_b_loop(b, s, v, v);
        vyre_b_get(b, s);
        vyre_b_end(b);
        snprintf(what, sizeof what, "loop %s", vyre_type_name(t));
        EXPECT(combo(&cs, b, op->id, what) == (t == VYRE_T_U32 || t == VYRE_T_I32), "%s", what);
      }
      break;
    case VYRE_OC_RETURN:
    case VYRE_OC_BARRIER:
    case VYRE_OC_TRAP:
      for (uint32_t k = 0; k < 3; k++) {
        vyre_builder *b = new_b();
        if (code == VYRE_OP_RETURN) vyre_b_return(b);
        else if (code == VYRE_OP_BARRIER) vyre_b_inst(b, code, 0, k, 0, 0, 0, 0);
        else vyre_b_trap(b, (uint32_t[]){0, 7, 0xffffffffu}[k]);
        EXPECT(combo(&cs, b, op->id, what) == (code != VYRE_OP_BARRIER || k < 2), "%s %u", what, k);
      }
      break;
    case VYRE_OC_MMA_FILL:
    case VYRE_OC_MMA_LOAD:
    case VYRE_OC_MMA:
    case VYRE_OC_MMA_STORE: mma_combos(&cs, op); break;
    }
  }
  uint32_t missing = 0;
  for (uint32_t o = 0; o < nops; o++) {
    if (!cs.accepted[all[o].id]) missing++;
    EXPECT(cs.accepted[all[o].id] > 0, "op %s has an accepted combination", all[o].mnemonic);
  }
  printf("every op: %u op ids, %u accepted combinations round-tripped through text, %u combinations "
         "rejected by the validator as expected\n",
         nops, cs.total_accepted, cs.total_rejected);
  ck_assert_uint_eq(missing, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* literals                                                            */
/* ------------------------------------------------------------------ */
static void literal_round_trip(uint32_t type, uint64_t bits) {
  strbuf b = {0};
  vyre__text_format_const(&b, type, bits);
  EXPECT(!b.failed, "out of memory");
  uint64_t back = ~bits;
  char msg[512];
  int r =
      vyre__text_parse_literal(b.data, b.len, type, VYRE__LITERAL_CONST, &back, msg, sizeof msg);
  EXPECT(r == 0 && back == bits, "%s 0x%llx prints as '%s' and reads back as 0x%llx (%s)",
         vyre_type_name(type), (unsigned long long)bits, b.data, (unsigned long long)back,
         r ? msg : "ok");
  if (type == VYRE_T_F32)
    EXPECT(strpbrk(b.data, ".en") != NULL, "an f32 literal looks like a float: %s", b.data);
  free(b.data);
}

START_TEST(literals_round_trip) {
  corpus_rng r;
  corpus_seed(&r, 9);
  uint32_t count = 0;
  /* f32: every exponent, edge and random mantissas, both signs. */
  for (uint32_t e = 0; e < 256; e++)
    for (uint32_t k = 0; k < 64; k++) {
      uint32_t m = k < 4 ? (uint32_t[]){0, 1, 0x400000u, 0x7fffffu}[k] : corpus_u32(&r) & 0x7fffffu;
      for (uint32_t s = 0; s < 2; s++) {
        uint32_t bits = vyre_f32_canonical_bits(s << 31 | e << 23 | m);
        literal_round_trip(VYRE_T_F32, bits);
        count++;
      }
    }
  for (uint32_t k = 0; k < 6000; k++) {
    literal_round_trip(VYRE_T_U32, corpus_u32(&r) >> (k % 32));
    literal_round_trip(VYRE_T_I32, corpus_u32(&r) >> (k % 32));
    literal_round_trip(VYRE_T_U64, corpus_u64(&r) >> (k % 64));
    literal_round_trip(VYRE_T_I64, corpus_u64(&r) >> (k % 64));
    literal_round_trip(VYRE_T_I64, (uint64_t)0 - (corpus_u64(&r) >> (k % 64)));
    count += 5;
  }
  static const uint64_t edges[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 1ull << 63,
                                   (1ull << 63) - 1, UINT64_MAX};
  for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
    literal_round_trip(VYRE_T_U64, edges[k]);
    literal_round_trip(VYRE_T_I64, edges[k]);
    literal_round_trip(VYRE_T_U32, (uint32_t)edges[k]);
    literal_round_trip(VYRE_T_I32, (uint32_t)edges[k]);
  }
  literal_round_trip(VYRE_T_BOOL, 0);
  literal_round_trip(VYRE_T_BOOL, 1);
  printf("literals: %u values printed and read back exactly\n", count);
}
END_TEST

START_TEST(literals_spelling) {
  static const struct {
    uint32_t type;
    const char *text;
    int ok;
    uint64_t bits;      /* when ok */
    const char *needle; /* when not */
  } cases[] = {
      {VYRE_T_F32, "2", 1, 0x40000000u, NULL},
      {VYRE_T_F32, "-2.5e-1", 1, 0xbe800000u, NULL},
      {VYRE_T_F32, "0x1.8p3", 1, 0x41400000u, NULL},
      {VYRE_T_F32, "-0x1p-126", 1, 0x80800000u, NULL},
      {VYRE_T_F32, "0X3F800000", 1, 0x3f800000u, NULL},
      {VYRE_T_F32, "0x7fc00000", 1, 0x7fc00000u, NULL},
      {VYRE_T_F32, "nan", 1, 0x7fc00000u, NULL},
      {VYRE_T_F32, "-inf", 1, 0xff800000u, NULL},
      {VYRE_T_F32, "3.4028235e38", 1, 0x7f7fffffu, NULL},
      {VYRE_T_F32, "1.1754944e-38", 1, 0x00800000u, NULL},
      {VYRE_T_F32, "16777217", 1, 0x4b800000u, NULL},
      {VYRE_T_F32, "1e-40", 0, 0, "subnormal"},
      {VYRE_T_F32, "0x1p-149", 0, 0, "subnormal"},
      {VYRE_T_F32, "1e-50", 0, 0, "underflows to zero"},
      {VYRE_T_F32, "1e39", 0, 0, "beyond the largest f32"},
      {VYRE_T_F32, "0x1p128", 0, 0, "beyond the largest f32"},
      {VYRE_T_F32, "0x00000001", 0, 0, "subnormals flush to zero"},
      {VYRE_T_F32, "0x7fc00001", 0, 0, "the only NaN is 0x7fc00000"},
      {VYRE_T_F32, "0xffc00000", 0, 0, "Fix: write nan"},
      {VYRE_T_F32, "-nan", 0, 0, "one canonical NaN"},
      {VYRE_T_F32, "0x1.8", 0, 0, "needs a p exponent"},
      {VYRE_T_F32, "-0x3f800000", 0, 0, "neither f32 bits nor a hex float"},
      {VYRE_T_F32, "0x1ffffffff", 0, 0, "not 32 bits of hex"},
      {VYRE_T_F32, "1.5f", 0, 0, "not an f32 literal"},
      {VYRE_T_F32, "infinity", 0, 0, "not an f32 literal"},
      {VYRE_T_F32, "nan(1)", 0, 0, "not an f32 literal"},
      {VYRE_T_F32, "", 0, 0, "not an f32 literal"},
      {VYRE_T_F32, ".", 0, 0, "not an f32 literal"},
      {VYRE_T_F32, "1e", 0, 0, "not an f32 literal"},
      {VYRE_T_U32, "4294967295", 1, 0xffffffffu, NULL},
      {VYRE_T_U32, "0xFFFFFFFF", 1, 0xffffffffu, NULL},
      {VYRE_T_U32, "007", 1, 7, NULL},
      {VYRE_T_U32, "4294967296", 0, 0, "out of range for u32"},
      {VYRE_T_U32, "-1", 0, 0, "is negative"},
      {VYRE_T_U32, "+1", 0, 0, "not a u32 literal"},
      {VYRE_T_U32, "1_000", 0, 0, "not a u32 literal"},
      {VYRE_T_U32, "0x", 0, 0, "not a u32 literal"},
      {VYRE_T_U32, "0x1g", 0, 0, "not a u32 literal"},
      {VYRE_T_U64, "18446744073709551615", 1, UINT64_MAX, NULL},
      {VYRE_T_U64, "18446744073709551616", 0, 0, "out of range for u64"},
      {VYRE_T_U64, "0x10000000000000000", 0, 0, "out of range for u64"},
      {VYRE_T_I32, "-2147483648", 1, 0x80000000u, NULL},
      {VYRE_T_I32, "+2147483647", 1, 0x7fffffffu, NULL},
      {VYRE_T_I32, "-0", 1, 0, NULL},
      {VYRE_T_I32, "0x80000000", 1, 0x80000000u, NULL},
      {VYRE_T_I32, "2147483648", 0, 0, "out of range for i32"},
      {VYRE_T_I32, "-2147483649", 0, 0, "out of range for i32"},
      {VYRE_T_I32, "-0x1", 0, 0, "not a i32 literal"},
      {VYRE_T_I32, "0x100000000", 0, 0, "not 32 bits of hex"},
      {VYRE_T_I32, "-", 0, 0, "not a i32 literal"},
      {VYRE_T_I64, "-9223372036854775808", 1, 1ull << 63, NULL},
      {VYRE_T_I64, "9223372036854775808", 0, 0, "out of range for i64"},
      {VYRE_T_BOOL, "true", 1, 1, NULL},
      {VYRE_T_BOOL, "0", 1, 0, NULL},
      {VYRE_T_BOOL, "yes", 0, 0, "not a bool literal"},
      {VYRE_T_BOOL, "2", 0, 0, "not a bool literal"},
      {VYRE_T_U8, "1", 0, 0, "not a value type"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uint64_t bits = 0x5a5a;
    char msg[512] = "";
    int r = vyre__text_parse_literal(cases[k].text, strlen(cases[k].text), cases[k].type,
                                     VYRE__LITERAL_CONST, &bits, msg, sizeof msg);
    if (cases[k].ok) {
      EXPECT(r == 0 && bits == cases[k].bits, "%s '%s' reads as 0x%llx (got %d, 0x%llx: %s)",
             vyre_type_name(cases[k].type), cases[k].text, (unsigned long long)cases[k].bits, r,
             (unsigned long long)bits, msg);
    } else {
      EXPECT(r != 0 && strstr(msg, cases[k].needle) && strstr(msg, "Fix:"),
             "%s '%s' is refused with \"%s\" and a Fix (got %d: %s)", vyre_type_name(cases[k].type),
             cases[k].text, cases[k].needle, r, msg);
    }
  }
  /* Canonical spellings. */
  static const struct {
    uint32_t type;
    uint64_t bits;
    const char *text;
  } spell[] = {
      {VYRE_T_F32, 0x40000000u, "2.0"},          {VYRE_T_F32, 0x3dcccccdu, "0.1"},
      {VYRE_T_F32, 0x80000000u, "-0.0"},         {VYRE_T_F32, 0x7fc00000u, "nan"},
      {VYRE_T_F32, 0x7f800000u, "inf"},          {VYRE_T_F32, 0xff800000u, "-inf"},
      {VYRE_T_F32, 0x4b800000u, "16777216.0"},   {VYRE_T_F32, 0x60ad78ecu, "1e+20"},
      {VYRE_T_F32, 0x7f7fffffu, "3.4028235e+38"}, {VYRE_T_F32, 0x3a83126fu, "0.001"},
      {VYRE_T_F32, 0x3727c5acu, "0.00001"},        {VYRE_T_F32, 0xc2f6e979u, "-123.456"}, {VYRE_T_F32, 0x358637bdu, "1e-06"},
      {VYRE_T_I32, 0xffffffffu, "-1"},           {VYRE_T_I64, 1ull << 63, "-9223372036854775808"},
      {VYRE_T_U32, 0xffffffffu, "4294967295"},   {VYRE_T_BOOL, 1, "true"},
  };
  for (size_t k = 0; k < sizeof spell / sizeof spell[0]; k++) {
    strbuf b = {0};
    vyre__text_format_const(&b, spell[k].type, spell[k].bits);
    EXPECT(b.data && strcmp(b.data, spell[k].text) == 0, "%s 0x%llx is written %s, got %s",
           vyre_type_name(spell[k].type), (unsigned long long)spell[k].bits, spell[k].text, b.data);
    free(b.data);
  }
}
END_TEST

START_TEST(literals_ignore_locale) {
  /* A locale with a decimal comma must not change the text. */
  static const char *const comma_locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8"};
  const char *used = NULL;
  for (size_t k = 0; k < 4 && !used; k++)
    if (setlocale(LC_ALL, comma_locales[k])) used = comma_locales[k];
  if (!used) {
    printf("locale: no decimal-comma locale installed; only the C locale was checked\n");
    return;
  }
  uint8_t *bytes;
  size_t size;
  assemble_ok("workgroup 1\n%a = const f32 1.5\n", &bytes, &size);
  char *text = disassemble_ok(bytes, size);
  EXPECT(strstr(text, "const f32 1.5\n") != NULL, "under %s the text still says 1.5:\n%s", used, text);
  free(text);
  free(bytes);
  setlocale(LC_ALL, "C");
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors                                                              */
/* ------------------------------------------------------------------ */
typedef struct text_error_case {
  const char *src;
  unsigned line, col;
  vyre_status status;
  const char *needle;
} text_error_case;

#define W "workgroup 64\n"
static const text_error_case error_cases[] = {
    /* missing pieces */
    {"%x = const u32 1\n", 1, 1, VYRE_INVALID_PROGRAM, "no workgroup statement"},
    {W "; nothing\n", 2, 1, VYRE_INVALID_PROGRAM, "the program has no instructions"},
    {W "block\nblock\nend\n", 2, 1, VYRE_INVALID_PROGRAM, "this block is never closed"},
    {W "%c = const bool true\nif %c\n  %d = const u32 1\n", 3, 1, VYRE_INVALID_PROGRAM, "this if is never closed"},
    /* lexing and syntax */
    {W "return\x01\n", 2, 7, VYRE_INVALID_PROGRAM, "unexpected control character 0x01"},
    {W "%a = const u32 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n", 2, 40, VYRE_INVALID_PROGRAM, "more than 16 words"},
    {W "%a const u32 1\n", 2, 1, VYRE_INVALID_PROGRAM, "a value line reads `%a = OP ...`"},
    {W "%a-b = const u32 1\n", 2, 1, VYRE_INVALID_PROGRAM, "'%a-b' is not a value name"},
    {W "= const u32 1\n", 2, 1, VYRE_INVALID_PROGRAM, "cannot start with '='"},
    {W "frobnicate %x\n", 2, 1, VYRE_INVALID_PROGRAM, "unknown instruction 'frobnicate'"},
    {W "%v = 3\n", 2, 6, VYRE_INVALID_PROGRAM, "unknown instruction '3'"},
    {W "%a = gid\n", 2, 6, VYRE_INVALID_PROGRAM, "gid needs an axis"},
    {W "%a = lid.w\n", 2, 6, VYRE_INVALID_PROGRAM, "lid needs an axis"},
    {W "%a = lane.x\n", 2, 6, VYRE_INVALID_PROGRAM, "lane takes no .suffix"},
    {W "%a = const u32 1\n%b = add.x %a %a\n", 3, 6, VYRE_INVALID_PROGRAM, "add takes no .suffix"},
    {W "buffer c rw u32\n%i = const u32 0\n%o = atomic_add.strong c %i %i\n", 4, 17, VYRE_INVALID_PROGRAM, "'strong' is not a memory order"},
    {W "%a = const u32 1\n%r = reduce %a\n", 3, 6, VYRE_INVALID_PROGRAM, "reduce needs its kind"},
    {W "%a = const u32 1\n%r = reduce.mul %a\n", 3, 13, VYRE_INVALID_PROGRAM, "reduce needs its kind"},
    {W "%a = const u32 1\n%b = add %a\n", 3, 6, VYRE_INVALID_PROGRAM, "add takes 2 operands, found 1. Fix: write `%v = add %a %b`"},
    {W "%a = const u32 1\n%b = neg %a %a\n", 3, 13, VYRE_INVALID_PROGRAM, "neg takes 1 operand, found 2"},
    {W "store\n", 2, 1, VYRE_INVALID_PROGRAM, "store takes 3 operands, found 0. Fix: write `store BUFFER %index %value`"},
    {W "return now\n", 2, 8, VYRE_INVALID_PROGRAM, "return takes 0 operands, found 1"},
    {W "%a = const u32 1\n%x = store %a %a %a\n", 3, 1, VYRE_INVALID_PROGRAM, "store yields no value. Fix: remove `%x =`"},
    {W "barrier everyone\n", 2, 9, VYRE_INVALID_PROGRAM, "'everyone' is not a barrier scope"},
    {W "trap -1\n", 2, 6, VYRE_INVALID_PROGRAM, "trap code '-1' is not a number"},
    {W "program\n", 2, 1, VYRE_INVALID_PROGRAM, "program takes one name"},
    {W "program a\nprogram b\n", 3, 1, VYRE_INVALID_PROGRAM, "a second program statement"},
    /* workgroup */
    {"workgroup\n", 1, 1, VYRE_INVALID_PROGRAM, "workgroup takes 1 to 3 sizes"},
    {"workgroup 0\n", 1, 11, VYRE_INVALID_PROGRAM, "a workgroup size of 0"},
    {"workgroup 64 32\n", 1, 1, VYRE_LIMIT, "is 2048 invocations, over 1024"},
    {"workgroup x\n", 1, 11, VYRE_INVALID_PROGRAM, "workgroup size 'x' is not a number"},
    {W "workgroup 32\n", 2, 1, VYRE_INVALID_PROGRAM, "a second workgroup statement (the first is at line 1)"},
    /* declarations */
    {W "buffer x\n", 2, 1, VYRE_INVALID_PROGRAM, "buffer needs a name, an access mode and a type"},
    {W "buffer 9x ro f32\n", 2, 8, VYRE_INVALID_PROGRAM, "'9x' is not a buffer name"},
    {W "buffer x ro f32\nbuffer x rw f32\n", 3, 8, VYRE_INVALID_PROGRAM, "buffer x is already declared at line 2"},
    {W "buffer x readonly f32\n", 2, 10, VYRE_INVALID_PROGRAM, "'readonly' is not an access mode"},
    {W "buffer x ro float\n", 2, 13, VYRE_INVALID_PROGRAM, "'float' is not a type"},
    {W "buffer x ro void\n", 2, 13, VYRE_INVALID_PROGRAM, "'void' is not a type"},
    {W "buffer x ro f32 [4\nreturn\n", 2, 17, VYRE_INVALID_PROGRAM, "a count is written [N]"},
    {W "buffer x ro f32 [4] [5]\n", 2, 21, VYRE_INVALID_PROGRAM, "a count is written [N], once"},
    {W "buffer x ro f32 [-4]\n", 2, 18, VYRE_INVALID_PROGRAM, "element count '-4' is not a number"},
    {W "buffer x wo f32 [4] output output\n", 2, 28, VYRE_INVALID_PROGRAM, "output given twice"},
    {W "buffer x wo f32 [4] range 0\n", 2, 21, VYRE_INVALID_PROGRAM, "an output range is written once"},
    {W "buffer x ro f32 @\n", 2, 17, VYRE_INVALID_PROGRAM, "a binding is written @N"},
    {W "buffer x ro f32 @1 @2\n", 2, 20, VYRE_INVALID_PROGRAM, "the binding is given twice"},
    {W "buffer t workgroup f32 [4] @1\n", 2, 28, VYRE_INVALID_PROGRAM, "workgroup buffers have no binding"},
    {W "buffer x ro f32 fast\n", 2, 17, VYRE_INVALID_PROGRAM, "unexpected 'fast' in a buffer declaration"},
    {W "local a u8\n", 2, 9, VYRE_INVALID_PROGRAM, "u8 is a storage type"},
    {W "local 1a u32\n", 2, 7, VYRE_INVALID_PROGRAM, "'1a' is not a local name"},
    {W "local a u32\nlocal a f32\n", 3, 7, VYRE_INVALID_PROGRAM, "local a is already declared at line 2"},
    {W "local a\n", 2, 1, VYRE_INVALID_PROGRAM, "local takes a name and a type"},
    /* names and scopes */
    {W "%b = neg %a\n", 2, 10, VYRE_INVALID_PROGRAM, "unknown value %a"},
    {W "%b = neg %a\n\n  %a = const i32 1\n", 2, 10, VYRE_INVALID_PROGRAM,
     "%a is used before its definition at line 4. Fix: move the definition above"},
    {W "%a = const u32 1\n%b = add %a 3\n", 3, 13, VYRE_INVALID_PROGRAM, "expected a value (%name), found '3'"},
    {W "%a = const u32 1\n%b = add %a %\n", 3, 13, VYRE_INVALID_PROGRAM, "'%' is not a value name"},
    {W "%a = const u32 1\n%a = const u32 2\n", 3, 1, VYRE_INVALID_PROGRAM, "%a is already defined at line 2"},
    {W "%c = const bool true\nif %c\n  %x = const u32 1\nend\n%y = neg %x\n", 6, 10, VYRE_INVALID_PROGRAM,
     "%x (line 4) was defined inside a block that has ended (the block opened at line 3)"},
    {W "%c = const bool true\nif %c\n  %x = const u32 1\nelse\n  %y = neg %x\nend\n", 6, 12, VYRE_INVALID_PROGRAM,
     "defined inside a block that has ended"},
    {W "%a = const u32 1\nbarrier grid\n%b = neg %a\n", 4, 10, VYRE_INVALID_PROGRAM,
     "%a (line 2) was defined before the grid barrier at line 3"},
    {W "%b = buflen y\n", 2, 13, VYRE_INVALID_PROGRAM, "unknown buffer 'y'"},
    {W "%a = get n\n", 2, 10, VYRE_INVALID_PROGRAM, "unknown local n"},
    {W "local n u32\n%a = get n\n", 3, 10, VYRE_INVALID_PROGRAM, "local n (declared at line 2) is used before its let"},
    {W "%v = const u32 1\nblock\n  let n %v\nend\n%a = get n\n", 6, 10, VYRE_INVALID_PROGRAM,
     "local n was defined at line 4 inside a block that has ended"},
    {W "%v = const u32 1\nlet n %v\nlet n %v\n", 4, 5, VYRE_INVALID_PROGRAM, "local n already has its let (line 3)"},
    {W "%z = const u32 0\nloop i %z %z\n  assign i %z\nend\n", 4, 10, VYRE_INVALID_PROGRAM,
     "local i is the counter of the loop at line 3 and is read-only"},
    {W "%z = const u32 0\nlet i %z\nloop i %z %z\nend\n", 4, 6, VYRE_INVALID_PROGRAM, "local i already has a value (line 3)"},
    {W "local i u32\n%z = const u32 0\nloop i i32 %z %z\nend\n", 4, 8, VYRE_INVALID_PROGRAM, "local i is declared u32 at line 2"},
    {W "%z = const f32 0.0\nloop i %z %z\nend\n", 3, 6, VYRE_INVALID_PROGRAM, "loop counter i is f32"},
    /* types */
    {W "%a = const u32 1\n%b = const i32 2\n%c = add %a %b\n", 4, 13, VYRE_INVALID_PROGRAM,
     "%b is i32 but %a is u32; add takes two operands of one type"},
    {W "%a = const u32 1\n%b = sqrt %a\n", 3, 11, VYRE_INVALID_PROGRAM, "sqrt does not take u32 operands (it takes f32)"},
    {W "%a = const f32 1.0\n%b = mod %a %a\n", 3, 10, VYRE_INVALID_PROGRAM, "mod does not take f32 operands (it takes u32 u64 i32 i64)"},
    {W "%a = const u32 1\n%b = select %a %a %a\n", 3, 13, VYRE_INVALID_PROGRAM, "%a is u32, but select needs bool as condition"},
    {W "%c = const bool true\n%a = const u32 1\n%b = const u64 1\n%d = select %c %a %b\n", 5, 19, VYRE_INVALID_PROGRAM,
     "both arms of select share one type"},
    {W "%a = const u32 1\n%b = cast u8 %a\n", 3, 11, VYRE_INVALID_PROGRAM, "u8 is a storage type"},
    {W "%a = const u32 1\n%b = fma %a %a %a\n", 3, 10, VYRE_INVALID_PROGRAM, "%a is u32, but fma needs f32"},
    {W "buffer x ro f32\n%i = const i32 0\n%v = load x %i\n", 4, 13, VYRE_INVALID_PROGRAM, "%i is i32, but load needs u32 as index"},
    {W "buffer x rw u8\n%i = const u32 0\n%v = const i32 0\nstore x %i %v\n", 5, 12, VYRE_INVALID_PROGRAM,
     "%v is i32, but store needs u32 (the buffer's element type, widened)"},
    {W "buffer x ro u32\n%i = const u32 0\nstore x %i %i\n", 4, 7, VYRE_INVALID_PROGRAM, "buffer x is ro and cannot be written"},
    {W "buffer h rw f32\n%i = const u32 0\n%v = const f32 1.0\n%o = atomic_add h %i %v\n", 5, 17, VYRE_INVALID_PROGRAM,
     "buffer h holds f32; atomics work on u32 i32 u64 i64"},
    {W "buffer h rw i64\n%i = const u32 0\n%v = const i32 1\n%o = atomic_cas h %i %v %v\n", 5, 22, VYRE_INVALID_PROGRAM,
     "%v is i32, but atomic_cas needs i64"},
    {W "%a = const u32 1\n%b = ballot %a\n", 3, 13, VYRE_INVALID_PROGRAM, "ballot needs bool as condition"},
    {W "%a = const u32 1\n%l = const i32 1\n%b = shuffle %a %l\n", 4, 17, VYRE_INVALID_PROGRAM, "shuffle needs u32 as lane"},
    {W "%a = const f32 1.0\n%b = reduce.xor %a\n", 3, 17, VYRE_INVALID_PROGRAM, "a bitwise reduce does not take f32"},
    {W "%a = const bool true\n%b = reduce.add %a\n", 3, 17, VYRE_INVALID_PROGRAM, "reduce does not take bool"},
    {W "local n u32\n%a = const f32 1.0\nlet n %a\n", 4, 7, VYRE_INVALID_PROGRAM, "%a is f32, but let needs u32 (the local's type)"},
    {W "%a = const u32 1\nif %a\nend\n", 3, 4, VYRE_INVALID_PROGRAM, "%a is u32, but if needs bool as condition"},
    {W "%a = const u32 1\n%b = const i32 1\nloop i %a %b\nend\n", 4, 11, VYRE_INVALID_PROGRAM, "%b is i32, but loop needs u32"},
    /* literals (the message of vyre__text_parse_literal, at the literal) */
    {W "%a = const f32 1e-40\n", 2, 16, VYRE_INVALID_PROGRAM, "subnormal"},
    {W "%a = const f32 0x7fc00001\n", 2, 16, VYRE_INVALID_PROGRAM, "not canonical"},
    {W "%a = const u32 -1\n", 2, 16, VYRE_INVALID_PROGRAM, "u32 literal '-1' is negative"},
    {W "%a = const i32 2147483648\n", 2, 16, VYRE_INVALID_PROGRAM, "out of range for i32"},
    {W "%a = const u8 1\n", 2, 12, VYRE_INVALID_PROGRAM, "u8 is a storage type"},
    {W "%a = const wide 1\n", 2, 12, VYRE_INVALID_PROGRAM, "'wide' is not a type"},
    /* structure */
    {W "else\n", 2, 1, VYRE_INVALID_PROGRAM, "else without an open if"},
    {W "%c = const bool true\nif %c\nelse\nelse\nend\n", 5, 1, VYRE_INVALID_PROGRAM, "this if already has its else"},
    {W "block\nelse\nend\n", 3, 1, VYRE_INVALID_PROGRAM, "the innermost open block is not an if"},
    {W "end\n", 2, 1, VYRE_INVALID_PROGRAM, "end without an open block"},
    {W "block\n  barrier grid\nend\n", 3, 3, VYRE_INVALID_PROGRAM, "a grid barrier must be at the top level of the body (this one is inside the block at line 2)"},
    /* the validator's rules, mapped back to the source */
    {W "buffer x wo f32 [4]\n%i = const u32 0\n%v = load x %i\n", 4, 6, VYRE_INVALID_PROGRAM,
     "instruction 1 (load): buffer 'x' is write-only"},
    {W "buffer h ro u32\n%i = const u32 0\n%o = atomic_add h %i %i\n", 4, 6, VYRE_INVALID_PROGRAM,
     "atomics need rw or workgroup"},
    {W "buffer t workgroup f32 [0]\nreturn\n", 2, 8, VYRE_INVALID_PROGRAM, "buffer 0 't': workgroup buffers need a fixed count"},
    {W "buffer o wo f32\nreturn\n", 2, 8, VYRE_INVALID_PROGRAM, "needs a fixed element count"},
    {W "buffer a ro f32 @3\nbuffer b ro f32 @2\nreturn\n", 3, 8, VYRE_INVALID_PROGRAM, "binding 2 is not above the previous binding 3"},
    {W "buffer t workgroup f32 [20000]\nreturn\n", 2, 8, VYRE_LIMIT, "workgroup memory would reach"},
    {W "%g = gid.x\n%z = const u32 3\n%c = lt %g %z\nif %c\n  barrier\nend\n", 6, 3, VYRE_INVALID_PROGRAM,
     "barrier in control flow that differs between invocations (the condition or bounds at instruction 3 at line 5"},
    {W "%g = gid.x\n%z = const u32 3\n%c = lt %g %z\nif %c\n  return\nend\n%s = reduce.add %z\n", 8, 6, VYRE_INVALID_PROGRAM,
     "subgroup operation after a return in divergent control flow (instruction 4 at line 6)"},
    {W "local i u32\n%a = const u32 0\nloop i %a %a\n  barrier\n  %g = gid.x\n  %c = lt %g %a\n  if %c\n    return\n  end\nend\n",
     5, 3, VYRE_INVALID_PROGRAM, "barrier inside the loop at instruction 1 at line 4, which a return in divergent control flow (instruction 6 at line 9) leaves early"},
    {W "local acc u32\n%z = const u32 0\nlet acc %z\n%g = gid.x\nassign acc %g\n%v = get acc\n%c = lt %v %z\nif %c\n  barrier\nend\n",
     10, 3, VYRE_INVALID_PROGRAM, "bounds at instruction 6 at line 9"},
    /* MMA: matrix locals, the four ops, their suffix, operand kinds and types */
    {W "local a mat_c_f32\n", 2, 9, VYRE_INVALID_PROGRAM, "'mat_c_f32' is not a type"},
    {W "buffer x ro mat_a_f16\n", 2, 13, VYRE_INVALID_PROGRAM,
     "mat_a_f16 is a matrix type: only a local has one (`local NAME mat_a_f16`). Fix: use bool u8"},
    {W "%a = const mat_acc_f32 0\n", 2, 12, VYRE_INVALID_PROGRAM, "mat_acc_f32 is a matrix type"},
    {W "%a = const f32 1.0\n%b = cast mat_acc_f32 %a\n", 3, 11, VYRE_INVALID_PROGRAM,
     "mat_acc_f32 is a matrix type: only a local has one (`local NAME mat_acc_f32`). Fix: use bool u32"},
    {W "%a = const i32 0\nloop k mat_acc_i32 %a %a\nend\n", 3, 8, VYRE_INVALID_PROGRAM, "mat_acc_i32 is a matrix type"},
    {W "local acc mat_acc_f32\n%a = get acc\n", 3, 10, VYRE_INVALID_PROGRAM,
     "local acc (line 2) is a matrix local (mat_acc_f32); get, let, assign and loop take value locals only"},
    {W "local acc mat_acc_f32\n%z = const f32 0.0\nlet acc %z\n", 4, 5, VYRE_INVALID_PROGRAM, "is a matrix local"},
    {W "local acc mat_acc_f32\n%z = const f32 0.0\nassign acc %z\n", 4, 8, VYRE_INVALID_PROGRAM, "is a matrix local"},
    {W "local k mat_acc_i32\n%z = const i32 0\nloop k %z %z\nend\n", 4, 6, VYRE_INVALID_PROGRAM, "local k (line 2) is a matrix local"},
    {W "local acc mat_acc_f32\n%z = const f32 0.0\nmma_fill.row acc %z\n", 4, 1, VYRE_INVALID_PROGRAM, "mma_fill takes no .suffix"},
    {W "buffer x ro f16\nlocal a mat_a_f16\n%i = const u32 0\nmma_load.diag a x %i %i\n", 5, 10, VYRE_INVALID_PROGRAM,
     "'diag' is not a tile layout. Fix: write mma_load.row (the default) or mma_load.col"},
    {W "local v f32\n%z = const f32 0.0\nmma_fill v %z\n", 4, 10, VYRE_INVALID_PROGRAM,
     "local v is f32, not a matrix local; mma_fill takes matrix locals"},
    {W "%z = const f32 0.0\nmma_fill acc %z\n", 3, 10, VYRE_INVALID_PROGRAM, "unknown local acc; mma_fill takes matrix locals"},
    {W "local a mat_a_f16\n%z = const f32 0.0\nmma_fill a %z\n", 4, 10, VYRE_INVALID_PROGRAM,
     "local a is mat_a_f16, but mma_fill needs an accumulator (mat_acc_f32 or mat_acc_i32) here"},
    {W "local acc mat_acc_i32\n%z = const f32 0.0\nmma_fill acc %z\n", 4, 14, VYRE_INVALID_PROGRAM,
     "%z is f32, but mma_fill needs i32 (the accumulator's component type)"},
    {W "local acc mat_acc_f32\n%z = const f32 0.0\n%x = mma_fill acc %z\n", 4, 1, VYRE_INVALID_PROGRAM, "mma_fill yields no value"},
    {W "buffer x ro f32\nlocal a mat_a_f16\n%i = const u32 0\nmma_load a x %i %i\n", 5, 12, VYRE_INVALID_PROGRAM,
     "buffer x holds f32, but a (mat_a_f16) has f16 elements"},
    {W "buffer x ro f16\nlocal a mat_a_f16\n%i = const i32 0\n%s = const u32 16\nmma_load a x %i %s\n", 6, 14,
     VYRE_INVALID_PROGRAM, "%i is i32, but mma_load needs u32 as index"},
    {W "buffer x ro f16\nlocal a mat_a_f16\n%i = const i32 0\n%s = const u32 16\nmma_load.col a x %s %i\n", 6, 21,
     VYRE_INVALID_PROGRAM, "%i is i32, but mma_load needs u32 as stride"},
    {W "buffer x wo f16 [256]\nlocal a mat_a_f16\n%i = const u32 0\nmma_load a x %i %i\n", 5, 12, VYRE_INVALID_PROGRAM,
     "buffer x is write-only and cannot be read"},
    {W "local a mat_a_f16\nlocal b mat_b_f16\n%i = const u32 0\nmma_load a b %i %i\n", 5, 12, VYRE_INVALID_PROGRAM,
     "unknown buffer 'b'"},
    {W "buffer x ro f16\n%i = const u32 0\nmma_load %i x %i %i\n", 4, 10, VYRE_INVALID_PROGRAM,
     "unknown local %i; mma_load takes matrix locals"},
    {W "buffer x ro f16\nlocal a mat_a_f16\nmma_load a x\n", 4, 1, VYRE_INVALID_PROGRAM,
     "mma_load takes 4 operands, found 2. Fix: write `mma_load[.row|.col] MATRIX BUFFER %index %stride`"},
    {W "local c mat_acc_f32\nlocal a mat_a_f16\nlocal b mat_b_bf16\nmma c a b c\n", 5, 9, VYRE_INVALID_PROGRAM,
     "b is mat_b_bf16 but a is mat_a_f16; A and B share one component type"},
    {W "local c mat_acc_i32\nlocal a mat_a_bf16\nlocal b mat_b_bf16\nmma c a b c\n", 5, 5, VYRE_INVALID_PROGRAM,
     "c is mat_acc_i32, but bf16 inputs accumulate into mat_acc_f32"},
    {W "local c mat_acc_f32\nlocal a mat_a_f16\nlocal b mat_b_f16\nmma c b a c\n", 5, 7, VYRE_INVALID_PROGRAM,
     "local b is mat_b_f16, but mma needs an A tile (mat_a_*) here"},
    {W "local c mat_acc_f32\nlocal a mat_a_f16\nlocal b mat_b_f16\nmma c a b\n", 5, 1, VYRE_INVALID_PROGRAM,
     "mma takes 4 operands, found 3. Fix: write `mma D A B C`"},
    {W "buffer x ro u32\nlocal a mat_a_bf16\n%i = const u32 0\nmma_load a x %i %i\n", 5, 12, VYRE_INVALID_PROGRAM,
     "buffer x holds u32, but a (mat_a_bf16) has bf16 elements; mma_load moves them unconverted. Fix: use a "
     "u16 i16 or bf16 buffer (its bits are moved as bf16)"},
    {W "buffer x ro f16\nlocal a mat_a_bf16\n%i = const u32 0\nmma_load a x %i %i\n", 5, 12, VYRE_INVALID_PROGRAM,
     "buffer x holds f16, but a (mat_a_bf16) has bf16 elements"},
    {W "buffer o rw f32\nlocal c mat_acc_i32\n%i = const u32 0\nmma_store o %i %i c\n", 5, 11, VYRE_INVALID_PROGRAM,
     "Fix: use a u32 or i32 buffer (its bits are moved as i32)"},
    {W "buffer o ro f32\nlocal c mat_acc_f32\n%i = const u32 0\nmma_store o %i %i c\n", 5, 11, VYRE_INVALID_PROGRAM,
     "buffer o is ro and cannot be written"},
    {W "buffer o rw f16\nlocal a mat_a_f16\n%i = const u32 0\nmma_store o %i %i a\n", 5, 19, VYRE_INVALID_PROGRAM,
     "local a is mat_a_f16, but mma_store needs an accumulator"},
    {W "buffer o rw u16\nlocal c mat_acc_f32\n%i = const u32 0\nmma_store.col o %i %i c\n", 5, 15, VYRE_INVALID_PROGRAM,
     "buffer o holds u16, but c (mat_acc_f32) has f32 elements"},
    {"workgroup 48\nlocal c mat_acc_f32\n%z = const f32 0.0\nmma_fill c %z\n", 4, 1, VYRE_INVALID_PROGRAM,
     "instruction 1 (mma_fill): the workgroup 48 x 1 x 1 has 48 invocations, not a multiple of 32"},
    {W "local c mat_acc_f32\n%g = gid.x\n%z = const u32 3\n%c = lt %g %z\nif %c\n  %f = const f32 1.0\n  mma_fill c %f\nend\n",
     8, 3, VYRE_INVALID_PROGRAM, "MMA operation in control flow that differs between invocations"},
};
#undef W

START_TEST(text_error_row) {
  const text_error_case *c = &error_cases[_i];
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = (void *)1;
  size_t size = 1;
  vyre_status st = vyre_text_assemble(c->src, strlen(c->src), "prog.vy", &bytes, &size, &err);
  ck_assert_msg(st == c->status, "row %d: expected %s, got %s: %s\n--- text ---\n%s", _i,
                vyre_status_name(c->status), vyre_status_name(st), err.message, c->src);
  ck_assert_msg(bytes == NULL && size == 0, "row %d: nothing is returned on failure", _i);
  char where[64];
  snprintf(where, sizeof where, "prog.vy:%u:%u: ", c->line, c->col);
  ck_assert_msg(strncmp(err.message, where, strlen(where)) == 0, "row %d: expected %s..., got: %s", _i,
                where, err.message);
  ck_assert_msg(strstr(err.message, c->needle) != NULL, "row %d: message lacks \"%s\": %s", _i,
                c->needle, err.message);
  ck_assert_msg(strstr(err.message, "Fix:") != NULL, "row %d: message has a Fix: %s", _i, err.message);
}
END_TEST

/* ------------------------------------------------------------------ */
/* robustness                                                          */
/* ------------------------------------------------------------------ */

/* The mutation corpus of check_format: every accepted mutant round-trips
 * through the text, every rejected one is refused by the disassembler. */
START_TEST(text_mutation_corpus) {
  enum { SEEDS = 48, MUTATIONS = 4000 };
  uint8_t *seeds[SEEDS];
  size_t sizes[SEEDS];
  for (uint32_t i = 0; i < SEEDS; i++) {
    corpus_rng r;
    corpus_seed(&r, 1000 + i);
    void *raw;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(corpus_random_program(&r, 60, &raw, &sizes[i], &err), VYRE_OK);
    seeds[i] = raw;
    check_round_trip(seeds[i], sizes[i], "seed program");
  }
  corpus_rng r;
  corpus_seed(&r, 77);
  uint32_t valid = 0;
  for (uint32_t k = 0; k < MUTATIONS; k++) {
    uint32_t s = k % SEEDS;
    uint8_t *buf = malloc(sizes[s]);
    EXPECT(buf != NULL, "out of memory");
    memcpy(buf, seeds[s], sizes[s]);
    size_t size = corpus_mutate(&r, &buf, sizes[s]);
    vyre_program *p = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    int ok = vyre_program_decode(buf, size, &p, &err) == VYRE_OK;
    vyre_program_free(p);
    if (ok) {
      check_round_trip(buf, size, "valid mutant");
      valid++;
    } else {
      char *text = (char *)1;
      vyre_status st = vyre_text_disassemble(buf, size, &text, &err);
      EXPECT(st != VYRE_OK && text == NULL && strncmp(err.message, "disassemble: ", 13) == 0,
             "mutation %u: an invalid image is not disassembled", k);
    }
    free(buf);
  }
  printf("text mutation corpus: %u mutants, %u valid ones round-tripped through text\n", MUTATIONS, valid);
  ck_assert_msg(valid >= MUTATIONS / 50, "the corpus holds valid mutants (%u)", valid);
  for (uint32_t i = 0; i < SEEDS; i++) free(seeds[i]);
}
END_TEST

/* Bigger random programs, with the values renamed: the names do not
 * matter, the bytes do. */
START_TEST(text_random_programs_renamed) {
  uint32_t programs = 0, insts = 0;
  for (uint64_t seed = 0; seed < 300; seed++) {
    corpus_rng r;
    corpus_seed(&r, 5000 + seed);
    void *raw;
    size_t size;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(corpus_random_program(&r, 250, &raw, &size, &err), VYRE_OK);
    check_round_trip(raw, size, "random program");
    char *text = disassemble_ok(raw, size);
    /* %N -> %vN_q, and the lN locals -> loc_N where they are locals. */
    strbuf renamed = {0};
    for (const char *p = text; *p; p++) {
      if (*p == '%' && p[1] >= '0' && p[1] <= '9') {
        vyre__sb_append(&renamed, "%v", 2);
        while (p[1] >= '0' && p[1] <= '9') vyre__sb_append(&renamed, ++p, 1);
        vyre__sb_append(&renamed, "_q", 2);
      } else {
        vyre__sb_append(&renamed, p, 1);
      }
    }
    EXPECT(!renamed.failed, "out of memory");
    uint8_t *again;
    size_t again_size;
    assemble_ok(renamed.data, &again, &again_size);
    EXPECT(again_size == size && memcmp(again, raw, size) == 0, "seed %llu: renamed values give the same bytes",
           (unsigned long long)seed);
    vyre_program *p = NULL;
    ck_assert_int_eq(vyre_program_decode(raw, size, &p, &err), VYRE_OK);
    insts += p->inst_count;
    vyre_program_free(p);
    programs++;
    free(again);
    free(renamed.data);
    free(text);
    free(raw);
  }
  printf("random programs: %u programs, %u instructions, identical through text and renaming\n",
         programs, insts);
}
END_TEST

static const char *const vocabulary[] = {
    "%0", "%1", "%x", "=", "[", "]", "add", "const", "u32", "f32", "i64", "bool", "end", "if",
    "else", "loop", "l0", "1", "-1", "0x1p3", "nan", ";", "#", "@1", "output", "range", "barrier",
    "grid", "\t", "\r", "\x01", "\xff", "buffer", "local", "let", "assign", "store", "workgroup",
    "return", "trap", "gid.x", "atomic_add.seq_cst", "reduce.min", "%", "%%", "[]", "0x", "99999999999999999999",
    "mma", "mma_fill", "mma_load.col", "mma_store.row", "mma_load.x", "mat_acc_f32", "mat_a_i8", "mat_b_bf16",
    "l1", "l2"};

/* Text edits: deletions, insertions of words, line shuffles, truncation. */
static char *mutate_text(corpus_rng *r, const char *text) {
  size_t n = strlen(text);
  strbuf out = {0};
  vyre__sb_append(&out, text, n);
  uint32_t steps = 1 + corpus_below(r, 3);
  for (uint32_t s = 0; s < steps && !out.failed && out.len; s++) {
    size_t at = corpus_below(r, (uint32_t)out.len);
    switch (corpus_below(r, 6)) {
    case 0: /* delete a run of characters */
    {
      size_t len = 1 + corpus_below(r, 8);
      if (at + len > out.len) len = out.len - at;
      memmove(out.data + at, out.data + at + len, out.len - at - len + 1);
      out.len -= len;
      break;
    }
    case 1: /* insert a word */
    case 2: {
      const char *w = vocabulary[corpus_below(r, sizeof vocabulary / sizeof vocabulary[0])];
      strbuf t = {0};
      vyre__sb_append(&t, out.data, at);
      vyre__sb_append(&t, " ", 1);
      vyre__sb_append(&t, w, strlen(w));
      vyre__sb_append(&t, " ", 1);
      vyre__sb_append(&t, out.data + at, out.len - at);
      free(out.data);
      out = t;
      break;
    }
    case 3: /* replace a character */
      out.data[at] = (char)(corpus_below(r, 4) ? 32 + corpus_below(r, 95) : corpus_below(r, 256));
      if (!out.data[at]) out.data[at] = '\n';
      break;
    case 4: { /* duplicate a line */
      const char *ls = out.data + at;
      while (ls > out.data && ls[-1] != '\n') ls--;
      const char *le = strchr(ls, '\n');
      size_t ll = le ? (size_t)(le - ls) + 1 : strlen(ls);
      strbuf t = {0};
      vyre__sb_append(&t, out.data, (size_t)(ls - out.data));
      vyre__sb_append(&t, ls, ll);
      vyre__sb_append(&t, ls, out.len - (size_t)(ls - out.data));
      free(out.data);
      out = t;
      break;
    }
    default: /* truncate */
      out.len = at;
      out.data[at] = '\0';
      break;
    }
  }
  if (out.failed) {
    free(out.data);
    return NULL;
  }
  return out.data;
}

START_TEST(text_fuzzed_sources) {
  enum { PROGRAMS = 40, EDITS = 3000 };
  /* The random programs, and the MMA example (the generator's shapes may
   * have no MMA op). */
  char *texts[PROGRAMS + 1];
  uint8_t *mma;
  size_t mma_size;
  assemble_ok(mma_src, &mma, &mma_size);
  texts[PROGRAMS] = disassemble_ok(mma, mma_size);
  free(mma);
  for (uint32_t i = 0; i < PROGRAMS; i++) {
    corpus_rng r;
    corpus_seed(&r, 300 + i);
    void *raw;
    size_t size;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(corpus_random_program(&r, 40, &raw, &size, &err), VYRE_OK);
    texts[i] = disassemble_ok(raw, size);
    free(raw);
  }
  corpus_rng r;
  corpus_seed(&r, 42);
  uint32_t accepted = 0;
  for (uint32_t k = 0; k < EDITS; k++) {
    char *src = mutate_text(&r, texts[k % (PROGRAMS + 1)]);
    EXPECT(src != NULL, "out of memory");
    size_t len = strlen(src);
    uint32_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += src[i] == '\n';
    /* An exact-size copy without a NUL: reads past `length` are caught. */
    char *exact = malloc(len ? len : 1);
    EXPECT(exact != NULL, "out of memory");
    memcpy(exact, src, len);
    vyre_error err = VYRE_ERROR_INIT;
    void *bytes = NULL;
    size_t size = 0;
    vyre_status st = vyre_text_assemble(exact, len, "fuzz.vy", &bytes, &size, &err);
    if (st == VYRE_OK) {
      accepted++;
      check_round_trip(bytes, size, "fuzzed text");
      free(bytes);
    } else {
      unsigned line = 0, col = 0;
      int n = sscanf(err.message, "fuzz.vy:%u:%u: ", &line, &col);
      EXPECT(n == 2 && line >= 1 && line <= lines && col >= 1,
             "edit %u: the error names a line (of %u) and column: %s", k, lines, err.message);
      EXPECT(strstr(err.message, "Fix:") != NULL, "edit %u: the error has a Fix: %s", k, err.message);
      EXPECT(st == VYRE_INVALID_PROGRAM || st == VYRE_LIMIT, "edit %u: status %s", k, vyre_status_name(st));
    }
    free(exact);
    free(src);
  }
  printf("fuzzed sources: %u edited texts, %u still assembled (and round-tripped), %u refused "
         "with FILE:LINE:COL and a Fix\n", EDITS, accepted, EDITS - accepted);
  for (uint32_t i = 0; i <= PROGRAMS; i++) free(texts[i]);
}
END_TEST

static void *text_worker(void *arg) {
  uint64_t seed = (uint64_t)(uintptr_t)arg;
  long failures = 0;
  for (uint32_t k = 0; k < 40; k++) {
    corpus_rng r;
    corpus_seed(&r, seed * 1000 + k);
    void *raw, *again;
    size_t size, again_size;
    char *text = NULL;
    vyre_error err = VYRE_ERROR_INIT;
    if (corpus_random_program(&r, 80, &raw, &size, &err)) return (void *)1;
    if (vyre_text_disassemble(raw, size, &text, &err) ||
        vyre_text_assemble(text, strlen(text), NULL, &again, &again_size, &err)) {
      failures++;
    } else {
      failures += again_size != size || memcmp(again, raw, size) != 0;
      free(again);
    }
    free(text);
    free(raw);
  }
  return (void *)(uintptr_t)failures;
}

START_TEST(text_threads) {
  pthread_t th[4];
  for (uintptr_t i = 0; i < 4; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, text_worker, (void *)i), 0);
  for (int i = 0; i < 4; i++) {
    void *failures;
    pthread_join(th[i], &failures);
    ck_assert_msg(failures == NULL, "thread %d: round trips agree", i);
  }
}
END_TEST

static Suite *text_suite(void) {
  Suite *s = suite_create("text");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, text_matches_builder);
  tcase_add_test(tc, text_mma_matches_builder);
  tcase_add_test(tc, text_forms_that_mean_the_same);
  tcase_add_test(tc, text_names_and_scopes);
  tcase_add_test(tc, text_api_arguments);
  tcase_add_test(tc, text_binding_max);
  tcase_add_test(tc, text_doc_examples);
  tcase_add_test(tc, text_threads);
  suite_add_tcase(s, tc);
  tc = tcase_create("ops");
  tcase_add_test(tc, text_every_op_and_type);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tc = tcase_create("literals");
  tcase_add_test(tc, literals_round_trip);
  tcase_add_test(tc, literals_spelling);
  tcase_add_test(tc, literals_ignore_locale);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, text_error_row, 0, (int)(sizeof error_cases / sizeof error_cases[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("robustness");
  tcase_add_test(tc, text_mutation_corpus);
  tcase_add_test(tc, text_random_programs_renamed);
  tcase_add_test(tc, text_fuzzed_sources);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(text_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
