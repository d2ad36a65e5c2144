/* check_format_reject.c -- every rejection of the validator (abi/program.c), triggered on purpose, with its status and message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_format.h"

/*
 * The rejections of abi/program.c, function by function, and the rows
 * below that trigger them.  Each row checks the status, that *out stays
 * NULL, that the message contains "Fix:", a phrase of its own, and for
 * instruction rejections "instruction N" with the failing index.
 *
 *  function            rejection                                        rows
 *  ------------------  -----------------------------------------------  -----------------
 *  vyre_program_decode out == NULL (INVALID_ARGUMENT)                   reject_arguments
 *                      bytes NULL with size > 0 (INVALID_ARGUMENT)      reject_arguments
 *                      out of host memory (3 places)                    -- (needs malloc fault injection; not covered)
 *                      local type not a value or matrix type            E1a E1b E1c
 *                      blocks still open at the end                     E2a E2b
 *  check_header        shorter than the header                          H1a H1b H1c
 *                      bad magic                                        H2
 *                      version                                          H3
 *                      header_size / flags / reserved                   H4a H4b H4c
 *                      total_size != bytes given                        H5a H5b
 *                      zero workgroup dimension                         H6
 *                      workgroup over 1024 invocations (LIMIT)          H7
 *                      buffers/locals/insts/strings over limit (LIMIT)  H8a H8b H8c H8d
 *                      no instructions                                  H9
 *                      section offsets off the layout                   H10a..H10e
 *                      non-zero padding                                 H11a H11b
 *  check_buffers       out of host memory                               -- (not covered)
 *                      name not the next bytes / size 0 / > 63 / past   B1a B1b B1c B1d
 *                      name not an identifier                           B2a B2b
 *                      duplicate name                                   B3
 *                      unknown access                                   B4
 *                      element type void / unknown / a matrix type      B5a B5b B5c
 *                      reserved fields / unknown flags                  B6a B6b B6c
 *                      workgroup with binding/flags/count 0/range       B7a B7b B7c B7d
 *                      workgroup memory over 48 KiB (LIMIT)             B8a B8b
 *                      binding not increasing                           B9a B9b
 *                      ro/uniform with the output flag                  B10a B10b
 *                      backend-allocated output with count 0            B11a B11b
 *                      output range on a non-output                     B12
 *                      output range outside the buffer                  B13
 *                      range fields without the range flag              B14
 *                      string section larger than the names             B15
 *  value               operand not earlier                              V1a V1b
 *                      operand is a statement                           V2
 *                      operand's block has ended                        V3
 *                      operand defined before a grid barrier            V4
 *  want_type           operand of the wrong type                        V5 L3 SE1 F1b A5 A6 BA2 SH1 SH2 LA2 LP2
 *  buffer_ref          buffer does not exist                            R1a R1b
 *  slot_ref            local does not exist                             S1a S1b
 *                      local used before its let                        S2 LA3
 *                      local's block has ended                          S3
 *  define_slot         local declared twice (let, loop)                 S4a S4b
 *  push_block          nesting over 256 (LIMIT)                         P1
 *  check_inst          unknown op id                                    I1a I1b I1c
 *    CONST             type not a value type                            C1a C1b
 *                      32-bit constant with high bits                   C2
 *                      bool not 0/1                                     C3
 *                      f32 not canonical                                C4a C4b C4c
 *    LOCAL_GET         type differs from the local                      G1
 *    LOAD              write-only buffer                                L1
 *                      type differs from the element's compute type     L2
 *    BUF_LEN           type not u32                                     BL1
 *    BUILTIN           type not u32                                     BI1
 *                      axis > 2                                         BI2
 *    BINARY/COMPARE    operand types differ                             BN1
 *                      operand type not accepted                        BN2a..BN2d
 *                      wrong result type                                BN3a BN3b
 *    UNARY/PREDICATE   operand type not accepted                        U1a..U1d
 *                      wrong result type                                U2a U2b
 *    SELECT            arms/result types differ                         SE2a SE2b
 *    CAST              target not a value type                          CA1a CA1b
 *    FMA               result not f32                                   F1a
 *    ATOMIC/CAS        buffer not rw/workgroup                          A1a A1b
 *                      element type not an integer                      A2
 *                      type differs from the element type               A3
 *                      unknown memory order                             A4
 *    BALLOT            result not u32                                   BA1
 *    REDUCE            unknown reduction kind                           RD1
 *                      kind not defined for the type                    RD2a RD2b
 *    ASSIGN            assigning a loop counter                         LA1
 *    STORE             ro / uniform buffer                              ST1a ST1b
 *    ELSE              not after an open if (top, loop, twice)          EL1a EL1b EL1c
 *    END               closes no block                                  EN1
 *    LOOP              counter not u32/i32                              LP1
 *    BARRIER           unknown scope                                    BR1
 *                      grid barrier not at the top level                BR2
 *    (all)             unused operand/type/mod field set                UFa..UFi
 *  not_matrix          get/let/assign/loop on a matrix local            MX1 MX2 MX3 MX4
 *  (value ops)         const/cast/load at a matrix type                 MX5 MX6 MX7
 *  mma.c matrix_slot   not a matrix local / the wrong use               MM1 MM2 MA3 MA4 MS3
 *                      local does not exist                             MM5
 *    MMA_FILL          value not the component type                     MM3
 *                      type not the component                           MM4
 *    MMA_LOAD          write-only buffer                                ML1
 *                      buffer element type not the component            ML2
 *                      index / stride not u32                           ML3 ML4
 *                      unknown layout                                   ML5
 *                      type not the component                           ML6
 *    MMA               A and B components differ                        MA1
 *                      C/D not the inputs' accumulator                  MA2 MA6
 *                      type not the A/B component                       MA5
 *    MMA_STORE         ro / uniform buffer                              MS1 MS2
 *                      buffer element type not the component            MS4
 *                      stride not u32                                   MS5
 *                      type not the component                           MS6
 *    (all four)        workgroup not a multiple of 32 invocations       MW1
 *                      unused field set                                 MF1 MF2
 *  analyse_uniformity  MMA op in divergent control flow                 MU1
 *  analyse_uniformity  out of host memory                               -- (not covered)
 *                      loop left early by a divergent return/trap       UN1a UN1b
 *                      after a divergent return/trap                    UN2a UN2b
 *                      in divergent control flow (if, loop, local)      UN3a UN3b UN3c UN3d
 */

typedef struct reject_case {
  const char *id;
  void (*build)(vyre_builder *b);
  void (*patch)(uint8_t **bytes, size_t *size);
  vyre_status status;
  int inst;           /* the instruction the message names, or -1 */
  const char *needle; /* a phrase the message must contain */
} reject_case;

/* ------------------------------------------------------------------ */
/* Byte patches                                                        */
/* ------------------------------------------------------------------ */
static vyre_program_header get_header(const uint8_t *bytes) {
  vyre_program_header h;
  memcpy(&h, bytes, sizeof h);
  return h;
}
static void put_header(uint8_t *bytes, const vyre_program_header *h) { memcpy(bytes, h, sizeof *h); }

static vyre_buffer_decl get_decl(const uint8_t *bytes, uint32_t i) {
  vyre_buffer_decl d;
  memcpy(&d, bytes + VYRE_PROGRAM_HEADER_SIZE + i * sizeof d, sizeof d);
  return d;
}
static void put_decl(uint8_t *bytes, uint32_t i, const vyre_buffer_decl *d) {
  memcpy(bytes + VYRE_PROGRAM_HEADER_SIZE + i * sizeof *d, d, sizeof *d);
}

static void grow(uint8_t **bytes, size_t *size, size_t extra) {
  uint8_t *g = realloc(*bytes, *size + extra);
  ck_assert_ptr_nonnull(g);
  memset(g + *size, 0, extra);
  *bytes = g;
  *size += extra;
}

#define HEADER_PATCH(fn, stmt)                        \
  static void fn(uint8_t **bytes, size_t *size) {     \
    vyre_program_header h = get_header(*bytes);       \
    (void)size;                                       \
    stmt;                                             \
    put_header(*bytes, &h);                           \
  }
#define DECL_PATCH(fn, idx, stmt)                     \
  static void fn(uint8_t **bytes, size_t *size) {     \
    vyre_buffer_decl d = get_decl(*bytes, idx);       \
    (void)size;                                       \
    stmt;                                             \
    put_decl(*bytes, idx, &d);                        \
  }

