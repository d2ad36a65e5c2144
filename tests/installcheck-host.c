/* installcheck-host.c -- a C host built by `make installcheck` with `pkg-config --cflags --libs vyre-host` alone: opens the host, selects the C++ plugin, dispatches, checks the bits (tests/installcheck.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/vyre_host.h>
#include <vyre/vyre_support.h>
#include <vyre/vyre_text.h>

/* p = a * b, q = p / b, f = fma(a, b, c): the ops whose f32 rounding C
 * gets wrong at the underflow boundary (share/doc/vyre/semantics.md,
 * "Underflow"). */
static const char program_text[] =
    "workgroup 64\n"
    "buffer a ro f32\n"
    "buffer b ro f32\n"
    "buffer c ro f32\n"
    "buffer p wo f32 [4]\n"
    "buffer q wo f32 [4]\n"
    "buffer f wo f32 [4]\n"
    "%i = gid.x\n"
    "%a = load a %i\n"
    "%b = load b %i\n"
    "%c = load c %i\n"
    "%p = mul %a %b\n"
    "store p %i %p\n"
    "%q = div %p %b\n"
    "store q %i %q\n"
    "%f = fma %a %b %c\n"
    "store f %i %f\n";

int main(int argc, char **argv) {
  const char *want_id = argc > 1 ? argv[1] : "cxxcpu";
  /* (1 - 2^-24) * 2^-126 is tiny after rounding: +0 and -0, where C's
   * gradual underflow gives +-2^-126; then an ordinary product and a NaN. */
  static const uint32_t a[4] = {0x3f7fffffu, 0xbf7fffffu, 0x40400000u, 0x7fc00000u};
  static const uint32_t b[4] = {0x00800000u, 0x00800000u, 0x3fc00000u, 0x3f800000u};
  static const uint32_t c[4] = {0x80000000u, 0x00000000u, 0x3f800000u, 0x00000000u};
  static const uint32_t want_p[4] = {0x00000000u, 0x80000000u, 0x40900000u, 0x7fc00000u};
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = NULL;
  size_t size = 0;
  vyre_host *host = NULL;
  vyre_backend *be = NULL;
  vyre_outputs *out = NULL;
  int bad = 0;
  if (vyre_text_assemble(program_text, sizeof program_text - 1, "underflow.vyre", &bytes, &size,
                         &err) != VYRE_OK ||
      vyre_host_open(NULL, &host, &err) != VYRE_OK)
    goto fail;
  /* Selection: $VYRE_BACKEND names the plugin (installcheck sets it). */
  uint32_t index = 0;
  if (vyre_host_find(host, want_id) < 0) {
    fprintf(stderr, "host: no backend '%s' registered (VYRE_BACKEND_PATH)\n", want_id);
    goto fail_quiet;
  }
  if (vyre_host_select(host, NULL, &index, &err) != VYRE_OK ||
      vyre_host_create(host, NULL, NULL, &be, NULL, &err) != VYRE_OK)
    goto fail;
  vyre_host_candidate cand;
  memset(&cand, 0, sizeof cand);
  cand.struct_size = sizeof cand;
  if (vyre_host_backend_info(host, index, &cand, &err) != VYRE_OK) goto fail;
  printf("host: selected '%s' (%s)\n", cand.id, cand.path);
  if (strcmp(cand.id, want_id) != 0) {
    fprintf(stderr, "host: selected '%s', expected '%s' ($VYRE_BACKEND)\n", cand.id, want_id);
    goto fail_quiet;
  }
  if (!VYRE_HOST_HAS(be, dispatch) || !VYRE_HOST_HAS(be, outputs_free)) {
    fprintf(stderr, "host: '%s' has no dispatch\n", cand.id);
    goto fail_quiet;
  }
  vyre_program_ref prog = VYRE_PROGRAM_BYTES(bytes, size);
  vyre_input in[3] = {{a, sizeof a}, {b, sizeof b}, {c, sizeof c}};
  if (be->vt->dispatch(be, &prog, in, 3, NULL, &out, NULL, &err) != VYRE_OK) goto fail;
  if (out->count != 3) {
    fprintf(stderr, "host: %u outputs, expected 3\n", out->count);
    goto fail_quiet;
  }
  for (uint32_t i = 0; i < 4; i++) {
    uint32_t p, q, f;
    memcpy(&p, (const char *)out->items[0].data + 4 * i, 4);
    memcpy(&q, (const char *)out->items[1].data + 4 * i, 4);
    memcpy(&f, (const char *)out->items[2].data + 4 * i, 4);
    /* The same bits as libvyre's functions, and the corpus's for mul. */
    uint32_t wq = vyre_f32_div(want_p[i], b[i]), wf = vyre_f32_fma(a[i], b[i], c[i]);
    printf("host: [%u] mul 0x%08x div 0x%08x fma 0x%08x\n", i, p, q, f);
    if (p != want_p[i] || p != vyre_f32_mul(a[i], b[i]) || q != wq || f != wf) {
      fprintf(stderr, "host: element %u: expected mul 0x%08x div 0x%08x fma 0x%08x\n", i,
              want_p[i], wq, wf);
      bad = 1;
    }
  }
  be->vt->outputs_free(be, out);
  be->vt->destroy(be);
  vyre_host_close(host);
  free(bytes);
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
fail:
  fprintf(stderr, "host: %s\n", err.message);
fail_quiet:
  if (be) be->vt->destroy(be);
  vyre_host_close(host);
  free(bytes);
  return EXIT_FAILURE;
}
