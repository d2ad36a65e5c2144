/* check_format.c -- the program-format library: SHA-256, handle tables, f16/bf16, codec round trips, derived tables, geometry. */
#include "check_format.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_corpus.h"

/* ------------------------------------------------------------------ */
/* Helpers shared with the other check_format sources                  */
/* ------------------------------------------------------------------ */
void fmt_finish(vyre_builder *b, uint8_t **bytes, size_t *size) {
  vyre_error err = VYRE_ERROR_INIT;
  void *out = NULL;
  vyre_status st = vyre_builder_finish(b, &out, size, &err);
  vyre_builder_free(b);
  EXPECT(st == VYRE_OK, "builder finished: %s", err.message);
  *bytes = out;
}

vyre_program *fmt_decode_ok(const void *bytes, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(bytes, size, &p, &err);
  EXPECT(st == VYRE_OK, "a valid program decodes, got %s: %s", vyre_status_name(st), err.message);
  EXPECT(p != NULL, "a decoded program comes back");
  return p;
}

void fmt_reencode(const vyre_program *p, uint8_t **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(p->header.workgroup_size[0], p->header.workgroup_size[1],
                                     p->header.workgroup_size[2]);
  EXPECT(b != NULL, "a builder is created");
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_decl *d = &p->buffers[i].decl;
    uint32_t idx = vyre_b_buffer(b, p->buffers[i].name, d->binding, (vyre_access)d->access,
                                 (vyre_type)d->elem_type, d->count, d->flags & VYRE_BUF_OUTPUT);
    if (d->flags & VYRE_BUF_OUT_RANGE) vyre_b_buffer_range(b, idx, d->out_range_offset, d->out_range_size);
  }
  for (uint32_t s = 0; s < p->local_count; s++) vyre_b_local(b, (vyre_type)p->local_types[s]);
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    vyre_b_inst(b, (vyre_op)in->op, in->type, in->mod, in->a, in->b, in->c, in->d);
  }
  fmt_finish(b, bytes, size);
  /* The builder reads binding UINT32_MAX as "the next binding": a buffer
   * really bound there is written into the image afterwards. */
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    if (p->buffers[i].decl.binding != UINT32_MAX) continue;
    uint32_t max = UINT32_MAX;
    memcpy(*bytes + VYRE_PROGRAM_HEADER_SIZE + (size_t)i * sizeof(vyre_buffer_decl) +
               offsetof(vyre_buffer_decl, binding), &max, sizeof max);
  }
}

static void hex_of(const uint8_t digest[32], char out[65]) { vyre_hex(digest, 32, out); }

/* ------------------------------------------------------------------ */
/* sha256: FIPS 180-4 / NIST CSRC example vectors                      */
/* ------------------------------------------------------------------ */
static void check_sha(const void *data, size_t size, const char *want) {
  uint8_t digest[32];
  char hex[65];
  vyre_sha256(data, size, digest);
  hex_of(digest, hex);
  EXPECT(strcmp(hex, want) == 0, "SHA-256 of %zu bytes is %s, FIPS says %s", size, hex, want);
  /* Fed in uneven pieces, the streaming API agrees. */
  static const size_t pieces[] = {1, 3, 63, 64, 65, 127, 7};
  vyre_sha256_ctx ctx;
  vyre_sha256_init(&ctx);
  const uint8_t *p = data;
  size_t left = size, k = 0;
  while (left) {
    size_t take = pieces[k++ % (sizeof pieces / sizeof pieces[0])];
    if (take > left) take = left;
    vyre_sha256_update(&ctx, p, take);
    p += take;
    left -= take;
  }
  vyre_sha256_update(&ctx, "", 0);
  vyre_sha256_final(&ctx, digest);
  hex_of(digest, hex);
  EXPECT(strcmp(hex, want) == 0, "streamed SHA-256 of %zu bytes is %s, FIPS says %s", size,
                hex, want);
}