static void p_size63(uint8_t **bytes, size_t *size) { (void)bytes; *size = 63; }
static void p_size0(uint8_t **bytes, size_t *size) { (void)bytes; *size = 0; }
static void p_size20(uint8_t **bytes, size_t *size) { (void)bytes; *size = 20; }
HEADER_PATCH(p_magic, h.magic ^= 1u)
HEADER_PATCH(p_version, h.version = 2)
HEADER_PATCH(p_header_size, h.header_size = 60)
HEADER_PATCH(p_flags, h.flags = 1)
HEADER_PATCH(p_reserved, h.reserved = 1)
HEADER_PATCH(p_total_plus4, h.total_size += 4)
static void p_trailing(uint8_t **bytes, size_t *size) { grow(bytes, size, 4); }
HEADER_PATCH(p_wg_zero, h.workgroup_size[1] = 0)
HEADER_PATCH(p_wg_big, h.workgroup_size[0] = 64; h.workgroup_size[1] = 32)
HEADER_PATCH(p_buffers_65, h.buffer_count = 65)
HEADER_PATCH(p_locals_big, h.local_count = VYRE_MAX_LOCALS + 1)
HEADER_PATCH(p_insts_big, h.inst_count = VYRE_MAX_INSTS + 1)
HEADER_PATCH(p_strings_big, h.string_size = VYRE_MAX_STRINGS + 1)
HEADER_PATCH(p_buffer_offset, h.buffer_offset += 4)
HEADER_PATCH(p_local_offset, h.local_offset += 4)
HEADER_PATCH(p_inst_offset, h.inst_offset += 4)
HEADER_PATCH(p_string_offset, h.string_offset += 4)
static void p_total_layout(uint8_t **bytes, size_t *size) {
  grow(bytes, size, 4);
  vyre_program_header h = get_header(*bytes);
  h.total_size = (uint32_t)*size;
  put_header(*bytes, &h);
}
static void p_local_padding(uint8_t **bytes, size_t *size) {
  (void)size;
  vyre_program_header h = get_header(*bytes);
  (*bytes)[h.local_offset + h.local_count] = 1;
}
static void p_string_padding(uint8_t **bytes, size_t *size) {
  (void)size;
  vyre_program_header h = get_header(*bytes);
  (*bytes)[h.string_offset + h.string_size] = 1;
}
HEADER_PATCH(p_string_size_plus1, h.string_size += 1)
DECL_PATCH(p_decl1_offset, 1, d.name_offset = 1)
DECL_PATCH(p_decl0_size0, 0, d.name_size = 0)
DECL_PATCH(p_decl0_size64, 0, d.name_size = 64)
DECL_PATCH(p_decl0_size3, 0, d.name_size = 3)
DECL_PATCH(p_decl0_access5, 0, d.access = 5)
DECL_PATCH(p_decl0_elem0, 0, d.elem_type = 0)
DECL_PATCH(p_decl0_elem_unknown, 0, d.elem_type = VYRE_T_COUNT_)
DECL_PATCH(p_decl0_elem_matrix, 0, d.elem_type = VYRE_T_MAT_A_F16)
HEADER_PATCH(p_wg48, h.workgroup_size[0] = 48)
DECL_PATCH(p_decl0_res0, 0, d.reserved0 = 1)
DECL_PATCH(p_decl0_res1, 0, d.reserved1 = 1)
DECL_PATCH(p_decl0_flag4, 0, d.flags |= 4)
DECL_PATCH(p_decl0_binding1, 0, d.binding = 1)
DECL_PATCH(p_decl0_range_no_flag, 0, d.out_range_offset = 4)

/* ------------------------------------------------------------------ */
/* Programs                                                            */
/* ------------------------------------------------------------------ */
#define RAW(op, type, mod, a, b_, c, d) vyre_b_inst(b, VYRE_OP_##op, type, mod, a, b_, c, d)
#define CU32(v) vyre_b_u32(b, v)
#define BUF(name, acc, type, count, flags) \
  vyre_b_buffer(b, name, UINT32_MAX, VYRE_ACCESS_##acc, VYRE_T_##type, count, flags)
#define T(x) VYRE_T_##x

static void b_return(vyre_builder *b) { vyre_b_return(b); }
static void b_nothing(vyre_builder *b) { (void)b; }
static void b_local_return(vyre_builder *b) { vyre_b_local(b, T(U32)); vyre_b_return(b); }
static void b_name_abc(vyre_builder *b) { BUF("abc", READ_ONLY, U32, 0, 0); vyre_b_return(b); }
static void b_two_names(vyre_builder *b) {
  BUF("ab", READ_ONLY, U32, 0, 0);
  BUF("cd", READ_ONLY, U32, 0, 0);
  vyre_b_return(b);
}
static void b_name_ab(vyre_builder *b) { BUF("ab", READ_ONLY, U32, 0, 0); vyre_b_return(b); }
static void b_name_digit(vyre_builder *b) { BUF("9x", READ_ONLY, U32, 0, 0); vyre_b_return(b); }
static void b_name_dash(vyre_builder *b) { BUF("a-b", READ_ONLY, U32, 0, 0); vyre_b_return(b); }
static void b_name_dup(vyre_builder *b) {
  BUF("x", READ_ONLY, U32, 0, 0);
  BUF("x", READ_WRITE, U32, 0, 0);
  vyre_b_return(b);
}
static void b_ro_u32(vyre_builder *b) { BUF("r", READ_ONLY, U32, 0, 0); vyre_b_return(b); }
static void b_wg_u32(vyre_builder *b) { BUF("t", WORKGROUP, U32, 16, 0); vyre_b_return(b); }
static void b_wg_output(vyre_builder *b) { BUF("t", WORKGROUP, U32, 16, VYRE_BUF_OUTPUT); vyre_b_return(b); }
static void b_wg_count0(vyre_builder *b) { BUF("t", WORKGROUP, U32, 0, 0); vyre_b_return(b); }
static void b_wg_range(vyre_builder *b) {
  vyre_b_buffer_range(b, BUF("t", WORKGROUP, U32, 16, 0), 0, 4);
  vyre_b_return(b);
}
static void b_wg_big(vyre_builder *b) { BUF("t", WORKGROUP, F32, 12289, 0); vyre_b_return(b); }
static void b_wg_align(vyre_builder *b) {
  BUF("t", WORKGROUP, U8, 49137, 0);
  BUF("u", WORKGROUP, U8, 10, 0);
  vyre_b_return(b);
}
static void b_binding_same(vyre_builder *b) {
  vyre_b_buffer(b, "a", 3, VYRE_ACCESS_READ_ONLY, T(U32), 0, 0);
  vyre_b_buffer(b, "c", 3, VYRE_ACCESS_READ_ONLY, T(U32), 0, 0);
  vyre_b_return(b);
}
static void b_binding_down(vyre_builder *b) {
  vyre_b_buffer(b, "a", 5, VYRE_ACCESS_READ_ONLY, T(U32), 0, 0);
  BUF("t", WORKGROUP, U32, 4, 0);
  vyre_b_buffer(b, "c", 2, VYRE_ACCESS_READ_ONLY, T(U32), 0, 0);
  vyre_b_return(b);
}
static void b_ro_output(vyre_builder *b) { BUF("r", READ_ONLY, U32, 4, VYRE_BUF_OUTPUT); vyre_b_return(b); }
static void b_uniform_output(vyre_builder *b) { BUF("r", UNIFORM, U32, 4, VYRE_BUF_OUTPUT); vyre_b_return(b); }
static void b_wo_count0(vyre_builder *b) { BUF("w", WRITE_ONLY, U32, 0, 0); vyre_b_return(b); }
static void b_rw_output_count0(vyre_builder *b) { BUF("w", READ_WRITE, U32, 0, VYRE_BUF_OUTPUT); vyre_b_return(b); }
static void b_ro_range(vyre_builder *b) {
  vyre_b_buffer_range(b, BUF("r", READ_ONLY, U32, 4, 0), 0, 4);
  vyre_b_return(b);
}
static void b_wo_range_out(vyre_builder *b) {
  vyre_b_buffer_range(b, BUF("w", WRITE_ONLY, F32, 4, 0), 8, 16);
  vyre_b_return(b);
}
static void b_wo_f32(vyre_builder *b) { BUF("w", WRITE_ONLY, F32, 4, 0); vyre_b_return(b); }

static void b_local_void(vyre_builder *b) { vyre_b_local(b, T(VOID)); vyre_b_return(b); }
static void b_local_u8(vyre_builder *b) { vyre_b_local(b, T(U8)); vyre_b_return(b); }
static void b_local_99(vyre_builder *b) { vyre_b_local(b, (vyre_type)99); vyre_b_return(b); }
static void b_open_if(vyre_builder *b) { vyre_b_if(b, vyre_b_bool(b, 1)); }
static void b_open_loop_in_block(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32));
  vyre_b_block(b);
  uint32_t z = CU32(0);
  vyre_b_loop(b, s, z, z); /* the block and the loop stay open */
}

