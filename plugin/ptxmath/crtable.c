/* crtable.c -- the inputs whose accurate f32 result is not the correctly rounded one:
 * written by tests/ptxmath/cr_table.py from an exhaustive sweep (docs/ulp.md); do not edit. */
#include "crtable.h"

#include <vyre/vyre_program.h>

static const pm_cr_entry t_exp2[] = {
    {0x3B429D37u, 0x3F804385u}, {0xBCF3A937u, 0x3F7AC6B1u},
};

static const pm_cr_entry t_log[] = {
    {0x3C413D3Au, 0xC08E158Fu}, {0x41178FEBu, 0x400FE5E7u}, {0x4C5D65A5u, 0x418F034Bu}, {0x65D890D3u, 0x4254D1F9u},
    {0x6F31A8ECu, 0x42845A89u},
};

static const pm_cr_entry t_sin[] = {
    {0x46199998u, 0xBEB1FA5Du}, {0xC6199998u, 0x3EB1FA5Du},
};

static const pm_cr_entry t_cos[] = {
    {0x5F18B878u, 0x3F7F14BBu}, {0x6115CB11u, 0x3F78142Fu}, {0xDF18B878u, 0x3F7F14BBu}, {0xE115CB11u, 0x3F78142Fu},
};

static const pm_cr_entry t_acos[] = {
    {0x328885A3u, 0x3FC90FDBu}, {0x39826222u, 0x3FC907B5u},
};

static const pm_cr_entry t_atan[] = {
    {0x3D8D6B23u, 0x3D8D31C3u}, {0xBD8D6B23u, 0xBD8D31C3u},
};

static const pm_cr_entry t_sinh[] = {
    {0x3A1285FFu, 0x3A1285FFu}, {0xBA1285FFu, 0xBA1285FFu},
};

const pm_cr_entry *pm_cr_table(uint32_t op, size_t *n) {
  switch (op) {
  case VYRE_OP_EXP2: *n = sizeof t_exp2 / sizeof *t_exp2; return t_exp2;
  case VYRE_OP_LOG: *n = sizeof t_log / sizeof *t_log; return t_log;
  case VYRE_OP_SIN: *n = sizeof t_sin / sizeof *t_sin; return t_sin;
  case VYRE_OP_COS: *n = sizeof t_cos / sizeof *t_cos; return t_cos;
  case VYRE_OP_ACOS: *n = sizeof t_acos / sizeof *t_acos; return t_acos;
  case VYRE_OP_ATAN: *n = sizeof t_atan / sizeof *t_atan; return t_atan;
  case VYRE_OP_SINH: *n = sizeof t_sinh / sizeof *t_sinh; return t_sinh;
  default: *n = 0; return NULL;
  }
}
