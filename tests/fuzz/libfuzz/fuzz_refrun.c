/* fuzz_refrun.c -- libFuzzer target: a case file (program text and its inputs) decoded and run on the reference backend, in process.
 *
 * The reference has no step budget, so the target bounds the run itself
 * and skips (returns 0 for) a case beyond: at most 256 instructions, every
 * fixed buffer count and every input at most 4096 elements, every loop's
 * bounds constants at most 64 apart with loops nested at most 3 deep, at
 * most 64 workgroups, one fixpoint iteration, one worker thread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host-stub/conform/conform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
VYRE_PLUGIN_EXPORT vyre_status vyre_plugin_entry(uint16_t host_abi_major, uint16_t host_abi_minor,
                                                 const vyre_registration **out, vyre_error *err);

#define MAX_INSTS 256u
#define MAX_ELEMS 4096u
#define MAX_TRIPS 64
#define MAX_LOOP_DEPTH 3u
#define MAX_GROUPS 64u

static vyre_backend *ref;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("VYRE_REF_THREADS", "1", 1);
  setenv("VYRE_LOG", "off", 1);
  const vyre_registration *reg = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_plugin_entry(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &reg, &err) != VYRE_OK ||
      reg->create(NULL, &ref, &err) != VYRE_OK)
    abort();
  return 0;
}

/* A constant's value as a signed 64-bit number (u32/i32/u64/i64). */
static int const_value(const vyre_program *p, uint32_t v, int64_t *out) {
  if (v >= p->inst_count || p->insts[v].op != VYRE_OP_CONST) return -1;
  const vyre_inst *in = &p->insts[v];
  if (in->type == VYRE_T_I32) *out = (int32_t)in->a;
  else if (in->type == VYRE_T_U32) *out = in->a;
  else *out = (int64_t)((uint64_t)in->b << 32 | in->a);
  return 0;
}

static int bounded(const cf_case *c) {
  const vyre_program *p = c->decoded;
  if (p->inst_count > MAX_INSTS || c->options.fixpoint_iterations > 1) return 0;
  if (c->options.grid[0] || c->options.grid[1] || c->options.grid[2]) return 0;
  uint32_t wg = c->options.workgroup[0] ? c->options.workgroup[0] : p->header.workgroup_size[0];
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_buffer_info *b = &p->buffers[i];
    uint32_t esize = vyre_type_size(b->decl.elem_type);
    if (b->decl.count > MAX_ELEMS) return 0;
    if (c->input[i].present && esize && c->input[i].size / esize > MAX_ELEMS) return 0;
    uint64_t elems = b->decl.count ? b->decl.count : (esize ? c->input[i].size / esize : 0);
    if (wg && (elems + wg - 1) / wg > MAX_GROUPS) return 0;
  }
  uint32_t depth = 0, loops_open[VYRE_MAX_NESTING + 1] = {0}, level = 0;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    if (in->op == VYRE_OP_IF || in->op == VYRE_OP_BLOCK || in->op == VYRE_OP_LOOP) {
      int is_loop = in->op == VYRE_OP_LOOP;
      if (is_loop) {
        int64_t lo, hi;
        if (const_value(p, in->b, &lo) || const_value(p, in->c, &hi) || hi - lo > MAX_TRIPS)
          return 0;
        if (++depth > MAX_LOOP_DEPTH) return 0;
      }
      if (level < VYRE_MAX_NESTING) loops_open[++level] = (uint32_t)is_loop;
    } else if (in->op == VYRE_OP_END && level > 0) {
      if (loops_open[level--]) depth--;
    }
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_error err = VYRE_ERROR_INIT;
  cf_case *c = NULL;
  if (cf_case_parse((const char *)data, size, "fuzz.vyre", &c, &err) != VYRE_OK) return 0;
  if (bounded(c)) {
    cf_result r;
    cf_run(ref, c, &r);
    cf_result_free(&r);
  }
  cf_case_free(c);
  return 0;
}
