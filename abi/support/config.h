/* config.h -- the one module that reads the environment: every variable vyre reads and how, in one list (meanings: docs/environment.md). */
#ifndef VYRE_SUPPORT_CONFIG_H
#define VYRE_SUPPORT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/*
 * X(ID, NAME, KIND): one row per variable; what each means, who reads it
 * and its default are written once, in docs/environment.md.  KIND says
 * how it is read:
 *   TEXT  a word or list, read with getenv;
 *   PATH  names a file or directory that vyre loads code or data from, or
 *         writes to: read with secure_getenv, so a set-user-ID or
 *         set-group-ID process ignores it;
 *   UINT  a decimal count, read with vyre__env_uint;
 *   BYTES a byte count in the grammar of vyre__parse_bytes (bytes.h:
 *         digits, an optional K, M, G or T in either case), read with
 *         vyre__env_bytes.
 * Nothing else in the tree calls getenv; tests/layout.test checks that,
 * and that docs/environment.md lists exactly these names.
 */
#define VYRE__ENV_MAP(X)                                         \
  X(LOG, "VYRE_LOG", TEXT)                                       \
  X(BACKEND, "VYRE_BACKEND", TEXT)                               \
  X(BACKEND_PATH, "VYRE_BACKEND_PATH", PATH)                     \
  X(BUILD_DIR, "VYRE_BUILD_DIR", PATH)                           \
  X(PROBE, "VYRE_PROBE", TEXT)                                   \
  X(VALIDATE, "VYRE_VALIDATE", TEXT)                             \
  X(VALIDATE_DIR, "VYRE_VALIDATE_DIR", PATH)                     \
  X(REF_THREADS, "VYRE_REF_THREADS", UINT)                       \
  X(CUDA_DRIVER, "VYRE_CUDA_DRIVER", PATH)                       \
  X(CUDA_POOL_DEVICE_BYTES, "VYRE_CUDA_POOL_DEVICE_BYTES", BYTES) \
  X(CUDA_POOL_PINNED_BYTES, "VYRE_CUDA_POOL_PINNED_BYTES", BYTES) \
  X(CUDA_STAGING_CHUNK, "VYRE_CUDA_STAGING_CHUNK", BYTES)         \
  X(CUDA_STAGING_CHUNKS, "VYRE_CUDA_STAGING_CHUNKS", UINT)        \
  X(CUDA_COPY_THREADS, "VYRE_CUDA_COPY_THREADS", UINT)            \
  X(CUDA_SPLIT_CHUNK, "VYRE_CUDA_SPLIT_CHUNK", BYTES)             \
  X(CUDA_MODULE_CACHE, "VYRE_CUDA_MODULE_CACHE", UINT)           \
  X(CUDA_FUSE, "VYRE_CUDA_FUSE", UINT)                           \
  X(CUDA_DISK_CACHE, "VYRE_CUDA_DISK_CACHE", TEXT)               \
  X(CUDA_JIT_OPT_LEVEL, "VYRE_CUDA_JIT_OPT_LEVEL", UINT)         \
  X(CUDA_JIT_DIRECT, "VYRE_CUDA_JIT_DIRECT", TEXT)               \
  X(CACHE_DIR, "VYRE_CACHE_DIR", PATH)                           \
  X(XDG_CACHE_HOME, "XDG_CACHE_HOME", PATH)                      \
  X(HOME, "HOME", PATH)                                          \
  X(PTX_DUMP_DIR, "VYRE_PTX_DUMP_DIR", PATH)                     \
  X(CONFORM_CORPUS, "VYRE_CONFORM_CORPUS", PATH)                 \
  X(SRC_DIR, "VYRE_SRC_DIR", PATH)                               \
  X(PTXAS, "PTXAS", PATH)                                        \
  X(NO_COLOR, "NO_COLOR", TEXT)                                  \
  X(TERM, "TERM", TEXT)                                          \
  X(EXEC_PATH, "PATH", TEXT)

typedef enum vyre__env_id {
#define VYRE__ENV_ID_(id, name, kind) VYRE__ENV_##id,
  VYRE__ENV_MAP(VYRE__ENV_ID_)
#undef VYRE__ENV_ID_
  VYRE__ENV_COUNT_
} vyre__env_id;

/* The variable's name ("VYRE_LOG"). */
const char *vyre__env_name(vyre__env_id id);

/*
 * The variable's value now, or NULL when it is unset or empty.  PATH
 * variables are read with secure_getenv.  The returned pointer is the
 * environment's: valid until the variable is changed.  Each component
 * reads its variables when it starts (the host at vyre_host_open, a
 * backend at create), so a program may set them before that.
 * Thread-safe as getenv is (no concurrent setenv).
 */
const char *vyre__env(vyre__env_id id);

/*
 * A UINT or BYTES variable, checked, without a word on stderr: config is
 * the floor of the support layer and calls nothing in log.  *value gets
 * the value to use: the variable's; `fallback` when it is unset or not
 * in its grammar (UINT: decimal digits; BYTES: vyre__parse_bytes); the
 * nearer bound of [min, max] when it lies outside.  Returns 0 when the
 * value was used as it is (or the variable is unset), -1 when it was
 * not: then `problem` (NULL, or problem_size bytes) holds the warning,
 * "VYRE_X='...' is not a count: using N. Fix: ...".  Thread-safe as
 * vyre__env.
 */
int vyre__env_count(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max,
                    uint64_t *value, char *problem, size_t problem_size);
/* The same, naming what the fallback is: "VYRE_REF_THREADS='x' is not a
 * count: using the online CPUs (16). Fix: ..." for fallback_words "the
 * online CPUs" (NULL: the number alone).  A UINT value of digits past
 * 2^64 - 1 is clamped to max, as a value above the range is. */
int vyre__env_count_as(vyre__env_id id, uint64_t fallback, const char *fallback_words,
                       uint64_t min, uint64_t max, uint64_t *value, char *problem,
                       size_t problem_size);

/*
 * The readers every component calls: vyre__env_count, and its problem
 * printed as a warning (vyre__warn, "vyre: VYRE_X='...' is not ...").
 * Defined in log.c, above config, which reads config and reports what
 * it finds.  vyre__env_uint reads a UINT variable, vyre__env_bytes a
 * BYTES one ("64M", "1G", "4096"); each reads by the variable's KIND.
 */
uint64_t vyre__env_uint(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max);
uint64_t vyre__env_bytes(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max);

#endif /* VYRE_SUPPORT_CONFIG_H */