static void b_self_ref(vyre_builder *b) { RAW(ADD, T(U32), 0, 0, 0, 0, 0); }
static void b_forward_ref(vyre_builder *b) {
  CU32(1);
  RAW(ADD, T(U32), 0, 0, 2, 0, 0);
  CU32(2);
}
static void b_statement_operand(vyre_builder *b) {
  vyre_b_block(b);
  vyre_b_end(b);
  RAW(ADD, T(U32), 0, 0, 0, 0, 0);
}
static void b_ended_block_value(vyre_builder *b) {
  vyre_b_block(b);
  uint32_t v = CU32(5);
  vyre_b_end(b);
  vyre_b_un(b, VYRE_OP_NEG, v);
}
static void b_across_grid(vyre_builder *b) {
  uint32_t v = CU32(5);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  RAW(NEG, T(U32), 0, v, 0, 0, 0);
}
static void b_store_wrong_value(vyre_builder *b) {
  uint32_t o = BUF("o", READ_WRITE, U32, 0, 0);
  uint32_t i = CU32(0), v = vyre_b_f32(b, 1.0f);
  vyre_b_store(b, o, i, v);
}
static void b_no_buffer(vyre_builder *b) { RAW(LOAD, T(U32), 0, 3, CU32(0), 0, 0); }
static void b_store_no_buffer(vyre_builder *b) {
  BUF("r", READ_WRITE, U32, 0, 0);
  uint32_t i = CU32(0);
  RAW(STORE, 0, 0, 1, i, i, 0);
}
static void b_no_local(vyre_builder *b) { RAW(LOCAL_GET, T(U32), 0, 5, 0, 0, 0); }
static void b_let_no_local(vyre_builder *b) { vyre_b_let(b, 0, CU32(1)); }
static void b_get_before_let(vyre_builder *b) { vyre_b_get(b, vyre_b_local(b, T(U32))); }
static void b_local_ended(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32));
  vyre_b_block(b);
  vyre_b_let(b, s, CU32(1));
  vyre_b_end(b);
  vyre_b_get(b, s);
}
static void b_let_twice(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), v = CU32(1);
  vyre_b_let(b, s, v);
  vyre_b_let(b, s, v);
}
static void b_loop_over_let(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), v = CU32(0);
  vyre_b_let(b, s, v);
  vyre_b_loop(b, s, v, v);
  vyre_b_end(b);
}
static void b_deep(vyre_builder *b) {
  for (int i = 0; i < 257; i++) vyre_b_block(b);
  for (int i = 0; i < 257; i++) vyre_b_end(b);
}
static void b_op10(vyre_builder *b) { vyre_b_inst(b, (vyre_op)10, 0, 0, 0, 0, 0, 0); }
static void b_op0(vyre_builder *b) { vyre_b_return(b); vyre_b_inst(b, (vyre_op)0, 0, 0, 0, 0, 0, 0); }
static void b_op300(vyre_builder *b) { vyre_b_inst(b, (vyre_op)300, 0, 0, 0, 0, 0, 0); }
static void b_const_u8(vyre_builder *b) { RAW(CONST, T(U8), 0, 1, 0, 0, 0); }
static void b_const_void(vyre_builder *b) { RAW(CONST, T(VOID), 0, 1, 0, 0, 0); }
static void b_const_high(vyre_builder *b) { RAW(CONST, T(U32), 0, 1, 1, 0, 0); }
static void b_const_bool2(vyre_builder *b) { RAW(CONST, T(BOOL), 0, 2, 0, 0, 0); }
static void b_const_nan_payload(vyre_builder *b) { RAW(CONST, T(F32), 0, 0x7fc00001u, 0, 0, 0); }
static void b_const_subnormal(vyre_builder *b) { RAW(CONST, T(F32), 0, 1, 0, 0, 0); }
static void b_const_neg_nan(vyre_builder *b) { RAW(CONST, T(F32), 0, 0xffc00000u, 0, 0, 0); }
static void b_get_type(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32));
  vyre_b_let(b, s, CU32(1));
  RAW(LOCAL_GET, T(I32), 0, s, 0, 0, 0);
}
static void b_load_wo(vyre_builder *b) {
  uint32_t w = BUF("w", WRITE_ONLY, F32, 4, 0);
  RAW(LOAD, T(F32), 0, w, CU32(0), 0, 0);
}
static void b_load_narrow_type(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, U8, 0, 0);
  RAW(LOAD, T(U8), 0, r, CU32(0), 0, 0);
}
static void b_load_index_i32(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, U32, 0, 0);
  vyre_b_load(b, r, vyre_b_i32(b, 0));
}
static void b_buflen_u64(vyre_builder *b) { RAW(BUF_LEN, T(U64), 0, BUF("r", READ_ONLY, U32, 0, 0), 0, 0, 0); }
static void b_gid_i32(vyre_builder *b) { RAW(INVOCATION_ID, T(I32), 0, 0, 0, 0, 0); }
static void b_gid_axis3(vyre_builder *b) { vyre_b_gid(b, 3); }
static void b_lane_mod(vyre_builder *b) { RAW(SUBGROUP_LANE, T(U32), 1, 0, 0, 0, 0); }
static void b_add_mixed(vyre_builder *b) {
  uint32_t u = CU32(1), i = vyre_b_i32(b, 1);
  RAW(ADD, T(U32), 0, u, i, 0, 0);
}
static void b_mod_f32(vyre_builder *b) { uint32_t f = vyre_b_f32(b, 1.0f); vyre_b_bin(b, VYRE_OP_MOD, f, f); }
static void b_land_u32(vyre_builder *b) { uint32_t v = CU32(1); vyre_b_bin(b, VYRE_OP_LOGICAL_AND, v, v); }
static void b_shl_bool(vyre_builder *b) { uint32_t v = vyre_b_bool(b, 1); vyre_b_bin(b, VYRE_OP_SHL, v, v); }
static void b_lt_bool(vyre_builder *b) { uint32_t v = vyre_b_bool(b, 1); vyre_b_bin(b, VYRE_OP_LT, v, v); }
static void b_add_result(vyre_builder *b) { uint32_t v = CU32(1); RAW(ADD, T(I32), 0, v, v, 0, 0); }
static void b_lt_result(vyre_builder *b) { uint32_t v = CU32(1); RAW(LT, T(U32), 0, v, v, 0, 0); }
static void b_sqrt_u32(vyre_builder *b) { vyre_b_un(b, VYRE_OP_SQRT, CU32(4)); }
static void b_not_u32(vyre_builder *b) { vyre_b_un(b, VYRE_OP_NOT, CU32(4)); }
static void b_isnan_u32(vyre_builder *b) { vyre_b_un(b, VYRE_OP_ISNAN, CU32(4)); }
static void b_unpack_i32(vyre_builder *b) { vyre_b_un(b, VYRE_OP_UNPACK4_LOW, vyre_b_i32(b, 4)); }
static void b_neg_result(vyre_builder *b) { RAW(NEG, T(U32), 0, vyre_b_i32(b, 1), 0, 0, 0); }
static void b_isnan_result(vyre_builder *b) { RAW(ISNAN, T(F32), 0, vyre_b_f32(b, 1.0f), 0, 0, 0); }
static void b_select_cond(vyre_builder *b) { uint32_t v = CU32(1); RAW(SELECT, T(U32), 0, v, v, v, 0); }
static void b_select_arms(vyre_builder *b) {
  uint32_t c = vyre_b_bool(b, 1), u = CU32(1), i = vyre_b_i32(b, 1);
  RAW(SELECT, T(U32), 0, c, u, i, 0);
}
static void b_select_result(vyre_builder *b) {
  uint32_t c = vyre_b_bool(b, 1), u = CU32(1);
  RAW(SELECT, T(I32), 0, c, u, u, 0);
}
static void b_cast_u8(vyre_builder *b) { vyre_b_cast(b, T(U8), CU32(1)); }
static void b_cast_void(vyre_builder *b) { vyre_b_cast(b, T(VOID), CU32(1)); }
static void b_fma_result(vyre_builder *b) { uint32_t f = vyre_b_f32(b, 1.0f); RAW(FMA, T(U32), 0, f, f, f, 0); }
static void b_fma_operand(vyre_builder *b) {
  uint32_t f = vyre_b_f32(b, 1.0f), u = CU32(1);
  vyre_b_fma(b, u, f, f);
}
static void atomic_on(vyre_builder *b, vyre_access acc, vyre_type t, uint32_t type, uint32_t order,
                      uint32_t value_type) {
  int fixed = acc == VYRE_ACCESS_WRITE_ONLY || acc == VYRE_ACCESS_WORKGROUP;
  uint32_t buf = vyre_b_buffer(b, "a", UINT32_MAX, acc, t, fixed ? 4 : 0, 0);
  uint32_t i = CU32(0);
  uint32_t v = vyre_b_const(b, (vyre_type)value_type, value_type == VYRE_T_F32 ? 0x3f800000u : 1u);
  RAW(ATOMIC_ADD, type, order, buf, i, v, 0);
}
static void b_atomic_ro(vyre_builder *b) { atomic_on(b, VYRE_ACCESS_READ_ONLY, T(U32), T(U32), 0, T(U32)); }
static void b_atomic_wo(vyre_builder *b) { atomic_on(b, VYRE_ACCESS_WRITE_ONLY, T(U32), T(U32), 0, T(U32)); }
static void b_atomic_f32(vyre_builder *b) { atomic_on(b, VYRE_ACCESS_READ_WRITE, T(F32), T(F32), 0, T(F32)); }
static void b_atomic_type(vyre_builder *b) { atomic_on(b, VYRE_ACCESS_READ_WRITE, T(U32), T(I32), 0, T(U32)); }
static void b_atomic_order(vyre_builder *b) { atomic_on(b, VYRE_ACCESS_READ_WRITE, T(U32), T(U32), 5, T(U32)); }
static void b_atomic_value(vyre_builder *b) { atomic_on(b, VYRE_ACCESS_WORKGROUP, T(U32), T(U32), 0, T(I32)); }
static void b_cas_desired(vyre_builder *b) {
  uint32_t buf = BUF("a", READ_WRITE, I64, 0, 0);
  uint32_t i = CU32(0), e = vyre_b_i64(b, 1), dd = vyre_b_u64(b, 2);
  vyre_b_cas(b, buf, i, e, dd, VYRE_ORDER_SEQ_CST);
}
static void b_ballot_result(vyre_builder *b) { RAW(SUBGROUP_BALLOT, T(BOOL), 0, vyre_b_bool(b, 1), 0, 0, 0); }
static void b_ballot_operand(vyre_builder *b) { vyre_b_ballot(b, CU32(1)); }
static void b_shuffle_lane(vyre_builder *b) {
  uint32_t v = CU32(1), lane = vyre_b_i32(b, 1);
  vyre_b_shuffle(b, v, lane);
}
static void b_shuffle_type(vyre_builder *b) {
  uint32_t v = CU32(1), lane = CU32(2);
  RAW(SUBGROUP_SHUFFLE, T(I32), 0, v, lane, 0, 0);
}
static void b_reduce_kind(vyre_builder *b) { RAW(SUBGROUP_REDUCE, T(U32), 6, CU32(1), 0, 0, 0); }
static void b_reduce_f32_and(vyre_builder *b) { vyre_b_reduce(b, VYRE_REDUCE_AND, vyre_b_f32(b, 1.0f)); }
static void b_reduce_bool(vyre_builder *b) { vyre_b_reduce(b, VYRE_REDUCE_ADD, vyre_b_bool(b, 1)); }
static void b_assign_counter(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), z = CU32(0);
  vyre_b_loop(b, s, z, z);
  vyre_b_assign(b, s, z);
  vyre_b_end(b);
}
static void b_let_type(vyre_builder *b) { vyre_b_let(b, vyre_b_local(b, T(U32)), vyre_b_i32(b, 1)); }
static void b_assign_before_let(vyre_builder *b) { vyre_b_assign(b, vyre_b_local(b, T(U32)), CU32(1)); }
static void b_store_ro(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, U32, 0, 0), i = CU32(0);
  vyre_b_store(b, r, i, i);
}
static void b_store_uniform(vyre_builder *b) {
  uint32_t r = BUF("r", UNIFORM, U32, 0, 0), i = CU32(0);
  vyre_b_store(b, r, i, i);
}
static void b_else_top(vyre_builder *b) { vyre_b_else(b); }
static void b_else_loop(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), z = CU32(0);
  vyre_b_loop(b, s, z, z);
  vyre_b_else(b);
  vyre_b_end(b);
}
static void b_else_twice(vyre_builder *b) {
  vyre_b_if(b, vyre_b_bool(b, 1));
  vyre_b_else(b);
  vyre_b_else(b);
  vyre_b_end(b);
}
static void b_end_top(vyre_builder *b) { vyre_b_end(b); }
static void b_loop_f32(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(F32)), z = vyre_b_f32(b, 0.0f);
  vyre_b_loop(b, s, z, z);
  vyre_b_end(b);
}
static void b_loop_bounds(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), z = vyre_b_i32(b, 0);
  vyre_b_loop(b, s, z, z);
  vyre_b_end(b);
}
static void b_barrier_scope(vyre_builder *b) { RAW(BARRIER, 0, 2, 0, 0, 0, 0); }
static void b_grid_nested(vyre_builder *b) {
  vyre_b_block(b);
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
  vyre_b_end(b);
}
static void b_uf_return(vyre_builder *b) { RAW(RETURN, 0, 0, 1, 0, 0, 0); }
static void b_uf_store(vyre_builder *b) {
  uint32_t o = BUF("o", READ_WRITE, U32, 0, 0), i = CU32(0);
  RAW(STORE, 0, 0, o, i, i, 1);
}
static void b_uf_let(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), v = CU32(0);
  RAW(LET, T(U32), 0, s, v, 0, 0);
}
static void b_uf_const(vyre_builder *b) { RAW(CONST, T(U32), 1, 5, 0, 0, 0); }
static void b_uf_if(vyre_builder *b) {
  uint32_t c = vyre_b_bool(b, 1);
  RAW(IF, 0, 0, c, 1, 0, 0);
  vyre_b_end(b);
}
static void b_uf_gid(vyre_builder *b) { RAW(INVOCATION_ID, T(U32), 0, 1, 0, 0, 0); }
static void b_uf_trap(vyre_builder *b) { RAW(TRAP, 0, 0, 7, 1, 0, 0); }
static void b_uf_else(vyre_builder *b) {
  vyre_b_if(b, vyre_b_bool(b, 1));
  RAW(ELSE, 0, 0, 0, 0, 1, 0);
  vyre_b_end(b);
}
static void b_uf_barrier(vyre_builder *b) { RAW(BARRIER, T(U32), 0, 0, 0, 0, 0); }