START_TEST(sha256_fips_vectors) {
  check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_sha(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  ck_assert_int_eq(strlen(m448) * 8, 448);
  check_sha(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                     "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  check_sha(m896, strlen(m896), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}
END_TEST

START_TEST(sha256_million_a) {
  size_t n = 1000000;
  char *a = malloc(n);
  ck_assert_ptr_nonnull(a);
  memset(a, 'a', n);
  check_sha(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}
END_TEST

START_TEST(sha256_padding_boundaries) {
  /* Lengths around the 55/56/64-byte padding edges, against a streamed
   * byte-by-byte digest, and all distinct. */
  uint8_t msg[130], seen[130][32];
  for (size_t i = 0; i < sizeof msg; i++) msg[i] = (uint8_t)(i * 7 + 1);
  for (size_t len = 0; len < sizeof msg; len++) {
    vyre_sha256(msg, len, seen[len]);
    vyre_sha256_ctx ctx;
    uint8_t d[32];
    vyre_sha256_init(&ctx);
    for (size_t i = 0; i < len; i++) vyre_sha256_update(&ctx, msg + i, 1);
    vyre_sha256_final(&ctx, d);
    EXPECT(memcmp(d, seen[len], 32) == 0, "one-shot and byte-wise digests of %zu bytes agree", len);
    for (size_t j = 0; j < len; j++)
      EXPECT(memcmp(seen[j], seen[len], 32) != 0, "digests of %zu and %zu bytes differ", j, len);
  }
  char hex[65];
  uint8_t digest[32] = {0x01, 0xab, 0xff};
  vyre_hex(digest, 3, hex);
  ck_assert_str_eq(hex, "01abff");
}
END_TEST

/* ------------------------------------------------------------------ */
/* handles                                                             */
/* ------------------------------------------------------------------ */
START_TEST(handles_core) {
  vyre_handle_table t;
  vyre_handles_init(&t, VYRE_HANDLE_RESIDENT);
  int objs[100];
  uint64_t h[100];
  for (int i = 0; i < 100; i++) {
    ck_assert_int_eq(vyre_handles_insert(&t, &objs[i], &h[i]), VYRE_OK);
    EXPECT(h[i] != 0, "0 is never a valid handle");
    EXPECT((uint16_t)(h[i] >> 48) == t.salt, "the top 16 bits are the table's salt");
    EXPECT((h[i] & 0xffffu) == (uint64_t)i + 1u, "the low 16 bits are slot + 1");
    for (int j = 0; j < i; j++) EXPECT(h[j] != h[i], "live handles are distinct");
  }
  ck_assert_uint_eq(vyre_handles_live(&t), 100);
  for (int i = 0; i < 100; i++) ck_assert_ptr_eq(vyre_handles_get(&t, h[i]), &objs[i]);
  ck_assert_ptr_null(vyre_handles_get(&t, 0));
  ck_assert_ptr_null(vyre_handles_get(&t, h[0] | 0xffffu)); /* slot past the table */
  ck_assert_ptr_null(vyre_handles_get(&t, h[0] & ~0xffffull)); /* slot 0 */
  ck_assert_ptr_null(vyre_handles_get(&t, h[0] + (1ull << 16))); /* the next generation */
  ck_assert_ptr_eq(vyre_handles_remove(&t, h[5]), &objs[5]);
  EXPECT(vyre_handles_remove(&t, h[5]) == NULL, "a double remove is refused");
  EXPECT(vyre_handles_get(&t, h[5]) == NULL, "a removed handle is stale");
  uint64_t again;
  ck_assert_int_eq(vyre_handles_insert(&t, &objs[5], &again), VYRE_OK);
  EXPECT(again != h[5], "a reused slot gets a new generation");
  EXPECT((again & 0xffffu) == (h[5] & 0xffffu), "the freed slot is reused first");
  EXPECT(vyre_handles_get(&t, h[5]) == NULL, "the stale handle stays stale after reuse");
  ck_assert_ptr_eq(vyre_handles_get(&t, again), &objs[5]);
  uint64_t untouched = again;
  ck_assert_int_eq(vyre_handles_insert(&t, NULL, &again), VYRE_INVALID_ARGUMENT);
  EXPECT(again == untouched, "a failed insert leaves *handle alone");
  ck_assert_int_eq(vyre_handles_insert(&t, &objs[5], NULL), VYRE_INVALID_ARGUMENT);
  ck_assert_uint_eq(vyre_handles_live(&t), 100);
  int drained = 0;
  while (vyre_handles_pop_any(&t)) drained++;
  ck_assert_int_eq(drained, 100);
  ck_assert_uint_eq(vyre_handles_live(&t), 0);
  ck_assert_ptr_null(vyre_handles_pop_any(&t));
  for (int i = 0; i < 100; i++) ck_assert_ptr_null(vyre_handles_get(&t, h[i]));
  vyre_handles_destroy(&t);
  vyre_handles_destroy(NULL);
}
END_TEST

START_TEST(handles_foreign_tables) {
  vyre_handle_table a, b, c;
  vyre_handles_init(&a, VYRE_HANDLE_PENDING);
  vyre_handles_init(&b, VYRE_HANDLE_PENDING);
  vyre_handles_init(&c, VYRE_HANDLE_PIPELINE);
  int x, y, z;
  uint64_t ha, hb, hc;
  ck_assert_int_eq(vyre_handles_insert(&a, &x, &ha), 0);
  ck_assert_int_eq(vyre_handles_insert(&b, &y, &hb), 0);
  ck_assert_int_eq(vyre_handles_insert(&c, &z, &hc), 0);
  EXPECT(ha != hb, "two tables of one kind hand out different handles for slot 0");
  EXPECT(vyre_handles_get(&b, ha) == NULL, "a handle of another table of the same kind is refused");
  EXPECT(vyre_handles_remove(&a, hb) == NULL, "a foreign handle cannot remove");
  EXPECT(vyre_handles_get(&c, ha) == NULL, "a handle of another kind is refused");
  /* The same slot and generation under this table's tag and salt work. */
  uint64_t forged = (hb & ~(0xffffull << 48)) | (ha & (0xffffull << 48));
  ck_assert_ptr_eq(vyre_handles_get(&a, forged), &x);
  ck_assert_ptr_eq(vyre_handles_get(&a, ha), &x);
  ck_assert_ptr_eq(vyre_handles_get(&b, hb), &y);
  vyre_handles_remove(&a, ha);
  vyre_handles_remove(&b, hb);
  vyre_handles_remove(&c, hc);
  vyre_handles_destroy(&a);
  vyre_handles_destroy(&b);
  vyre_handles_destroy(&c);
}
END_TEST

/* The generation of the handle h (vyre_support.h: salt:16 | generation:32 | slot+1:16). */
static uint32_t handle_gen(uint64_t h) { return (uint32_t)(h >> 16); }

START_TEST(handles_generations) {
  vyre_handle_table t;
  vyre_handles_init(&t, VYRE_HANDLE_RESIDENT);
  int obj;
  uint64_t first, prev = 0, h = 0;
  ck_assert_int_eq(vyre_handles_insert(&t, &obj, &first), VYRE_OK);
  ck_assert_ptr_eq(vyre_handles_remove(&t, first), &obj);
  /* 70000 reuses of one slot (past where a 16-bit generation wrapped):
   * the generation steps by one and never repeats, and every earlier
   * handle of the slot stays stale. */
  for (uint32_t i = 0; i < 70000; i++) {
    EXPECT(vyre_handles_insert(&t, &obj, &h) == VYRE_OK, "insert succeeds (cycle %u)", i);
    EXPECT((h & 0xffffu) == (first & 0xffffu), "the one free slot is reused (cycle %u)", i);
    EXPECT(handle_gen(h) == handle_gen(first) + 1u + i, "generation steps by one (cycle %u)", i);
    if (prev) EXPECT(vyre_handles_get(&t, prev) == NULL, "the previous handle is stale (cycle %u)", i);
    EXPECT(vyre_handles_get(&t, first) == NULL, "the first handle is stale (cycle %u)", i);
    EXPECT(vyre_handles_get(&t, h) == &obj, "the live handle works (cycle %u)", i);
    EXPECT(vyre_handles_remove(&t, h) == &obj, "remove returns the object (cycle %u)", i);
    EXPECT(vyre_handles_remove(&t, h) == NULL, "a double remove is refused (cycle %u)", i);
    prev = h;
  }
  vyre_handles_destroy(&t);
}
END_TEST

/* A slot whose generation would wrap is retired: never handed out again,
 * so none of its handles ever becomes valid again.  2^32 reuses take too
 * long; the test moves the free slot's generation (a public field) to
 * just before the end, as if it had been reused that often. */
START_TEST(handles_retire_at_wrap) {
  vyre_handle_table t;
  vyre_handles_init(&t, VYRE_HANDLE_PENDING);
  int obj, other;
  uint64_t first, keep, h;
  ck_assert_int_eq(vyre_handles_insert(&t, &obj, &first), VYRE_OK);
  ck_assert_int_eq(vyre_handles_insert(&t, &other, &keep), VYRE_OK);
  uint32_t slot = (uint32_t)(first & 0xffffu) - 1u;
  ck_assert_ptr_eq(vyre_handles_remove(&t, first), &obj);
  t.slots[slot].generation = UINT32_MAX - 2u;
  uint64_t seen[3];
  for (uint32_t k = 0; k < 3; k++) {
    ck_assert_int_eq(vyre_handles_insert(&t, &obj, &h), VYRE_OK);
    EXPECT((h & 0xffffu) == slot + 1u, "the slot is reused while its generation lasts");
    EXPECT(handle_gen(h) == UINT32_MAX - 2u + k, "generation 0x%08x", handle_gen(h));
    seen[k] = h;
    ck_assert_ptr_eq(vyre_handles_remove(&t, h), &obj);
  }
  EXPECT(t.retired == 1, "the slot whose last generation was used is retired (%u)", t.retired);
  EXPECT(t.slots[slot].generation == UINT32_MAX, "its generation does not wrap to 0");
  /* Every later insert takes another slot; no handle of the slot revives. */
  uint64_t later[200];
  for (uint32_t k = 0; k < 200; k++) {
    ck_assert_int_eq(vyre_handles_insert(&t, &obj, &later[k]), VYRE_OK);
    EXPECT((later[k] & 0xffffu) != slot + 1u, "a retired slot is never handed out again (%u)", k);
  }
  EXPECT(vyre_handles_get(&t, first) == NULL, "the first handle of the slot stays stale");
  for (uint32_t k = 0; k < 3; k++)
    EXPECT(vyre_handles_get(&t, seen[k]) == NULL, "handle %u of the slot stays stale", k);
  /* Forged: the retired slot with each of the generations around the wrap. */
  uint64_t base = first & ~(0xffffffffull << 16);
  for (uint64_t g = 0; g < 3; g++)
    EXPECT(vyre_handles_get(&t, base | g << 16) == NULL, "generation %llu of the slot is not live",
           (unsigned long long)g);
  EXPECT(vyre_handles_get(&t, keep) == &other, "the other slot is untouched");
  for (uint32_t k = 0; k < 200; k++) ck_assert_ptr_eq(vyre_handles_remove(&t, later[k]), &obj);
  ck_assert_ptr_eq(vyre_handles_remove(&t, keep), &other);
  ck_assert_uint_eq(vyre_handles_live(&t), 0);
  vyre_handles_destroy(&t);
}
END_TEST

/* A table holds VYRE_HANDLES_MAX live handles; the next insert fails
 * cleanly with VYRE_LIMIT (one less once a slot is retired), and works
 * again after a remove. */
START_TEST(handles_capacity) {
  vyre_handle_table t;
  vyre_handles_init(&t, VYRE_HANDLE_RESIDENT);
  static uint64_t h[VYRE_HANDLES_MAX];
  int obj;
  for (uint32_t i = 0; i < VYRE_HANDLES_MAX; i++)
    EXPECT(vyre_handles_insert(&t, &obj, &h[i]) == VYRE_OK, "insert %u of %u", i, VYRE_HANDLES_MAX);
  ck_assert_uint_eq(vyre_handles_live(&t), VYRE_HANDLES_MAX);
  ck_assert_uint_eq(t.capacity, VYRE_HANDLES_MAX);
  uint64_t extra = 12345;
  EXPECT(vyre_handles_insert(&t, &obj, &extra) == VYRE_LIMIT, "insert 65,536 is VYRE_LIMIT");
  EXPECT(extra == 12345, "a failed insert leaves *handle alone");
  ck_assert_uint_eq(vyre_handles_live(&t), VYRE_HANDLES_MAX);
  for (uint32_t i = 0; i < VYRE_HANDLES_MAX; i += 4099)
    ck_assert_ptr_eq(vyre_handles_get(&t, h[i]), &obj);
  /* Free one; its slot serves again. */
  ck_assert_ptr_eq(vyre_handles_remove(&t, h[777]), &obj);
  EXPECT(vyre_handles_insert(&t, &obj, &extra) == VYRE_OK, "a freed slot is reused");
  EXPECT((extra & 0xffffu) == (h[777] & 0xffffu) && extra != h[777], "same slot, new generation");
  h[777] = extra;
  /* Retire one (its generation at the end); the table then holds one less. */
  uint32_t slot = (uint32_t)(h[9] & 0xffffu) - 1u;
  t.slots[slot].generation = UINT32_MAX;
  h[9] = ((h[9] & ~(0xffffffffull << 16)) | (uint64_t)UINT32_MAX << 16);
  ck_assert_ptr_eq(vyre_handles_remove(&t, h[9]), &obj);
  EXPECT(vyre_handles_insert(&t, &obj, &extra) == VYRE_LIMIT, "the retired slot is not reused");
  ck_assert_uint_eq(vyre_handles_live(&t), VYRE_HANDLES_MAX - 1u);
  /* The messages callers report. */
  vyre_error err = VYRE_ERROR_INIT;
  EXPECT(vyre_handles_insert_failed(&err, VYRE_LIMIT, "resident_alloc", "resident buffers",
                                    "free the resident buffers you no longer use") == VYRE_LIMIT,
         "VYRE_LIMIT is reported as VYRE_LIMIT");
  EXPECT(strstr(err.message, "resident_alloc: no handle left") && strstr(err.message, "65535 live "
         "resident buffers") && strstr(err.message, "Fix: free the resident buffers"),
         "the limit message names the call, the limit and the fix: %s", err.message);
  EXPECT(vyre_handles_insert_failed(&err, VYRE_OUT_OF_MEMORY, "pipeline_create", "pipelines",
                                    "release pipelines") == VYRE_OUT_OF_MEMORY &&
             strstr(err.message, "out of host memory") && strstr(err.message, "Fix:"),
         "out of memory: %s", err.message);
  EXPECT(vyre_handles_insert_failed(&err, VYRE_INVALID_ARGUMENT, "x", "y", "z") == VYRE_INTERNAL,
         "any other failure is an internal error");
  EXPECT(vyre_handles_insert_failed(NULL, VYRE_OK, "x", "y", "z") == VYRE_OK, "OK stays OK");
  while (vyre_handles_pop_any(&t)) {
  }
  ck_assert_uint_eq(vyre_handles_live(&t), 0);
  vyre_handles_destroy(&t);
}
END_TEST

/* 65,536 tables made one after the other all have distinct salts, so a
 * handle of any of them is refused by every other. */
START_TEST(handles_salts) {
  static uint8_t used[65536];
  memset(used, 0, sizeof used);
  vyre_handle_table first, t;
  vyre_handles_init(&first, VYRE_HANDLE_RESIDENT);
  int obj;
  uint64_t h;
  ck_assert_int_eq(vyre_handles_insert(&first, &obj, &h), VYRE_OK);
  used[first.salt] = 1;
  uint16_t prev = first.salt;
  for (uint32_t n = 1; n < 65536; n++) {
    vyre_handles_init(&t, n % 3 ? VYRE_HANDLE_RESIDENT : VYRE_HANDLE_PIPELINE);
    EXPECT(!used[t.salt], "table %u has salt 0x%04x, already taken", n, t.salt);
    EXPECT(__builtin_popcount((unsigned)(t.salt ^ prev)) >= 2,
           "consecutive salts differ in more than one bit (table %u)", n);
    used[t.salt] = 1;
    prev = t.salt;
    if (n % 4096 == 0) {
      /* Same slot, same generation, another table: refused. */
      uint64_t mine;
      ck_assert_int_eq(vyre_handles_insert(&t, &obj, &mine), VYRE_OK);
      EXPECT((mine & 0xffffffffffffull) == (h & 0xffffffffffffull), "same slot and generation");
      EXPECT(vyre_handles_get(&t, h) == NULL, "table %u refuses the first table's handle", n);
      EXPECT(vyre_handles_get(&first, mine) == NULL, "the first table refuses table %u's", n);
      ck_assert_ptr_eq(vyre_handles_remove(&t, mine), &obj);
    }
    vyre_handles_destroy(&t);
  }
  /* The 65,537th table shares the first one's salt: documented, the limit. */
  vyre_handles_init(&t, VYRE_HANDLE_RESIDENT);
  EXPECT(t.salt == first.salt, "salts repeat after 65,536 tables (0x%04x vs 0x%04x)", t.salt,
         first.salt);
  vyre_handles_destroy(&t);
  ck_assert_ptr_eq(vyre_handles_remove(&first, h), &obj);
  vyre_handles_destroy(&first);
}
END_TEST

typedef struct handle_thread_arg {
  vyre_handle_table *t;
  int failures;
} handle_thread_arg;

static void *handle_worker(void *arg) {
  handle_thread_arg *a = arg;
  int objs[64];
  uint64_t h[64];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 64; i++)
      if (vyre_handles_insert(a->t, &objs[i], &h[i]) != 0) a->failures++;
    for (int i = 0; i < 64; i++) {
      if (vyre_handles_get(a->t, h[i]) != &objs[i]) a->failures++;
      if (vyre_handles_remove(a->t, h[i]) != &objs[i]) a->failures++;
      if (vyre_handles_get(a->t, h[i]) != NULL) a->failures++;
    }
  }
  return NULL;
}

START_TEST(handles_threads) {
  vyre_handle_table t;
  vyre_handles_init(&t, VYRE_HANDLE_RESIDENT);
  pthread_t th[4];
  handle_thread_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (handle_thread_arg){&t, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, handle_worker, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    EXPECT(args[i].failures == 0, "thread %d saw %d wrong answers", i, args[i].failures);
  }
  ck_assert_uint_eq(vyre_handles_live(&t), 0);
  vyre_handles_destroy(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* floatbits                                                           */
/* ------------------------------------------------------------------ */
static int f32_is_nan(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu); }
static int f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }

static float f32_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

START_TEST(f16_exhaustive_round_trip) {
  uint32_t nans = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t f = vyre_f16_to_f32((uint16_t)h);
    if (f16_is_nan((uint16_t)h)) {
      nans++;
      EXPECT(f32_is_nan(f), "f16 NaN 0x%04x widens to a NaN (0x%08x)", h, f);
      EXPECT(vyre_f32_to_f16(f) == VYRE_F16_CANONICAL_NAN, "NaN 0x%04x narrows to 0x7e00", h);
      continue;
    }
    EXPECT(vyre_f32_to_f16(f) == h, "f16 0x%04x -> f32 0x%08x -> f16 0x%04x", h, f,
                  vyre_f32_to_f16(f));
    /* The widened value is exact: compare with a computed value. */
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double want = e == 0 ? ldexp(m, -24) : e == 31 ? INFINITY : ldexp(1024 + m, (int)e - 25);
    if (h & 0x8000) want = -want;
    EXPECT((double)f32_of(f) == want, "f16 0x%04x widens to %.10g, expected %.10g", h,
                  (double)f32_of(f), want);
    if ((h & 0x7fff) == 0) EXPECT(f == (h & 0x8000u) << 16, "signed zero 0x%04x keeps its sign", h);
  }
  ck_assert_uint_eq(nans, 2 * 1023);
}
END_TEST

/* Reference f32 -> f16: round to nearest even by exact arithmetic. */
static uint16_t f16_reference(uint32_t bits) {
  if (f32_is_nan(bits)) return VYRE_F16_CANONICAL_NAN;
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  double x = fabs((double)f32_of(bits));
  if (isinf(x)) return sign | 0x7c00u;
  /* Candidates are multiples of the f16 spacing at x's binade. */
  int e;
  frexp(x, &e); /* x = f * 2^e, f in [0.5, 1) */
  int q = e - 11 < -24 ? -24 : e - 11;
  double scaled = ldexp(x, -q), fl = floor(scaled), frac = scaled - fl;
  double n = fl;
  if (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) == 1.0)) n = fl + 1;
  double r = ldexp(n, q);
  if (r >= 65520.0) return sign | 0x7c00u;
  /* Encode r exactly. */
  if (r < ldexp(1, -14)) return sign | (uint16_t)ldexp(r, 24);
  int re;
  double rf = frexp(r, &re);
  uint32_t exp = (uint32_t)(re - 1 + 15), man = (uint32_t)(ldexp(rf, 11) - 1024);
  return sign | (uint16_t)(exp << 10 | man);
}

