/* host.c -- a small vyre host: list the backends, take the best, build one program with the builder and assemble another from text, run both, check them on the CPU. */
/*
 * Built only from an installed vyre (README.md):
 *   cc -std=c11 host.c $(pkg-config --cflags --libs vyre-host) -o host
 * Exit status: 0 when every result matches the CPU, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/vyre_host.h>
#include <vyre/vyre_support.h>
#include <vyre/vyre_text.h>

/* Not a multiple of the workgroup size, so the programs' bounds guards
 * matter. */
#define N 1000u

/* y[i] = a * x[i] + y[i] (examples/saxpy.vyre of the source tree), with
 * the builder: every call appends an instruction and returns its value. */
static vyre_status build_saxpy(void **bytes, size_t *size, vyre_error *err) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  if (!b) return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "vyre_builder_new: out of memory");
  uint32_t a = vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_F32, 1, 0);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t i = vyre_b_gid(b, 0);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, i, vyre_b_buflen(b, y)));
  uint32_t av = vyre_b_load(b, a, vyre_b_u32(b, 0));
  uint32_t ax = vyre_b_bin(b, VYRE_OP_MUL, av, vyre_b_load(b, x, i));
  vyre_b_store(b, y, i, vyre_b_bin(b, VYRE_OP_ADD, ax, vyre_b_load(b, y, i)));
  vyre_b_end(b);
  /* finish encodes; the validator runs when a backend decodes it. */
  vyre_status st = vyre_builder_finish(b, bytes, size, err);
  vyre_builder_free(b);
  return st;
}

/* out[i] = x[i] * 2654435761 ^ (x[i] >> 7), u32 arithmetic (it wraps), in
 * the text form (share/doc/vyre/program-text.md). */
static vyre_status assemble_hash(void **bytes, size_t *size, vyre_error *err) {
  char text[1024];
  int n = snprintf(text, sizeof text,
                   "; a multiplicative hash of every input word\n"
                   "workgroup 64\n"
                   "buffer x ro u32\n"
                   "buffer out wo u32 [%u]\n"
                   "%%i = gid.x\n"
                   "%%n = buflen x\n"
                   "%%in = lt %%i %%n\n"
                   "if %%in\n"
                   "  %%v = load x %%i\n"
                   "  %%k = const u32 2654435761\n"
                   "  %%h = mul %%v %%k\n"
                   "  %%s = const u32 7\n"
                   "  %%t = shr %%v %%s\n"
                   "  %%r = xor %%h %%t\n"
                   "  store out %%i %%r\n"
                   "end\n",
                   N);
  if (n < 0 || (size_t)n >= sizeof text)
    return vyre_error_set(err, VYRE_INTERNAL, 0, "the program text does not fit its buffer");
  return vyre_text_assemble(text, (size_t)n, "hash.vyre", bytes, size, err);
}

/* One dispatch on host buffers; *out is freed with vt->outputs_free. */
static vyre_status run(vyre_backend *be, const void *bytes, size_t size, const vyre_input *inputs,
                       uint32_t input_count, vyre_outputs **out, vyre_error *err) {
  /* An older plugin's table may end before an entry, or leave it NULL. */
  if (!VYRE_HOST_HAS(be, dispatch) || !VYRE_HOST_HAS(be, outputs_free))
    return vyre_error_set(err, VYRE_UNSUPPORTED, 0,
                          "the backend has no dispatch or outputs_free entry. Fix: use another "
                          "backend (VYRE_BACKEND=reference)");
  vyre_program_ref program = VYRE_PROGRAM_BYTES(bytes, size);
  return be->vt->dispatch(be, &program, inputs, input_count, NULL, out, NULL, err);
}

/* Run both programs on `be` and compare with the CPU.  Returns VYRE_OK
 * with *mismatches set, or the first dispatch failure. */
static vyre_status run_and_check(vyre_backend *be, const void *saxpy, size_t saxpy_size,
                                 const void *hash, size_t hash_size, uint32_t *mismatches,
                                 vyre_error *err) {
  static float a[1], x[N], y[N];
  static uint32_t words[N];
  a[0] = 2.0f;
  for (uint32_t i = 0; i < N; i++) {
    /* Small multiples of 1/4: every product and sum is exact in f32, so
     * the CPU's result is bit-identical however it rounds or contracts. */
    x[i] = (float)i;
    y[i] = 0.25f * (float)i;
    words[i] = i * 7919u;
  }
  *mismatches = 0;

  vyre_input saxpy_in[3] = {{a, sizeof a}, {x, sizeof x}, {y, sizeof y}};
  vyre_outputs *out = NULL;
  vyre_status st = run(be, saxpy, saxpy_size, saxpy_in, 3, &out, err);
  if (st != VYRE_OK) return st;
  uint32_t bad = 0;
  if (out->count != 1 || out->items[0].size != sizeof y) {
    bad = N;
  } else {
    const float *got = out->items[0].data;
    for (uint32_t i = 0; i < N; i++)
      if (got[i] != a[0] * x[i] + y[i]) bad++;
    printf("saxpy (builder, %u elements): y[0..3] = %g %g %g %g; %u of %u match the CPU\n", N,
           (double)got[0], (double)got[1], (double)got[2], (double)got[3], N - bad, N);
  }
  be->vt->outputs_free(be, out);
  *mismatches += bad;

  vyre_input hash_in[1] = {{words, sizeof words}};
  out = NULL;
  st = run(be, hash, hash_size, hash_in, 1, &out, err);
  if (st != VYRE_OK) return st;
  bad = 0;
  if (out->count != 1 || out->items[0].size != sizeof words) {
    bad = N;
  } else {
    const uint32_t *got = out->items[0].data;
    for (uint32_t i = 0; i < N; i++)
      if (got[i] != ((words[i] * 2654435761u) ^ (words[i] >> 7))) bad++;
    printf("hash (text, %u elements): out[0..3] = %u %u %u %u; %u of %u match the CPU\n", N,
           got[0], got[1], got[2], got[3], N - bad, N);
  }
  be->vt->outputs_free(be, out);
  *mismatches += bad;
  return VYRE_OK;
}