/* gid.x < 3: a condition that differs between invocations. */
static uint32_t divergent_cond(vyre_builder *b) {
  uint32_t g = vyre_b_gid(b, 0), three = CU32(3);
  return vyre_b_bin(b, VYRE_OP_LT, g, three);
}
static void b_loop_left_early(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), lo = CU32(0), hi = CU32(4); /* 0, 1 */
  vyre_b_loop(b, s, lo, hi);                                        /* 2 */
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);                        /* 3 */
  vyre_b_if(b, divergent_cond(b));                                  /* 4 5 6 7 */
  vyre_b_return(b);                                                 /* 8 */
  vyre_b_end(b);
  vyre_b_end(b);
}
static void b_loop_left_early_nested(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32)), t = vyre_b_local(b, T(U32));
  uint32_t lo = CU32(0), hi = CU32(4);          /* 0, 1 */
  vyre_b_loop(b, s, lo, hi);                    /* 2 */
  vyre_b_if(b, vyre_b_bool(b, 1));              /* 3 4 */
  vyre_b_ballot(b, vyre_b_bool(b, 1));          /* 5 6 */
  vyre_b_end(b);                                /* 7 */
  vyre_b_loop(b, t, lo, hi);                    /* 8 */
  vyre_b_if(b, divergent_cond(b));              /* 9 10 11 12 */
  vyre_b_trap(b, 2);                            /* 13 */
  vyre_b_end(b);
  vyre_b_end(b);
  vyre_b_end(b);
}
static void b_after_divergent_return(vyre_builder *b) {
  vyre_b_if(b, divergent_cond(b)); /* 0 1 2 3 */
  vyre_b_return(b);                /* 4 */
  vyre_b_end(b);                   /* 5 */
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
}
static void b_grid_after_trap(vyre_builder *b) {
  vyre_b_if(b, divergent_cond(b)); /* 0 1 2 3 */
  vyre_b_trap(b, 1);               /* 4 */
  vyre_b_end(b);                   /* 5 */
  vyre_b_barrier(b, VYRE_BARRIER_GRID);
}
static void b_barrier_in_divergent_if(vyre_builder *b) {
  vyre_b_if(b, divergent_cond(b)); /* 0 1 2 3 */
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
  vyre_b_end(b);
}
static void b_ballot_in_divergent_loop(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32));
  uint32_t g = vyre_b_gid(b, 0), z = CU32(0); /* 0 1 */
  vyre_b_loop(b, s, z, g);                    /* 2 */
  vyre_b_ballot(b, vyre_b_bool(b, 1));        /* 3 4 */
  vyre_b_end(b);
}
static void b_barrier_divergent_local(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(U32));
  vyre_b_let(b, s, CU32(0));               /* 0 1 */
  vyre_b_assign(b, s, vyre_b_gid(b, 0));   /* 2 3 */
  uint32_t v = vyre_b_get(b, s);           /* 4 */
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, v, CU32(1))); /* 5 6 7 */
  vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP); /* 8 */
  vyre_b_end(b);
}
static void b_reduce_in_else_of_divergent_if(vyre_builder *b) {
  vyre_b_if(b, divergent_cond(b)); /* 0 1 2 3 */
  vyre_b_else(b);                  /* 4 */
  vyre_b_reduce(b, VYRE_REDUCE_MAX, CU32(1)); /* 5 6 */
  vyre_b_end(b);
}

