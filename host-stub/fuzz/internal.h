/* internal.h -- the engine libvyre-progen's files share: the generator's state, its random draws, and the value, statement and buffer builders each program shape is made of (progen.h). */
#ifndef VYRE_FUZZ_INTERNAL_H
#define VYRE_FUZZ_INTERNAL_H
/*
 * One engine: value and local tracking with uniformity, expression trees,
 * statements and buffers are shared; the shape flags decide which buffers
 * exist and where a statement may write.
 *
 * Race freedom (PROGEN_RACE_FREE; docs/conformance.md, "Fuzzing") comes
 * from the program's shape, not from luck:
 *   - every invocation has a unique linear id `lin`; plain stores to global
 *     buffers go only to index lin + c (c fixed per buffer), so no two
 *     invocations write one element; a buffer that is also read is read
 *     only at that same index;
 *   - ro/uniform inputs are never written, so loads anywhere are fine;
 *   - contended atomics (`acc`, `wacc`) use one commutative op per buffer
 *     per program and their old values are thrown away; uncontended ones
 *     (`own`, at the invocation's own index) may use any op and keep it;
 *   - workgroup memory: phase A stores `tile[local linear id]` and does the
 *     `wacc` atomics, a top-level barrier ends it, phase B only reads;
 *   - grid scratch `gsc`: own-index stores before the grid barrier, reads
 *     anywhere after it;
 *   - transcendental results only reach write-only outputs (never another
 *     op), so the ULP tolerance cannot be amplified;
 *   - every trap of a program uses one code; returns and traps come last
 *     (after every barrier and subgroup op);
 *   - MMA (mma.c): each subgroup stores its tiles only into its own span
 *     of an `mo*` output (span = 15 * stride + 16, stride >= 16), which
 *     nothing loads: float results stay within the reference's bound,
 *     and no subgroup's stores reach another's.
 * Otherwise (K_ANY buffers) loads, stores and atomics go anywhere, and
 * returns and traps may come mid-program; after a divergent one no barrier
 * or subgroup op follows.
 */

#include <stddef.h>
#include <stdint.h>

#include "abi/support/prng.h"
#include "progen.h"

#define MAX_VALS 4096
#define MAX_LOCS 256
#define MAX_BUFS 16

/* Buffer kinds: the race-free roles, or K_ANY (no discipline). */
enum { K_IN, K_OUT, K_ACC, K_OWN, K_TILE, K_WACC, K_GSC, K_ANY, K_MMA };

typedef struct gval {
  uint32_t id;
  uint8_t type, uniform;
  uint16_t depth;
} gval;

typedef struct gloc {
  uint32_t slot;
  uint8_t type, uniform, counter; /* uniform: every write so far is; counter: read-only */
  uint16_t depth;
} gloc;

typedef struct gbuf {
  uint32_t index;
  uint8_t kind, access, type, readable; /* readable: may be loaded (own index for outputs) */
  uint32_t count; /* declared count; for count-0 race-free inputs the input's element count */
  uint32_t off;   /* own-index offset: stores go to lin + off */
  vyre_op op;     /* the one atomic op of ACC/WACC */
} gbuf;

typedef struct gen {
  uint64_t rng;
  uint32_t flags, max_insts, elements;
  vyre_builder *b;
  uint32_t wg[3], wgs, n, grid, invocations;
  gbuf buf[MAX_BUFS];
  uint32_t nb;
  gval vals[MAX_VALS];
  uint32_t nv;
  gloc locs[MAX_LOCS];
  uint32_t nl;
  uint32_t depth;
  int cf_uniform, diverged, in_loop;
  int phase; /* race-free: 0 tile/wacc writes; 1 after the workgroup barrier; 2 after the grid barrier */
  int grid_done;
  uint32_t lin, lidlin; /* value ids, UINT32_MAX when not in scope; elementwise: lin is gid.x */
  uint32_t trap_code;
  int uses_trans;
  int mma;       /* race-free: this program has MMA sections (mma.c) */
  int uses_fmma; /* a float mma: the program needs a ulp budget */
  uint32_t nmma;
  const progen_claims *claims; /* race-free shape: only what these claim; NULL: anything */
  struct {
    uint8_t comp;                  /* A/B component: f16 bf16 i8 u8 */
    uint8_t a, b, c, tile, out;    /* gbuf indices; c and tile 0xff when absent */
    uint32_t stride, span;         /* of the stores into out */
  } mmas[2];
} gen;

static inline uint64_t next(gen *g) { return vyre__splitmix64(&g->rng); }
static inline uint32_t rnd(gen *g, uint32_t n) { return n ? (uint32_t)(next(g) % n) : 0; }
static inline int chance(gen *g, uint32_t pct) { return rnd(g, 100) < pct; }
static inline int has(gen *g, uint32_t f) { return (g->flags & f) != 0; }
static inline int rf(gen *g) { return has(g, PROGEN_RACE_FREE); }
static inline int ew(gen *g) { return has(g, PROGEN_ELEMENTWISE); }
static inline int room(gen *g) { return vyre_b_inst_count(g->b) < g->max_insts; }
/* Whether op may be used at type t (VYRE_T_VOID for statements; a
 * compare's operand type) under the claims (progen_claims). */
