/* directives.c -- the declarations of program text: workgroup, buffer and local statements. */
#include <string.h>

#include "internal.h"

vyre_status vyre__asm_workgroup(assembler *a) {
  const tok *kw = &a->t[0];
  if (a->have_wg)
    return FAIL(kw, "a second workgroup statement (the first is at line %u). Fix: keep one",
                a->wg_line);
  if (a->nt < 2 || a->nt > 4)
    return FAIL(kw, "workgroup takes 1 to 3 sizes. Fix: write `workgroup 64` or `workgroup 8 8 1`");
  uint32_t wg[3] = {1, 1, 1};
  uint64_t inv = 1;
  for (uint32_t i = 1; i < a->nt; i++) {
    uint64_t v;
    vyre_status st = vyre__asm_parse_uint(a, &a->t[i], UINT32_MAX, "workgroup size", &v);
    if (st) return st;
    if (v == 0)
      return FAIL(&a->t[i], "a workgroup size of 0. Fix: every dimension is at least 1");
    wg[i - 1] = (uint32_t)v;
    inv *= v;
  }
  if (inv > VYRE_MAX_WORKGROUP_INVOCATIONS)
    return vyre__asm_fail_at(
        a, a->line, kw->col, VYRE_LIMIT,
        "workgroup %u x %u x %u is %llu invocations, over %u. Fix: use a smaller "
        "workgroup",
        wg[0], wg[1], wg[2], (unsigned long long)inv, VYRE_MAX_WORKGROUP_INVOCATIONS);
  vyre_builder_set_workgroup(a->b, wg[0], wg[1], wg[2]);
  a->have_wg = 1;
  a->wg_line = a->line;
  a->wg_col = kw->col;
  return VYRE_OK;
}

vyre_status vyre__asm_buffer(assembler *a) {
  char sh[64];
  const tok *kw = &a->t[0];
  if (a->nt < 4)
    return FAIL(kw, "buffer needs a name, an access mode and a type. Fix: write e.g. `buffer x ro "
                    "f32` or `buffer out wo u32 [256]`");
  const tok *name = &a->t[1], *acc = &a->t[2], *ty = &a->t[3];
  uint32_t prev;
  if (!vyre__asm_is_ident(name) || name->len > VYRE_MAX_NAME)
    return FAIL(name,
                "'%s' is not a buffer name. Fix: names are identifiers "
                "([A-Za-z_][A-Za-z0-9_]*) of 1..%u characters",
                vyre__asm_show(name, sh), VYRE_MAX_NAME);
  if (vyre__asm_map_find(&a->buffer_names, name->s, name->len, &prev))
    return FAIL(name,
                "buffer %s is already declared at line %u. Fix: give each buffer its own name",
                vyre__asm_show(name, sh), a->bufs[prev].line);
  if (a->nbuf >= VYRE_MAX_BUFFERS)
    return vyre__asm_fail_at(a, a->line, kw->col, VYRE_LIMIT,
                             "more than %u buffers. Fix: split the program", VYRE_MAX_BUFFERS);
  int access = vyre_access_by_name(acc->s, acc->len);
  if (access < 0)
    return FAIL(acc, "'%s' is not an access mode. Fix: use ro, rw, wo, uniform or workgroup",
                vyre__asm_show(acc, sh));
  uint32_t elem;
  vyre_status st = vyre__asm_type_ref(a, ty, 0, &elem);
  if (st) return st;
  uint64_t count = 0, range_off = 0, range_size = 0, binding = UINT32_MAX;
  uint32_t flags = 0;
  int have_count = 0, have_range = 0, have_binding = 0;
  for (uint32_t i = 4; i < a->nt; i++) {
    const tok *t = &a->t[i];
    if (vyre__asm_is_word(t, "[")) {
      if (have_count || i + 2 >= a->nt || !vyre__asm_is_word(&a->t[i + 2], "]"))
        return FAIL(t, "a count is written [N], once, e.g. [256]. Fix: write `[%s]`",
                    i + 1 < a->nt ? vyre__asm_show(&a->t[i + 1], sh) : "N");
      if ((st = vyre__asm_parse_uint(a, &a->t[i + 1], UINT32_MAX, "element count", &count)))
        return st;
      have_count = 1;
      i += 2;
    } else if (vyre__asm_is_word(t, "output")) {
      if (flags & VYRE_BUF_OUTPUT) return FAIL(t, "output given twice. Fix: write it once");
      flags |= VYRE_BUF_OUTPUT;
    } else if (vyre__asm_is_word(t, "range")) {
      if (have_range || i + 2 >= a->nt)
        return FAIL(t, "an output range is written once as `range OFFSET SIZE` (bytes). Fix: e.g. "
                       "`range 0 64`");
      if ((st = vyre__asm_parse_uint(a, &a->t[i + 1], UINT32_MAX, "range offset", &range_off)) ||
          (st = vyre__asm_parse_uint(a, &a->t[i + 2], UINT32_MAX, "range size", &range_size)))
        return st;
      have_range = 1;
      i += 2;
    } else if (t->len >= 1 && t->s[0] == '@') {
      tok num = {t->s + 1, t->len - 1, t->col + 1};
      if (have_binding) return FAIL(t, "the binding is given twice. Fix: write one @N");
      if (access == VYRE_ACCESS_WORKGROUP)
        return FAIL(t, "workgroup buffers have no binding. Fix: drop %s", vyre__asm_show(t, sh));
      if (!num.len) return FAIL(t, "a binding is written @N, e.g. @3. Fix: add the number");
      if ((st = vyre__asm_parse_uint(a, &num, UINT32_MAX, "binding", &binding))) return st;
      have_binding = 1;
    } else {
      return FAIL(t,
                  "unexpected '%s' in a buffer declaration. Fix: after the type come [COUNT], "
                  "output, range OFFSET SIZE and @BINDING",
                  vyre__asm_show(t, sh));
    }
  }
  char cname[VYRE_MAX_NAME + 1];
  memcpy(cname, name->s, name->len);
  cname[name->len] = '\0';
  /* The builder reads binding UINT32_MAX as "the next one"; an explicit
   * @4294967295 is written into the image after finishing. */
  if (binding == UINT32_MAX && have_binding) a->binding_max_buffer = a->nbuf + 1;
  uint32_t idx = vyre_b_buffer(a->b, cname, (uint32_t)binding, (vyre_access)access, (vyre_type)elem,
                               (uint32_t)count, flags);
  if (have_range) vyre_b_buffer_range(a->b, idx, (uint32_t)range_off, (uint32_t)range_size);
  if (idx != a->nbuf || vyre__asm_map_put(&a->buffer_names, name->s, name->len, idx))
    return vyre__asm_oom(a);
  a->bufs[idx] = (buf_def){(uint8_t)access, (uint8_t)elem, a->line, name->col};
  a->nbuf++;
  return VYRE_OK;
}

vyre_status vyre__asm_local(assembler *a) {
  const tok *kw = &a->t[0];
  if (a->nt != 3)
    return FAIL(kw, "local takes a name and a type. Fix: write e.g. `local acc f32` or `local c "
                    "mat_acc_f32`");
  uint32_t type, slot;
  /* A matrix type (mat_acc_f32, ...) or a value type. */
  int ty = vyre_type_by_name(a->t[2].s, a->t[2].len);
  vyre_status st = VYRE_OK;
  if (ty >= 0 && vyre_type_matrix_use((uint32_t)ty)) type = (uint32_t)ty;
  else st = vyre__asm_type_ref(a, &a->t[2], 1, &type);
  return st ? st : vyre__asm_declare_local(a, &a->t[1], type, &slot);
}