/* MMA: slot 0 is the local the op names first (see each builder). */
#define MAT(x) vyre_b_local(b, VYRE_T_MAT_##x)
static void b_get_matrix(vyre_builder *b) { vyre_b_get(b, MAT(ACC_F32)); }
static void b_let_matrix(vyre_builder *b) { vyre_b_let(b, MAT(ACC_F32), vyre_b_f32(b, 0)); }
static void b_assign_matrix(vyre_builder *b) { vyre_b_assign(b, MAT(ACC_F32), vyre_b_f32(b, 0)); }
static void b_loop_matrix(vyre_builder *b) {
  vyre_b_loop(b, MAT(ACC_I32), vyre_b_i32(b, 0), vyre_b_i32(b, 4));
  vyre_b_end(b);
}
static void b_const_matrix(vyre_builder *b) { RAW(CONST, T(MAT_ACC_F32), 0, 0, 0, 0, 0); }
static void b_cast_matrix(vyre_builder *b) { vyre_b_cast(b, T(MAT_ACC_F32), vyre_b_f32(b, 1)); }
static void b_load_matrix(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F32, 0, 0);
  RAW(LOAD, T(MAT_ACC_F32), 0, r, CU32(0), 0, 0);
}
static void b_fill_value_local(vyre_builder *b) {
  uint32_t s = vyre_b_local(b, T(F32));
  RAW(MMA_FILL, T(F32), 0, s, vyre_b_f32(b, 0), 0, 0);
}
static void b_fill_a_tile(vyre_builder *b) { vyre_b_mma_fill(b, MAT(A_F16), vyre_b_f32(b, 0)); }
static void b_fill_value_type(vyre_builder *b) { vyre_b_mma_fill(b, MAT(ACC_F32), vyre_b_i32(b, 0)); }
static void b_fill_inst_type(vyre_builder *b) {
  uint32_t s = MAT(ACC_F32);
  RAW(MMA_FILL, T(I32), 0, s, vyre_b_f32(b, 0), 0, 0);
}
static void b_fill_no_local(vyre_builder *b) { RAW(MMA_FILL, T(F32), 0, 3, vyre_b_f32(b, 0), 0, 0); }
static void b_mma_load_wo(vyre_builder *b) {
  uint32_t w = BUF("w", WRITE_ONLY, F16, 256, 0), s = MAT(A_F16);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, s, w, CU32(0), CU32(16));
}
static void b_mma_load_elem(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F32, 0, 0), s = MAT(A_F16);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, s, r, CU32(0), CU32(16));
}
static void b_mma_load_wide(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, U32, 0, 0), s = MAT(A_BF16);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, s, r, CU32(0), CU32(16));
}
static void b_mma_load_float16(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F16, 0, 0), s = MAT(B_BF16);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, s, r, CU32(0), CU32(16));
}
static void b_mma_load_acc_i16(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, I16, 0, 0), s = MAT(ACC_F32);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, s, r, CU32(0), CU32(16));
}
static void b_mma_load_index(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F16, 0, 0), s = MAT(A_F16);
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, s, r, vyre_b_i32(b, 0), CU32(16));
}
static void b_mma_load_stride(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F16, 0, 0), s = MAT(B_F16);
  vyre_b_mma_load(b, VYRE_LAYOUT_COL, s, r, CU32(0), vyre_b_f32(b, 16));
}
static void b_mma_load_layout(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F16, 0, 0), s = MAT(A_F16);
  vyre_b_mma_load(b, (vyre_layout)2, s, r, CU32(0), CU32(16));
}
static void b_mma_load_type(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F16, 0, 0), s = MAT(A_F16);
  RAW(MMA_LOAD, T(F32), 0, s, r, CU32(0), CU32(16));
}
/* mma D A B C over locals 0 1 2 3 of the given types. */
static void mma4(vyre_builder *b, vyre_type d, vyre_type a, vyre_type bm, vyre_type c) {
  uint32_t sd = vyre_b_local(b, d), sa = vyre_b_local(b, a), sb = vyre_b_local(b, bm);
  vyre_b_mma(b, sd, sa, sb, vyre_b_local(b, c));
}
static void b_mma_mixed(vyre_builder *b) { mma4(b, T(MAT_ACC_F32), T(MAT_A_F16), T(MAT_B_BF16), T(MAT_ACC_F32)); }
static void b_mma_acc(vyre_builder *b) { mma4(b, T(MAT_ACC_I32), T(MAT_A_F16), T(MAT_B_F16), T(MAT_ACC_I32)); }
static void b_mma_d_is_a(vyre_builder *b) {
  uint32_t a = MAT(A_F16), bm = MAT(B_F16), c = MAT(ACC_F32);
  vyre_b_mma(b, a, a, bm, c);
}
static void b_mma_b_is_a(vyre_builder *b) {
  uint32_t c = MAT(ACC_F32), a = MAT(A_F16);
  vyre_b_mma(b, c, a, a, c);
}
static void b_mma_type(vyre_builder *b) {
  uint32_t c = MAT(ACC_F32), a = MAT(A_F16), bm = MAT(B_F16);
  RAW(MMA, T(F32), 0, c, a, bm, c);
}
static void b_mma_c_differs(vyre_builder *b) { mma4(b, T(MAT_ACC_F32), T(MAT_A_I8), T(MAT_B_I8), T(MAT_ACC_I32)); }
static void b_mma_store_ro(vyre_builder *b) {
  uint32_t r = BUF("r", READ_ONLY, F32, 0, 0), s = MAT(ACC_F32);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, r, CU32(0), CU32(16), s);
}
static void b_mma_store_uniform(vyre_builder *b) {
  uint32_t r = BUF("r", UNIFORM, F32, 0, 0), s = MAT(ACC_F32);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, r, CU32(0), CU32(16), s);
}
static void b_mma_store_a(vyre_builder *b) {
  uint32_t s = MAT(A_F16), o = BUF("o", WRITE_ONLY, F16, 256, 0);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, o, CU32(0), CU32(16), s);
}
static void b_mma_store_elem(vyre_builder *b) {
  uint32_t s = MAT(ACC_F32), o = BUF("o", WRITE_ONLY, U16, 256, 0);
  vyre_b_mma_store(b, VYRE_LAYOUT_COL, o, CU32(0), CU32(16), s);
}
static void b_mma_store_i32_f32(vyre_builder *b) {
  uint32_t s = MAT(ACC_I32), o = BUF("o", WRITE_ONLY, F32, 256, 0);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, o, CU32(0), CU32(16), s);
}
static void b_mma_store_stride(vyre_builder *b) {
  uint32_t s = MAT(ACC_I32), o = BUF("o", WRITE_ONLY, I32, 256, 0);
  vyre_b_mma_store(b, VYRE_LAYOUT_ROW, o, CU32(0), vyre_b_u64(b, 16), s);
}
static void b_mma_store_type(vyre_builder *b) {
  uint32_t s = MAT(ACC_I32), o = BUF("o", WRITE_ONLY, I32, 256, 0);
  RAW(MMA_STORE, T(F32), 0, o, CU32(0), CU32(16), s);
}
static void b_fill_ok(vyre_builder *b) { vyre_b_mma_fill(b, MAT(ACC_F32), vyre_b_f32(b, 0)); }
static void b_fill_field_c(vyre_builder *b) {
  uint32_t s = MAT(ACC_F32);
  RAW(MMA_FILL, T(F32), 0, s, vyre_b_f32(b, 0), 1, 0);
}
static void b_mma_mod(vyre_builder *b) {
  uint32_t c = MAT(ACC_F32), a = MAT(A_F16), bm = MAT(B_F16);
  RAW(MMA, T(F16), 1, c, a, bm, c);
}
static void b_mma_in_divergent_if(vyre_builder *b) {
  uint32_t s = MAT(ACC_I32);
  vyre_b_if(b, divergent_cond(b));         /* 0 1 2 3 */
  vyre_b_mma_fill(b, s, vyre_b_i32(b, 1)); /* 4 5 */
  vyre_b_end(b);
}

