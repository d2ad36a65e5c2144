/* check_fill.c -- what a fill's memset writes (plugin/runtime/fill.c) is what the program writes: fill programs of every element type and guard form, run on the reference backend, against the memset fill.c describes; and the near-fills it must refuse. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/codegen/codegen.h"
#include "plugin/runtime/fill.h"
#include "refhost.h"
#include "vyre/vyre_host.h"
#include "vyre/vyre_support.h"

/* Guard forms: none, `if (gid >= 100) return`, `if (gid >= buflen(lim))
 * return`, `if (gid < buflen(lim)) { store } end`. */
enum { G_NONE, G_RET_CONST, G_RET_BUFLEN, G_BLOCK_BUFLEN };

typedef struct fill_case {
  vyre_type elem, ctype;
  uint64_t bits;
  int guard;
} fill_case;

static vyre_program *build(const fill_case *c, void **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, c->elem, 0, 0);
  uint32_t lim = vyre_b_buffer(b, "lim", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  uint32_t g = vyre_b_gid(b, 0);
  if (c->guard == G_RET_CONST || c->guard == G_RET_BUFLEN) {
    uint32_t x = c->guard == G_RET_CONST ? vyre_b_u32(b, 100) : vyre_b_buflen(b, lim);
    vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GE, g, x));
    vyre_b_return(b);
    vyre_b_end(b);
  }
  if (c->guard == G_BLOCK_BUFLEN) vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, vyre_b_buflen(b, lim)));
  vyre_b_store(b, buf, g, vyre_b_const(b, c->ctype, c->bits));
  if (c->guard == G_BLOCK_BUFLEN) vyre_b_end(b);
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_builder_finish(b, bytes, size, &err) == VYRE_OK, "%s", err.message);
  vyre_builder_free(b);
  vyre_program *p = NULL;
  ck_assert_msg(vyre_program_decode(*bytes, *size, &p, &err) == VYRE_OK, "%s", err.message);
  return p;
}

/* Run c on the reference over `elems` elements of buf and 300 of lim,
 * grid override gx (0: none), and compare with the memset. */
static void check_case(const fill_case *c, uint32_t elems, uint32_t gx) {
  void *bytes;
  size_t size;
  vyre_program *p = build(c, &bytes, &size);
  cg_options cg;
  memset(&cg, 0, sizeof cg);
  cg.sm_major = 9;
  memcpy(cg.workgroup, p->header.workgroup_size, sizeof cg.workgroup);
  vc_fill f;
  vc_fill_detect(p, !gx && cg_elementwise_query(p, &cg), &f);
  ck_assert_msg(f.is_fill, "case elem %d guard %d is a fill", c->elem, c->guard);
  uint32_t es = vyre_type_size(c->elem);
  uint8_t *in = malloc((size_t)elems * es), *want = malloc((size_t)elems * es);
  ck_assert_ptr_nonnull(in);
  ck_assert_ptr_nonnull(want);
  for (size_t i = 0; i < (size_t)elems * es; i++) in[i] = (uint8_t)(i * 131u + 7u);
  uint32_t lim[300] = {0};
  vyre_input inputs[2] = {{in, (uint64_t)elems * es}, {lim, sizeof lim}};
  vyre_dispatch_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.grid[0] = gx;
  o.grid[1] = o.grid[2] = gx ? 1 : 0;
  /* The memset fill.c describes, on the launch's count words and grid. */
  uint64_t in_sizes[2] = {inputs[0].size, inputs[1].size};
  vyre_geometry geo;
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_geometry_derive(p, in_sizes, NULL, &o, &geo, &err), VYRE_OK);
  uint32_t counts[1 + VYRE_MAX_BUFFERS + 64];
  vyre_params_fill(p, &geo, counts);
  uint64_t words = vc_fill_words(&f, counts, geo.grid, geo.workgroup);
  memcpy(want, in, (size_t)elems * es);
  for (uint64_t w = 0; w < words; w++)
    for (uint32_t k = 0; k < f.unit; k++) want[w * f.unit + k] = (uint8_t)(f.pattern >> (8 * k));
  vyre_program_ref r = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_outputs *out = NULL;
  ck_assert_msg(ref->vt->dispatch(ref, &r, inputs, 2, &o, &out, NULL, &err) == VYRE_OK, "%s",
                err.message);
  ck_assert_uint_eq(out->items[0].size, (uint64_t)elems * es);
  ck_assert_msg(memcmp(out->items[0].data, want, (size_t)elems * es) == 0,
                "elem %d guard %d grid %u: the memset (%llu words of %u bytes) writes what the "
                "program writes",
                c->elem, c->guard, gx, (unsigned long long)words, f.unit);
  ref->vt->outputs_free(ref, out);
  free(in);
  free(want);
  free(bytes);
  vyre_program_free(p);
}

