/* coverage.c -- which ops, types, cast pairs, memory orders, reductions, axes and barrier scopes a corpus exercises, and what it misses. */
#include <string.h>

#include "conform.h"

void cf_coverage_add(cf_coverage *cov, const vyre_program *p) {
  cov->cases++;
  /* Count each combination once per case. */
  static const uint32_t seen_bits = 256 * VYRE_T_COUNT_;
  uint8_t seen[256 * VYRE_T_COUNT_];
  memset(seen, 0, sizeof seen);
  (void)seen_bits;
  for (uint32_t i = 0; i < p->inst_count; i++) {
    const vyre_inst *in = &p->insts[i];
    const vyre_op_info *info = vyre_op_lookup(in->op);
    if (!info) continue;
    uint32_t t = in->type;
    switch (info->op_class) {
    case VYRE_OC_LOAD:
    case VYRE_OC_BUF_LEN:
      t = in->a < p->buffer_count ? p->buffers[in->a].decl.elem_type : 0;
      if (info->op_class == VYRE_OC_BUF_LEN) t = VYRE_T_U32;
      break;
    case VYRE_OC_STORE:
      t = in->a < p->buffer_count ? p->buffers[in->a].decl.elem_type : 0;
      break;
    case VYRE_OC_COMPARE:
    case VYRE_OC_PREDICATE:
      t = in->a < i ? p->value_type[in->a] : 0;
      break;
    case VYRE_OC_CAST: {
      uint32_t from = in->a < i ? p->value_type[in->a] : 0;
      if (from < VYRE_T_COUNT_ && t < VYRE_T_COUNT_) cov->cast[from][t]++;
      break;
    }
    case VYRE_OC_ATOMIC:
    case VYRE_OC_ATOMIC_CAS:
      if (in->mod < VYRE_ORDER_COUNT_) cov->order[in->op][in->mod]++;
      break;
    case VYRE_OC_REDUCE:
      if (in->mod < VYRE_REDUCE_COUNT_ && t < VYRE_T_COUNT_) cov->reduce[in->mod][t]++;
      break;
    case VYRE_OC_BUILTIN:
      if (in->op >= VYRE_OP_INVOCATION_ID && in->op <= VYRE_OP_LOCAL_ID && in->mod < 3)
        cov->axis[in->op - VYRE_OP_INVOCATION_ID][in->mod]++;
      break;
    case VYRE_OC_BARRIER:
      if (in->mod < 2) cov->scope[in->mod]++;
      t = 0;
      break;
    case VYRE_OC_LOOP:
      t = in->a < p->local_count ? p->local_types[in->a] : 0;
      break;
    case VYRE_OC_LET:
    case VYRE_OC_ASSIGN:
      t = in->b < i ? p->value_type[in->b] : 0;
      break;
    default:
      break;
    }
    if (t >= VYRE_T_COUNT_) continue;
    if (!seen[in->op * VYRE_T_COUNT_ + t]) {
      seen[in->op * VYRE_T_COUNT_ + t] = 1;
      cov->op_type[in->op][t]++;
    }
  }
}

/* The types op `info` must be covered with. */
static uint32_t required_types(const vyre_op_info *info, uint64_t storage_types, uint64_t caps) {
  switch (info->op_class) {
  case VYRE_OC_LOAD:
  case VYRE_OC_STORE:
    return (uint32_t)(storage_types & VYRE_TM_STORAGE);
  case VYRE_OC_ATOMIC:
  case VYRE_OC_ATOMIC_CAS:
    return (caps & VYRE_CAP_ATOMIC64) ? VYRE_TM_INT : VYRE_TM_INT32;
  case VYRE_OC_LET:
  case VYRE_OC_ASSIGN:
    return VYRE_TM_VALUE;
  case VYRE_OC_LOOP:
    return VYRE_TM_INT32;
  case VYRE_OC_SHUFFLE:
    return VYRE_TM_VALUE;
  case VYRE_OC_BALLOT:
    return VYRE_TM_U32;
  default:
    return info->type_mask ? info->type_mask : 1u; /* statements: void */
  }
}