START_TEST(f16_narrowing_rne) {
  static const struct {
    uint32_t f;
    uint16_t h;
    const char *why;
  } cases[] = {
      {0x3f800000u, 0x3c00u, "1.0"},
      {0x3f801000u, 0x3c00u, "1 + 2^-11 is a tie: rounds to the even 1.0"},
      {0x3f803000u, 0x3c02u, "1 + 3*2^-11 is a tie: rounds up to the even 0x3c02"},
      {0x3f801001u, 0x3c01u, "just above the tie rounds up"},
      {0x3f800fffu, 0x3c00u, "just below the tie rounds down"},
      {0x477fe000u, 0x7bffu, "65504 is the largest f16"},
      {0x477fefffu, 0x7bffu, "just below 65520 stays finite"},
      {0x477ff000u, 0x7c00u, "65520 is a tie with an odd 0x7bff: rounds to infinity"},
      {0x501502f9u, 0x7c00u, "1e10 overflows to infinity"},
      {0xd01502f9u, 0xfc00u, "-1e10 overflows to -infinity"},
      {0x7f800000u, 0x7c00u, "infinity"},
      {0xff800000u, 0xfc00u, "-infinity"},
      {0x7f800001u, 0x7e00u, "a signalling NaN becomes the canonical NaN"},
      {0xffc00000u, 0x7e00u, "a negative NaN becomes the canonical NaN"},
      {0x7fffffffu, 0x7e00u, "a NaN with payload becomes the canonical NaN"},
      {0x33800000u, 0x0001u, "2^-24 is the smallest f16 subnormal"},
      {0x33000000u, 0x0000u, "2^-25 is a tie between 0 and 2^-24: rounds to even 0"},
      {0x33000001u, 0x0001u, "just above 2^-25 rounds up to the subnormal"},
      {0x33c00000u, 0x0002u, "3*2^-25 is a tie between 1 and 2 ulps: rounds to even 2"},
      {0x387fc000u, 0x03ffu, "the largest f16 subnormal"},
      {0x387fe000u, 0x0400u, "1023.5 * 2^-24 is a tie: rounds to the even smallest normal"},
      {0x387fdfffu, 0x03ffu, "just below that tie stays the largest subnormal"},
      {0x387ff000u, 0x0400u, "above the tie rounds to the smallest normal"},
      {0x38800000u, 0x0400u, "2^-14 is the smallest f16 normal"},
      {0x00000001u, 0x0000u, "an f32 subnormal is below every f16"},
      {0x80000001u, 0x8000u, "a negative f32 subnormal narrows to -0"},
      {0x80000000u, 0x8000u, "-0 keeps its sign"},
      {0x32ffffffu, 0x0000u, "just below half the smallest subnormal rounds to 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint16_t got = vyre_f32_to_f16(cases[i].f);
    EXPECT(got == cases[i].h, "f32 0x%08x -> f16 0x%04x, expected 0x%04x (%s)", cases[i].f,
                  got, cases[i].h, cases[i].why);
    EXPECT(f16_reference(cases[i].f) == cases[i].h, "the reference agrees on 0x%08x", cases[i].f);
  }
  /* Every f32 exponent with edge and random mantissas, against exact
   * arithmetic. */
  corpus_rng r;
  corpus_seed(&r, 16);
  for (uint32_t e = 0; e < 256; e++) {
    for (uint32_t k = 0; k < 600; k++) {
      uint32_t m = k < 8 ? (k < 4 ? k : 0x7fffffu - (k - 4)) : corpus_u32(&r) & 0x7fffffu;
      if (k >= 8 && k < 40) m = (corpus_u32(&r) & 0x7fe000u) | 0x1000u; /* exact ties */
      for (uint32_t s = 0; s < 2; s++) {
        uint32_t f = s << 31 | e << 23 | m;
        uint16_t got = vyre_f32_to_f16(f), want = f16_reference(f);
        EXPECT(got == want, "f32 0x%08x -> f16 0x%04x, exact rounding says 0x%04x", f, got, want);
      }
    }
  }
#if defined(__FLT16_MAX__)
  /* The compiler's own conversion (libgcc or F16C) agrees as well. */
  for (uint32_t k = 0; k < 200000; k++) {
    uint32_t f = corpus_u32(&r);
    if (f32_is_nan(f)) continue;
    _Float16 hw = (_Float16)f32_of(f);
    uint16_t hb;
    memcpy(&hb, &hw, 2);
    EXPECT(vyre_f32_to_f16(f) == hb, "f32 0x%08x: ours 0x%04x, the compiler's 0x%04x", f,
                  vyre_f32_to_f16(f), hb);
  }
#endif
}
END_TEST

START_TEST(bf16_exhaustive_and_rne) {
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t f = vyre_bf16_to_f32((uint16_t)h);
    EXPECT(f == h << 16, "bf16 0x%04x widens to its top half", h);
    uint16_t back = vyre_f32_to_bf16(f);
    if (f32_is_nan(f)) EXPECT(back == VYRE_BF16_CANONICAL_NAN, "bf16 NaN 0x%04x narrows to 0x7fc0", h);
    else EXPECT(back == h, "bf16 0x%04x round-trips (got 0x%04x)", h, back);
  }
  static const struct {
    uint32_t f;
    uint16_t h;
    const char *why;
  } cases[] = {
      {0x3f808000u, 0x3f80u, "a tie with an even low half rounds down"},
      {0x3f818000u, 0x3f82u, "a tie with an odd low half rounds up"},
      {0x3f808001u, 0x3f81u, "above the tie rounds up"},
      {0x3f807fffu, 0x3f80u, "below the tie rounds down"},
      {0x7f7fffffu, 0x7f80u, "the largest f32 rounds to infinity"},
      {0x7f7f7fffu, 0x7f7fu, "below the overflow tie stays finite"},
      {0xff7fffffu, 0xff80u, "negative overflow is -infinity"},
      {0x7f800001u, 0x7fc0u, "a NaN that truncation would turn into infinity stays a NaN"},
      {0xffffffffu, 0x7fc0u, "a negative NaN becomes the canonical NaN"},
      {0x00008000u, 0x0000u, "subnormal ties round to even"},
      {0x80018000u, 0x8002u, "negative subnormal tie rounds to even"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    EXPECT(vyre_f32_to_bf16(cases[i].f) == cases[i].h, "f32 0x%08x -> bf16 0x%04x, expected 0x%04x (%s)",
                  cases[i].f, vyre_f32_to_bf16(cases[i].f), cases[i].h, cases[i].why);
}
END_TEST

START_TEST(f32_canonical) {
  corpus_rng r;
  corpus_seed(&r, 32);
  for (uint32_t k = 0; k < 100000; k++) {
    uint32_t b = corpus_u32(&r);
    if (k < 4) b = (uint32_t[]){0x7f800001u, 0xffc00000u, 0x00000001u, 0x807fffffu}[k];
    uint32_t c = vyre_f32_canonical_bits(b), e = (b >> 23) & 0xff, m = b & 0x7fffffu;
    uint32_t want = e == 0xff && m ? 0x7fc00000u : e == 0 ? (b & 0x80000000u) : b;
    EXPECT(c == want, "canonical(0x%08x) = 0x%08x, expected 0x%08x", b, c, want);
    EXPECT(vyre_f32_canonical_bits(c) == c, "canonical form is a fixed point (0x%08x)", c);
    float f = vyre_f32_canonical(f32_of(b));
    uint32_t fb;
    memcpy(&fb, &f, 4);
    EXPECT(fb == want, "vyre_f32_canonical(0x%08x) = 0x%08x, expected 0x%08x", b, fb, want);
  }
  ck_assert_uint_eq(vyre_f32_canonical_bits(0x7f800000u), 0x7f800000u);
  ck_assert_uint_eq(vyre_f32_canonical_bits(0x80000000u), 0x80000000u);
}
END_TEST

/* ------------------------------------------------------------------ */
/* codec: builder -> decode -> identical bytes, derived tables          */
/* ------------------------------------------------------------------ */

/* The program of the derived-tables test (see the comments for ids). */
static void build_reference(uint8_t **bytes, size_t *size) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t x = vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_F32, 0, 0);
  uint32_t hist = vyre_b_buffer(b, "hist", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 256,
                                VYRE_BUF_OUTPUT);
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F16, 1024, 0);
  vyre_b_buffer_range(b, out, 0, 64);
  vyre_b_buffer(b, "tile", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_F32, 256, 0);
  vyre_b_buffer(b, "w2", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_U8, 3, 0);
  vyre_b_buffer(b, "u", 9, VYRE_ACCESS_UNIFORM, VYRE_T_U32, 4, 0);
  uint32_t l0 = vyre_b_local(b, VYRE_T_U32);
  uint32_t g = vyre_b_gid(b, 0);                           /* 0 */
  uint32_t n = vyre_b_buflen(b, x);                        /* 1 */
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, g, n));           /* 2, 3 */
  uint32_t xv = vyre_b_load(b, x, g);                      /* 4 */
  uint32_t m = vyre_b_bin(b, VYRE_OP_MUL, vyre_b_f32(b, 2.0f), xv); /* 5, 6 */
  vyre_b_store(b, y, g, m);                                /* 7 */
  vyre_b_else(b);                                          /* 8 */
  uint32_t one = vyre_b_u32(b, 1), zero = vyre_b_u32(b, 0); /* 9, 10 */
  vyre_b_atomic(b, VYRE_OP_ATOMIC_ADD, hist, zero, one, VYRE_ORDER_RELAXED); /* 11 */
  vyre_b_end(b);                                           /* 12 */
  uint32_t lo = vyre_b_u32(b, 0), hi = vyre_b_u32(b, 4);   /* 13, 14 */
  vyre_b_loop(b, l0, lo, hi);                              /* 15 */
  vyre_b_get(b, l0);                                       /* 16 */
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);               /* 17 */
  vyre_b_end(b);                                           /* 18 */
  vyre_b_return(b);                                        /* 19 */
  fmt_finish(b, bytes, size);
}

