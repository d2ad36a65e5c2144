/* handles.c -- generation-checked 64-bit handle tables, so stale or foreign handles are errors, not crashes. */
#include <stdatomic.h>
#include <stdlib.h>

#include "vyre/vyre_support.h"

/* The layout vyre_support.h documents: salt:16 | generation:32 | slot+1:16. */
#define SALT_SHIFT 48
#define GEN_SHIFT 16
#define SLOT_MASK 0xffffu
#define GEN_LAST UINT32_MAX

/* Tables made so far in this process: table n gets salt n * SALT_STEP +
 * SALT_BASE mod 2^16.  SALT_STEP is odd, so n -> salt is a bijection mod
 * 2^16: the first 65,536 tables all differ, and consecutive tables
 * differ in many bits. */
#define SALT_STEP 0x9e37u
#define SALT_BASE 0x2b41u
static atomic_uint tables_made;

static uint64_t pack(const vyre_handle_table *t, uint32_t slot, uint32_t gen) {
  return (uint64_t)t->salt << SALT_SHIFT | (uint64_t)gen << GEN_SHIFT | (uint64_t)(slot + 1u);
}

void vyre_handles_init(vyre_handle_table *table, uint8_t tag) {
  /* The static initializer, not pthread_mutex_init: the default mutex
   * that init would make, with no step that can fail (this function
   * returns void, and so it must stay in 1.x). */
  table->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
  table->slots = NULL;
  table->capacity = 0;
  table->live = 0;
  table->free_head = 0;
  table->retired = 0;
  table->tag = tag;
  unsigned n = atomic_fetch_add(&tables_made, 1u);
  table->salt = (uint16_t)(n * SALT_STEP + SALT_BASE);
}

void vyre_handles_destroy(vyre_handle_table *table) {
  if (!table) return;
  free(table->slots);
  table->slots = NULL;
  table->capacity = 0;
  table->live = 0;
  table->free_head = 0;
  pthread_mutex_destroy(&table->lock);
}

/* Take a slot off the free list, growing the array when the list is
 * empty.  Caller holds the lock.  VYRE_LIMIT when VYRE_HANDLES_MAX slots
 * exist and none is free (all live or retired). */
static vyre_status take_slot(vyre_handle_table *t, uint32_t *slot) {
  if (t->free_head) {
    *slot = t->free_head - 1u;
    t->free_head = t->slots[*slot].next_free;
    return VYRE_OK;
  }
  if (t->capacity >= VYRE_HANDLES_MAX) return VYRE_LIMIT;
  uint32_t cap = t->capacity ? t->capacity * 2u : 16u;
  if (cap > VYRE_HANDLES_MAX) cap = VYRE_HANDLES_MAX;
  vyre_handle_slot *grown = realloc(t->slots, (size_t)cap * sizeof *grown);
  if (!grown) return VYRE_OUT_OF_MEMORY;
  for (uint32_t i = t->capacity; i < cap; i++) {
    grown[i].object = NULL;
    grown[i].generation = 1;
    grown[i].next_free = 0;
  }
  /* Chain the new slots (except the one we take) onto the free list. */
  for (uint32_t i = cap - 1; i > t->capacity; i--) {
    grown[i].next_free = t->free_head;
    t->free_head = i + 1u;
  }
  *slot = t->capacity;
  t->slots = grown;
  t->capacity = cap;
  return VYRE_OK;
}

vyre_status vyre_handles_insert(vyre_handle_table *table, void *object, uint64_t *handle) {
  /* A NULL object would mark its slot free while it is still linked. */
  if (!object || !handle) return VYRE_INVALID_ARGUMENT;
  pthread_mutex_lock(&table->lock);
  uint32_t slot = 0;
  vyre_status st = take_slot(table, &slot);
  if (st == VYRE_OK) {
    table->slots[slot].object = object;
    table->slots[slot].next_free = 0;
    table->live++;
    *handle = pack(table, slot, table->slots[slot].generation);
  }
  pthread_mutex_unlock(&table->lock);
  return st;
}

/* Slot of a live handle, or -1.  Caller holds the lock. */
static int64_t find(vyre_handle_table *t, uint64_t handle) {
  if ((uint16_t)(handle >> SALT_SHIFT) != t->salt) return -1;
  uint32_t idx = (uint32_t)(handle & SLOT_MASK);
  if (idx == 0 || idx > t->capacity) return -1;
  uint32_t slot = idx - 1u;
  if (!t->slots[slot].object) return -1;
  if (t->slots[slot].generation != (uint32_t)(handle >> GEN_SHIFT)) return -1;
  return slot;
}

void *vyre_handles_get(vyre_handle_table *table, uint64_t handle) {
  pthread_mutex_lock(&table->lock);
  int64_t slot = find(table, handle);
  void *obj = slot < 0 ? NULL : table->slots[slot].object;
  pthread_mutex_unlock(&table->lock);
  return obj;
}

/* Free a live slot: its next handle gets the next generation, so every
 * handle it gave out stays stale.  When the generation would wrap, the
 * slot is retired instead (never on the free list again): a generation
 * is never reused, so no stale handle ever becomes valid. */
static void *remove_slot(vyre_handle_table *t, uint32_t slot) {
  vyre_handle_slot *s = &t->slots[slot];
  void *obj = s->object;
  s->object = NULL;
  t->live--;
  if (s->generation == GEN_LAST) {
    t->retired++;
    return obj;
  }
  s->generation++;
  s->next_free = t->free_head;
  t->free_head = slot + 1u;
  return obj;
}

void *vyre_handles_remove(vyre_handle_table *table, uint64_t handle) {
  pthread_mutex_lock(&table->lock);
  int64_t slot = find(table, handle);
  void *obj = slot < 0 ? NULL : remove_slot(table, (uint32_t)slot);
  pthread_mutex_unlock(&table->lock);
  return obj;
}

void *vyre_handles_pop_any(vyre_handle_table *table) {
  pthread_mutex_lock(&table->lock);
  void *obj = NULL;
  for (uint32_t i = 0; i < table->capacity && table->live; i++) {
    if (table->slots[i].object) {
      obj = remove_slot(table, i);
      break;
    }
  }
  pthread_mutex_unlock(&table->lock);
  return obj;
}

uint32_t vyre_handles_live(vyre_handle_table *table) {
  pthread_mutex_lock(&table->lock);
  uint32_t n = table->live;
  pthread_mutex_unlock(&table->lock);
  return n;
}

vyre_status vyre_handles_insert_failed(vyre_error *err, vyre_status status, const char *call,
                                       const char *objects, const char *fix) {
  switch (status) {
  case VYRE_OK:
    return VYRE_OK;
  case VYRE_LIMIT:
    return vyre_error_set(err, VYRE_LIMIT, 0,
                          "%s: no handle left: one instance holds at most %u live %s (fewer "
                          "once a slot has been reused 2^32 times). Fix: %s, or spread the "
                          "work over another instance",
                          call, (unsigned)VYRE_HANDLES_MAX, objects, fix);
  case VYRE_OUT_OF_MEMORY:
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "%s: out of host memory growing the handle table of %s. Fix: free "
                          "host memory, or %s",
                          call, objects, fix);
  default:
    return vyre_error_set(err, VYRE_INTERNAL, 0,
                          "%s: inserting into the handle table of %s failed with %s. Fix: "
                          "report this bug",
                          call, objects, vyre_status_name(status));
  }
}