static void missing(FILE *f, uint32_t *count, const char *fmt, const char *a, const char *b) {
  if (f) {
    fprintf(f, "MISSING ");
    fprintf(f, fmt, a, b);
    fputc('\n', f);
  }
  (*count)++;
}

uint32_t cf_coverage_report(const cf_coverage *cov, const cf_opset *claimed,
                            uint64_t storage_types, uint64_t caps, FILE *f, int verbose) {
  uint32_t nops = 0, combos = 0, miss = 0, ops_counted = 0;
  const vyre_op_info *all = vyre_op_all(&nops);
  for (uint32_t k = 0; k < nops; k++) {
    const vyre_op_info *info = &all[k];
    if (claimed && !cf_opset_has(claimed, info->id)) continue;
    ops_counted++;
    uint32_t need = required_types(info, storage_types, caps);
    char line[512];
    size_t n = (size_t)snprintf(line, sizeof line, "  %-12s", info->mnemonic);
    uint32_t before = miss;
    for (uint32_t t = 0; t < VYRE_T_COUNT_; t++) {
      if (!((need >> t) & 1)) continue;
      combos++;
      uint32_t used = cov->op_type[info->id][t];
      if (n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, " %s(%u)", t ? vyre_type_name(t) : "-",
                              used);
      if (!used) missing(f, &miss, "%s %s", info->mnemonic, t ? vyre_type_name(t) : "(any)");
    }
    if (info->op_class == VYRE_OC_ATOMIC || info->op_class == VYRE_OC_ATOMIC_CAS) {
      for (uint32_t o = 0; o < VYRE_ORDER_COUNT_; o++) {
        combos++;
        if (n < sizeof line)
          n += (size_t)snprintf(line + n, sizeof line - n, " .%s(%u)", vyre_order_name(o),
                                cov->order[info->id][o]);
        if (!cov->order[info->id][o])
          missing(f, &miss, "%s order %s", info->mnemonic, vyre_order_name(o));
      }
    }
    if (info->op_class == VYRE_OC_REDUCE) {
      for (uint32_t r = 0; r < VYRE_REDUCE_COUNT_; r++) {
        uint32_t types = r <= VYRE_REDUCE_MAX ? VYRE_TM_NUM : VYRE_TM_INT;
        for (uint32_t t = 0; t < VYRE_T_COUNT_; t++) {
          if (!((types >> t) & 1)) continue;
          combos++;
          if (!cov->reduce[r][t]) {
            char what[32];
            snprintf(what, sizeof what, "%s", vyre_reduce_name(r));
            missing(f, &miss, "reduce.%s %s", what, vyre_type_name(t));
          }
        }
      }
    }
    if (info->op_class == VYRE_OC_CAST) {
      for (uint32_t a = 0; a < VYRE_T_COUNT_; a++) {
        if (!((VYRE_TM_VALUE >> a) & 1)) continue;
        for (uint32_t b = 0; b < VYRE_T_COUNT_; b++) {
          if (!((VYRE_TM_VALUE >> b) & 1)) continue;
          combos++;
          if (!cov->cast[a][b]) missing(f, &miss, "cast %s -> %s", vyre_type_name(a), vyre_type_name(b));
        }
      }
    }
    if (info->id >= VYRE_OP_INVOCATION_ID && info->id <= VYRE_OP_LOCAL_ID) {
      static const char *axes[] = {"x", "y", "z"};
      for (uint32_t ax = 0; ax < 3; ax++) {
        combos++;
        if (!cov->axis[info->id - VYRE_OP_INVOCATION_ID][ax])
          missing(f, &miss, "%s.%s", info->mnemonic, axes[ax]);
      }
    }
    if (info->op_class == VYRE_OC_BARRIER) {
      combos += 2;
      if (!cov->scope[0]) missing(f, &miss, "%s %s", "barrier", "workgroup");
      if (!cov->scope[1] && (caps & VYRE_CAP_GRID_BARRIER)) missing(f, &miss, "%s %s", "barrier", "grid");
    }
    if (f && (verbose || miss != before)) fprintf(f, "%s\n", line);
  }
  if (f)
    fprintf(f, "coverage: %u cases, %u ops, %u required combinations, %u missing\n", cov->cases,
            ops_counted, combos, miss);
  return miss;
}