START_TEST(codec_derived_tables) {
  uint8_t *bytes;
  size_t size;
  build_reference(&bytes, &size);
  vyre_program *p = fmt_decode_ok(bytes, size);
  ck_assert_uint_eq(p->size, size);
  EXPECT(memcmp(p->bytes, bytes, size) == 0, "the program keeps an exact copy of the image");
  EXPECT(p->bytes != bytes, "the copy is private");
  ck_assert_uint_eq(p->buffer_count, 7);
  static const struct {
    const char *name;
    uint8_t role, is_output;
    int32_t in, out;
    uint32_t kernel, shared, elem_size, binding;
  } want[] = {
      {"x", VYRE_ROLE_INPUT, 0, 0, -1, 0, 0, 4, 0},
      {"y", VYRE_ROLE_INOUT, 1, 1, 0, 1, 0, 4, 1},
      {"hist", VYRE_ROLE_OUTPUT, 1, -1, 1, 2, 0, 4, 2},
      {"out", VYRE_ROLE_OUTPUT, 1, -1, 2, 3, 0, 2, 3},
      {"tile", VYRE_ROLE_SHARED, 0, -1, -1, UINT32_MAX, 0, 4, 0},
      {"w2", VYRE_ROLE_SHARED, 0, -1, -1, UINT32_MAX, 1024, 1, 0},
      {"u", VYRE_ROLE_INPUT, 0, 2, -1, 4, 0, 4, 9},
  };
  for (uint32_t i = 0; i < 7; i++) {
    const vyre_buffer_info *bi = &p->buffers[i];
    ck_assert_str_eq(bi->name, want[i].name);
    EXPECT(bi->role == want[i].role && bi->is_output == want[i].is_output,
                  "buffer %s has role %u output %u", bi->name, want[i].role, want[i].is_output);
    EXPECT(bi->input_index == want[i].in && bi->output_index == want[i].out,
                  "buffer %s is input %d output %d (got %d %d)", bi->name, want[i].in, want[i].out,
                  bi->input_index, bi->output_index);
    EXPECT(bi->kernel_index == want[i].kernel, "buffer %s is kernel param %u", bi->name, want[i].kernel);
    EXPECT(bi->shared_offset == want[i].shared, "buffer %s at shared offset %u", bi->name, want[i].shared);
    ck_assert_uint_eq(bi->elem_size, want[i].elem_size);
    ck_assert_uint_eq(bi->decl.binding, want[i].binding);
  }
  ck_assert_uint_eq(p->input_count, 3);
  ck_assert_uint_eq(p->output_count, 3);
  ck_assert_uint_eq(p->kernel_buffer_count, 5);
  ck_assert_uint_eq(p->shared_bytes, 1027);
  ck_assert_uint_eq(p->inst_count, 20);
  ck_assert_uint_eq(p->local_count, 1);
  ck_assert_uint_eq(p->max_depth, 1);
  static const uint8_t vt[20] = {VYRE_T_U32, VYRE_T_U32, VYRE_T_BOOL, 0, VYRE_T_F32, VYRE_T_F32,
                                 VYRE_T_F32, 0, 0, VYRE_T_U32, VYRE_T_U32, VYRE_T_U32, 0,
                                 VYRE_T_U32, VYRE_T_U32, 0, VYRE_T_U32, 0, 0, 0};
  static const uint8_t depth[20] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0};
  static const uint8_t uni[20] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1};
  for (uint32_t i = 0; i < 20; i++) {
    EXPECT(p->value_type[i] == vt[i], "inst %u has value type %s, expected %s", i,
                  vyre_type_name(p->value_type[i]), vyre_type_name(vt[i]));
    EXPECT(p->depth[i] == depth[i], "inst %u at depth %u, expected %u", i, p->depth[i], depth[i]);
    EXPECT(p->uniform[i] == uni[i], "inst %u uniform %u, expected %u", i, p->uniform[i], uni[i]);
  }
  ck_assert_uint_eq(p->match[3], 8);
  ck_assert_uint_eq(p->match[8], 12);
  ck_assert_uint_eq(p->match[12], 8);
  ck_assert_uint_eq(p->match[15], 18);
  ck_assert_uint_eq(p->match[18], 15);
  ck_assert_uint_eq(p->features, VYRE_FEAT_WORKGROUP_MEMORY | VYRE_FEAT_ATOMIC | VYRE_FEAT_BARRIER |
                                     VYRE_FEAT_LOOP | VYRE_FEAT_RETURN | VYRE_FEAT_F16);
  ck_assert(p->required_caps == (VYRE_CAP_WORKGROUP_MEMORY | VYRE_CAP_ATOMICS | VYRE_CAP_BARRIER |
                                 VYRE_CAP_F16));
  uint8_t digest[32];
  vyre_sha256(bytes, size, digest);
  EXPECT(memcmp(digest, p->sha256, 32) == 0, "the hash is the SHA-256 of the image");
  char hex[65], hex2[65];
  vyre_program_hash_hex(p, hex);
  hex_of(digest, hex2);
  ck_assert_str_eq(hex, hex2);
  vyre_program_free(p);
  free(bytes);
  vyre_program_free(NULL);
}
END_TEST

