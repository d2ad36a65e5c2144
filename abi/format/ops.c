/* ops.c -- the op, op class, type, access, ordering, capability and status tables, generated from the X-macro lists. */
#include <stdio.h>
#include <string.h>

#include "vyre/vyre_program.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the vyre program format is little-endian and so is this implementation"
#endif

static const vyre_op_info op_table[] = {
#define OP_ROW_(name, id, text, cls, mask, flags) {id, cls, flags, mask, #name, text},
    VYRE_OP_MAP(OP_ROW_)
#undef OP_ROW_
};

#define OP_TABLE_COUNT (sizeof op_table / sizeof op_table[0])

/* Each op's row in op_table, plus one, by id (0: no such op); from the same
 * list, so the two cannot disagree.  Decoding looks up every instruction's
 * op: a table read instead of a binary search (15% of a decode). */
enum {
#define OP_POS_(name, id, text, cls, mask, flags) OP_POS_##name,
  VYRE_OP_MAP(OP_POS_)
#undef OP_POS_
  OP_POS_COUNT_
};
static const uint8_t op_row[VYRE_OP_ID_LIMIT] = {
#define OP_ROW_OF_(name, id, text, cls, mask, flags) [id] = OP_POS_##name + 1,
    VYRE_OP_MAP(OP_ROW_OF_)
#undef OP_ROW_OF_
};
_Static_assert(OP_POS_COUNT_ < 255, "op rows fit op_row's uint8_t");

const vyre_op_info *vyre_op_lookup(uint32_t op) {
  if (op >= VYRE_OP_ID_LIMIT || !op_row[op]) return NULL;
  return &op_table[op_row[op] - 1];
}

const vyre_op_info *vyre_op_by_mnemonic(const char *mnemonic, size_t len) {
  for (size_t i = 0; i < OP_TABLE_COUNT; i++) {
    if (strlen(op_table[i].mnemonic) == len && memcmp(op_table[i].mnemonic, mnemonic, len) == 0)
      return &op_table[i];
  }
  return NULL;
}

const vyre_op_info *vyre_op_all(uint32_t *count) {
  if (count) *count = (uint32_t)OP_TABLE_COUNT;
  return op_table;
}

int vyre_op_is_transcendental(uint32_t op) {
  const vyre_op_info *info = vyre_op_lookup(op);
  return info && (info->flags & VYRE_OPF_TRANSCENDENTAL) != 0;
}

