/* resident.c -- resident buffers of the reference backend: zero-filled host memory behind generation-checked handles. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

typedef struct resident {
  uint64_t size;
  uint8_t *data;
} resident;

#define HANDLE_FMT "0x%016llx"
#define BAD_HANDLE_FIX                                                                      \
  "it is not a live resident buffer of this backend (never allocated, already freed, or " \
  "from another backend). Fix: pass a handle that resident_alloc returned and that was "  \
  "not freed"

static vyre_status bad_handle(vyre_error *err, const char *what, vyre_resident h) {
  return vyre_error_set(err, VYRE_INVALID_HANDLE, 0, "%s: resident handle " HANDLE_FMT ": %s",
                        what, (unsigned long long)h, BAD_HANDLE_FIX);
}

/* [offset, offset + size) inside a buffer of `total` bytes, without overflow. */
static int range_ok(uint64_t total, uint64_t offset, uint64_t size) {
  return size <= total && offset <= total - size;
}

uint8_t *ref_resident_data(ref_backend *b, vyre_resident buffer, uint64_t *size) {
  resident *r = vyre_handles_get(&b->residents, buffer);
  if (!r) return NULL;
  *size = r->size;
  return r->data;
}

static void budget_release(ref_backend *b, uint64_t size) {
  pthread_mutex_lock(&b->budget_lock);
  atomic_fetch_sub(&b->metrics[REF_M_RESIDENT_BYTES], size);
  pthread_mutex_unlock(&b->budget_lock);
}

vyre_status ref_resident_alloc(ref_backend *b, uint64_t size, vyre_resident *out,
                               vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_alloc: out is NULL. Fix: pass a vyre_resident * to receive "
                          "the handle");
  *out = 0;
  if (size == 0)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_alloc: size is 0. Fix: allocate at least one byte");
  pthread_mutex_lock(&b->budget_lock);
  uint64_t live = atomic_load(&b->metrics[REF_M_RESIDENT_BYTES]);
  if (size > b->resident_budget || live > b->resident_budget - size) {
    pthread_mutex_unlock(&b->budget_lock);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                          "resident_alloc: %llu bytes would bring resident memory to %llu bytes, "
                          "over the budget of %llu (half the host memory). Fix: free resident "
                          "buffers or allocate less",
                          (unsigned long long)size, (unsigned long long)(live + size),
                          (unsigned long long)b->resident_budget);
  }
  atomic_fetch_add(&b->metrics[REF_M_RESIDENT_BYTES], size);
  pthread_mutex_unlock(&b->budget_lock);
  ref_metric_max(b, REF_M_RESIDENT_PEAK, live + size);

  vyre_status st = VYRE_OK;
  resident *r = malloc(sizeof *r);
  if (!r) goto fail_struct;
  r->size = size;
  r->data = size <= SIZE_MAX ? calloc((size_t)size, 1) : NULL;
  if (!r->data) goto fail_data;
  st = vyre_handles_insert(&b->residents, r, out);
  if (st != VYRE_OK) {
    st = vyre_handles_insert_failed(err, st, "resident_alloc", "resident buffers",
                                    "free the resident buffers you no longer use "
                                    "(resident_free)");
    goto fail_handle;
  }
  return VYRE_OK;

fail_handle:
  free(r->data);
fail_data:
  free(r);
fail_struct:
  budget_release(b, size);
  if (st != VYRE_OK) return st;
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, ENOMEM,
                        "resident_alloc: out of host memory for %llu bytes. Fix: free resident "
                        "buffers or allocate less",
                        (unsigned long long)size);
}

vyre_status ref_resident_free(ref_backend *b, vyre_resident buffer, vyre_error *err) {
  /* Exclusive: a dispatch reading this buffer finishes first. */
  pthread_rwlock_wrlock(&b->store_lock);
  resident *r = vyre_handles_remove(&b->residents, buffer);
  pthread_rwlock_unlock(&b->store_lock);
  if (!r) return bad_handle(err, "resident_free", buffer);
  budget_release(b, r->size);
  free(r->data);
  free(r);
  return VYRE_OK;
}

void ref_resident_drain(ref_backend *b) {
  resident *r;
  while ((r = vyre_handles_pop_any(&b->residents)) != NULL) {
    budget_release(b, r->size);
    free(r->data);
    free(r);
  }
}

vyre_status ref_resident_size(ref_backend *b, vyre_resident buffer, uint64_t *size,
                              vyre_error *err) {
  if (!size)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "resident_size: size is NULL. Fix: pass a uint64_t * to receive it");
  pthread_rwlock_rdlock(&b->store_lock);
  uint8_t *data = ref_resident_data(b, buffer, size);
  pthread_rwlock_unlock(&b->store_lock);
  if (!data) return bad_handle(err, "resident_size", buffer);
  return VYRE_OK;
}

/* One checked copy between host memory and a resident buffer; the caller
 * holds store_lock. */