START_TEST(codec_features) {
  static const struct {
    uint32_t features;
    uint64_t caps;
  } want[] = {
      {VYRE_FEAT_SUBGROUP, VYRE_CAP_SUBGROUP},
      {VYRE_FEAT_TRANSCENDENTAL, VYRE_CAP_TRANSCENDENTAL},
      {VYRE_FEAT_GRID_BARRIER, VYRE_CAP_GRID_BARRIER},
      {VYRE_FEAT_TRAP, VYRE_CAP_TRAP},
      {VYRE_FEAT_ATOMIC | VYRE_FEAT_ATOMIC64, VYRE_CAP_ATOMICS | VYRE_CAP_ATOMIC64},
      {VYRE_FEAT_BF16, VYRE_CAP_BF16},
      {0, 0},
  };
  for (int k = 0; k < 7; k++) {
    vyre_builder *b = vyre_builder_new(32, 1, 1);
    uint32_t v = vyre_b_f32(b, 1.0f);
    switch (k) {
    case 0: vyre_b_reduce(b, VYRE_REDUCE_ADD, v); break;
    case 1: vyre_b_un(b, VYRE_OP_SIN, v); break;
    case 2: vyre_b_barrier(b, VYRE_BARRIER_GRID); break;
    case 3: vyre_b_trap(b, 3); break;
    case 4: {
      uint32_t buf = vyre_b_buffer(b, "c", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_I64, 0, 0);
      vyre_b_atomic(b, VYRE_OP_ATOMIC_MAX, buf, vyre_b_u32(b, 0), vyre_b_i64(b, -1), VYRE_ORDER_SEQ_CST);
      break;
    }
    case 5: vyre_b_buffer(b, "h", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_BF16, 0, 0); break;
    default: vyre_b_un(b, VYRE_OP_SQRT, v); vyre_b_un(b, VYRE_OP_RCP, v); break; /* correctly rounded: not transcendental */
    }
    uint8_t *bytes;
    size_t size;
    fmt_finish(b, &bytes, &size);
    vyre_program *p = fmt_decode_ok(bytes, size);
    EXPECT(p->features == want[k].features, "case %d: features 0x%x, expected 0x%x", k,
                  p->features, want[k].features);
    EXPECT(p->required_caps == want[k].caps, "case %d: caps 0x%llx, expected 0x%llx", k,
                  (unsigned long long)p->required_caps, (unsigned long long)want[k].caps);
    vyre_program_free(p);
    free(bytes);
  }
}
END_TEST

