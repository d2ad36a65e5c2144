/* handles.c -- generation-checked 64-bit handle tables, so stale or foreign handles are errors, not crashes. */
#include <stdatomic.h>
#include <stdlib.h>

#include "vyre/vyre_support.h"

#define SLOT_BITS 32
#define GEN_MASK 0xffffu

static atomic_uint salt_counter;

static uint64_t pack(const vyre_handle_table *t, uint32_t slot, uint32_t gen) {
  return (uint64_t)t->tag << 56 | (uint64_t)t->salt << 48 | (uint64_t)(gen & GEN_MASK) << 32 |
         (uint64_t)(slot + 1u);
}

void vyre_handles_init(vyre_handle_table *table, uint8_t tag) {
  pthread_mutex_init(&table->lock, NULL);
  table->slots = NULL;
  table->capacity = 0;
  table->live = 0;
  table->free_head = 0;
  table->tag = tag;
  /* Distinct tables of one process get distinct salts (mod 256), so a
   * handle from one backend instance is rejected by another. */
  table->salt = (uint8_t)(atomic_fetch_add(&salt_counter, 1u) * 37u + 11u);
}

void vyre_handles_destroy(vyre_handle_table *table) {
  if (!table) return;
  free(table->slots);
  table->slots = NULL;
  table->capacity = 0;
  table->live = 0;
  pthread_mutex_destroy(&table->lock);
}

int vyre_handles_insert(vyre_handle_table *table, void *object, uint64_t *handle) {
  /* A NULL object would mark its slot free while it is still linked. */
  if (!object) return -1;
  pthread_mutex_lock(&table->lock);
  uint32_t slot;
  if (table->free_head) {
    slot = table->free_head - 1u;
    table->free_head = table->slots[slot].next_free;
  } else {
    if (table->capacity >= (1u << 30)) {
      pthread_mutex_unlock(&table->lock);
      return -1;
    }
    uint32_t cap = table->capacity ? table->capacity * 2u : 16u;
    vyre_handle_slot *grown = realloc(table->slots, (size_t)cap * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&table->lock);
      return -1;
    }
    for (uint32_t i = table->capacity; i < cap; i++) {
      grown[i].object = NULL;
      grown[i].generation = 1;
      grown[i].next_free = 0;
    }
    /* Chain the new slots (except the one we take) onto the free list. */
    for (uint32_t i = cap - 1; i > table->capacity; i--) {
      grown[i].next_free = table->free_head;
      table->free_head = i + 1u;
    }
    slot = table->capacity;
    table->slots = grown;
    table->capacity = cap;
  }
  table->slots[slot].object = object;
  table->slots[slot].next_free = 0;
  table->live++;
  *handle = pack(table, slot, table->slots[slot].generation);
  pthread_mutex_unlock(&table->lock);
  return 0;
}

/* Slot of a live handle, or -1.  Caller holds the lock. */
static int64_t find(vyre_handle_table *t, uint64_t handle) {
  if ((uint8_t)(handle >> 56) != t->tag || (uint8_t)(handle >> 48) != t->salt) return -1;
  uint64_t idx = handle & 0xffffffffu;
  if (idx == 0 || idx > t->capacity) return -1;
  uint32_t slot = (uint32_t)idx - 1u;
  if (!t->slots[slot].object) return -1;
  if ((t->slots[slot].generation & GEN_MASK) != ((handle >> 32) & GEN_MASK)) return -1;
  return slot;
}

void *vyre_handles_get(vyre_handle_table *table, uint64_t handle) {
  pthread_mutex_lock(&table->lock);
  int64_t slot = find(table, handle);
  void *obj = slot < 0 ? NULL : table->slots[slot].object;
  pthread_mutex_unlock(&table->lock);
  return obj;
}

static void *remove_slot(vyre_handle_table *t, uint32_t slot) {
  void *obj = t->slots[slot].object;
  t->slots[slot].object = NULL;
  t->slots[slot].generation = (t->slots[slot].generation + 1u) & GEN_MASK;
  if (t->slots[slot].generation == 0) t->slots[slot].generation = 1;
  t->slots[slot].next_free = t->free_head;
  t->free_head = slot + 1u;
  t->live--;
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