#define INV VYRE_INVALID_PROGRAM
#define LIM VYRE_LIMIT
static const reject_case cases[] = {
    {"E1a", b_local_void, NULL, INV, -1, "local 0 has type 0, not a value type"},
    {"E1b", b_local_u8, NULL, INV, -1, "local 0 has type 2, not a value type"},
    {"E1c", b_local_99, NULL, INV, -1, "local 0 has type 99, not a value type nor a matrix type"},
    {"E2a", b_open_if, NULL, INV, 1, "1 block(s) still open at the end (innermost opened at instruction 1)"},
    {"E2b", b_open_loop_in_block, NULL, INV, 2, "2 block(s) still open"},
    {"H1a", b_return, p_size63, INV, -1, "63 bytes is shorter than the 64-byte header"},
    {"H1b", b_return, p_size0, INV, -1, "0 bytes is shorter"},
    {"H1c", b_return, p_size20, INV, -1, "20 bytes is shorter"},
    {"H2", b_return, p_magic, INV, -1, "bad magic"},
    {"H3", b_return, p_version, INV, -1, "format version 2"},
    {"H4a", b_return, p_header_size, INV, -1, "header_size 60"},
    {"H4b", b_return, p_flags, INV, -1, "flags 0x1"},
    {"H4c", b_return, p_reserved, INV, -1, "reserved 1"},
    {"H5a", b_return, p_total_plus4, INV, -1, "header says 88 bytes but 84 were given"},
    {"H5b", b_return, p_trailing, INV, -1, "header says 84 bytes but 88 were given"},
    {"H6", b_return, p_wg_zero, INV, -1, "has a zero dimension"},
    {"H7", b_return, p_wg_big, LIM, -1, "64 x 32 x 1 exceeds 1024 invocations"},
    {"H8a", b_return, p_buffers_65, LIM, -1, "65 buffers"},
    {"H8b", b_return, p_locals_big, LIM, -1, "65537 locals"},
    {"H8c", b_return, p_insts_big, LIM, -1, "4194305 instructions"},
    {"H8d", b_return, p_strings_big, LIM, -1, "1048577 string bytes"},
    {"H9", b_nothing, NULL, INV, -1, "the body has no instructions"},
    {"H10a", b_return, p_buffer_offset, INV, -1, "header field buffer_offset does not match"},
    {"H10b", b_return, p_local_offset, INV, -1, "header field local_offset"},
    {"H10c", b_return, p_inst_offset, INV, -1, "header field inst_offset"},
    {"H10d", b_return, p_string_offset, INV, -1, "header field string_offset"},
    {"H10e", b_return, p_total_layout, INV, -1, "header field total_size"},
    {"H11a", b_local_return, p_local_padding, INV, -1, "padding bytes are not zero"},
    {"H11b", b_name_abc, p_string_padding, INV, -1, "padding bytes are not zero"},
    {"B1a", b_two_names, p_decl1_offset, INV, -1, "buffer 1: name at 1+2 is not the next"},
    {"B1b", b_name_ab, p_decl0_size0, INV, -1, "buffer 0: name at 0+0"},
    {"B1c", b_name_ab, p_decl0_size64, INV, -1, "buffer 0: name at 0+64"},
    {"B1d", b_name_ab, p_decl0_size3, INV, -1, "buffer 0: name at 0+3"},
    {"B2a", b_name_digit, NULL, INV, -1, "buffer 0: name is not an identifier"},
    {"B2b", b_name_dash, NULL, INV, -1, "name is not an identifier"},
    {"B3", b_name_dup, NULL, INV, -1, "buffers 0 and 1 are both named 'x'"},
    {"B4", b_ro_u32, p_decl0_access5, INV, -1, "access mode 5 is unknown"},
    {"B5a", b_ro_u32, p_decl0_elem0, INV, -1, "element type 0 is not a storage type"},
    {"B5b", b_ro_u32, p_decl0_elem_unknown, INV, -1, "is not a storage type. Fix"},
    {"B5c", b_ro_u32, p_decl0_elem_matrix, INV, -1,
     "element type 13 is not a storage type (only locals have matrix types)"},
    {"B6a", b_ro_u32, p_decl0_res0, INV, -1, "reserved fields or unknown flags"},
    {"B6b", b_ro_u32, p_decl0_res1, INV, -1, "reserved fields or unknown flags"},
    {"B6c", b_ro_u32, p_decl0_flag4, INV, -1, "reserved fields or unknown flags"},
    {"B7a", b_wg_u32, p_decl0_binding1, INV, -1, "workgroup buffers need a fixed count"},
    {"B7b", b_wg_output, NULL, INV, -1, "workgroup buffers need a fixed count"},
    {"B7c", b_wg_count0, NULL, INV, -1, "workgroup buffers need a fixed count"},
    {"B7d", b_wg_range, NULL, INV, -1, "workgroup buffers need a fixed count"},
    {"B8a", b_wg_big, NULL, LIM, -1, "workgroup memory would reach 49156 bytes"},
    {"B8b", b_wg_align, NULL, LIM, -1, "workgroup memory would reach 49162 bytes"},
    {"B9a", b_binding_same, NULL, INV, -1, "binding 3 is not above the previous binding 3"},
    {"B9b", b_binding_down, NULL, INV, -1, "binding 2 is not above the previous binding 5"},
    {"B10a", b_ro_output, NULL, INV, -1, "a ro buffer cannot be an output"},
    {"B10b", b_uniform_output, NULL, INV, -1, "a uniform buffer cannot be an output"},
    {"B11a", b_wo_count0, NULL, INV, -1, "needs a fixed element count"},
    {"B11b", b_rw_output_count0, NULL, INV, -1, "needs a fixed element count"},
    {"B12", b_ro_range, NULL, INV, -1, "only outputs have an output byte range"},
    {"B13", b_wo_range_out, NULL, INV, -1, "output range [8, 24) is outside its 16 bytes"},
    {"B14", b_wo_f32, p_decl0_range_no_flag, INV, -1, "without the range flag"},
    {"B15", b_name_abc, p_string_size_plus1, INV, -1, "string section has 4 bytes but the names use 3"},
    {"V1a", b_self_ref, NULL, INV, 0, "operand a = %0 is not an earlier instruction"},
    {"V1b", b_forward_ref, NULL, INV, 1, "operand b = %2 is not an earlier instruction"},
    {"V2", b_statement_operand, NULL, INV, 2, "operand a = %0 is a statement (block)"},
    {"V3", b_ended_block_value, NULL, INV, 3, "inside a block that has ended (at instruction 0)"},
    {"V4", b_across_grid, NULL, INV, 2, "defined before a grid barrier"},
    {"V5", b_store_wrong_value, NULL, INV, 2, "operand value has type f32, expected u32"},
    {"R1a", b_no_buffer, NULL, INV, 1, "buffer 3 does not exist (the program declares 0)"},
    {"R1b", b_store_no_buffer, NULL, INV, 1, "buffer 1 does not exist (the program declares 1)"},
    {"S1a", b_no_local, NULL, INV, 0, "local 5 does not exist (the program declares 0)"},
    {"S1b", b_let_no_local, NULL, INV, 1, "local 0 does not exist"},
    {"S2", b_get_before_let, NULL, INV, 0, "local 0 is used before its let"},
    {"S3", b_local_ended, NULL, INV, 4, "local 0 was declared in a block that has ended"},
    {"S4a", b_let_twice, NULL, INV, 2, "local 0 is declared twice"},
    {"S4b", b_loop_over_let, NULL, INV, 2, "local 0 is declared twice"},
    {"P1", b_deep, NULL, LIM, 256, "blocks nest deeper than 256"},
    {"I1a", b_op10, NULL, INV, 0, "unknown op id 10"},
    {"I1b", b_op0, NULL, INV, 1, "unknown op id 0"},
    {"I1c", b_op300, NULL, INV, 0, "unknown op id 300"},
    {"C1a", b_const_u8, NULL, INV, 0, "type 2 is not a value type"},
    {"C1b", b_const_void, NULL, INV, 0, "type 0 is not a value type"},
    {"C2", b_const_high, NULL, INV, 0, "a 32-bit constant has high bits 0x1"},
    {"C3", b_const_bool2, NULL, INV, 0, "bool constant 2 is not 0 or 1"},
    {"C4a", b_const_nan_payload, NULL, INV, 0, "f32 constant 0x7fc00001 is not canonical"},
    {"C4b", b_const_subnormal, NULL, INV, 0, "f32 constant 0x00000001 is not canonical"},
    {"C4c", b_const_neg_nan, NULL, INV, 0, "f32 constant 0xffc00000 is not canonical"},
    {"G1", b_get_type, NULL, INV, 2, "type i32 differs from local 0's type u32"},
    {"L1", b_load_wo, NULL, INV, 1, "buffer 'w' is write-only"},
    {"L2", b_load_narrow_type, NULL, INV, 1, "type u8, but loading 'r' (u8) yields u32"},
    {"L3", b_load_index_i32, NULL, INV, 1, "operand index has type i32, expected u32"},
    {"BL1", b_buflen_u64, NULL, INV, 0, "type must be u32. Fix: buflen is u32"},
    {"BI1", b_gid_i32, NULL, INV, 0, "type must be u32. Fix: ids are u32"},
    {"BI2", b_gid_axis3, NULL, INV, 0, "axis 3 is not x, y or z"},
    {"BI3", b_lane_mod, NULL, INV, 0, "does not use"},
    {"BN1", b_add_mixed, NULL, INV, 2, "operands have types u32 and i32"},
    {"BN2a", b_mod_f32, NULL, INV, 1, "does not accept f32 operands"},
    {"BN2b", b_land_u32, NULL, INV, 1, "does not accept u32 operands"},
    {"BN2c", b_shl_bool, NULL, INV, 1, "does not accept bool operands"},
    {"BN2d", b_lt_bool, NULL, INV, 1, "does not accept bool operands"},
    {"BN3a", b_add_result, NULL, INV, 1, "result type i32 should be u32"},
    {"BN3b", b_lt_result, NULL, INV, 1, "result type u32 should be bool"},
    {"U1a", b_sqrt_u32, NULL, INV, 1, "does not accept a u32 operand"},
    {"U1b", b_not_u32, NULL, INV, 1, "does not accept a u32 operand"},
    {"U1c", b_isnan_u32, NULL, INV, 1, "does not accept a u32 operand"},
    {"U1d", b_unpack_i32, NULL, INV, 1, "does not accept a i32 operand"},
    {"U2a", b_neg_result, NULL, INV, 1, "result type u32 should be i32"},
    {"U2b", b_isnan_result, NULL, INV, 1, "result type f32 should be bool"},
    {"SE1", b_select_cond, NULL, INV, 1, "operand condition has type u32, expected bool"},
    {"SE2a", b_select_arms, NULL, INV, 3, "arms have types u32 and i32"},
    {"SE2b", b_select_result, NULL, INV, 2, "arms have types u32 and u32, result i32"},
    {"CA1a", b_cast_u8, NULL, INV, 1, "target type u8 is not a value type"},
    {"CA1b", b_cast_void, NULL, INV, 1, "target type void is not a value type"},
    {"F1a", b_fma_result, NULL, INV, 1, "result type must be f32"},
    {"F1b", b_fma_operand, NULL, INV, 2, "operand a has type u32, expected f32"},
    {"A1a", b_atomic_ro, NULL, INV, 2, "buffer 'a' is ro; atomics need rw or workgroup"},
    {"A1b", b_atomic_wo, NULL, INV, 2, "buffer 'a' is wo; atomics need rw or workgroup"},
    {"A2", b_atomic_f32, NULL, INV, 2, "buffer 'a' holds f32; atomics work on u32"},
    {"A3", b_atomic_type, NULL, INV, 2, "type i32 differs from buffer 'a' (u32)"},
    {"A4", b_atomic_order, NULL, INV, 2, "memory order 5 is unknown"},
    {"A5", b_cas_desired, NULL, INV, 3, "operand desired has type u64, expected i64"},
    {"A6", b_atomic_value, NULL, INV, 2, "operand value has type i32, expected u32"},
    {"BA1", b_ballot_result, NULL, INV, 1, "result type must be u32. Fix: a ballot"},
    {"BA2", b_ballot_operand, NULL, INV, 1, "operand a has type u32, expected bool"},
    {"SH1", b_shuffle_lane, NULL, INV, 2, "operand lane has type i32, expected u32"},
    {"SH2", b_shuffle_type, NULL, INV, 2, "operand value has type u32, expected i32"},
    {"RD1", b_reduce_kind, NULL, INV, 1, "reduction kind 6 is unknown"},
    {"RD2a", b_reduce_f32_and, NULL, INV, 1, "reduce and over f32 is not defined"},
    {"RD2b", b_reduce_bool, NULL, INV, 1, "reduce add over bool is not defined"},
    {"LA1", b_assign_counter, NULL, INV, 2, "local 0 is a loop counter"},
    {"LA2", b_let_type, NULL, INV, 1, "operand value has type i32, expected u32"},
    {"LA3", b_assign_before_let, NULL, INV, 1, "local 0 is used before its let"},
    {"ST1a", b_store_ro, NULL, INV, 1, "buffer 'r' is ro"},
    {"ST1b", b_store_uniform, NULL, INV, 1, "buffer 'r' is uniform"},
    {"EL1a", b_else_top, NULL, INV, 0, "does not follow an open if"},
    {"EL1b", b_else_loop, NULL, INV, 2, "does not follow an open if"},
    {"EL1c", b_else_twice, NULL, INV, 3, "does not follow an open if"},
    {"EN1", b_end_top, NULL, INV, 0, "closes no block"},
    {"LP1", b_loop_f32, NULL, INV, 1, "loop counter local 0 is f32"},
    {"LP2", b_loop_bounds, NULL, INV, 1, "operand start has type i32, expected u32"},
    {"BR1", b_barrier_scope, NULL, INV, 0, "barrier scope 2 is unknown"},
    {"BR2", b_grid_nested, NULL, INV, 1, "a grid barrier must be at the top level"},
    {"UFa", b_uf_return, NULL, INV, 0, "sets an operand, type or modifier field it does not use"},
    {"UFb", b_uf_store, NULL, INV, 1, "field it does not use"},
    {"UFc", b_uf_let, NULL, INV, 1, "field it does not use"},
    {"UFd", b_uf_const, NULL, INV, 0, "field it does not use"},
    {"UFe", b_uf_if, NULL, INV, 1, "field it does not use"},
    {"UFf", b_uf_gid, NULL, INV, 0, "field it does not use"},
    {"UFg", b_uf_trap, NULL, INV, 0, "field it does not use"},
    {"UFh", b_uf_else, NULL, INV, 2, "field it does not use"},
    {"UFi", b_uf_barrier, NULL, INV, 0, "field it does not use"},
    {"UN1a", b_loop_left_early, NULL, INV, 3,
     "barrier inside the loop at instruction 2, which a return in divergent control flow "
     "(instruction 8) leaves early"},
    {"UN1b", b_loop_left_early_nested, NULL, INV, 6,
     "subgroup operation inside the loop at instruction 2, which a trap in divergent control "
     "flow (instruction 13) leaves early"},
    {"UN2a", b_after_divergent_return, NULL, INV, 6,
     "barrier after a return in divergent control flow (instruction 4)"},
    {"UN2b", b_grid_after_trap, NULL, INV, 6, "grid barrier after a trap in divergent control flow (instruction 4)"},
    {"UN3a", b_barrier_in_divergent_if, NULL, INV, 4,
     "barrier in control flow that differs between invocations (the condition or bounds at "
     "instruction 3"},
    {"UN3b", b_ballot_in_divergent_loop, NULL, INV, 4,
     "subgroup operation in control flow that differs between invocations (the condition or "
     "bounds at instruction 2"},
    {"UN3c", b_barrier_divergent_local, NULL, INV, 8, "bounds at instruction 7"},
    {"UN3d", b_reduce_in_else_of_divergent_if, NULL, INV, 6, "bounds at instruction 3"},
    {"MX1", b_get_matrix, NULL, INV, 0,
     "local 0 is a matrix local (mat_acc_f32); get, let, assign and loop take value locals only"},
    {"MX2", b_let_matrix, NULL, INV, 1, "local 0 is a matrix local (mat_acc_f32)"},
    {"MX3", b_assign_matrix, NULL, INV, 1, "local 0 is a matrix local (mat_acc_f32)"},
    {"MX4", b_loop_matrix, NULL, INV, 2, "local 0 is a matrix local (mat_acc_i32)"},
    {"MX5", b_const_matrix, NULL, INV, 0, "type 21 is not a value type"},
    {"MX6", b_cast_matrix, NULL, INV, 1, "target type mat_acc_f32 is not a value type"},
    {"MX7", b_load_matrix, NULL, INV, 1, "type mat_acc_f32, but loading 'r' (f32) yields f32"},
    {"MM1", b_fill_value_local, NULL, INV, 1, "operand a = local 0 is f32, not a matrix local"},
    {"MM2", b_fill_a_tile, NULL, INV, 1,
     "operand a = local 0 is mat_a_f16, but it must be an accumulator"},
    {"MM3", b_fill_value_type, NULL, INV, 1, "operand value has type i32, expected f32"},
    {"MM4", b_fill_inst_type, NULL, INV, 1,
     "type i32 differs from the accumulator's component type f32"},
    {"MM5", b_fill_no_local, NULL, INV, 1, "local 3 does not exist"},
    {"ML1", b_mma_load_wo, NULL, INV, 2, "buffer 'w' is write-only"},
    {"ML2", b_mma_load_elem, NULL, INV, 2,
     "buffer 'r' holds f32, but local 0 (mat_a_f16) has f16 elements"},
    {"ML7", b_mma_load_wide, NULL, INV, 2,
     "buffer 'r' holds u32, but local 0 (mat_a_bf16) has bf16 elements. Fix: use a u16 i16 or "
     "bf16 buffer (its bits are moved as bf16)"},
    {"ML8", b_mma_load_float16, NULL, INV, 2,
     "buffer 'r' holds f16, but local 0 (mat_b_bf16) has bf16 elements"},
    {"ML9", b_mma_load_acc_i16, NULL, INV, 2,
     "buffer 'r' holds i16, but local 0 (mat_acc_f32) has f32 elements. Fix: use a u32 i32 or "
     "f32 buffer"},
    {"ML3", b_mma_load_index, NULL, INV, 2, "operand index has type i32, expected u32"},
    {"ML4", b_mma_load_stride, NULL, INV, 2, "operand stride has type f32, expected u32"},
    {"ML5", b_mma_load_layout, NULL, INV, 2, "tile layout 2 is unknown"},
    {"ML6", b_mma_load_type, NULL, INV, 2, "type f32 differs from the tile's component type f16"},
    {"MA1", b_mma_mixed, NULL, INV, 0, "A (local 1) is mat_a_f16 but B (local 2) is mat_b_bf16"},
    {"MA2", b_mma_acc, NULL, INV, 0,
     "D (local 0) is mat_acc_i32 and C (local 3) is mat_acc_i32, but f16 inputs accumulate "
     "into mat_acc_f32"},
    {"MA3", b_mma_d_is_a, NULL, INV, 0,
     "operand D = local 0 is mat_a_f16, but it must be an accumulator"},
    {"MA4", b_mma_b_is_a, NULL, INV, 0, "operand B = local 1 is mat_a_f16, but it must be a B tile"},
    {"MA5", b_mma_type, NULL, INV, 0, "type f32 differs from A and B's component type f16"},
    {"MA6", b_mma_c_differs, NULL, INV, 0, "C (local 3) is mat_acc_i32, but i8 inputs"},
    {"MS1", b_mma_store_ro, NULL, INV, 2, "buffer 'r' is ro"},
    {"MS2", b_mma_store_uniform, NULL, INV, 2, "buffer 'r' is uniform"},
    {"MS3", b_mma_store_a, NULL, INV, 2,
     "operand d = local 0 is mat_a_f16, but it must be an accumulator"},
    {"MS4", b_mma_store_elem, NULL, INV, 2,
     "buffer 'o' holds u16, but local 0 (mat_acc_f32) has f32 elements"},
    {"MS7", b_mma_store_i32_f32, NULL, INV, 2,
     "buffer 'o' holds f32, but local 0 (mat_acc_i32) has i32 elements. Fix: use a u32 or i32 "
     "buffer"},
    {"MS5", b_mma_store_stride, NULL, INV, 2, "operand stride has type u64, expected u32"},
    {"MS6", b_mma_store_type, NULL, INV, 2,
     "type f32 differs from the accumulator's component type i32"},
    {"MW1", b_fill_ok, p_wg48, INV, 1,
     "the workgroup 48 x 1 x 1 has 48 invocations, not a multiple of 32"},
    {"MF1", b_fill_field_c, NULL, INV, 1, "field it does not use"},
    {"MF2", b_mma_mod, NULL, INV, 0, "field it does not use"},
    {"MU1", b_mma_in_divergent_if, NULL, INV, 5,
     "MMA operation in control flow that differs between invocations"},
};

