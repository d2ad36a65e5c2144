/* config.h -- the one module that reads the environment: every variable vyre reads, its kind and its meaning, in one list (docs/environment.md). */
#ifndef VYRE_SUPPORT_CONFIG_H
#define VYRE_SUPPORT_CONFIG_H

#include <stdint.h>

/*
 * X(ID, NAME, KIND, WHO, MEANING): one row per variable.  KIND says how
 * it is read:
 *   TEXT  a word or list, read with getenv;
 *   PATH  names a file or directory that vyre loads code or data from, or
 *         writes to: read with secure_getenv, so a set-user-ID or
 *         set-group-ID process ignores it;
 *   UINT  a decimal count (validated: a bad value is warned about and the
 *         default used);
 *   BYTES a byte count with an optional K, M or G suffix (likewise).
 * Nothing else in the tree calls getenv for a VYRE_* variable; tests/
 * layout.test checks that, and that docs/environment.md lists every row.
 */
#define VYRE__ENV_MAP(X)                                                                          \
  X(LOG, "VYRE_LOG", TEXT, "all", "tracing: debug or trace print what vyre does to stderr; "      \
    "off silences warnings too (default: warnings only)")                                        \
  X(BACKEND, "VYRE_BACKEND", TEXT, "host", "force the backend with this id")                       \
  X(BACKEND_PATH, "VYRE_BACKEND_PATH", PATH, "host", "colon-separated plugin files or "           \
    "directories searched before the install dir")                                                \
  X(BUILD_DIR, "VYRE_BUILD_DIR", PATH, "host", "a build tree whose plugins are searched "         \
    "(make check sets it)")                                                                       \
  X(REF_THREADS, "VYRE_REF_THREADS", UINT, "reference", "worker threads of the reference "        \
    "backend (default: the online CPUs; 1 runs on the calling thread)")                           \
  X(CUDA_DRIVER, "VYRE_CUDA_DRIVER", PATH, "cuda", "the libcuda to load (default "               \
    "libcuda.so.1; tests name the fake driver)")                                                  \
  X(CUDA_POOL_DEVICE_BYTES, "VYRE_CUDA_POOL_DEVICE_BYTES", BYTES, "cuda", "bytes the device "    \
    "pool keeps cached (default: 1/8 of device memory, at most 2G)")                              \
  X(CUDA_POOL_PINNED_BYTES, "VYRE_CUDA_POOL_PINNED_BYTES", BYTES, "cuda", "bytes the pinned "    \
    "host staging pool keeps cached (default 256M)")                                              \
  X(CUDA_STAGING_CHUNK, "VYRE_CUDA_STAGING_CHUNK", BYTES, "cuda", "chunk size of staged "         \
    "resident transfers (default 8M, at least 256)")                                              \
  X(CUDA_MODULE_CACHE, "VYRE_CUDA_MODULE_CACHE", UINT, "cuda", "compiled programs kept per "      \
    "instance (1..65536, default 64)")                                                           \
  X(CUDA_DISK_CACHE, "VYRE_CUDA_DISK_CACHE", TEXT, "cuda", "0 turns the cubin disk cache off")    \
  X(CACHE_DIR, "VYRE_CACHE_DIR", PATH, "cuda", "disk cache root (cubins under DIR/cuda)")          \
  X(XDG_CACHE_HOME, "XDG_CACHE_HOME", PATH, "cuda", "disk cache root when VYRE_CACHE_DIR is "     \
    "unset (DIR/vyre/cuda)")                                                                      \
  X(HOME, "HOME", PATH, "cuda", "disk cache root when neither is set (~/.cache/vyre/cuda)")       \
  X(PTX_DUMP_DIR, "VYRE_PTX_DUMP_DIR", PATH, "cuda", "write every generated kernel's PTX here")   \
  X(CONFORM_CORPUS, "VYRE_CONFORM_CORPUS", PATH, "cli", "the conformance corpus of vyre "         \
    "conform")                                                                                    \
  X(SRC_DIR, "VYRE_SRC_DIR", PATH, "cli", "a source tree whose tests/conformance is the "         \
    "default corpus (make check sets it)")                                                        \
  X(PTXAS, "PTXAS", PATH, "cli", "the ptxas that vyre fuzz --ptxas runs when none is named")

typedef enum vyre__env_id {
#define VYRE__ENV_ID_(id, name, kind, who, meaning) VYRE__ENV_##id,
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
 * A UINT variable: its value, or `fallback` when it is unset.  A value
 * that is not a decimal number is warned about ("VYRE_X='...' is not a
 * count ...: using N. Fix: ...") and `fallback` used; one outside
 * [min, max] is warned about and clamped to the range.
 */
uint64_t vyre__env_uint(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max);

/* A BYTES variable ("64M", "1G", "4096"), otherwise as vyre__env_uint. */
uint64_t vyre__env_bytes(vyre__env_id id, uint64_t fallback, uint64_t min, uint64_t max);

#endif /* VYRE_SUPPORT_CONFIG_H */
