/* capsule.c -- replay capsules: a failing case written back as a self-contained case file with both outputs and the first mismatch. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "abi/support/file.h"
#include "vyre/vyre_text.h"

/* Recorded outputs are for people; beyond this they are cut (inputs never are). */
#define CAPSULE_OUTPUT_MAX 65536u

static void hex_lines(strbuf *b, const char *key, const char *name, const uint8_t *data,
                      uint64_t size, uint64_t limit) {
  vyre__sb_hex_lines(b, key, name, data, size < limit ? size : limit);
}

/* One line of free text: newlines would end the directive. */
static void one_line(strbuf *b, const char *key, const char *text) {
  vyre__sb_printf(b, ";@ %s ", key);
  for (const char *s = text; *s; s++) {
    char ch = (*s == '\n' || *s == '\r') ? ' ' : *s;
    vyre__sb_append(b, &ch, 1);
  }
  vyre__sb_append(b, "\n", 1);
}

static void record_result(strbuf *b, const cf_case *c, const char *who, const cf_result *r) {
  char key[48];
  snprintf(key, sizeof key, "status-%s", who);
  if (r->status == VYRE_TRAP)
    vyre__sb_printf(b, ";@ %s %s %" PRId64 "\n", key, vyre_status_name(r->status), r->native_code);
  else
    vyre__sb_printf(b, ";@ %s %s\n", key, vyre_status_name(r->status));
  if (r->status != VYRE_OK) {
    if (r->message[0]) {
      snprintf(key, sizeof key, "note");
      char msg[VYRE_ERROR_MESSAGE_MAX + 32];
      snprintf(msg, sizeof msg, "%s said: %s", who, r->message);
      one_line(b, key, msg);
    }
    return;
  }
  snprintf(key, sizeof key, "output-%s", who);
  for (uint32_t o = 0; o < r->output_count; o++) {
    uint32_t bi;
    cf_output_type(c->decoded, o, &bi);
    const char *name = bi < c->decoded->buffer_count ? c->decoded->buffers[bi].name : "?";
    if (r->output[o].size > CAPSULE_OUTPUT_MAX)
      vyre__sb_printf(b, ";@ note output %s of %s: the first %u of %" PRIu64 " bytes\n", name, who,
                    CAPSULE_OUTPUT_MAX, r->output[o].size);
    hex_lines(b, key, name, r->output[o].bytes, r->output[o].size, CAPSULE_OUTPUT_MAX);
  }
}