/* Every candidate in search order, with what became of it. */
static void list_backends(vyre_host *host) {
  uint32_t count = vyre_host_backend_count(host);
  printf("backends (%u found, in search order):\n", count);
  for (uint32_t k = 0; k < count; k++) {
    vyre_host_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    if (vyre_host_backend_info(host, k, &c, NULL) != VYRE_OK) continue;
    printf("  %-12s %-12s precedence %-4d %s\n", c.id[0] ? c.id : "?",
           vyre_host_status_name(c.status), c.precedence, c.reason[0] ? c.reason : c.path);
  }
}

/* The id of candidate `index`, copied into id[32]. */
static void backend_id(vyre_host *host, uint32_t index, char id[32]) {
  vyre_host_candidate c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  snprintf(id, 32, "?");
  if (vyre_host_backend_info(host, index, &c, NULL) == VYRE_OK) snprintf(id, 32, "%s", c.id);
}

/* Run both programs on `be`, then destroy it (the caller owns what
 * vyre_host_create returns). */
static vyre_status use_backend(vyre_backend *be, const char *id, const void *saxpy,
                               size_t saxpy_size, const void *hash, size_t hash_size,
                               uint32_t *mismatches, vyre_error *err) {
  printf("using '%s'\n", id);
  vyre_status st = run_and_check(be, saxpy, saxpy_size, hash, hash_size, mismatches, err);
  be->vt->destroy(be);
  return st;
}

int main(void) {
  uint32_t host_major = 0, host_minor = 0, lib_major = 0, lib_minor = 0;
  const char *host_release = vyre_host_version(&host_major, &host_minor);
  const char *lib_release = vyre_version(&lib_major, &lib_minor);
  printf("vyre host example: libvyre-host %s (ABI %u.%u), libvyre %s (ABI %u.%u)\n", host_release,
         host_major, host_minor, lib_release, lib_major, lib_minor);

  vyre_error err = VYRE_ERROR_INIT;
  void *saxpy = NULL, *hash = NULL;
  size_t saxpy_size = 0, hash_size = 0;
  vyre_host *host = NULL;
  if (build_saxpy(&saxpy, &saxpy_size, &err) != VYRE_OK ||
      assemble_hash(&hash, &hash_size, &err) != VYRE_OK ||
      vyre_host_open(NULL, &host, &err) != VYRE_OK) {
    fprintf(stderr, "host: %s\n", err.message);
    free(saxpy);
    free(hash);
    return EXIT_FAILURE;
  }

  /* id NULL: $VYRE_BACKEND when set, else the lowest precedence whose
   * factory works on this machine (cuda 5 before reference 900).  The
   * list comes after, so that the factories tried say ready or why not. */
  vyre_backend *be = NULL;
  uint32_t index = 0, mismatches = 0;
  char id[32] = "?";
  vyre_status st = vyre_host_create(host, NULL, NULL, &be, &index, &err);
  list_backends(host);
  if (st == VYRE_OK) {
    backend_id(host, index, id);
    st = use_backend(be, id, saxpy, saxpy_size, hash, hash_size, &mismatches, &err);
    if (st != VYRE_OK) fprintf(stderr, "host: '%s' failed: %s\n", id, err.message);
  } else {
    fprintf(stderr, "host: no best backend: %s\n", err.message);
  }

  /* The reference backend runs every valid program on any CPU: the
   * fallback when the chosen backend cannot be created or fails. */
  if (st != VYRE_OK && strcmp(id, "reference") != 0) {
    printf("falling back to 'reference'\n");
    err = (vyre_error)VYRE_ERROR_INIT;
    mismatches = 0;
    st = vyre_host_create(host, "reference", NULL, &be, NULL, &err);
    if (st == VYRE_OK)
      st = use_backend(be, "reference", saxpy, saxpy_size, hash, hash_size, &mismatches, &err);
    if (st != VYRE_OK) fprintf(stderr, "host: 'reference' failed: %s\n", err.message);
  }

  vyre_host_close(host);
  free(saxpy);
  free(hash);
  return st == VYRE_OK && mismatches == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