static inline int can(const gen *g, uint32_t op, uint32_t t) {
  return !g->claims || (op < 256 && t < 32 && ((g->claims->op_types[op] >> t) & 1));
}
/* Whether values of type t can be made at all: a constant of it is the
 * fallback of every expression. */
static inline int can_value(const gen *g, uint32_t t) { return can(g, VYRE_OP_CONST, t); }
/* Whether a statement op may be used. */
static inline int can_do(const gen *g, uint32_t op) { return can(g, op, VYRE_T_VOID); }

/* Collectives (barriers, subgroup ops) are allowed here. */
static inline int uniform_here(gen *g) { return g->cf_uniform && !g->diverged && !ew(g); }

#define N(a) (sizeof(a) / sizeof((a)[0]))

static inline int is_int(uint8_t t) {
  return t == VYRE_T_U32 || t == VYRE_T_U64 || t == VYRE_T_I32 || t == VYRE_T_I64;
}

static inline int is_ro(uint8_t access) {
  return access == VYRE_ACCESS_READ_ONLY || access == VYRE_ACCESS_UNIFORM;
}

/* ------------------------------------------------------------------ */
/* Values (value.c): expressions of a type, uniform or not             */
/* ------------------------------------------------------------------ */

/* Record value `id` of type t (uniform: the same in every invocation)
 * in the current scope; returns id. */
uint32_t fz_val(gen *g, uint32_t id, uint8_t t, int uniform);
/* Whether value id is uniform (0 when it is out of scope). */
int fz_is_uniform(gen *g, uint32_t id);
/* A u32 constant. */
uint32_t fz_u32c(gen *g, uint32_t v);
/* The linear invocation id and the local linear id, made once per scope. */
uint32_t fz_lin(gen *g);
uint32_t fz_lidlin(gen *g);
/* The invocation's own element of fb: lin + fb->off. */
uint32_t fz_own_index(gen *g, const gbuf *fb);
/* An index anywhere, in or out of bounds (elementwise: gid.x). */
uint32_t fz_any_index(gen *g, uint32_t count, int uni);
/* A load that yields (after a cast) type t; UINT32_MAX when no buffer can. */
uint32_t fz_load(gen *g, uint8_t t, int uni);
/* An expression tree of type t, at most depth deep (uni: uniform only). */
uint32_t fz_value(gen *g, uint8_t t, int depth, int uni);
/* An f32 from the edge pool, one of the specials, a transcendental op. */
uint32_t fz_edge_f32(gen *g);
uint32_t fz_f32_special(gen *g);
vyre_op fz_transcendental(gen *g);
/* One of list[0..n) claimed at type t, drawn as list[rnd(n)] is when all
 * are; 0 when none is. */
int fz_choose(gen *g, const vyre_op *list, uint32_t n, uint32_t t, vyre_op *out);

/* ------------------------------------------------------------------ */
/* Statements (stmt.c)                                                 */
/* ------------------------------------------------------------------ */

/* count random statements at nesting level `level` (0: top). */
void fz_stmts(gen *g, uint32_t count, int level);
/* A store to some buffer this shape may write here. */
void fz_store(gen *g);
/* Whether fb may be stored to here. */
int fz_storable(gen *g, const gbuf *fb);
/* A grid barrier: no value crosses it. */
void fz_grid_barrier(gen *g);
/* Forget the values and locals of the scope that just closed. */
void fz_leave_scope(gen *g);

/* ------------------------------------------------------------------ */
/* Buffers (buffer.c)                                                  */
/* ------------------------------------------------------------------ */

uint8_t fz_storage_type(gen *g);
uint8_t fz_atomic_type(gen *g);
/* Whether every atomic op is claimed at type t (and values of it can be made). */
int fz_atomic_ok(const gen *g, uint8_t t);
/* The PROGEN_NO_* flags the claims imply (parts that need an op they lack). */
uint32_t fz_claims_flags(const gen *g);
/* Declare a buffer (binding UINT32_MAX: the next one) and track it. */
gbuf *fz_add_buf(gen *g, const char *name, uint32_t binding, uint8_t kind, vyre_access access,
                 uint8_t type, uint32_t count, uint32_t flags);

/* ------------------------------------------------------------------ */
/* Shapes: declarations and bodies                                     */
/* ------------------------------------------------------------------ */

/* PROGEN_RACE_FREE (racefree.c). */
void fz_declare_race_free(gen *g);
void fz_body_race_free(gen *g);
/* The default shape, ptxas coverage, and PROGEN_DECL_VARIETY (coverage.c):
 * buffers without roles; the default body. */
void fz_declare_any(gen *g);
void fz_body_coverage(gen *g);
/* PROGEN_ELEMENTWISE (elementwise.c), on fz_declare_any's buffers. */
void fz_body_elementwise(gen *g);

/* MMA (mma.c): whether program attempt g gets MMA sections (decided
 * apart from g->rng, so programs without them are those of a run without
 * MMA); the buffers they use; the sections, at the top level in uniform
 * control flow after the workgroup barrier. */
int fz_mma_wanted(const gen *g);
void fz_declare_mma(gen *g);
void fz_mma_stage(gen *g);    /* phase 0: fill the workgroup tiles */
void fz_mma_sections(gen *g); /* after the workgroup barrier */

/* The program's inputs (inputs.c). */
vyre_status fz_make_inputs(gen *g, const vyre_program *p, progen_program *out, vyre_error *err);

#endif /* VYRE_FUZZ_INTERNAL_H */
