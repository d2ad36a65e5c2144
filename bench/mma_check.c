/* mma_check.c -- the tensor-core harness's GPU-free logic: program interface, sizes, conversions, the sampled check of C (mma_check.h). */
#include "mma_check.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"bf16", "f16", "i8"};

int mma_type_parse(const char *s, mma_type *t) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, names[i])) {
      *t = (mma_type)i;
      return 0;
    }
  return -1;
}

const char *mma_type_name(mma_type t) { return names[t]; }

static int parse_u32(const char **s, uint32_t *v) {
  char *end;
  if (!isdigit((unsigned char)**s)) return -1;
  unsigned long long x = strtoull(*s, &end, 10);
  if (x == 0 || x > 0xFFFFFFFFull) return -1;
  *v = (uint32_t)x;
  *s = end;
  return 0;
}

int mma_size_parse(const char *s, uint32_t *m, uint32_t *n, uint32_t *k) {
  if (parse_u32(&s, m) || *s++ != 'x' || parse_u32(&s, n) || *s++ != 'x' || parse_u32(&s, k) || *s) return -1;
  return 0;
}

/* The buffer a declaration line makes: 0 and its fields, or -1 (not one). */
static int buffer_line(char *line, char **name, char **access, char **type, uint32_t *count) {
  char *semi = strpbrk(line, ";#");
  if (semi) *semi = 0;
  for (char *q = line; *q; q++)
    if (*q == '[' || *q == ']') *q = ' ';
  char *tok[5] = {0};
  int nt = 0;
  for (char *w = strtok(line, " \t\r\n"); w && nt < 5; w = strtok(NULL, " \t\r\n")) tok[nt++] = w;
  if (nt < 4 || strcmp(tok[0], "buffer")) return -1;
  *name = tok[1];
  *access = tok[2];
  *type = tok[3];
  *count = nt > 4 && isdigit((unsigned char)tok[4][0]) ? (uint32_t)strtoul(tok[4], NULL, 0) : 0;
  return 0;
}

/* A `local NAME mat_a_X` or `mat_b_X` line whose X is not the run's type
 * `ab`: -1 with the message (the tiles say the program's type when its A
 * and B are integer buffers of the bits).  Other lines: 0. */
static int tile_line(const char *text, const char *ab, const char *path, char *err, size_t errlen) {
  char name[128], type[64];
  if (sscanf(text, " local %127s %63s", name, type) != 2) return 0;
  if (strncmp(type, "mat_a_", 6) && strncmp(type, "mat_b_", 6)) return 0;
  if (!strcmp(type + 6, ab)) return 0;
  snprintf(err, errlen, "%s: local %s is %s, but a %s run takes mat_a_%s and mat_b_%s tiles", path, name, type,
           ab, ab, ab);
  return -1;
}

int mma_prog_read(const char *path, mma_type t, mma_prog *p, char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  snprintf(p->path, sizeof p->path, "%s", path);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open it", path);
    return -1;
  }
  const char *ab = t == MMA_BF16 ? "bf16" : t == MMA_F16 ? "f16" : "i8", *cty = t == MMA_I8 ? "i32" : "f32";
  char line[1024];
  unsigned mem = 0;
  int rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    const char *g = strstr(line, "--grid N/");
    if (g && !p->bn && sscanf(g, "--grid N/%u,M/%u", &p->bn, &p->bm) != 2) p->bn = p->bm = 0;
    char *name, *access, *type;
    uint32_t count;
    if (tile_line(line, ab, path, err, errlen)) {
      rc = -1;
      break;
    }
    if (buffer_line(line, &name, &access, &type, &count)) continue;
    if (p->nbuffers == MMA_MAX_BUFFERS) {
      snprintf(err, errlen, "%s: more than %d buffers", path, MMA_MAX_BUFFERS);
      rc = -1;
      break;
    }
    unsigned i = p->nbuffers++;
    p->count[i] = count;
    if (!strcmp(access, "workgroup")) {
      p->role[i] = MMA_WORKGROUP;
      continue;
    }
    /* dims, A, B, C: the accesses each may have, and its type */
    static const char *const accesses[4] = {" uniform ro ", " ro ", " ro ", " wo rw "};
    const char *wtype = mem == 0 ? "u32" : mem == 3 ? cty : ab;
    char acc[32];
    snprintf(acc, sizeof acc, " %s ", access);
    /* A and B may hold the tiles' bits in integer buffers of their size */
    int bits = (mem == 1 || mem == 2) &&
               (t == MMA_I8 ? !strcmp(type, "u8") : !strcmp(type, "u16") || !strcmp(type, "i16"));
    if (mem >= 4 || !strstr(accesses[mem], acc) || (strcmp(type, wtype) && !bits)) {
      snprintf(err, errlen,
               "%s: buffer %s (%s %s) is not what the harness takes: dims (uniform u32 [3]), A and B "
               "(ro %s, or %s holding its bits), C (wo %s), in that order, then workgroup buffers",
               path, name, access, type, ab, t == MMA_I8 ? "u8" : "u16 or i16", cty);
      rc = -1;
      break;
    }
    p->role[i] = (int)mem++;
  }
  fclose(f);
  if (!rc && mem != 4) {
    snprintf(err, errlen, "%s: %u buffers in memory, the harness takes 4 (dims, A, B, C)", path, mem);
    rc = -1;
  }
  if (!rc && (!p->bn || !p->bm)) {
    snprintf(err, errlen, "%s: its header does not say its grid as \"--grid N/BN,M/BM\"", path);
    rc = -1;
  }
  return rc;
}