/* builder -> decode -> builder gives the same bytes and the same hash,
 * for the reference program and a seeded corpus of random programs. */
START_TEST(codec_round_trip_corpus) {
  uint32_t programs = 0, insts = 0;
  for (uint64_t seed = 0; seed < 400; seed++) {
    corpus_rng r;
    corpus_seed(&r, seed);
    void *raw;
    size_t size;
    vyre_error err = VYRE_ERROR_INIT;
    ck_assert_int_eq(corpus_random_program(&r, 150, &raw, &size, &err), VYRE_OK);
    vyre_program *p = fmt_decode_ok(raw, size);
    EXPECT(memcmp(p->bytes, raw, size) == 0, "seed %llu: decoded image equals input",
                  (unsigned long long)seed);
    uint8_t *again;
    size_t again_size;
    fmt_reencode(p, &again, &again_size);
    EXPECT(again_size == size && memcmp(again, raw, size) == 0,
                  "seed %llu: decode -> builder re-encodes identical bytes", (unsigned long long)seed);
    vyre_program *q = fmt_decode_ok(again, again_size);
    EXPECT(memcmp(p->sha256, q->sha256, 32) == 0, "seed %llu: the hash is stable",
                  (unsigned long long)seed);
    programs++;
    insts += p->inst_count;
    vyre_program_free(q);
    vyre_program_free(p);
    free(again);
    free(raw);
  }
  printf("codec round trip: %u random programs, %u instructions, all identical\n", programs, insts);
}
END_TEST

START_TEST(codec_hash_distinguishes) {
  /* One changed literal changes the hash; equal programs hash equal. */
  uint8_t *a, *b2, *c;
  size_t sa, sb, sc;
  for (int k = 0; k < 3; k++) {
    vyre_builder *b = vyre_builder_new(64, 1, 1);
    vyre_b_u32(b, k == 2 ? 8 : 7);
    vyre_b_return(b);
    fmt_finish(b, k == 0 ? &a : k == 1 ? &b2 : &c, k == 0 ? &sa : k == 1 ? &sb : &sc);
  }
  vyre_program *pa = fmt_decode_ok(a, sa), *pb = fmt_decode_ok(b2, sb), *pc = fmt_decode_ok(c, sc);
  ck_assert(memcmp(pa->sha256, pb->sha256, 32) == 0);
  ck_assert(memcmp(pa->sha256, pc->sha256, 32) != 0);
  vyre_program_free(pa);
  vyre_program_free(pb);
  vyre_program_free(pc);
  free(a);
  free(b2);
  free(c);
}
END_TEST

/* Binding 4294967295 is valid (bindings only increase); the builder
 * cannot spell it as a first binding, the image can. */