static vyre_status copy_one(ref_backend *b, const char *what, vyre_resident buffer,
                            uint64_t offset, void *host, uint64_t size, int upload,
                            int do_copy, vyre_error *err) {
  uint64_t total;
  uint8_t *data = ref_resident_data(b, buffer, &total);
  if (!data) return bad_handle(err, what, buffer);
  if (!range_ok(total, offset, size))
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: range [%llu, %llu + %llu) is outside resident buffer " HANDLE_FMT
                          " of %llu bytes. Fix: keep offset + size within the buffer",
                          what, (unsigned long long)offset, (unsigned long long)offset,
                          (unsigned long long)size, (unsigned long long)buffer,
                          (unsigned long long)total);
  if (size && !host)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: the host pointer is NULL for %llu bytes. Fix: pass host memory",
                          what, (unsigned long long)size);
  if (!do_copy || !size) return VYRE_OK;
  if (upload) {
    memcpy(data + offset, host, (size_t)size);
    ref_metric_add(b, REF_M_BYTES_IN, size);
  } else {
    memcpy(host, data + offset, (size_t)size);
    ref_metric_add(b, REF_M_BYTES_OUT, size);
  }
  return VYRE_OK;
}

vyre_status ref_resident_upload(ref_backend *b, vyre_resident buffer, const void *data,
                                uint64_t size, vyre_error *err) {
  pthread_rwlock_rdlock(&b->store_lock);
  uint64_t total;
  vyre_status st;
  if (!ref_resident_data(b, buffer, &total)) st = bad_handle(err, "resident_upload", buffer);
  else if (size != total)
    st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "resident_upload: %llu bytes given, resident buffer " HANDLE_FMT
                        " holds %llu. Fix: upload exactly the buffer's size, or use "
                        "resident_upload_at for part of it",
                        (unsigned long long)size, (unsigned long long)buffer,
                        (unsigned long long)total);
  else
    st = copy_one(b, "resident_upload", buffer, 0, (void *)(uintptr_t)data, size, 1, 1, err);
  pthread_rwlock_unlock(&b->store_lock);
  return st;
}

vyre_status ref_resident_upload_at(ref_backend *b, vyre_resident buffer, uint64_t offset,
                                   const void *data, uint64_t size, vyre_error *err) {
  pthread_rwlock_rdlock(&b->store_lock);
  vyre_status st = copy_one(b, "resident_upload_at", buffer, offset, (void *)(uintptr_t)data,
                            size, 1, 1, err);
  pthread_rwlock_unlock(&b->store_lock);
  return st;
}

vyre_status ref_resident_download(ref_backend *b, vyre_resident buffer, void *dst,
                                  uint64_t capacity, vyre_error *err) {
  pthread_rwlock_rdlock(&b->store_lock);
  uint64_t total;
  vyre_status st;
  if (!ref_resident_data(b, buffer, &total)) st = bad_handle(err, "resident_download", buffer);
  else if (capacity < total)
    st = vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                        "resident_download: capacity %llu is below the %llu bytes of resident "
                        "buffer " HANDLE_FMT ". Fix: pass at least %llu bytes, or use "
                        "resident_download_range",
                        (unsigned long long)capacity, (unsigned long long)total,
                        (unsigned long long)buffer, (unsigned long long)total);
  else
    st = copy_one(b, "resident_download", buffer, 0, dst, total, 0, 1, err);
  pthread_rwlock_unlock(&b->store_lock);
  return st;
}

vyre_status ref_resident_download_range(ref_backend *b, vyre_resident buffer,
                                        uint64_t offset, void *dst, uint64_t size,
                                        vyre_error *err) {
  pthread_rwlock_rdlock(&b->store_lock);
  vyre_status st = copy_one(b, "resident_download_range", buffer, offset, dst, size, 0, 1, err);
  pthread_rwlock_unlock(&b->store_lock);
  return st;
}

/* Check every copy, then perform them all: a bad entry leaves every
 * buffer and host range untouched. */
static vyre_status copy_many(ref_backend *b, const char *what,
                             const vyre_resident_copy *copies, uint32_t count, int upload,
                             vyre_error *err) {
  if (count && !copies)
    return vyre_error_set(err, VYRE_INVALID_ARGUMENT, 0,
                          "%s: copies is NULL with count %u. Fix: pass the array of copies",
                          what, count);
  pthread_rwlock_rdlock(&b->store_lock);
  vyre_status st = VYRE_OK;
  for (int pass = 0; pass < 2 && !st; pass++) {
    for (uint32_t i = 0; i < count && !st; i++) {
      char label[64];
      snprintf(label, sizeof label, "%s: copy %u of %u", what, i, count);
      st = copy_one(b, label, copies[i].buffer, copies[i].offset, copies[i].host, copies[i].size,
                    upload, pass == 1, err);
    }
  }
  pthread_rwlock_unlock(&b->store_lock);
  return st;
}

vyre_status ref_resident_upload_many(ref_backend *b, const vyre_resident_copy *copies,
                                     uint32_t count, vyre_error *err) {
  return copy_many(b, "resident_upload_many", copies, count, 1, err);
}

vyre_status ref_resident_download_many(ref_backend *b, const vyre_resident_copy *copies,
                                       uint32_t count, vyre_error *err) {
  return copy_many(b, "resident_download_many", copies, count, 0, err);
}
