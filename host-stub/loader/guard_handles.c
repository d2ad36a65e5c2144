/* guard_handles.c -- what the checking instance hands out, recorded per instance (an open-addressing hash set of handles and outputs), and the quarantine that keeps destroyed host objects readable. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "vyre/vyre_support.h"

/* ------------------------------------------------------------------ */
/* The handle set                                                      */
/* ------------------------------------------------------------------ */
/*
 * Linear probing over a power-of-two table kept at most half full, with
 * backward-shift deletion (no tombstones), so a lookup is a hash and a
 * probe or two whatever has been added and removed before.  A slot with
 * kind 0 is empty; (kind, key) is the identity, so a plugin that uses the
 * same number for a buffer and a pipeline is not confused.
 */

static uint32_t slot_home(const host_handles *s, uint32_t kind, uint64_t key) {
  uint64_t h = (key ^ ((uint64_t)kind * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  h ^= h >> 32;
  return (uint32_t)h & s->mask;
}

/* The slot of (kind, key), or the empty slot where it would go. */
static uint32_t slot_find(const host_handles *s, uint32_t kind, uint64_t key) {
  uint32_t i = slot_home(s, kind, key);
  while (s->slots[i].kind && !(s->slots[i].kind == kind && s->slots[i].key == key))
    i = (i + 1) & s->mask;
  return i;
}

static int grow(host_handles *s) {
  uint32_t cap = s->slots ? (s->mask + 1) * 2 : 64;
  host_slot *old = s->slots;
  uint32_t old_cap = old ? s->mask + 1 : 0;
  s->slots = calloc(cap, sizeof *s->slots);
  if (!s->slots) {
    s->slots = old;
    return -1;
  }
  s->mask = cap - 1;
  for (uint32_t i = 0; i < old_cap; i++)
    if (old[i].kind) s->slots[slot_find(s, old[i].kind, old[i].key)] = old[i];
  free(old);
  return 0;
}

int host_handles_put(host_handles *s, uint32_t kind, uint64_t key, void *info, void **old) {
  *old = NULL;
  if (s->slots) {
    uint32_t i = slot_find(s, kind, key);
    if (s->slots[i].kind) { /* the plugin handed the same value out again */
      *old = s->slots[i].info;
      s->slots[i].info = info;
      return 0;
    }
  }
  if (s->count >= HOST_HANDLES_MAX) return -1;
  if ((!s->slots || (s->count + 1) * 2 > s->mask + 1) && grow(s) != 0) return -1;
  uint32_t i = slot_find(s, kind, key);
  s->slots[i].kind = kind;
  s->slots[i].key = key;
  s->slots[i].info = info;
  s->count++;
  return 0;
}

int host_handles_has(const host_handles *s, uint32_t kind, uint64_t key, void **info) {
  if (!s->slots || !kind) return 0;
  const host_slot *sl = &s->slots[slot_find(s, kind, key)];
  if (!sl->kind) return 0;
  if (info) *info = sl->info;
  return 1;
}

int host_handles_take(host_handles *s, uint32_t kind, uint64_t key, void **info) {
  if (!s->slots || !kind) return 0;
  uint32_t i = slot_find(s, kind, key);
  if (!s->slots[i].kind) return 0;
  if (info) *info = s->slots[i].info;
  s->count--;
  /* Backward shift: a later member of the probe run moves into the hole
   * unless its home lies cyclically in (hole, its slot]. */
  uint32_t hole = i;
  for (uint32_t j = (i + 1) & s->mask; s->slots[j].kind; j = (j + 1) & s->mask) {
    uint32_t k = slot_home(s, s->slots[j].kind, s->slots[j].key);
    int stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays) continue;
    s->slots[hole] = s->slots[j];
    hole = j;
  }
  s->slots[hole].kind = 0;
  return 1;
}

void host_handles_each(host_handles *s, void (*fn)(host_slot *slot, void *ctx), void *ctx) {
  for (uint32_t i = 0; s->slots && i <= s->mask; i++)
    if (s->slots[i].kind) fn(&s->slots[i], ctx);
}

void host_handles_free(host_handles *s) {
  free(s->slots);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ */
/* An instance's records                                               */
/* ------------------------------------------------------------------ */

void host_pipeline_info_free(host_pipeline_info *p) {
  if (!p) return;
  vyre_program_free(p->program);
  free(p->bytes);
  free(p);
}

static void info_free(uint32_t kind, void *info) {
  if (kind == HOST_KIND_PIPELINE) host_pipeline_info_free(info);
  else free(info); /* pending: an expect; the others keep NULL */
}

vyre_status host_record(host_guard *g, const char *entry, uint32_t kind, uint64_t key,
                        void *info, vyre_error *err) {
  void *old = NULL;
  pthread_mutex_lock(&g->lock);
  int rc = host_handles_put(&g->handles, kind, key, info, &old);
  uint32_t held = g->handles.count;
  pthread_mutex_unlock(&g->lock);
  info_free(kind, old);
  if (rc == 0) return VYRE_OK;
  info_free(kind, info);
  return vyre_error_set(err, held >= HOST_HANDLES_MAX ? VYRE_LIMIT : VYRE_OUT_OF_MEMORY, 0,
                        "%s: libvyre-host cannot record one more handle of backend '%s' (%u "
                        "held; at most %u, or out of memory); the call was undone. Fix: release "
                        "handles and free outputs you no longer need",
                        entry, g->id, held, HOST_HANDLES_MAX);
}

int host_forget(host_guard *g, uint32_t kind, uint64_t key, void **info) {
  void *got = NULL;
  pthread_mutex_lock(&g->lock);
  int held = host_handles_take(&g->handles, kind, key, &got);
  pthread_mutex_unlock(&g->lock);
  if (info) *info = got;
  else info_free(kind, got);
  return held;
}

/* destroy: outputs still held are freed with the plugin's outputs_free
 * (they do not outlive their instance, docs/abi.md section 9); the
 * rest's infos are the guard's. */
static void retire_one(host_slot *slot, void *ctx) {
  vyre_backend *inner = ctx;
  if (slot->kind == HOST_KIND_OUTPUTS)
    inner->vt->outputs_free(inner, (vyre_outputs *)(uintptr_t)slot->key);
  else info_free(slot->kind, slot->info);
}

void host_retire(host_guard *g) {
  host_handles_each(&g->handles, retire_one, g->inner);
  host_handles_free(&g->handles);
}

/* ------------------------------------------------------------------ */
/* Quarantine                                                          */
/* ------------------------------------------------------------------ */
/*
 * A destroyed instance or closed host stays allocated, poisoned, among the
 * last HOST_QUARANTINE_MAX such objects, so that a second destroy or close
 * (or a call through a dangling pointer) reads our own memory and is a
 * clear error.  The oldest is freed when a newer one needs its place; the
 * rest when libvyre-host is unloaded (at process exit), so leak checkers
 * see nothing.
 */
static struct {
  pthread_mutex_t lock;
  void *obj[HOST_QUARANTINE_MAX];
  uint32_t next, used;
} quarantine = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0};

void host_quarantine(void *obj) {
  void *evicted = NULL;
  pthread_mutex_lock(&quarantine.lock);
  if (quarantine.used == HOST_QUARANTINE_MAX) evicted = quarantine.obj[quarantine.next];
  else quarantine.used++;
  quarantine.obj[quarantine.next] = obj;
  quarantine.next = (quarantine.next + 1) % HOST_QUARANTINE_MAX;
  pthread_mutex_unlock(&quarantine.lock);
  free(evicted);
}

#if defined(__GNUC__)
__attribute__((destructor))
#endif
static void quarantine_release(void) {
  pthread_mutex_lock(&quarantine.lock);
  for (uint32_t i = 0; i < quarantine.used; i++) free(quarantine.obj[i]);
  quarantine.used = quarantine.next = 0;
  pthread_mutex_unlock(&quarantine.lock);
}