START_TEST(codec_binding_max) {
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  vyre_b_buffer(b, "a", 5, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  vyre_b_buffer(b, "t", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_U32, 4, 0);
  vyre_b_buffer(b, "z", 6, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 0, 0);
  vyre_b_return(b);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  uint32_t max = UINT32_MAX;
  memcpy(bytes + VYRE_PROGRAM_HEADER_SIZE + 2 * sizeof(vyre_buffer_decl) +
             offsetof(vyre_buffer_decl, binding), &max, 4);
  vyre_program *p = fmt_decode_ok(bytes, size);
  ck_assert_uint_eq(p->buffers[2].decl.binding, UINT32_MAX);
  uint8_t *again;
  size_t again_size;
  fmt_reencode(p, &again, &again_size);
  ck_assert_msg(again_size == size && memcmp(again, bytes, size) == 0, "re-encodes identically");
  vyre_program_free(p);
  free(again);
  free(bytes);
}
END_TEST

START_TEST(builder_errors) {
  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = (void *)1;
  size_t size = 1;
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  vyre_b_buffer(b, "", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  ck_assert_int_eq(vyre_builder_finish(b, &bytes, &size, &err), VYRE_INVALID_ARGUMENT);
  ck_assert_ptr_null(bytes);
  EXPECT(strstr(err.message, "Fix:") != NULL, "the builder's message has a Fix: %s", err.message);
  vyre_builder_free(b);
  b = vyre_builder_new(1, 1, 1);
  for (int i = 0; i < 65; i++) {
    char name[8];
    snprintf(name, sizeof name, "b%d", i);
    vyre_b_buffer(b, name, UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U32, 0, 0);
  }
  ck_assert_int_eq(vyre_builder_finish(b, &bytes, &size, &err), VYRE_LIMIT);
  vyre_builder_free(b);
  b = vyre_builder_new(1, 1, 1);
  vyre_b_buffer_range(b, 3, 0, 4);
  ck_assert_int_eq(vyre_builder_finish(b, &bytes, &size, &err), VYRE_LIMIT);
  vyre_builder_free(b);
  vyre_builder_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* geometry                                                            */
/* ------------------------------------------------------------------ */
static vyre_program *geometry_program(uint32_t wg_x) {
  vyre_builder *b = vyre_builder_new(wg_x, 1, 1);
  vyre_b_buffer(b, "x", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_F32, 0, 0);       /* input 0 */
  vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U16, 0, 0);      /* input 1, output 0 */
  uint32_t out = vyre_b_buffer(b, "out", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_F32, 1024, 0);
  vyre_b_buffer_range(b, out, 16, 64);                                              /* output 1 */
  vyre_b_buffer(b, "hist", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U32, 256, VYRE_BUF_OUTPUT); /* output 2 */
  vyre_b_buffer(b, "tile", UINT32_MAX, VYRE_ACCESS_WORKGROUP, VYRE_T_F32, 32, 0);
  vyre_b_buffer(b, "k", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_U64, 2, 0);         /* input 2 */
  vyre_b_return(b);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  vyre_program *p = fmt_decode_ok(bytes, size);
  free(bytes);
  return p;
}

START_TEST(geometry_sizes) {
  vyre_program *p = geometry_program(64);
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t in[3] = {400, 2 * 5000, 16};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, NULL, &g, &err), VYRE_OK);
  static const uint32_t elems[6] = {100, 5000, 1024, 256, 32, 2};
  static const uint64_t bytes[6] = {400, 10000, 4096, 1024, 128, 16};
  for (int i = 0; i < 6; i++) {
    EXPECT(g.buffer_elems[i] == elems[i], "buffer %d has %u elements, expected %u", i,
                  g.buffer_elems[i], elems[i]);
    EXPECT(g.buffer_bytes[i] == bytes[i], "buffer %d has %llu bytes", i, (unsigned long long)g.buffer_bytes[i]);
  }
  EXPECT(g.element_count == 5000, "element count = max over outputs (y 5000, out 1024, hist 256)");
  ck_assert_uint_eq(g.out_offset[1], 0);
  ck_assert_uint_eq(g.out_size[1], 10000);
  EXPECT(g.out_offset[2] == 16 && g.out_size[2] == 64, "the declared output range is read back");
  ck_assert_uint_eq(g.out_size[3], 1024);
  EXPECT(g.out_size[0] == 0 && g.out_size[4] == 0 && g.out_size[5] == 0, "inputs and shared are not read back");
  ck_assert_uint_eq(g.workgroup[0], 64);
  ck_assert_uint_eq(g.workgroup[1], 1);
  ck_assert_uint_eq(g.grid[0], (5000 + 63) / 64);
  ck_assert_uint_eq(g.grid[1], 1);
  ck_assert_uint_eq(g.grid[2], 1);
  ck_assert(g.invocations == 79ull * 64);

  uint32_t words[32];
  memset(words, 0xff, sizeof words);
  uint32_t n = vyre_params_word_count(p);
  ck_assert_uint_eq(n, 1 + 6 + VYRE_PARAMS_TRAP_WORDS + VYRE_PARAMS_GRID_WORDS);
  vyre_params_fill(p, &g, words);
  ck_assert_uint_eq(words[0], 5000);
  for (int i = 0; i < 6; i++) EXPECT(words[1 + i] == elems[i], "params word %d is buffer %d's count", 1 + i, i);
  for (uint32_t i = 7; i < n; i++) EXPECT(words[i] == 0, "trap and grid words start at 0 (word %u)", i);
  EXPECT(words[n] == 0xffffffffu, "params_fill writes exactly %u words", n);
  vyre_program_free(p);
}
END_TEST

START_TEST(geometry_no_outputs_and_zero) {
  vyre_builder *b = vyre_builder_new(32, 2, 1);
  vyre_b_buffer(b, "a", UINT32_MAX, VYRE_ACCESS_READ_ONLY, VYRE_T_U8, 0, 0);
  vyre_b_buffer(b, "c", UINT32_MAX, VYRE_ACCESS_UNIFORM, VYRE_T_I64, 0, 0);
  vyre_b_return(b);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  vyre_program *p = fmt_decode_ok(bytes, size);
  free(bytes);
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t in[2] = {33, 80};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, NULL, &g, &err), VYRE_OK);
  EXPECT(g.element_count == 33, "without outputs the count is the max over all buffers");
  ck_assert_uint_eq(g.grid[0], 2);
  ck_assert(g.invocations == 2ull * 64);
  uint64_t zero[2] = {0, 0};
  ck_assert_int_eq(vyre_geometry_derive(p, zero, NULL, NULL, &g, &err), VYRE_OK);
  EXPECT(g.element_count == 0 && g.grid[0] == 0 && g.grid[1] == 0 && g.grid[2] == 0 &&
                    g.invocations == 0,
                "zero elements mean no launch at all");
  /* An explicit grid override still launches. */
  vyre_dispatch_options o = {sizeof o, 0, {0, 0, 0}, {3, 0, 0}, 0, 0, NULL};
  ck_assert_int_eq(vyre_geometry_derive(p, zero, NULL, &o, &g, &err), VYRE_OK);
  EXPECT(g.grid[0] == 3 && g.grid[1] == 1 && g.grid[2] == 1, "grid override with 0 meaning 1");
  vyre_program_free(p);

  /* No buffers at all: nothing to size, no launch. */
  b = vyre_builder_new(1, 1, 1);
  vyre_b_return(b);
  fmt_finish(b, &bytes, &size);
  p = fmt_decode_ok(bytes, size);
  free(bytes);
  ck_assert_int_eq(vyre_geometry_derive(p, NULL, NULL, NULL, &g, &err), VYRE_OK);
  ck_assert_uint_eq(g.grid[0], 0);
  ck_assert_uint_eq(vyre_params_word_count(p), 5);
  vyre_program_free(p);
}
END_TEST

/* A program with MMA ops takes only workgroup overrides of a multiple
 * of 32 invocations (INVALID_ARGUMENT on every backend, which all derive
 * their geometry here); other programs take any. */
START_TEST(geometry_mma_workgroup) {
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  uint32_t o = vyre_b_buffer(b, "o", UINT32_MAX, VYRE_ACCESS_WRITE_ONLY, VYRE_T_I32, 256, 0);
  uint32_t acc = vyre_b_local(b, VYRE_T_MAT_ACC_I32);
  vyre_b_mma_fill(b, acc, vyre_b_i32(b, 7));
  uint32_t z = vyre_b_u32(b, 0);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, o, z, vyre_b_u32(b, 16), acc);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  vyre_program *p = fmt_decode_ok(bytes, size);
  free(bytes);
  vyre_program *plain = geometry_program(64);
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  static const uint32_t wg[][3] = {{48, 1, 1}, {8, 2, 1}, {32, 1, 1}, {16, 2, 3}, {0, 0, 0}};
  for (size_t k = 0; k < sizeof wg / sizeof wg[0]; k++) {
    vyre_dispatch_options opt = {sizeof opt, 0, {wg[k][0], wg[k][1], wg[k][2]}, {0, 0, 0}, 0, 0, NULL};
    int ok = (wg[k][0] * wg[k][1] * wg[k][2]) % 32 == 0;
    vyre_status st = vyre_geometry_derive(p, NULL, NULL, &opt, &g, &err);
    EXPECT(st == (ok ? VYRE_OK : VYRE_INVALID_ARGUMENT), "override %u x %u x %u: %s", wg[k][0],
           wg[k][1], wg[k][2], err.message);
    if (!ok)
      EXPECT(strstr(err.message, "not a multiple of 32, and the program has MMA ops") &&
                 strstr(err.message, "Fix:"),
             "the message says why: %s", err.message);
    uint64_t in[3] = {400, 2 * 5000, 16};
    EXPECT(vyre_geometry_derive(plain, in, NULL, &opt, &g, &err) == VYRE_OK,
           "a program without MMA ops takes override %u x %u x %u", wg[k][0], wg[k][1], wg[k][2]);
  }
  vyre_program_free(plain);
  vyre_program_free(p);
}
END_TEST