/* "instruction N" as a whole number somewhere in the message. */
static int names_instruction(const char *msg, int inst) {
  char want[32];
  snprintf(want, sizeof want, "instruction %d", inst);
  for (const char *at = strstr(msg, want); at; at = strstr(at + 1, want)) {
    char next = at[strlen(want)];
    if (next < '0' || next > '9') return 1;
  }
  return 0;
}

START_TEST(reject_row) {
  const reject_case *c = &cases[_i];
  vyre_builder *b = vyre_builder_new(64, 1, 1);
  ck_assert_ptr_nonnull(b);
  c->build(b);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  if (c->patch) c->patch(&bytes, &size);
  /* An exact-size copy, so a read past the end is an ASan/valgrind error. */
  uint8_t *exact = malloc(size ? size : 1);
  ck_assert_ptr_nonnull(exact);
  memcpy(exact, bytes, size);
  free(bytes);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = (vyre_program *)(void *)&err; /* must be reset to NULL */
  vyre_status st = vyre_program_decode(exact, size, &p, &err);
  free(exact);
  EXPECT(st == c->status, "%s: expected %s, got %s (%s)", c->id, vyre_status_name(c->status),
                vyre_status_name(st), err.message);
  EXPECT(p == NULL, "%s: *out is NULL after a rejection", c->id);
  EXPECT(err.status == (int32_t)st, "%s: the error record carries the status", c->id);
  EXPECT(strstr(err.message, c->needle) != NULL, "%s: message lacks \"%s\": %s", c->id,
                c->needle, err.message);
  EXPECT(strstr(err.message, "Fix:") != NULL, "%s: message has no Fix: %s", c->id, err.message);
  if (c->inst >= 0) {
    EXPECT(names_instruction(err.message, c->inst), "%s: message names instruction %d: %s",
                  c->id, c->inst, err.message);
    const char *fix = strstr(err.message, "Fix:");
    EXPECT(fix[4] == ' ' && fix[5] != '\0', "%s: the Fix says something", c->id);
  }
}
END_TEST