vyre_status cf_capsule_format(const cf_case *c, const cf_capsule_info *info, char **out,
                              size_t *size, vyre_error *err) {
  *out = NULL;
  *size = 0;
  char *text = NULL;
  vyre_status st = vyre_text_disassemble(c->program, c->program_size, &text, err);
  if (st != VYRE_OK) return st;
  const vyre_program *p = c->decoded;
  strbuf b = {0};
  vyre__sb_printf(&b, "; vyre conformance replay capsule (docs/conformance.md, \"Replay capsules\")\n"
                    "; re-run: vyre conform --replay THIS_FILE [--backend ID]\n");
  vyre__sb_printf(&b, ";@ capsule %u\n;@ case %s\n;@ category %s\n", CF_CAPSULE_VERSION, c->name,
                  c->category);
  if (info && info->origin) one_line(&b, "origin", info->origin);
  if (info && info->backend_id)
    vyre__sb_printf(&b, ";@ backend %s %s\n", info->backend_id,
                  info->backend_version ? info->backend_version : "");
  if (info && info->device && *info->device) one_line(&b, "device", info->device);
  if (info && info->diff && info->diff->kind != CF_SAME) one_line(&b, "mismatch", info->diff->text);
  if (info && info->note) one_line(&b, "note", info->note);
  if (c->about) one_line(&b, "about", c->about);
  if (c->focus_set) {
    vyre__sb_printf(&b, ";@ ops");
    for (uint32_t op = 0; op < 256; op++)
      if ((c->focus[op >> 6] >> (op & 63)) & 1) {
        const vyre_op_info *oi = vyre_op_lookup(op);
        if (oi) vyre__sb_printf(&b, " %s", oi->mnemonic);
      }
    vyre__sb_append(&b, "\n", 1);
  }
  char hash[65];
  vyre_hex(p->sha256, 32, hash);
  vyre__sb_printf(&b, ";@ program-sha256 %s\n", hash);
  const vyre_dispatch_options *o = &c->options;
  vyre__sb_printf(&b, ";@ ulp %u\n;@ tolerance %u\n", o->ulp_budget, c->tolerance);
  if (o->workgroup[0])
    vyre__sb_printf(&b, ";@ workgroup %u %u %u\n", o->workgroup[0], o->workgroup[1] ? o->workgroup[1] : 1,
                  o->workgroup[2] ? o->workgroup[2] : 1);
  if (o->grid[0])
    vyre__sb_printf(&b, ";@ grid %u %u %u\n", o->grid[0], o->grid[1] ? o->grid[1] : 1,
                  o->grid[2] ? o->grid[2] : 1);
  if (o->fixpoint_iterations) vyre__sb_printf(&b, ";@ fixpoint %u\n", o->fixpoint_iterations);
  if (c->indirect)
    vyre__sb_printf(&b, ";@ indirect %s %llu\n", p->buffers[c->indirect_buffer].name,
                    (unsigned long long)c->indirect_offset);
  /* Every capability the case needs, the derived ones included (reading
   * them back as `requires` changes nothing), so a reader sees them. */
  vyre_needs needs;
  cf_case_needs(c, &needs);
  uint64_t caps = needs.capabilities;
  if (caps) {
    vyre__sb_printf(&b, ";@ requires");
    for (uint32_t bit = 0; bit < 64; bit++)
      if (((caps >> bit) & 1) && vyre_capability_name(bit))
        vyre__sb_printf(&b, " %s", vyre_capability_name(bit));
    vyre__sb_append(&b, "\n", 1);
  }
  const char *sname = vyre_status_name(c->expect) + 5;
  char lower[64];
  size_t k = 0;
  for (; sname[k] && k < sizeof lower - 1; k++)
    lower[k] = (char)(sname[k] >= 'A' && sname[k] <= 'Z' ? sname[k] + 32 : sname[k]);
  lower[k] = '\0';
  if (c->expect == VYRE_TRAP && c->expect_code_set)
    vyre__sb_printf(&b, ";@ expect %s %" PRId64 "\n", lower, c->expect_code);
  else
    vyre__sb_printf(&b, ";@ expect %s\n", lower);
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (p->buffers[i].input_index >= 0 && c->input[i].present)
      hex_lines(&b, "input", p->buffers[i].name, c->input[i].bytes, c->input[i].size, UINT64_MAX);
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (c->golden[i].present)
      hex_lines(&b, "expect-output", p->buffers[i].name, c->golden[i].bytes, c->golden[i].size,
                UINT64_MAX);
  if (info && info->reference) record_result(&b, c, "reference", info->reference);
  if (info && info->backend) record_result(&b, c, "backend", info->backend);
  vyre__sb_append(&b, "\n", 1);
  vyre__sb_append(&b, text, strlen(text));
  vyre__sb_append(&b, "", 1);
  free(text);
  if (b.failed) {
    vyre__sb_free(&b);
    return vyre_error_set(err, VYRE_OUT_OF_MEMORY, 0, "writing a capsule: out of memory");
  }
  *out = b.data;
  *size = b.len - 1;
  return VYRE_OK;
}

vyre_status cf_capsule_write(const char *path, const cf_case *c, const cf_capsule_info *info,
                             vyre_error *err) {
  char *text = NULL;
  size_t size = 0;
  vyre_status st = cf_capsule_format(c, info, &text, &size, err);
  if (st != VYRE_OK) return st;
  st = vyre__file_write_atomic(path, text, size, 0666, err);
  free(text);
  return st;
}

vyre_status cf_case_clone(const cf_case *c, cf_case **out, vyre_error *err) {
  char *text = NULL;
  size_t size = 0;
  *out = NULL;
  vyre_status st = cf_capsule_format(c, NULL, &text, &size, err);
  if (st != VYRE_OK) return st;
  st = cf_case_parse(text, size, c->path, out, err);
  free(text);
  return st;
}

void cf_case_drop_goldens(cf_case *c) {
  for (uint32_t i = 0; i < CF_MAX_IO; i++) {
    free(c->golden[i].bytes);
    memset(&c->golden[i], 0, sizeof c->golden[i]);
  }
}