START_TEST(geometry_overrides) {
  vyre_program *p = geometry_program(64);
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t in[3] = {400, 200, 16};
  vyre_dispatch_options o = {sizeof o, 0, {128, 0, 2}, {0, 0, 0}, 0, 0, NULL};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, &o, &g, &err), VYRE_OK);
  EXPECT(g.workgroup[0] == 128 && g.workgroup[1] == 1 && g.workgroup[2] == 2,
                "a workgroup override replaces the program's, 0 meaning 1");
  EXPECT(g.element_count == 1024 && g.grid[0] == 8, "grid = ceil(1024 / 128)");
  o.grid[0] = 5;
  o.grid[1] = 6;
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, &o, &g, &err), VYRE_OK);
  EXPECT(g.grid[0] == 5 && g.grid[1] == 6 && g.grid[2] == 1, "the grid override wins");
  ck_assert(g.invocations == 5ull * 6 * 128 * 2);
  /* A caller with an older, shorter options struct: fields past its size are not read. */
  vyre_dispatch_options old;
  memset(&old, 0x7f, sizeof old);
  old.struct_size = 8;
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, &old, &g, &err), VYRE_OK);
  EXPECT(g.workgroup[0] == 64 && g.grid[0] == 16, "fields past struct_size are ignored");
  vyre_program_free(p);
}
END_TEST

START_TEST(geometry_resident) {
  vyre_program *p = geometry_program(256);
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  /* One size per kernel buffer: x y out hist k. */
  uint64_t res[5] = {4000, 2000, 8192, 1024, 16};
  ck_assert_int_eq(vyre_geometry_derive(p, NULL, res, NULL, &g, &err), VYRE_OK);
  EXPECT(g.buffer_elems[0] == 1000 && g.buffer_elems[1] == 1000, "count-0 buffers take the resident size");
  EXPECT(g.buffer_elems[2] == 1024, "a larger resident buffer keeps the declared count");
  ck_assert_uint_eq(g.element_count, 1024);
  res[3] = 1020;
  ck_assert_int_eq(vyre_geometry_derive(p, NULL, res, NULL, &g, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "'hist'") && strstr(err.message, "Fix:"), "names the buffer: %s", err.message);
  res[3] = 1024;
  res[1] = 2001;
  ck_assert_int_eq(vyre_geometry_derive(p, NULL, res, NULL, &g, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "'y'") && strstr(err.message, "multiple of 2"), "%s", err.message);
  vyre_program_free(p);
}
END_TEST

START_TEST(geometry_errors) {
  vyre_program *p = geometry_program(64);
  vyre_geometry g;
  vyre_error err = VYRE_ERROR_INIT;
  uint64_t in[3] = {402, 200, 16};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, NULL, &g, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "'x'") && strstr(err.message, "Fix:"), "not whole elements: %s", err.message);
  in[0] = 400;
  in[2] = 24;
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, NULL, &g, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "'k'") && strstr(err.message, "exactly 16 bytes"), "fixed count: %s", err.message);
  in[2] = 16;
  ck_assert_int_eq(vyre_geometry_derive(p, NULL, NULL, NULL, &g, &err), VYRE_INVALID_ARGUMENT);
  vyre_dispatch_options o = {sizeof o, 0, {64, 32, 1}, {0, 0, 0}, 0, 0, NULL};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, &o, &g, &err), VYRE_LIMIT);
  EXPECT(strstr(err.message, "Fix:") != NULL, "%s", err.message);
  o = (vyre_dispatch_options){sizeof o, 0, {0, 0, 0}, {1, 65536, 1}, 0, 0, NULL};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, &o, &g, &err), VYRE_LIMIT);
  o = (vyre_dispatch_options){sizeof o, 0, {0, 0, 0}, {0x80000000u, 1, 1}, 0, 0, NULL};
  ck_assert_int_eq(vyre_geometry_derive(p, in, NULL, &o, &g, &err), VYRE_LIMIT);
  vyre_program_free(p);

  /* A count-0 in/out buffer with an output range past the given input. */
  vyre_builder *b = vyre_builder_new(1, 1, 1);
  uint32_t y = vyre_b_buffer(b, "y", UINT32_MAX, VYRE_ACCESS_READ_WRITE, VYRE_T_U8, 0, 0);
  vyre_b_buffer_range(b, y, 8, 8);
  vyre_b_return(b);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  p = fmt_decode_ok(bytes, size);
  free(bytes);
  uint64_t small = 12, big = (uint64_t)1 << 31, huge = (uint64_t)1 << 32;
  ck_assert_int_eq(vyre_geometry_derive(p, &small, NULL, NULL, &g, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "range") && strstr(err.message, "Fix:"), "%s", err.message);
  /* 2^31 elements at workgroup width 1 need too many workgroups. */
  ck_assert_int_eq(vyre_geometry_derive(p, &big, NULL, NULL, &g, &err), VYRE_LIMIT);
  EXPECT(strstr(err.message, "workgroups") != NULL, "%s", err.message);
  /* 2^32 elements do not fit a u32 index. */
  ck_assert_int_eq(vyre_geometry_derive(p, &huge, NULL, NULL, &g, &err), VYRE_LIMIT);
  EXPECT(strstr(err.message, "u32 index") != NULL, "%s", err.message);
  vyre_program_free(p);
}
END_TEST

static Suite *format_suite(void) {
  Suite *s = suite_create("format");
  TCase *tc = tcase_create("sha256");
  tcase_add_test(tc, sha256_fips_vectors);
  tcase_add_test(tc, sha256_million_a);
  tcase_add_test(tc, sha256_padding_boundaries);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("handles");
  tcase_add_test(tc, handles_core);
  tcase_add_test(tc, handles_foreign_tables);
  tcase_add_test(tc, handles_generations);
  tcase_add_test(tc, handles_retire_at_wrap);
  tcase_add_test(tc, handles_capacity);
  tcase_add_test(tc, handles_salts);
  tcase_add_test(tc, handles_threads);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("floatbits");
  tcase_add_test(tc, f16_exhaustive_round_trip);
  tcase_add_test(tc, f16_narrowing_rne);
  tcase_add_test(tc, bf16_exhaustive_and_rne);
  tcase_add_test(tc, f32_canonical);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tc = tcase_create("core");
  tcase_add_test(tc, codec_derived_tables);
  tcase_add_test(tc, codec_features);
  tcase_add_test(tc, codec_round_trip_corpus);
  tcase_add_test(tc, codec_hash_distinguishes);
  tcase_add_test(tc, codec_binding_max);
  tcase_add_test(tc, builder_errors);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tc = tcase_create("geometry");
  tcase_add_test(tc, geometry_sizes);
  tcase_add_test(tc, geometry_no_outputs_and_zero);
  tcase_add_test(tc, geometry_overrides);
  tcase_add_test(tc, geometry_mma_workgroup);
  tcase_add_test(tc, geometry_resident);
  tcase_add_test(tc, geometry_errors);
  suite_add_tcase(s, tc);
  suite_add_tcase(s, format_reject_tcase());
  suite_add_tcase(s, format_fuzz_tcase());
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(format_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
