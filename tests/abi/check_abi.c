/* check_abi.c -- the ABI contract at run time: struct layouts, name tables, the op table and error records. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"

/* Check's ck_assert_msg writes a mark point through a pipe on every
 * success; this costs nothing until it fails (the op scan makes 130k). */
#define EXPECT(expr, ...)                   \
  do {                                      \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* ------------------------------------------------------------------ */
/* layout: every boundary struct, field by field (LP64)                */
/* ------------------------------------------------------------------ */
#define OFF(type, field, want)                                                              \
  EXPECT(offsetof(type, field) == (want), #type "." #field " is at %zu, the ABI says %zu", \
                offsetof(type, field), (size_t)(want))
#define SIZE(type, want)                                                                    \
  EXPECT(sizeof(type) == (want), "sizeof(" #type ") is %zu, the ABI says %zu",          \
                sizeof(type), (size_t)(want))

START_TEST(layout_plain_structs) {
  /* Structs without pointers have one layout everywhere. */
  SIZE(vyre_error, 16 + VYRE_ERROR_MESSAGE_MAX);
  OFF(vyre_error, struct_size, 0);
  OFF(vyre_error, status, 4);
  OFF(vyre_error, native_code, 8);
  OFF(vyre_error, message, 16);

  SIZE(vyre_device_profile, 288);
  OFF(vyre_device_profile, struct_size, 0);
  OFF(vyre_device_profile, ordinal, 4);
  OFF(vyre_device_profile, name, 8);
  OFF(vyre_device_profile, backend_id, 136);
  OFF(vyre_device_profile, compute_major, 168);
  OFF(vyre_device_profile, compute_minor, 172);
  OFF(vyre_device_profile, compute_units, 176);
  OFF(vyre_device_profile, subgroup_size, 180);
  OFF(vyre_device_profile, max_workgroup_size, 184);
  OFF(vyre_device_profile, max_invocations_per_workgroup, 196);
  OFF(vyre_device_profile, max_workgroups, 200);
  OFF(vyre_device_profile, shared_memory_per_workgroup, 212);
  OFF(vyre_device_profile, total_memory, 216);
  OFF(vyre_device_profile, free_memory, 224);
  OFF(vyre_device_profile, l2_bytes, 232);
  OFF(vyre_device_profile, memory_bus_bits, 240);
  OFF(vyre_device_profile, memory_clock_khz, 244);
  OFF(vyre_device_profile, driver_version, 248);
  OFF(vyre_device_profile, device_count, 252);
  OFF(vyre_device_profile, capabilities, 256);
  OFF(vyre_device_profile, resident_budget, 264);
  OFF(vyre_device_profile, uuid, 272); /* appended within 1.1 */

  SIZE(vyre_timing, 40);
  OFF(vyre_timing, struct_size, 0);
  OFF(vyre_timing, valid, 4);
  OFF(vyre_timing, wall_ns, 8);
  OFF(vyre_timing, device_ns, 16);
  OFF(vyre_timing, enqueue_ns, 24);
  OFF(vyre_timing, wait_ns, 32);

  OFF(vyre_dispatch_options, struct_size, 0);
  OFF(vyre_dispatch_options, flags, 4);
  OFF(vyre_dispatch_options, workgroup, 8);
  OFF(vyre_dispatch_options, grid, 20);
  OFF(vyre_dispatch_options, fixpoint_iterations, 32);
  OFF(vyre_dispatch_options, ulp_budget, 36);

  SIZE(vyre_metric, 64);
  OFF(vyre_metric, name, 0);
  OFF(vyre_metric, value, 56);

  OFF(vyre_backend_options, struct_size, 0);
  OFF(vyre_backend_options, device_ordinal, 4);
  OFF(vyre_backend_options, flags, 8);
  OFF(vyre_backend_options, abi_minor, 12);

  SIZE(vyre_extension_head, 8);
  OFF(vyre_extension_head, struct_size, 0);
  OFF(vyre_extension_head, version, 4);
  EXPECT(sizeof(vyre_status) == 4, "vyre_status is 32 bits");

  SIZE(vyre_descriptor, 88);
  OFF(vyre_descriptor, struct_size, 0);
  OFF(vyre_descriptor, magic, 4);
  OFF(vyre_descriptor, abi_major, 8);
  OFF(vyre_descriptor, abi_minor_min, 10);
  OFF(vyre_descriptor, abi_minor_max, 12);
  OFF(vyre_descriptor, release, 14);
  OFF(vyre_descriptor, registration_size, 16);
  OFF(vyre_descriptor, vtable_size, 20);
  OFF(vyre_descriptor, build_id, 24);
}
END_TEST

START_TEST(layout_pointer_structs) {
  if (sizeof(void *) != 8) return; /* the figures below are LP64; the headers assert ILP32 */
  SIZE(vyre_program_ref, 32);
  OFF(vyre_program_ref, struct_size, 0);
  OFF(vyre_program_ref, flags, 4);
  OFF(vyre_program_ref, bytes, 8);
  OFF(vyre_program_ref, size, 16);
  OFF(vyre_program_ref, pipeline, 24);

  /* 1.1: the extension chains. */
  SIZE(vyre_ext, 16);
  OFF(vyre_ext, struct_size, 0);
  OFF(vyre_ext, type, 4);
  OFF(vyre_ext, next, 8);
  SIZE(vyre_dispatch_options, 48);
  OFF(vyre_dispatch_options, next, 40);
  SIZE(vyre_backend_options, 24);
  OFF(vyre_backend_options, next, 16);
  /* The core limits extension (within 1.1). */
  SIZE(vyre_limits, 32);
  OFF(vyre_limits, head, 0);
  OFF(vyre_limits, timeout_ns, 16);
  OFF(vyre_limits, max_steps, 24);
  SIZE(vyre_limits_info, 16);
  OFF(vyre_limits_info, head, 0);
  OFF(vyre_limits_info, enforced, 8);
  OFF(vyre_limits_info, reserved, 12);
  ck_assert_uint_eq(VYRE_EXT_LIMITS, 0x56590001u);

  SIZE(vyre_input, 16);
  OFF(vyre_input, data, 0);
  OFF(vyre_input, size, 8);
  SIZE(vyre_output, 16);
  OFF(vyre_output, data, 0);
  OFF(vyre_output, size, 8);

  SIZE(vyre_outputs, 16);
  OFF(vyre_outputs, struct_size, 0);
  OFF(vyre_outputs, count, 4);
  OFF(vyre_outputs, items, 8);

  SIZE(vyre_output_slot, 24);
  OFF(vyre_output_slot, data, 0);
  OFF(vyre_output_slot, capacity, 8);
  OFF(vyre_output_slot, size, 16);

  SIZE(vyre_resident_copy, 32);
  OFF(vyre_resident_copy, buffer, 0);
  OFF(vyre_resident_copy, offset, 8);
  OFF(vyre_resident_copy, host, 16);
  OFF(vyre_resident_copy, size, 24);

  SIZE(vyre_sequence_step, 32);
  OFF(vyre_sequence_step, struct_size, 0);
  OFF(vyre_sequence_step, buffer_count, 4);
  OFF(vyre_sequence_step, program, 8);
  OFF(vyre_sequence_step, buffers, 16);
  OFF(vyre_sequence_step, options, 24);

  SIZE(vyre_backend, 16);
  OFF(vyre_backend, struct_size, 0);
  OFF(vyre_backend, reserved, 4);
  OFF(vyre_backend, vt, 8);

  /* The vtable is append-only: each entry keeps its slot forever. */
  SIZE(vyre_backend_vtable, 8 + 26 * 8);
  OFF(vyre_backend_vtable, struct_size, 0);
  OFF(vyre_backend_vtable, reserved, 4);
  OFF(vyre_backend_vtable, destroy, 8);
  OFF(vyre_backend_vtable, device_profile, 16);
  OFF(vyre_backend_vtable, prepare, 24);
  OFF(vyre_backend_vtable, shutdown, 32);
  OFF(vyre_backend_vtable, metrics, 40);
  OFF(vyre_backend_vtable, dispatch, 48);
  OFF(vyre_backend_vtable, dispatch_into, 56);
  OFF(vyre_backend_vtable, dispatch_async, 64);
  OFF(vyre_backend_vtable, pending_poll, 72);
  OFF(vyre_backend_vtable, pending_wait, 80);
  OFF(vyre_backend_vtable, pending_release, 88);
  OFF(vyre_backend_vtable, outputs_free, 96);
  OFF(vyre_backend_vtable, resident_alloc, 104);
  OFF(vyre_backend_vtable, resident_free, 112);
  OFF(vyre_backend_vtable, resident_size, 120);
  OFF(vyre_backend_vtable, resident_upload, 128);
  OFF(vyre_backend_vtable, resident_upload_at, 136);
  OFF(vyre_backend_vtable, resident_download, 144);
  OFF(vyre_backend_vtable, resident_download_range, 152);
  OFF(vyre_backend_vtable, resident_upload_many, 160);
  OFF(vyre_backend_vtable, resident_download_many, 168);
  OFF(vyre_backend_vtable, dispatch_resident, 176);
  OFF(vyre_backend_vtable, dispatch_sequence, 184);
  OFF(vyre_backend_vtable, pipeline_create, 192);
  OFF(vyre_backend_vtable, pipeline_release, 200);
  OFF(vyre_backend_vtable, get_extension, 208); /* 1.1 */

  SIZE(vyre_registration, 88);
  OFF(vyre_registration, struct_size, 0);
  OFF(vyre_registration, abi_major, 4);
  OFF(vyre_registration, abi_minor, 6);
  OFF(vyre_registration, id, 8);
  OFF(vyre_registration, version, 16);
  OFF(vyre_registration, description, 24);
  OFF(vyre_registration, precedence, 32);
  OFF(vyre_registration, op_count, 36);
  OFF(vyre_registration, ops, 40);
  OFF(vyre_registration, capabilities, 48);
  OFF(vyre_registration, storage_types, 56);
  OFF(vyre_registration, create, 64);
  OFF(vyre_registration, op_types, 72);   /* 1.1 */
  OFF(vyre_registration, extensions, 80); /* 1.1 */
}
END_TEST

START_TEST(layout_program_format) {
  SIZE(vyre_program_header, VYRE_PROGRAM_HEADER_SIZE);
  OFF(vyre_program_header, magic, 0);
  OFF(vyre_program_header, version, 4);
  OFF(vyre_program_header, header_size, 6);
  OFF(vyre_program_header, total_size, 8);
  OFF(vyre_program_header, flags, 12);
  OFF(vyre_program_header, workgroup_size, 16);
  OFF(vyre_program_header, buffer_count, 28);
  OFF(vyre_program_header, buffer_offset, 32);
  OFF(vyre_program_header, local_count, 36);
  OFF(vyre_program_header, local_offset, 40);
  OFF(vyre_program_header, inst_count, 44);
  OFF(vyre_program_header, inst_offset, 48);
  OFF(vyre_program_header, string_size, 52);
  OFF(vyre_program_header, string_offset, 56);
  OFF(vyre_program_header, reserved, 60);

  SIZE(vyre_buffer_decl, 32);
  OFF(vyre_buffer_decl, name_offset, 0);
  OFF(vyre_buffer_decl, name_size, 4);
  OFF(vyre_buffer_decl, binding, 8);
  OFF(vyre_buffer_decl, access, 12);
  OFF(vyre_buffer_decl, elem_type, 13);
  OFF(vyre_buffer_decl, flags, 14);
  OFF(vyre_buffer_decl, reserved0, 15);
  OFF(vyre_buffer_decl, count, 16);
  OFF(vyre_buffer_decl, out_range_offset, 20);
  OFF(vyre_buffer_decl, out_range_size, 24);
  OFF(vyre_buffer_decl, reserved1, 28);

  SIZE(vyre_inst, 20);
  OFF(vyre_inst, op, 0);
  OFF(vyre_inst, type, 2);
  OFF(vyre_inst, mod, 3);
  OFF(vyre_inst, a, 4);
  OFF(vyre_inst, b, 8);
  OFF(vyre_inst, c, 12);
  OFF(vyre_inst, d, 16);

  /* The image is little-endian and so must the host be: "VYRP" in memory. */
  uint32_t magic = VYRE_PROGRAM_MAGIC;
  EXPECT(memcmp(&magic, "VYRP", 4) == 0, "the magic reads VYRP in memory order");
  uint32_t pmagic = VYRE_PLUGIN_MAGIC;
  EXPECT(memcmp(&pmagic, "VYPL", 4) == 0, "the plugin magic reads VYPL in memory order");
}
END_TEST

/* ------------------------------------------------------------------ */
/* names: statuses, types, access modes, orders, reductions            */
/* ------------------------------------------------------------------ */
START_TEST(status_names) {
  static const char *const names[] = {
#define N_(name, text) "VYRE_" #name,
      VYRE_STATUS_MAP(N_)
#undef N_
  };
  ck_assert_int_eq(sizeof names / sizeof names[0], VYRE_STATUS_COUNT_);
  ck_assert_int_eq(VYRE_OK, 0);
  for (int s = 0; s < VYRE_STATUS_COUNT_; s++) {
    ck_assert_str_eq(vyre_status_name(s), names[s]);
    const char *text = vyre_status_text(s);
    EXPECT(text && *text, "status %d has a text", s);
    for (int t = 0; t < s; t++)
      EXPECT(strcmp(vyre_status_text(t), text) != 0, "statuses %d and %d share a text", t, s);
  }
  ck_assert_str_eq(vyre_status_name(VYRE_STATUS_COUNT_), "VYRE_UNKNOWN_STATUS");
  ck_assert_str_eq(vyre_status_name(-1), "VYRE_UNKNOWN_STATUS");
  ck_assert_str_eq(vyre_status_text(1000), "unknown status");
  ck_assert_str_eq(vyre_status_name(VYRE_TRAP), "VYRE_TRAP");
  ck_assert_str_eq(vyre_status_text(VYRE_INVALID_PROGRAM), "invalid program");
}
END_TEST

/* Type lists in messages come from the type table. */
START_TEST(type_lists) {
  char out[96];
  ck_assert_str_eq(vyre_type_list(VYRE_TM_VALUE, " or ", out, sizeof out),
                   "bool u32 u64 i32 i64 or f32");
  ck_assert_str_eq(vyre_type_list(VYRE_TM_STORAGE, NULL, out, sizeof out),
                   "bool u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32");
  ck_assert_str_eq(vyre_type_list(VYRE_TM_U32, " or ", out, sizeof out), "u32");
  ck_assert_str_eq(vyre_type_list(0, " or ", out, sizeof out), "");
  ck_assert_str_eq(vyre_type_list(VYRE_TM_VALUE, " or ", out, 9), "bool u32");
}
END_TEST

START_TEST(type_names) {
  static const struct {
    const char *name;
    uint32_t size, compute;
    int value;
  } want[VYRE_T_COUNT_] = {
      {"void", 0, VYRE_T_VOID, 0}, {"bool", 4, VYRE_T_BOOL, 1}, {"u8", 1, VYRE_T_U32, 0},
      {"u16", 2, VYRE_T_U32, 0},   {"u32", 4, VYRE_T_U32, 1},   {"u64", 8, VYRE_T_U64, 1},
      {"i8", 1, VYRE_T_I32, 0},    {"i16", 2, VYRE_T_I32, 0},   {"i32", 4, VYRE_T_I32, 1},
      {"i64", 8, VYRE_T_I64, 1},   {"f16", 2, VYRE_T_F32, 0},   {"bf16", 2, VYRE_T_F32, 0},
      {"f32", 4, VYRE_T_F32, 1},
      /* Matrix types: no size, no load, not values (the types of matrix locals). */
      {"mat_a_f16", 0, VYRE_T_VOID, 0},   {"mat_a_bf16", 0, VYRE_T_VOID, 0},
      {"mat_a_i8", 0, VYRE_T_VOID, 0},    {"mat_a_u8", 0, VYRE_T_VOID, 0},
      {"mat_b_f16", 0, VYRE_T_VOID, 0},   {"mat_b_bf16", 0, VYRE_T_VOID, 0},
      {"mat_b_i8", 0, VYRE_T_VOID, 0},    {"mat_b_u8", 0, VYRE_T_VOID, 0},
      {"mat_acc_f32", 0, VYRE_T_VOID, 0}, {"mat_acc_i32", 0, VYRE_T_VOID, 0}};
  for (uint32_t t = 0; t < VYRE_T_COUNT_; t++) {
    ck_assert_str_eq(vyre_type_name(t), want[t].name);
    EXPECT(vyre_type_size(t) == want[t].size, "%s is %u bytes in a buffer", want[t].name,
                  want[t].size);
    EXPECT(vyre_type_compute(t) == want[t].compute, "a %s load yields %s", want[t].name,
                  vyre_type_name(want[t].compute));
    EXPECT(vyre_type_is_value(t) == want[t].value, "%s is %sa value type", want[t].name,
                  want[t].value ? "" : "not ");
    int by = vyre_type_by_name(want[t].name, strlen(want[t].name));
    EXPECT(by == (t ? (int)t : -1), "'%s' names type %u (void is not nameable), got %d",
                  want[t].name, t, by);
    int matrix = (VYRE_TM_MATRIX >> t) & 1u;
    EXPECT(((VYRE_TM_STORAGE >> t) & 1u) == (t != 0 && !matrix), "%s is a storage type",
           want[t].name);
    EXPECT((vyre_type_matrix_use(t) != 0) == matrix, "%s is a matrix type", want[t].name);
  }
  ck_assert_str_eq(vyre_type_name(VYRE_T_COUNT_), "?");
  ck_assert_int_eq(vyre_type_size(99), 0);
  ck_assert_int_eq(vyre_type_compute(99), VYRE_T_VOID);
  ck_assert_int_eq(vyre_type_by_name("f3", 2), -1);
  ck_assert_int_eq(vyre_type_by_name("f32x", 4), -1);
  ck_assert_int_eq(vyre_type_by_name("f32x", 3), VYRE_T_F32);
  ck_assert_int_eq(vyre_type_by_name("", 0), -1);
}
END_TEST

START_TEST(access_order_reduce_names) {
  static const char *const access[] = {"ro", "rw", "wo", "uniform", "workgroup"};
  ck_assert_int_eq(VYRE_ACCESS_COUNT_, 5);
  for (uint32_t a = 0; a < VYRE_ACCESS_COUNT_; a++) {
    ck_assert_str_eq(vyre_access_name(a), access[a]);
    ck_assert_int_eq(vyre_access_by_name(access[a], strlen(access[a])), (int)a);
  }
  ck_assert_str_eq(vyre_access_name(5), "?");
  ck_assert_int_eq(vyre_access_by_name("r", 1), -1);
  static const char *const orders[] = {"relaxed", "acquire", "release", "acq_rel", "seq_cst"};
  ck_assert_int_eq(VYRE_ORDER_COUNT_, 5);
  for (uint32_t o = 0; o < VYRE_ORDER_COUNT_; o++) ck_assert_str_eq(vyre_order_name(o), orders[o]);
  ck_assert_str_eq(vyre_order_name(5), "?");
  static const char *const reduces[] = {"add", "min", "max", "and", "or", "xor"};
  ck_assert_int_eq(VYRE_REDUCE_COUNT_, 6);
  for (uint32_t k = 0; k < VYRE_REDUCE_COUNT_; k++) ck_assert_str_eq(vyre_reduce_name(k), reduces[k]);
  ck_assert_str_eq(vyre_reduce_name(6), "?");
}
END_TEST

/* ------------------------------------------------------------------ */
/* ops: the table generated from VYRE_OP_MAP                           */
/* ------------------------------------------------------------------ */
static const struct {
  uint32_t id;
  const char *name, *mnemonic;
  uint32_t cls, mask, flags;
} map_rows[] = {
#define ROW_(name, id, text, cls, mask, flags) {id, #name, text, cls, mask, flags},
    VYRE_OP_MAP(ROW_)
#undef ROW_
};
#define MAP_ROWS (sizeof map_rows / sizeof map_rows[0])

START_TEST(op_table_matches_map) {
  uint32_t count = 0;
  const vyre_op_info *all = vyre_op_all(&count);
  EXPECT(count == MAP_ROWS, "vyre_op_all lists %u ops, VYRE_OP_MAP has %zu", count, MAP_ROWS);
  ck_assert_ptr_nonnull(vyre_op_all(NULL));
  for (uint32_t i = 0; i < count; i++) {
    const vyre_op_info *op = &all[i];
    EXPECT(op->id == map_rows[i].id && strcmp(op->name, map_rows[i].name) == 0 &&
                      strcmp(op->mnemonic, map_rows[i].mnemonic) == 0 &&
                      op->op_class == map_rows[i].cls && op->type_mask == map_rows[i].mask &&
                      op->flags == map_rows[i].flags,
                  "row %u of the op table is %s(%u), VYRE_OP_MAP says %s(%u)", i, op->name, op->id,
                  map_rows[i].name, map_rows[i].id);
    EXPECT(op->id > 0 && op->id < VYRE_OP_ID_LIMIT, "op %s id %u is in 1..255", op->name, op->id);
    if (i) EXPECT(all[i - 1].id < op->id, "the op table is in ascending id order (%s %u then %s %u)",
                         all[i - 1].name, all[i - 1].id, op->name, op->id);
    EXPECT(op->op_class < VYRE_OC_COUNT_, "op %s has a known class", op->name);
    int mma = (op->flags & VYRE_OPF_MMA) != 0;
    EXPECT((op->type_mask & ~(mma ? VYRE_TM_MMA_IN | VYRE_TM_MMA_ACC : VYRE_TM_VALUE)) == 0,
           "op %s accepts only value types (MMA ops: their component types)", op->name);
    EXPECT((op->flags & ~(VYRE_OPF_AXIS | VYRE_OPF_SUBGROUP | VYRE_OPF_TRANSCENDENTAL |
                          VYRE_OPF_COLLECTIVE | VYRE_OPF_MMA)) == 0,
           "op %s has only known flags", op->name);
    EXPECT(!(op->flags & VYRE_OPF_COLLECTIVE) || (op->flags & (VYRE_OPF_SUBGROUP | VYRE_OPF_MMA)),
           "collectives are subgroup or MMA ops (%s)", op->name);
    EXPECT(mma == (op->op_class >= VYRE_OC_MMA_FILL && op->op_class <= VYRE_OC_MMA_STORE) &&
               (!mma || (op->flags & VYRE_OPF_COLLECTIVE)),
           "the MMA ops are the MMA classes' and collective (%s)", op->name);
    EXPECT(!(op->flags & VYRE_OPF_AXIS) || op->op_class == VYRE_OC_BUILTIN,
           "only builtins take an axis (%s)", op->name);
    EXPECT(!(op->flags & VYRE_OPF_TRANSCENDENTAL) ||
               (op->op_class == VYRE_OC_UNARY && op->type_mask == VYRE_TM_FLOAT),
           "transcendentals are f32 unary ops (%s)", op->name);
    EXPECT(vyre_op_is_transcendental(op->id) == ((op->flags & VYRE_OPF_TRANSCENDENTAL) != 0),
           "vyre_op_is_transcendental(%s) follows the flag", op->name);
    EXPECT(vyre_op_lookup(op->id) == op, "vyre_op_lookup(%u) finds %s", op->id, op->name);
    EXPECT(vyre_op_by_mnemonic(op->mnemonic, strlen(op->mnemonic)) == op,
                  "vyre_op_by_mnemonic(\"%s\") finds %s", op->mnemonic, op->name);
    for (uint32_t j = 0; j < i; j++) {
      EXPECT(strcmp(all[j].mnemonic, op->mnemonic) != 0, "mnemonic '%s' is unique", op->mnemonic);
      EXPECT(strcmp(all[j].name, op->name) != 0, "name %s is unique", op->name);
    }
    for (const char *c = op->mnemonic; *c; c++)
      EXPECT((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_',
                    "mnemonic '%s' is lower-case [a-z0-9_]", op->mnemonic);
  }
}
END_TEST

START_TEST(op_lookup_rejects_unassigned) {
  uint8_t assigned[VYRE_OP_ID_LIMIT] = {0};
  for (size_t i = 0; i < MAP_ROWS; i++) assigned[map_rows[i].id] = 1;
  for (uint32_t id = 0; id < 0x20000u; id++) {
    const vyre_op_info *op = vyre_op_lookup(id);
    int want = id < VYRE_OP_ID_LIMIT && assigned[id];
    EXPECT((op != NULL) == want, "vyre_op_lookup(%u) is %s", id, want ? "an op" : "NULL");
  }
  ck_assert_ptr_null(vyre_op_lookup(UINT32_MAX));
  ck_assert_ptr_null(vyre_op_by_mnemonic("ad", 2));
  ck_assert_ptr_null(vyre_op_by_mnemonic("addx", 4));
  ck_assert_ptr_null(vyre_op_by_mnemonic("ADD", 3));
  ck_assert_ptr_null(vyre_op_by_mnemonic("", 0));
  /* len, not the NUL, ends the mnemonic. */
  ck_assert_ptr_eq(vyre_op_by_mnemonic("addx", 3), vyre_op_lookup(VYRE_OP_ADD));
  ck_assert_int_eq(VYRE_OP_ADD, 16);
  ck_assert_int_eq(VYRE_OP_TRAP, 202);
}
END_TEST

/* Which ops are transcendental: rcp and sqrt are not (both are IEEE
 * correctly rounded on every backend and need no ulp budget). */
START_TEST(op_transcendental_set) {
  static const uint32_t want[] = {VYRE_OP_RSQRT, VYRE_OP_EXP,  VYRE_OP_EXP2, VYRE_OP_LOG,
                                  VYRE_OP_LOG2,  VYRE_OP_SIN,  VYRE_OP_COS,  VYRE_OP_TAN,
                                  VYRE_OP_ASIN,  VYRE_OP_ACOS, VYRE_OP_ATAN, VYRE_OP_SINH,
                                  VYRE_OP_COSH,  VYRE_OP_TANH};
  uint32_t n = 0;
  for (uint32_t op = 0; op < VYRE_OP_ID_LIMIT; op++) n += (uint32_t)vyre_op_is_transcendental(op);
  ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    EXPECT(vyre_op_is_transcendental(want[i]), "op %u is transcendental", want[i]);
  EXPECT(!vyre_op_is_transcendental(VYRE_OP_RCP), "rcp is not transcendental");
  EXPECT(!vyre_op_is_transcendental(VYRE_OP_SQRT), "sqrt is not transcendental");
  EXPECT(!vyre_op_is_transcendental(UINT32_MAX), "an unassigned id is not transcendental");
}
END_TEST

/* The op class schema (VYRE_OP_CLASS_MAP). */
START_TEST(op_class_schema) {
  ck_assert_ptr_null(vyre_op_class_lookup(VYRE_OC_COUNT_));
  ck_assert_ptr_null(vyre_op_class_lookup(UINT32_MAX));
  ck_assert_int_eq(VYRE_OC_CONST, 0);
  ck_assert_int_eq(VYRE_OC_MMA_STORE, VYRE_OC_COUNT_ - 1);
  int seen_statement = 0;
  for (uint32_t c = 0; c < VYRE_OC_COUNT_; c++) {
    const vyre_op_class_info *k = vyre_op_class_lookup(c);
    ck_assert_ptr_nonnull(k);
    EXPECT(k->text_min <= k->text_max, "class %s: text operand range", k->name);
    EXPECT(k->usage && k->usage[0], "class %s has a usage line", k->name);
    if (k->result == VYRE_RES_NONE) seen_statement = 1;
    else EXPECT(!seen_statement, "value class %s comes before the statements", k->name);
  }
  const vyre_op_info *add = vyre_op_lookup(VYRE_OP_ADD), *gid = vyre_op_lookup(VYRE_OP_INVOCATION_ID);
  const vyre_op_info *lane = vyre_op_lookup(VYRE_OP_SUBGROUP_LANE);
  const vyre_op_info *cas = vyre_op_lookup(VYRE_OP_ATOMIC_CAS), *st = vyre_op_lookup(VYRE_OP_STORE);
  ck_assert_uint_eq(vyre_op_fields(add), VYRE_FIELD_A | VYRE_FIELD_B | VYRE_FIELD_TYPE);
  ck_assert_uint_eq(vyre_op_fields(gid), VYRE_FIELD_TYPE | VYRE_FIELD_MOD);
  ck_assert_uint_eq(vyre_op_fields(lane), VYRE_FIELD_TYPE);
  ck_assert_uint_eq(vyre_op_fields(cas), 0x3fu);
  ck_assert_uint_eq(vyre_op_fields(st), VYRE_FIELD_A | VYRE_FIELD_B | VYRE_FIELD_C);
  /* The MMA statements carry a type (their component); loads and stores a layout. */
  ck_assert_uint_eq(vyre_op_fields(vyre_op_lookup(VYRE_OP_MMA_FILL)),
                    VYRE_FIELD_A | VYRE_FIELD_B | VYRE_FIELD_TYPE);
  ck_assert_uint_eq(vyre_op_fields(vyre_op_lookup(VYRE_OP_MMA_LOAD)), 0x3fu);
  ck_assert_uint_eq(vyre_op_fields(vyre_op_lookup(VYRE_OP_MMA)), 0x1fu);
  ck_assert_uint_eq(vyre_op_fields(vyre_op_lookup(VYRE_OP_MMA_STORE)), 0x3fu);
}
END_TEST

/* The matrix types' tables (vyre_program.h): use, component, shape, dims. */
START_TEST(matrix_types) {
  static const struct {
    uint32_t type, component, rows, cols;
    int use;
  } want[] = {
      {VYRE_T_MAT_A_F16, VYRE_T_F16, 16, 16, VYRE_MAT_A},     {VYRE_T_MAT_A_BF16, VYRE_T_BF16, 16, 16, VYRE_MAT_A},
      {VYRE_T_MAT_A_I8, VYRE_T_I8, 16, 32, VYRE_MAT_A},       {VYRE_T_MAT_A_U8, VYRE_T_U8, 16, 32, VYRE_MAT_A},
      {VYRE_T_MAT_B_F16, VYRE_T_F16, 16, 16, VYRE_MAT_B},     {VYRE_T_MAT_B_BF16, VYRE_T_BF16, 16, 16, VYRE_MAT_B},
      {VYRE_T_MAT_B_I8, VYRE_T_I8, 32, 16, VYRE_MAT_B},       {VYRE_T_MAT_B_U8, VYRE_T_U8, 32, 16, VYRE_MAT_B},
      {VYRE_T_MAT_ACC_F32, VYRE_T_F32, 16, 16, VYRE_MAT_ACC}, {VYRE_T_MAT_ACC_I32, VYRE_T_I32, 16, 16, VYRE_MAT_ACC},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    uint32_t t = want[i].type, r = 0, c = 0;
    EXPECT(vyre_type_matrix_use(t) == want[i].use, "%s: use", vyre_type_name(t));
    EXPECT(vyre_type_matrix_component(t) == want[i].component, "%s: component", vyre_type_name(t));
    EXPECT(vyre_type_matrix(want[i].use, want[i].component) == t, "%s: by use and component",
           vyre_type_name(t));
    EXPECT(vyre_type_matrix_dims(t, &r, &c) == 1 && r == want[i].rows && c == want[i].cols,
           "%s is %u x %u, got %u x %u", vyre_type_name(t), want[i].rows, want[i].cols, r, c);
  }
  uint32_t m, n, k, r = 7, c = 7;
  EXPECT(vyre_mma_shape(VYRE_T_BF16, &m, &n, &k) == 1 && m == 16 && n == 16 && k == 16, "bf16 16x16x16");
  EXPECT(vyre_mma_shape(VYRE_T_U8, &m, &n, &k) == 1 && m == 16 && n == 16 && k == 32, "u8 16x16x32");
#define TB(t) VYRE_TBIT(VYRE_T_##t)
  EXPECT(vyre_mma_buffer_types(VYRE_T_BF16) == (TB(BF16) | TB(U16) | TB(I16)), "bf16 tiles: bf16 u16 i16");
  EXPECT(vyre_mma_buffer_types(VYRE_T_F16) == (TB(F16) | TB(U16) | TB(I16)), "f16 tiles: f16 u16 i16");
  EXPECT(vyre_mma_buffer_types(VYRE_T_U8) == (TB(U8) | TB(I8)), "u8 tiles: u8 i8");
  EXPECT(vyre_mma_buffer_types(VYRE_T_I8) == (TB(U8) | TB(I8)), "i8 tiles: u8 i8");
  EXPECT(vyre_mma_buffer_types(VYRE_T_F32) == (TB(F32) | TB(U32) | TB(I32)), "f32 accumulators: f32 u32 i32");
  EXPECT(vyre_mma_buffer_types(VYRE_T_I32) == (TB(I32) | TB(U32)), "i32 accumulators: i32 u32");
  EXPECT(vyre_mma_buffer_types(VYRE_T_U16) == 0 && vyre_mma_buffer_types(VYRE_T_MAT_A_F16) == 0,
         "no component, no buffers");
#undef TB
  EXPECT(vyre_mma_shape(VYRE_T_F32, &m, &n, &k) == 0 && m == 0 && n == 0 && k == 0, "f32 is no input");
  EXPECT(vyre_type_matrix_use(VYRE_T_F32) == 0 && vyre_type_matrix_component(VYRE_T_F32) == VYRE_T_VOID &&
             vyre_type_matrix(VYRE_MAT_ACC, VYRE_T_F16) == VYRE_T_VOID &&
             vyre_type_matrix_dims(VYRE_T_U32, &r, &c) == 0 && r == 0 && c == 0,
         "value types are no matrix types");
  ck_assert_str_eq(vyre_layout_name(VYRE_LAYOUT_ROW), "row");
  ck_assert_str_eq(vyre_layout_name(VYRE_LAYOUT_COL), "col");
  ck_assert_str_eq(vyre_layout_name(2), "?");
}
END_TEST

/* Capabilities: one name per VYRE_CAP_* bit, from VYRE_CAP_MAP. */
START_TEST(capability_names) {
  static const struct {
    uint64_t cap;
    const char *name;
  } rows[] = {
#define CAP_(name, ident, words) {VYRE_CAP_##name, ident},
      VYRE_CAP_MAP(CAP_)
#undef CAP_
  };
  for (uint32_t b = 0; b < sizeof rows / sizeof rows[0]; b++) {
    EXPECT(rows[b].cap == 1ull << b, "VYRE_CAP_MAP row %u is bit %u", b, b);
    ck_assert_str_eq(vyre_capability_name(b), rows[b].name);
    ck_assert_ptr_nonnull(vyre_capability_text(b));
    ck_assert_int_eq(vyre_capability_by_name(rows[b].name, strlen(rows[b].name)), (int)b);
  }
  ck_assert_str_eq(vyre_capability_name(4), "grid_barrier");
  ck_assert_str_eq(vyre_capability_text(4), "grid barrier");
  ck_assert_str_eq(vyre_capability_name(19), "tensor_cores");
  ck_assert_str_eq(vyre_capability_name(20), "indirect_dispatch");
  ck_assert_str_eq(vyre_capability_name(21), "correctly_rounded");
  ck_assert_ptr_null(vyre_capability_name(sizeof rows / sizeof rows[0]));
  ck_assert_ptr_null(vyre_capability_text(63));
  ck_assert_ptr_null(vyre_capability_name(UINT32_MAX));
  ck_assert_int_eq(vyre_capability_by_name("f1", 2), -1);
  ck_assert_int_eq(vyre_capability_by_name("F16", 3), -1);
  ck_assert_int_eq(vyre_capability_by_name("f16x", 3), 0); /* len ends the name */
}
END_TEST

START_TEST(library_version) {
  uint32_t major = 0, minor = 0;
  ck_assert_msg(strcmp(vyre_version(&major, &minor), PACKAGE_VERSION) == 0,
                "vyre_version names the release libvyre was built from (%s)", PACKAGE_VERSION);
  ck_assert_msg(major == VYRE_ABI_MAJOR && minor == VYRE_ABI_MINOR,
                "vyre_version reports ABI %u.%u, the headers %u.%u", (unsigned)major,
                (unsigned)minor, VYRE_ABI_MAJOR, VYRE_ABI_MINOR);
  ck_assert_msg(vyre_version(NULL, NULL) != NULL, "vyre_version accepts NULL pointers");
}
END_TEST

/* VYRE_DESCRIPTOR_INIT fills every field, release included: a plugin
 * built from these headers says it is of 1.0.0 or later (docs/abi.md,
 * section 12), which a host tells from the 0.1 draft's zero. */
START_TEST(descriptor_init) {
  static const vyre_descriptor d = VYRE_DESCRIPTOR_INIT(0, VYRE_ABI_MINOR, "check_abi");
  ck_assert_uint_eq(d.struct_size, sizeof(vyre_descriptor));
  ck_assert_uint_eq(d.magic, VYRE_PLUGIN_MAGIC);
  ck_assert_uint_eq(d.abi_major, VYRE_ABI_MAJOR);
  ck_assert_uint_eq(d.abi_minor_min, 0);
  ck_assert_uint_eq(d.abi_minor_max, VYRE_ABI_MINOR);
  ck_assert_msg(VYRE_DESCRIPTOR_RELEASE == 1u, "release 1 = built from the headers of 1.0.0 or later");
  ck_assert_msg(d.release == VYRE_DESCRIPTOR_RELEASE,
                "VYRE_DESCRIPTOR_INIT sets release to VYRE_DESCRIPTOR_RELEASE, got %u",
                (unsigned)d.release);
  ck_assert_uint_eq(d.registration_size, sizeof(vyre_registration));
  ck_assert_uint_eq(d.vtable_size, sizeof(vyre_backend_vtable));
  ck_assert_str_eq(d.build_id, "check_abi");
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors: records never written past struct_size                      */
/* ------------------------------------------------------------------ */
START_TEST(error_set_full) {
  vyre_error e = VYRE_ERROR_INIT;
  ck_assert_int_eq(vyre_error_set(&e, VYRE_DRIVER, -7, "cuX failed: %s. Fix: %d", "boom", 3), VYRE_DRIVER);
  ck_assert_int_eq(e.status, VYRE_DRIVER);
  ck_assert_int_eq(e.native_code, -7);
  ck_assert_str_eq(e.message, "cuX failed: boom. Fix: 3");
  vyre_error_prefix(&e, "dispatch '%s'", "k");
  ck_assert_str_eq(e.message, "dispatch 'k': cuX failed: boom. Fix: 3");
  vyre_error_clear(&e);
  ck_assert_int_eq(e.status, VYRE_OK);
  ck_assert_int_eq(e.native_code, 0);
  ck_assert_str_eq(e.message, "");
  ck_assert_int_eq(vyre_error_set(NULL, VYRE_IO, 0, "x"), VYRE_IO);
  vyre_error_prefix(NULL, "x");
  vyre_error_clear(NULL);
  vyre_error_copy(NULL, &e);
  vyre_error_copy(&e, NULL);
}
END_TEST

START_TEST(error_set_truncates_long_messages) {
  vyre_error e = VYRE_ERROR_INIT;
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  vyre_error_set(&e, VYRE_INTERNAL, 0, "%s", big);
  ck_assert_int_eq(strlen(e.message), VYRE_ERROR_MESSAGE_MAX - 1);
  /* A prefix on a full record keeps the record NUL-terminated. */
  vyre_error_prefix(&e, "ctx");
  ck_assert_int_eq(strlen(e.message), VYRE_ERROR_MESSAGE_MAX - 1);
  ck_assert(strncmp(e.message, "ctx: xxx", 8) == 0);
}
END_TEST

/* A record from an older, smaller ABI: bytes past struct_size are not
 * the callee's to write. */
START_TEST(error_set_honours_struct_size) {
  static const uint32_t sizes[] = {0, 4, 8, 12, 16, 17, 26, 100};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uint8_t raw[sizeof(vyre_error)];
    memset(raw, 0xaa, sizeof raw);
    vyre_error *e = (vyre_error *)(void *)raw;
    e->struct_size = sizes[k];
    vyre_error_set(e, VYRE_LIMIT, 42, "a message longer than a few bytes");
    vyre_error_prefix(e, "prefix");
    for (size_t i = sizes[k] < 4 ? 4 : sizes[k]; i < sizeof raw; i++)
      EXPECT(raw[i] == 0xaa, "struct_size %u: byte %zu was written", sizes[k], i);
    if (sizes[k] >= 8) ck_assert_int_eq(e->status, VYRE_LIMIT);
    if (sizes[k] >= 16) ck_assert_int_eq(e->native_code, 42);
    if (sizes[k] > 16) {
      size_t room = sizes[k] - 16;
      EXPECT(memchr(e->message, '\0', room) != NULL, "struct_size %u: message is terminated",
                    sizes[k]);
    }
    vyre_error full = VYRE_ERROR_INIT;
    vyre_error_set(&full, VYRE_IO, 5, "full message");
    vyre_error_copy(e, &full);
    vyre_error_clear(e);
    for (size_t i = sizes[k] < 4 ? 4 : sizes[k]; i < sizeof raw; i++)
      EXPECT(raw[i] == 0xaa, "struct_size %u: copy/clear wrote byte %zu", sizes[k], i);
  }
}
END_TEST

START_TEST(error_copy_reads_only_the_source_record) {
  /* A short source record: its message field is not there to read. */
  uint8_t raw[sizeof(vyre_error)];
  memset(raw, 'z', sizeof raw); /* no NUL anywhere */
  vyre_error *src = (vyre_error *)(void *)raw;
  src->struct_size = 16;
  src->status = VYRE_IO;
  src->native_code = 9;
  vyre_error dst = VYRE_ERROR_INIT;
  vyre_error_copy(&dst, src);
  ck_assert_int_eq(dst.status, VYRE_IO);
  ck_assert_int_eq(dst.native_code, 9);
  ck_assert_str_eq(dst.message, "");
  src->struct_size = 20; /* four message bytes, unterminated */
  vyre_error_copy(&dst, src);
  ck_assert_str_eq(dst.message, "zzzz");
  vyre_error full = VYRE_ERROR_INIT;
  vyre_error_set(&full, VYRE_TRAP, 1, "trap 7 at instruction 3");
  vyre_error_copy(&dst, &full);
  ck_assert_str_eq(dst.message, "trap 7 at instruction 3");
  ck_assert_int_eq(dst.status, VYRE_TRAP);
}
END_TEST

static Suite *abi_suite(void) {
  Suite *s = suite_create("abi");
  TCase *tc = tcase_create("layout");
  tcase_add_test(tc, layout_plain_structs);
  tcase_add_test(tc, layout_pointer_structs);
  tcase_add_test(tc, layout_program_format);
  tcase_add_test(tc, descriptor_init);
  suite_add_tcase(s, tc);
  tc = tcase_create("names");
  tcase_add_test(tc, status_names);
  tcase_add_test(tc, type_names);
  tcase_add_test(tc, type_lists);
  tcase_add_test(tc, access_order_reduce_names);
  tcase_add_test(tc, op_table_matches_map);
  tcase_add_test(tc, op_lookup_rejects_unassigned);
  tcase_add_test(tc, op_transcendental_set);
  tcase_add_test(tc, op_class_schema);
  tcase_add_test(tc, matrix_types);
  tcase_add_test(tc, capability_names);
  tcase_add_test(tc, library_version);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, error_set_full);
  tcase_add_test(tc, error_set_truncates_long_messages);
  tcase_add_test(tc, error_set_honours_struct_size);
  tcase_add_test(tc, error_copy_reads_only_the_source_record);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(abi_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