int mma_shape_check(const mma_prog *p, mma_type t, uint32_t m, uint32_t n, uint32_t k, char *err, size_t errlen) {
  uint32_t depth = t == MMA_I8 ? 32 : 16;
  if (m % p->bm || n % p->bn || k % depth) {
    snprintf(err, errlen, "%ux%ux%u: %s takes M a multiple of %u, N of %u, K of %u", m, n, k, p->path, p->bm,
             p->bn, depth);
    return -1;
  }
  if ((uint64_t)m * k > 0xFFFFFFFFull || (uint64_t)k * n > 0xFFFFFFFFull || (uint64_t)m * n > 0xFFFFFFFFull) {
    snprintf(err, errlen, "%ux%ux%u: a matrix of 2^32 elements or more", m, n, k);
    return -1;
  }
  return 0;
}

uint16_t mma_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

uint16_t mma_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, m = x & 0x7FFFFFu;
  int e = (int)((x >> 23) & 0xFF) - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7C00u);
  if (e <= 0) { /* subnormal: units of 2^-24 */
    if (e < -10) return (uint16_t)sign;
    m |= 0x800000u;
    unsigned sh = (unsigned)(14 - e);
    uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++; /* a carry moves into the exponent */
  return (uint16_t)(sign | r);
}

double mma_bf16_value(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

double mma_f16_value(uint16_t h) {
  int e = (h >> 10) & 31;
  double m = h & 1023, v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -v : v;
}

double mma_float_bound(double sum_abs, uint32_t k) {
  uint32_t steps = k / 16;
  double b = 0;
  for (uint32_t j = 0; j < steps; j++) b += (16 + 2) * (0x1p-22 * (sum_abs + b) + 0x1p-126);
  /* the reference rounds once a step; 2^-10 covers the running value's
   * growth past sum_abs and the double dot product's own error */
  return (b + steps * 0x1p-24 * (sum_abs + b)) * (1 + 0x1p-10);
}

uint32_t mma_stratum(uint32_t i, uint32_t side, uint32_t len) {
  if (i == 0) return 0;
  if (i == side - 1) return len - 1;
  uint64_t lo = (uint64_t)i * len / side, hi = (uint64_t)(i + 1) * len / side;
  uint64_t h = (i * 0x9E3779B9u) >> 7;
  return (uint32_t)(hi > lo ? lo + h % (hi - lo) : lo);
}

static double elem(mma_type t, const void *p, size_t i) {
  if (t == MMA_I8) return ((const int8_t *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  return t == MMA_BF16 ? mma_bf16_value(h) : mma_f16_value(h);
}

void mma_check_sampled(mma_type t, uint32_t m, uint32_t n, uint32_t k, const void *a, const void *b,
                       const void *c, unsigned nsamples, int exact, mma_check_result *res) {
  memset(res, 0, sizeof *res);
  uint32_t side = 1;
  while (side * side < nsamples) side++;
  double *col = malloc(sizeof *col * k);
  for (uint32_t ci = 0; ci < side; ci++) {
    uint32_t cc = mma_stratum(ci, side, n);
    for (uint32_t kk = 0; kk < k; kk++)
      col[kk] = elem(t, b, t == MMA_I8 ? (size_t)cc * k + kk : (size_t)kk * n + cc);
    for (uint32_t ri = 0; ri < side; ri++) {
      uint32_t rr = mma_stratum(ri, side, m);
      size_t at = (size_t)rr * n + cc;
      double want, got, sum_abs = 0, err, bound;
      int bad;
      if (t == MMA_I8) {
        int64_t s = 0;
        for (uint32_t kk = 0; kk < k; kk++) s += (int64_t)((const int8_t *)a)[(size_t)rr * k + kk] * (int64_t)col[kk];
        int32_t w = (int32_t)(uint32_t)(uint64_t)s, g = ((const int32_t *)c)[at];
        want = w;
        got = g;
        err = fabs(got - want);
        bound = 0;
        bad = g != w;
      } else {
        double s = 0;
        for (uint32_t kk = 0; kk < k; kk++) {
          double p = elem(t, a, (size_t)rr * k + kk) * col[kk];
          s += p;
          sum_abs += fabs(p);
        }
        want = s;
        got = ((const float *)c)[at];
        err = fabs(got - want);
        bound = exact ? 0 : mma_float_bound(sum_abs, k);
        bad = !(err <= bound); /* NaN fails */
        if (bound > 0 && err / bound > res->worst_ratio) res->worst_ratio = err / bound;
      }
      if (err > res->max_abs_err || err != err) res->max_abs_err = err;
      res->sampled++;
      if (bad && !res->bad++) {
        res->first_row = rr;
        res->first_col = cc;
        res->first_got = got;
        res->first_want = want;
      }
    }
  }
  free(col);
}
