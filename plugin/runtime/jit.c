/* jit.c -- PTX to a loaded CUfunction: the driver's linker with its JIT logs, module loading, PTX dumps (jit.h). */
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/support/config.h"
#include "abi/support/file.h"
#include "util.h"
#include "vyre/vyre_support.h"

#define JIT_LOG_BYTES 8192u
/* CU_JIT_OPTIMIZATION_LEVEL when VYRE_CUDA_JIT_OPT_LEVEL is unset: the
 * driver's own default (`vyre bench` compile_jit_o0..o4 and the workloads
 * at each level measure the trade). */
#define JIT_OPT_LEVEL_DEFAULT 4

void vc_jit_dump_ptx(const uint8_t key[32], const char *entry, const char *ptx, size_t len) {
  const char *dir = vyre__env(VYRE__ENV_PTX_DUMP_DIR);
  if (!dir) return;
  char hex[65], path[1200];
  vyre_hex(key, 32, hex);
  hex[16] = '\0';
  snprintf(path, sizeof path, "%s/%s-%s.ptx", dir, entry, hex);
  vyre_error e = VYRE_ERROR_INIT;
  if (vyre__file_write_atomic(path, ptx, len, 0666, &e) != VYRE_OK) {
    vc_log("VYRE_PTX_DUMP_DIR: %s", e.message);
    return;
  }
  vc_log("PTX of %s written to %s", entry, path);
}

void vc_jit_config_read(vc_jit_config *out) {
  out->opt_level = (uint32_t)vyre__env_uint(VYRE__ENV_CUDA_JIT_OPT_LEVEL, JIT_OPT_LEVEL_DEFAULT, 0, 4);
  const char *direct = vyre__env(VYRE__ENV_CUDA_JIT_DIRECT);
  out->direct = direct && strcmp(direct, "1") == 0;
}

/* The JIT's options: both logs, no verbose log, the optimisation level. */
#define JIT_OPTIONS 6
static void jit_options(const vc_jit_config *jc, char *error_log, char *info_log,
                        CUjit_option opts[JIT_OPTIONS], void *vals[JIT_OPTIONS]) {
  opts[0] = CU_JIT_ERROR_LOG_BUFFER;
  vals[0] = error_log;
  opts[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
  vals[1] = (void *)(uintptr_t)(JIT_LOG_BYTES - 1);
  opts[2] = CU_JIT_INFO_LOG_BUFFER;
  vals[2] = info_log;
  opts[3] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
  vals[3] = (void *)(uintptr_t)(JIT_LOG_BYTES - 1);
  opts[4] = CU_JIT_LOG_VERBOSE;
  vals[4] = (void *)(uintptr_t)0;
  opts[5] = CU_JIT_OPTIMIZATION_LEVEL;
  vals[5] = (void *)(uintptr_t)jc->opt_level;
}

/* A failed JIT call `call` returned r: the error for it, with the log. */
static vyre_status jit_failed(vc_context *cx, const cg_kernel_info *info, const char *call,
                              CUresult r, char *error_log, vyre_error *err) {
  /* Out of memory is not a JIT error: the caller can do something about it. */
  if (vc_is_sticky(r) || r == CUDA_ERROR_OUT_OF_MEMORY)
    return vc_cu_fail(cx, err, r, call, info->entry, NULL);
  const char *name = NULL;
  if (VC_CU(cx, cuGetErrorName, (r, &name)) != CUDA_SUCCESS || !name) name = "unrecognised CUresult";
  error_log[JIT_LOG_BYTES - 1] = '\0';
  size_t l = strlen(error_log);
  while (l && (error_log[l - 1] == '\n' || error_log[l - 1] == ' ')) error_log[--l] = '\0';
  vc_context_count_error(cx);
  return vyre_error_set(err, VYRE_COMPILE, (int64_t)r,
                        "PTX JIT of kernel %s failed: %s returned %s; JIT log: %s. Fix: update "
                        "the NVIDIA driver (the PTX needs ISA %u.%u); if it persists, report a "
                        "codegen bug with the PTX (set VYRE_PTX_DUMP_DIR to keep it)",
                        info->entry, call, name, l ? error_log : "(empty)",
                        info->ptx_isa_major, info->ptx_isa_minor);
}

/* The two JIT log buffers (free both with free()); VYRE_OUT_OF_MEMORY. */
static vyre_status jit_logs(const cg_kernel_info *info, char **error_log, char **info_log,
                            vyre_error *err) {
  *error_log = calloc(1, JIT_LOG_BYTES);
  *info_log = calloc(1, JIT_LOG_BYTES);
  if (*error_log && *info_log) return VYRE_OK;
  return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "compiling %s: no host memory for the JIT logs. Fix: free host memory",
                        info->entry);
}

static void jit_info_log(const cg_kernel_info *info, char *info_log) {
  info_log[JIT_LOG_BYTES - 1] = '\0';
  if (info_log[0]) vc_log("JIT %s: %s", info->entry, info_log);
}