static const vyre_op_class_info class_table[] = {
#define CLASS_ROW_(name, res, a, b, c, d, mod, tmin, tmax, usage)                                 \
  {VYRE_RES_##res, {VYRE_OPND_##a, VYRE_OPND_##b, VYRE_OPND_##c, VYRE_OPND_##d}, VYRE_MOD_##mod, \
   tmin, tmax, #name, usage},
    VYRE_OP_CLASS_MAP(CLASS_ROW_)
#undef CLASS_ROW_
};

const vyre_op_class_info *vyre_op_class_lookup(uint32_t op_class) {
  return op_class < VYRE_OC_COUNT_ ? &class_table[op_class] : NULL;
}

uint32_t vyre_op_fields(const vyre_op_info *info) {
  const vyre_op_class_info *cls = &class_table[info->op_class];
  uint32_t fields = 0;
  for (uint32_t k = 0; k < 4; k++)
    if (cls->operand[k] != VYRE_OPND_NONE) fields |= VYRE_FIELD_A << k;
  /* The MMA statements carry their component type (vyre_program.h). */
  if (cls->result != VYRE_RES_NONE || (info->flags & VYRE_OPF_MMA)) fields |= VYRE_FIELD_TYPE;
  /* An axis class uses mod only for the ops that take an axis (lane and
   * sgsize do not). */
  if (cls->mod != VYRE_MOD_NONE && (cls->mod != VYRE_MOD_AXIS || (info->flags & VYRE_OPF_AXIS)))
    fields |= VYRE_FIELD_MOD;
  return fields;
}

static const char *const type_names[] = {
#define TYPE_NAME_(name, text, size) text,
    VYRE_TYPE_MAP(TYPE_NAME_)
#undef TYPE_NAME_
};
static const uint8_t type_sizes[] = {
#define TYPE_SIZE_(name, text, size) size,
    VYRE_TYPE_MAP(TYPE_SIZE_)
#undef TYPE_SIZE_
};

const char *vyre_type_name(uint32_t type) {
  return type < VYRE_T_COUNT_ ? type_names[type] : "?";
}

uint32_t vyre_type_size(uint32_t type) { return type < VYRE_T_COUNT_ ? type_sizes[type] : 0; }

int vyre_type_by_name(const char *name, size_t len) {
  for (uint32_t t = 1; t < VYRE_T_COUNT_; t++) {
    if (strlen(type_names[t]) == len && memcmp(type_names[t], name, len) == 0) return (int)t;
  }
  return -1;
}

uint32_t vyre_type_compute(uint32_t storage_type) {
  switch (storage_type) {
  case VYRE_T_U8:
  case VYRE_T_U16: return VYRE_T_U32;
  case VYRE_T_I8:
  case VYRE_T_I16: return VYRE_T_I32;
  case VYRE_T_F16:
  case VYRE_T_BF16: return VYRE_T_F32;
  default:
    return storage_type < VYRE_T_COUNT_ && (VYRE_TM_STORAGE & VYRE_TBIT(storage_type)) ? storage_type
                                                                                     : VYRE_T_VOID;
  }
}

int vyre_type_is_value(uint32_t type) {
  return type < VYRE_T_COUNT_ && (VYRE_TM_VALUE & VYRE_TBIT(type)) != 0;
}

const char *vyre_type_list(uint32_t mask, const char *last, char *out, size_t size) {
  if (!size) return out;
  out[0] = '\0';
  uint32_t remaining = 0;
  for (uint32_t t = 1; t < VYRE_T_COUNT_; t++) remaining += (mask & VYRE_TBIT(t)) != 0;
  size_t at = 0;
  for (uint32_t t = 1; t < VYRE_T_COUNT_; t++) {
    if (!(mask & VYRE_TBIT(t))) continue;
    const char *sep = !at ? "" : (remaining == 1 && last) ? last : " ";
    int n = snprintf(out + at, size - at, "%s%s", sep, type_names[t]);
    if (n < 0 || (size_t)n >= size - at) break;
    at += (size_t)n;
    remaining--;
  }
  return out;
}

static const char *const access_names[] = {
#define ACCESS_NAME_(name, text) text,
    VYRE_ACCESS_MAP(ACCESS_NAME_)
#undef ACCESS_NAME_
};

const char *vyre_access_name(uint32_t access) {
  return access < VYRE_ACCESS_COUNT_ ? access_names[access] : "?";
}

int vyre_access_by_name(const char *name, size_t len) {
  for (uint32_t a = 0; a < VYRE_ACCESS_COUNT_; a++) {
    if (strlen(access_names[a]) == len && memcmp(access_names[a], name, len) == 0) return (int)a;
  }
  return -1;
}

static const char *const order_names[] = {
#define ORDER_NAME_(name, text) text,
    VYRE_ORDER_MAP(ORDER_NAME_)
#undef ORDER_NAME_
};

const char *vyre_order_name(uint32_t order) {
  return order < VYRE_ORDER_COUNT_ ? order_names[order] : "?";
}

static const char *const reduce_names[] = {
#define REDUCE_NAME_(name, text) text,
    VYRE_REDUCE_MAP(REDUCE_NAME_)
#undef REDUCE_NAME_
};

const char *vyre_reduce_name(uint32_t kind) {
  return kind < VYRE_REDUCE_COUNT_ ? reduce_names[kind] : "?";
}

const char *vyre_layout_name(uint32_t layout) {
  return layout == VYRE_LAYOUT_ROW ? "row" : layout == VYRE_LAYOUT_COL ? "col" : "?";
}

/* The matrix types: use and component, one row per type (mat_a_f16 first). */
static const struct {
  uint8_t type, use, component;
} matrix_rows[] = {
    {VYRE_T_MAT_A_F16, VYRE_MAT_A, VYRE_T_F16},      {VYRE_T_MAT_A_BF16, VYRE_MAT_A, VYRE_T_BF16},
    {VYRE_T_MAT_A_I8, VYRE_MAT_A, VYRE_T_I8},        {VYRE_T_MAT_A_U8, VYRE_MAT_A, VYRE_T_U8},
    {VYRE_T_MAT_B_F16, VYRE_MAT_B, VYRE_T_F16},      {VYRE_T_MAT_B_BF16, VYRE_MAT_B, VYRE_T_BF16},
    {VYRE_T_MAT_B_I8, VYRE_MAT_B, VYRE_T_I8},        {VYRE_T_MAT_B_U8, VYRE_MAT_B, VYRE_T_U8},
    {VYRE_T_MAT_ACC_F32, VYRE_MAT_ACC, VYRE_T_F32},  {VYRE_T_MAT_ACC_I32, VYRE_MAT_ACC, VYRE_T_I32},
};

int vyre_type_matrix_use(uint32_t type) {
  for (size_t i = 0; i < sizeof matrix_rows / sizeof matrix_rows[0]; i++)
    if (matrix_rows[i].type == type) return matrix_rows[i].use;
  return 0;
}

uint32_t vyre_type_matrix_component(uint32_t type) {
  for (size_t i = 0; i < sizeof matrix_rows / sizeof matrix_rows[0]; i++)
    if (matrix_rows[i].type == type) return matrix_rows[i].component;
  return VYRE_T_VOID;
}

uint32_t vyre_type_matrix(int use, uint32_t component) {
  for (size_t i = 0; i < sizeof matrix_rows / sizeof matrix_rows[0]; i++)
    if (matrix_rows[i].use == use && matrix_rows[i].component == component)
      return matrix_rows[i].type;
  return VYRE_T_VOID;
}

int vyre_mma_shape(uint32_t component, uint32_t *m, uint32_t *n, uint32_t *k) {
  uint32_t kk = component == VYRE_T_F16 || component == VYRE_T_BF16 ? 16u
                : component == VYRE_T_I8 || component == VYRE_T_U8  ? 32u
                                                                     : 0u;
  if (m) *m = kk ? 16u : 0u;
  if (n) *n = kk ? 16u : 0u;
  if (k) *k = kk;
  return kk != 0;
}

uint32_t vyre_mma_buffer_types(uint32_t component) {
  switch (component) {
  case VYRE_T_F16:
  case VYRE_T_BF16: return VYRE_TBIT(component) | VYRE_TBIT(VYRE_T_U16) | VYRE_TBIT(VYRE_T_I16);
  case VYRE_T_I8:
  case VYRE_T_U8: return VYRE_TBIT(VYRE_T_I8) | VYRE_TBIT(VYRE_T_U8);
  case VYRE_T_F32: return VYRE_TBIT(VYRE_T_F32) | VYRE_TBIT(VYRE_T_U32) | VYRE_TBIT(VYRE_T_I32);
  case VYRE_T_I32: return VYRE_TBIT(VYRE_T_I32) | VYRE_TBIT(VYRE_T_U32);
  default: return 0;
  }
}

int vyre_type_matrix_dims(uint32_t type, uint32_t *rows, uint32_t *cols) {
  int use = vyre_type_matrix_use(type);
  uint32_t m = 16, n = 16, k = 0;
  if (use == VYRE_MAT_A || use == VYRE_MAT_B) vyre_mma_shape(vyre_type_matrix_component(type), &m, &n, &k);
  uint32_t r = use == VYRE_MAT_A ? m : use == VYRE_MAT_B ? k : use == VYRE_MAT_ACC ? m : 0;
  uint32_t c = use == VYRE_MAT_A ? k : use == VYRE_MAT_B ? n : use == VYRE_MAT_ACC ? n : 0;
  if (rows) *rows = r;
  if (cols) *cols = c;
  return use != 0;
}

/* Indexed by bit number: the map must be in bit order, which the
 * assertions below check row by row. */
enum {
#define CAP_BIT_(name, ident, words) CAP_BIT_##name,
  VYRE_CAP_MAP(CAP_BIT_)
#undef CAP_BIT_
};
#define CAP_ORDER_(name, ident, words)                                                            \
  _Static_assert(VYRE_CAP_##name == 1ull << CAP_BIT_##name, "VYRE_CAP_MAP row " #name " is out of " \
                 "bit order");
VYRE_CAP_MAP(CAP_ORDER_)
#undef CAP_ORDER_

static const struct {
  const char *name;
  const char *text;
} cap_table[] = {
#define CAP_ROW_(name, ident, words) {ident, words},
    VYRE_CAP_MAP(CAP_ROW_)
#undef CAP_ROW_
};
#define CAP_TABLE_COUNT (sizeof cap_table / sizeof cap_table[0])

const char *vyre_capability_name(uint32_t bit) {
  return bit < CAP_TABLE_COUNT ? cap_table[bit].name : NULL;
}

const char *vyre_capability_text(uint32_t bit) {
  return bit < CAP_TABLE_COUNT ? cap_table[bit].text : NULL;
}

int vyre_capability_by_name(const char *name, size_t len) {
  for (uint32_t b = 0; b < CAP_TABLE_COUNT; b++) {
    if (strlen(cap_table[b].name) == len && memcmp(cap_table[b].name, name, len) == 0) return (int)b;
  }
  return -1;
}

static const char *const status_names[] = {
#define STATUS_NAME_(name, text) "VYRE_" #name,
    VYRE_STATUS_MAP(STATUS_NAME_)
#undef STATUS_NAME_
};
static const char *const status_texts[] = {
#define STATUS_TEXT_(name, text) text,
    VYRE_STATUS_MAP(STATUS_TEXT_)
#undef STATUS_TEXT_
};

const char *vyre_status_name(int status) {
  return status >= 0 && status < VYRE_STATUS_COUNT_ ? status_names[status] : "VYRE_UNKNOWN_STATUS";
}

const char *vyre_status_text(int status) {
  return status >= 0 && status < VYRE_STATUS_COUNT_ ? status_texts[status] : "unknown status";
}