START_TEST(test_fill_matches_reference) {
  static const fill_case cases[] = {
      {VYRE_T_U32, VYRE_T_U32, 0xdeadbeefu, G_NONE},
      {VYRE_T_I32, VYRE_T_I32, 0xfffffff0u, G_RET_CONST},
      {VYRE_T_U8, VYRE_T_U32, 0x1abu, G_RET_BUFLEN},
      {VYRE_T_I8, VYRE_T_I32, 0xffffff80u, G_NONE},
      {VYRE_T_U16, VYRE_T_U32, 0x12345u, G_BLOCK_BUFLEN},
      {VYRE_T_I16, VYRE_T_I32, 0x8001u, G_RET_CONST},
      {VYRE_T_F32, VYRE_T_F32, 0xbfc00000u, G_NONE},
      {VYRE_T_BOOL, VYRE_T_BOOL, 1u, G_BLOCK_BUFLEN},
      {VYRE_T_U64, VYRE_T_U64, 0x8000000580000005ull, G_NONE},
      {VYRE_T_I64, VYRE_T_I64, 0xffffffffffffffffull, G_RET_BUFLEN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_case(&cases[i], 1000, 0);
    check_case(&cases[i], 1000, 3); /* 192 invocations: the general path */
    check_case(&cases[i], 37, 0);
  }
}
END_TEST

/* Near-fills fill.c must refuse. */
START_TEST(test_fill_refused) {
  static const fill_case not_exact[] = {
      {VYRE_T_F16, VYRE_T_F32, 0x3dcccccdu, G_NONE},  /* f16 rounds */
      {VYRE_T_BF16, VYRE_T_F32, 0x3dcccccdu, G_NONE}, /* bf16 rounds */
      {VYRE_T_U64, VYRE_T_U64, 0x100000002ull, G_NONE}, /* unequal halves */
  };
  for (size_t i = 0; i < sizeof not_exact / sizeof not_exact[0]; i++) {
    void *bytes;
    size_t size;
    vyre_program *p = build(&not_exact[i], &bytes, &size);
    vc_fill f;
    vc_fill_detect(p, 1, &f);
    ck_assert_msg(!f.is_fill, "case %zu is no fill", i);
    free(bytes);
    vyre_program_free(p);
  }
  /* Stores of gid, at gid + 1, of a loaded value, two stores, a guard on
   * lid: each keeps its kernel. */
  for (int kind = 0; kind < 5; kind++) {
    vyre_builder *b = vyre_builder_new(64, 1, 1);
    uint32_t buf = vyre_b_buffer(b, "buf", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
    uint32_t g = vyre_b_gid(b, 0), c = vyre_b_u32(b, 7);
    if (kind == 0) vyre_b_store(b, buf, g, g);
    if (kind == 1) vyre_b_store(b, buf, vyre_b_bin(b, VYRE_OP_ADD, g, vyre_b_u32(b, 1)), c);
    if (kind == 2) vyre_b_store(b, buf, g, vyre_b_load(b, buf, g));
    if (kind == 3) {
      vyre_b_store(b, buf, g, c);
      vyre_b_store(b, buf, g, c);
    }
    if (kind == 4) {
      uint32_t lid = vyre_b_builtin(b, VYRE_OP_LOCAL_ID, 0);
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_GE, lid, vyre_b_u32(b, 3)));
      vyre_b_return(b);
      vyre_b_end(b);
      vyre_b_store(b, buf, g, c);
    }
    void *bytes;
    size_t size;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_msg(vyre_builder_finish(b, &bytes, &size, &err) == VYRE_OK, "%s", err.message);
    vyre_builder_free(b);
    vyre_program *p = NULL;
    ck_assert_int_eq(vyre_program_decode(bytes, size, &p, &err), VYRE_OK);
    vc_fill f;
    vc_fill_detect(p, 1, &f);
    ck_assert_msg(!f.is_fill, "near-fill %d is no fill", kind);
    free(bytes);
    vyre_program_free(p);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("fill");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, refhost_setup, refhost_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fill_matches_reference);
  tcase_add_test(tc, test_fill_refused);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