vyre_status vc_jit_link(vc_context *cx, const vc_jit_config *jc, const cg_kernel_info *info,
                        const char *ptx, size_t len, void **cubin, size_t *cubin_size,
                        vyre_error *err) {
  char *error_log = NULL, *info_log = NULL;
  CUlinkState link = NULL;
  *cubin = NULL;
  vyre_status st = jit_logs(info, &error_log, &info_log, err);
  if (st != VYRE_OK) goto done;
  CUjit_option opts[JIT_OPTIONS];
  void *vals[JIT_OPTIONS];
  jit_options(jc, error_log, info_log, opts, vals);
  CUresult r = VC_CU(cx, cuLinkCreate, (JIT_OPTIONS, opts, vals, &link));
  if (r != CUDA_SUCCESS) {
    link = NULL;
    st = vc_cu_fail(cx, err, r, "cuLinkCreate", info->entry, NULL);
    goto done;
  }
  r = VC_CU(cx, cuLinkAddData, (link, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "vyre.ptx", 0, NULL,
                               NULL));
  const char *call = "cuLinkAddData";
  void *image = NULL;
  size_t image_size = 0;
  if (r == CUDA_SUCCESS) {
    call = "cuLinkComplete";
    r = VC_CU(cx, cuLinkComplete, (link, &image, &image_size));
  }
  if (r != CUDA_SUCCESS) {
    st = jit_failed(cx, info, call, r, error_log, err);
    goto done;
  }
  if (!image || !image_size) {
    st = vyre_error_set(err, VYRE_COMPILE, 0,
                        "PTX JIT of kernel %s: cuLinkComplete returned an empty image. Fix: "
                        "update the NVIDIA driver",
                        info->entry);
    goto done;
  }
  /* The image belongs to the link state: copy it before destroying that. */
  *cubin = malloc(image_size);
  if (!*cubin) {
    st = vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0,
                        "compiling %s: no host memory for a %zu-byte cubin. Fix: free host "
                        "memory",
                        info->entry, image_size);
    goto done;
  }
  memcpy(*cubin, image, image_size);
  *cubin_size = image_size;
  jit_info_log(info, info_log);

done:
  if (link) {
    CUresult dr = VC_CU(cx, cuLinkDestroy, (link));
    if (dr != CUDA_SUCCESS) vc_cu_note(cx, dr, "cuLinkDestroy");
  }
  free(error_log);
  free(info_log);
  return st;
}

/* The loaded module's entry and, for a grid-barrier kernel, its co-resident block limit. */
static vyre_status find_entry(vc_context *cx, const cg_kernel_info *info, uint32_t threads,
                              vc_jit_module *out, vyre_error *err) {
  CUresult r = VC_CU(cx, cuModuleGetFunction, (&out->fn, out->module, info->entry));
  if (r != CUDA_SUCCESS) return vc_cu_fail(cx, err, r, "cuModuleGetFunction", info->entry, NULL);
  if (info->uses_grid_barrier) {
    int per_sm = 0;
    r = VC_CU(cx, cuOccupancyMaxActiveBlocksPerMultiprocessor, (&per_sm, out->fn, (int)threads, 0));
    if (r != CUDA_SUCCESS)
      return vc_cu_fail(cx, err, r, "cuOccupancyMaxActiveBlocksPerMultiprocessor", info->entry,
                        NULL);
    uint64_t max =
        (uint64_t)(per_sm > 0 ? per_sm : 0) * (uint64_t)vc_context_device(cx)->sm_count;
    out->coop_max_blocks = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
  }
  return VYRE_OK;
}

vyre_status vc_jit_load(vc_context *cx, const void *cubin, const cg_kernel_info *info,
                        uint32_t threads, vc_jit_module *out, vyre_error *err) {
  CUresult r = VC_CU(cx, cuModuleLoadData, (&out->module, cubin));
  if (r != CUDA_SUCCESS) {
    out->module = NULL;
    return vc_cu_fail(cx, err, r, "cuModuleLoadData", info->entry, NULL);
  }
  return find_entry(cx, info, threads, out, err);
}

vyre_status vc_jit_load_ptx(vc_context *cx, const vc_jit_config *jc, const cg_kernel_info *info,
                            const char *ptx, uint32_t threads, vc_jit_module *out,
                            vyre_error *err) {
  char *error_log = NULL, *info_log = NULL;
  out->module = NULL;
  vyre_status st = jit_logs(info, &error_log, &info_log, err);
  if (st == VYRE_OK) {
    CUjit_option opts[JIT_OPTIONS];
    void *vals[JIT_OPTIONS];
    jit_options(jc, error_log, info_log, opts, vals);
    CUresult r = VC_CU(cx, cuModuleLoadDataEx, (&out->module, ptx, JIT_OPTIONS, opts, vals));
    if (r != CUDA_SUCCESS) {
      out->module = NULL;
      st = jit_failed(cx, info, "cuModuleLoadDataEx", r, error_log, err);
    } else {
      jit_info_log(info, info_log);
      st = find_entry(cx, info, threads, out, err);
    }
  }
  free(error_log);
  free(info_log);
  return st;
}

void vc_jit_unload(vc_context *cx, CUmodule module) {
  if (!module || !vc_cleanup_ok(cx)) return;
  CUresult r = VC_CU(cx, cuModuleUnload, (module));
  if (r != CUDA_SUCCESS) vc_cu_note(cx, r, "cuModuleUnload");
}