START_TEST(reject_arguments) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  uint8_t junk[64] = {0};
  ck_assert_int_eq(vyre_program_decode(junk, sizeof junk, NULL, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "out is NULL") && strstr(err.message, "Fix:"), "%s", err.message);
  ck_assert_int_eq(vyre_program_decode(NULL, 10, &p, &err), VYRE_INVALID_ARGUMENT);
  EXPECT(strstr(err.message, "bytes is NULL") && strstr(err.message, "Fix:"), "%s", err.message);
  ck_assert_ptr_null(p);
  ck_assert_int_eq(vyre_program_decode(NULL, 0, &p, &err), VYRE_INVALID_PROGRAM);
  EXPECT(strstr(err.message, "0 bytes is shorter") != NULL, "%s", err.message);
  /* Without an error record the status still comes back. */
  ck_assert_int_eq(vyre_program_decode(junk, sizeof junk, &p, NULL), VYRE_INVALID_PROGRAM);
  ck_assert_ptr_null(p);
}
END_TEST

/* The uniformity analysis accepts what is uniform: it is not just
 * rejecting every barrier inside control flow. */
START_TEST(uniform_accepts) {
  for (int k = 0; k < 6; k++) {
    vyre_builder *b = vyre_builder_new(64, 1, 1);
    uint32_t s = vyre_b_local(b, T(U32)), t = vyre_b_local(b, T(U32));
    uint32_t r = BUF("r", READ_ONLY, U32, 0, 0);
    switch (k) {
    case 0: { /* a local that only ever holds uniform values */
      vyre_b_let(b, s, vyre_b_buflen(b, r));
      vyre_b_assign(b, s, vyre_b_bin(b, VYRE_OP_ADD, vyre_b_get(b, s), CU32(1)));
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_LT, vyre_b_get(b, s), CU32(9)));
      vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
      vyre_b_end(b);
      break;
    }
    case 1: /* a loop over workgroup ids, and a load at a uniform index */
      vyre_b_loop(b, s, CU32(0), vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 1));
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_load(b, r, vyre_b_get(b, s)), CU32(0)));
      vyre_b_reduce(b, VYRE_REDUCE_XOR, CU32(3));
      vyre_b_end(b);
      vyre_b_end(b);
      break;
    case 2: /* a return in uniform control flow does not make later code divergent */
      vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), CU32(0)));
      vyre_b_return(b);
      vyre_b_end(b);
      vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
      vyre_b_barrier(b, VYRE_BARRIER_GRID);
      break;
    case 3: /* a divergent return outside a loop, barrier in an earlier loop */
      vyre_b_loop(b, s, CU32(0), CU32(8));
      vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
      vyre_b_end(b);
      vyre_b_if(b, divergent_cond(b));
      vyre_b_return(b);
      vyre_b_end(b);
      break;
    case 4: /* a divergent store and assignment do not affect barriers */
      vyre_b_let(b, t, CU32(0));
      vyre_b_if(b, divergent_cond(b));
      vyre_b_assign(b, t, CU32(2));
      vyre_b_end(b);
      vyre_b_barrier(b, VYRE_BARRIER_WORKGROUP);
      vyre_b_shuffle(b, vyre_b_get(b, t), vyre_b_builtin(b, VYRE_OP_SUBGROUP_LANE, 0));
      break;
    default: /* nested uniform loops with subgroup ops; counters uniform */
      vyre_b_loop(b, s, CU32(0), vyre_b_builtin(b, VYRE_OP_SUBGROUP_SIZE, 0));
      vyre_b_loop(b, t, vyre_b_get(b, s), CU32(40));
      vyre_b_ballot(b, vyre_b_bin(b, VYRE_OP_LT, vyre_b_get(b, t), CU32(7)));
      vyre_b_end(b);
      vyre_b_end(b);
      break;
    }
    uint8_t *bytes;
    size_t size;
    fmt_finish(b, &bytes, &size);
    vyre_error err = VYRE_ERROR_INIT;
    vyre_program *p = NULL;
    vyre_status st = vyre_program_decode(bytes, size, &p, &err);
    EXPECT(st == VYRE_OK, "uniform case %d is accepted: %s", k, err.message);
    vyre_program_free(p);
    free(bytes);
  }
}
END_TEST

/* A valid MMA program: accepted in uniform control flow (a loop over
 * K with uniform bounds, an if on a workgroup id), with the MMA feature
 * and the tensor_cores capability, and neither the subgroup one nor a
 * let for the matrix locals. */
START_TEST(mma_accepts) {
  vyre_builder *b = vyre_builder_new(32, 2, 1);
  uint32_t x = BUF("x", READ_ONLY, BF16, 0, 0), y = BUF("y", WORKGROUP, BF16, 512, 0);
  uint32_t o = BUF("o", READ_WRITE, F32, 0, 0);
  uint32_t acc = MAT(ACC_F32), a = MAT(A_BF16), bm = MAT(B_BF16), k = vyre_b_local(b, T(U32));
  vyre_b_mma_fill(b, acc, vyre_b_f32(b, 0));
  vyre_b_loop(b, k, CU32(0), vyre_b_buflen(b, x));
  vyre_b_mma_load(b, VYRE_LAYOUT_ROW, a, x, vyre_b_get(b, k), CU32(16));
  vyre_b_mma_load(b, VYRE_LAYOUT_COL, bm, y, CU32(0), CU32(16));
  vyre_b_mma(b, acc, a, bm, acc);
  vyre_b_end(b);
  vyre_b_if(b, vyre_b_bin(b, VYRE_OP_EQ, vyre_b_builtin(b, VYRE_OP_WORKGROUP_ID, 0), CU32(0)));
  vyre_b_mma_store(b, VYRE_LAYOUT_COL, o, CU32(0), CU32(16), acc);
  vyre_b_end(b);
  uint8_t *bytes;
  size_t size;
  fmt_finish(b, &bytes, &size);
  vyre_error err = VYRE_ERROR_INIT;
  vyre_program *p = NULL;
  vyre_status st = vyre_program_decode(bytes, size, &p, &err);
  EXPECT(st == VYRE_OK, "the MMA program is accepted: %s", err.message);
  if (p) {
    EXPECT((p->features & VYRE_FEAT_MMA) && (p->required_caps & VYRE_CAP_TENSOR_CORES),
           "an MMA program needs the MMA feature and tensor_cores");
    EXPECT(!(p->required_caps & VYRE_CAP_SUBGROUP), "MMA ops do not need the subgroup capability");
  }
  vyre_program_free(p);
  free(bytes);
}
END_TEST

TCase *format_reject_tcase(void) {
  TCase *tc = tcase_create("errors");
  tcase_add_loop_test(tc, reject_row, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_test(tc, reject_arguments);
  tcase_add_test(tc, uniform_accepts);
  tcase_add_test(tc, mma_accepts);
  return tc;
}
