/* list.c -- `vyre list` (the backends found, the chosen one, the skipped ones and why) and `vyre info`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_support.h"
#include "abi/support/json.h"
#include "abi/support/uuid.h"
#include "cli.h"
#include "term.h"

static vyre_host_candidate candidate(vyre_host *host, uint32_t i) {
  vyre_host_candidate c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  vyre_host_backend_info(host, i, &c, NULL);
  return c;
}

/* ------------------------------------------------------------------ */
/* list                                                                */
/* ------------------------------------------------------------------ */

/* What a newer plugin offers that this host does not know: ignored. */
static void print_unknown(const vyre_host_candidate *c, const char *indent) {
  if (!c->unknown_op_count && !c->unknown_capabilities) return;
  printf("%s%-12s newer than this host: %u op id%s and capability bits 0x%llx it does not know "
         "are ignored\n",
         indent, "", c->unknown_op_count, c->unknown_op_count == 1 ? "" : "s",
         (unsigned long long)c->unknown_capabilities);
}

static void list_json(vyre_host *host, int chosen, const char *select_error) {
  uint32_t n = vyre_host_backend_count(host);
  vyre__json w;
  vyre__json_init(&w, stdout);
  vyre__json_object_begin(&w);
  vyre__json_key(&w, "chosen");
  vyre__json_string(&w, chosen >= 0 ? candidate(host, (uint32_t)chosen).id : NULL);
  vyre__json_key(&w, "forced");
  vyre__json_string(&w, vyre_host_forced_id(host));
  if (select_error) {
    vyre__json_key(&w, "error");
    vyre__json_string(&w, select_error);
  }
  vyre__json_key(&w, "candidates");
  vyre__json_array_begin(&w);
  for (uint32_t i = 0; i < n; i++) {
    vyre_host_candidate c = candidate(host, i);
    char text[64];
    vyre__json_object_begin(&w);
    vyre__json_key(&w, "id");
    vyre__json_string(&w, c.id);
    vyre__json_key(&w, "status");
    vyre__json_string(&w, vyre_host_status_name(c.status));
    vyre__json_key(&w, "chosen");
    vyre__json_bool(&w, (int)i == chosen);
    vyre__json_key(&w, "version");
    vyre__json_string(&w, c.version);
    vyre__json_key(&w, "precedence");
    vyre__json_int(&w, c.precedence);
    vyre__json_key(&w, "abi");
    snprintf(text, sizeof text, "%u.%u", c.abi_major, c.abi_minor);
    vyre__json_string(&w, c.abi_major ? text : NULL);
    vyre__json_key(&w, "path");
    vyre__json_string(&w, c.path);
    vyre__json_key(&w, "origin");
    vyre__json_string(&w, vyre_host_origin_name(c.origin));
    vyre__json_key(&w, "description");
    vyre__json_string(&w, c.description);
    vyre__json_key(&w, "reason");
    vyre__json_string(&w, c.reason);
    vyre__json_key(&w, "extensions");
    vyre__json_string(&w, c.extensions ? c.extensions : "");
    vyre__json_key(&w, "unknown_ops");
    vyre__json_uint(&w, c.unknown_op_count);
    vyre__json_key(&w, "unknown_capabilities");
    snprintf(text, sizeof text, "0x%llx", (unsigned long long)c.unknown_capabilities);
    vyre__json_string(&w, text);
    /* What the file's descriptor says (null when it was never read). */
    int read = c.status != VYRE_HOST_SKIPPED;
    vyre__json_key(&w, "build_id");
    vyre__json_string(&w, read ? c.build_id : NULL);
    vyre__json_key(&w, "abi_range");
    snprintf(text, sizeof text, "%u.%u-%u.%u", c.abi_major, c.plugin_minor_min, c.abi_major,
             c.plugin_minor_max);
    vyre__json_string(&w, read ? text : NULL);
    vyre__json_key(&w, "release");
    if (read) vyre__json_uint(&w, c.release);
    else vyre__json_null(&w);
    vyre__json_object_end(&w);
  }
  vyre__json_array_end(&w);
  vyre__json_object_end(&w);
  vyre__json_end(&w);
}

static void list_skipped(vyre_host *host) {
  uint32_t n = vyre_host_backend_count(host), skipped = vyre_host_skipped_count(host);
  if (!skipped) return;
  printf("\nskipped (%u):\n", skipped);
  for (uint32_t i = 0; i < n; i++) {
    vyre_host_candidate c = candidate(host, i);
    if (c.status != VYRE_HOST_SKIPPED) continue;
    char path[4096];
    printf("  %s (%s)%s%s%s: %s\n", cli_safe(path, sizeof path, c.path),
           vyre_host_origin_name(c.origin),
           c.id[0] ? " id '" : "", c.id, c.id[0] ? "'" : "", c.reason);
  }
}

static void list_text(vyre_host *host, int chosen, const char *select_error) {
  uint32_t n = vyre_host_backend_count(host);
  uint32_t registered = n - vyre_host_skipped_count(host);
  if (registered == 0) {
    printf("no backends registered.\n");
  } else {
    printf("  %-12s %-10s %6s  %-11s %s\n", "ID", "VERSION", "PREC", "STATUS", "PATH");
    for (uint32_t i = 0; i < n; i++) {
      vyre_host_candidate c = candidate(host, i);
      if (c.status == VYRE_HOST_SKIPPED) continue;
      char path[4096];
      printf("%c %-12s %-10s %6d  %-11s %s (%s)\n", (int)i == chosen ? '*' : ' ', c.id,
             c.version[0] ? c.version : "-", c.precedence, vyre_host_status_name(c.status),
             cli_safe(path, sizeof path, c.path), vyre_host_origin_name(c.origin));
      if (c.description[0]) printf("  %-12s %s\n", "", c.description);
      if (c.status == VYRE_HOST_UNAVAILABLE) printf("  %-12s why: %s\n", "", c.reason);
      else if (c.reason[0]) printf("  %-12s note: %s\n", "", c.reason);
      print_unknown(&c, "  ");
    }
  }
  list_skipped(host);
  printf("\n");
  if (chosen >= 0) {
    vyre_host_candidate c = candidate(host, (uint32_t)chosen);
    if (vyre_host_forced_id(host))
      printf("* = the backend `vyre run` uses: '%s', forced by VYRE_BACKEND.\n", c.id);
    else
      printf("* = the backend `vyre run` uses: '%s', the lowest precedence that works here, "
             "for every program it covers.\n", c.id);
  } else {
    printf("no usable backend: %s\n", select_error ? select_error : "(unknown)");
  }
  printf("search order: VYRE_BACKEND_PATH, the build tree (when run from one), the plugin dir.\n");
}

/* --no-probe: the candidates as judged from their files (VYRE_HOST_NO_LOAD). */
static void list_judged(vyre_host *host, uint32_t listed) {
  uint32_t n = vyre_host_backend_count(host);
  printf("judged from their files (--no-probe: no plugin code ran; ids are unknown until a "
         "plugin's entry runs):\n");
  if (!listed) printf("  no compatible backend.\n");
  for (uint32_t i = 0; i < n; i++) {
    vyre_host_candidate c = candidate(host, i);
    if (c.status != VYRE_HOST_LISTED) continue;
    char path[4096];
    printf("  %-8s %s (%s)\n", vyre_host_status_name(c.status), cli_safe(path, sizeof path, c.path),
           vyre_host_origin_name(c.origin));
    printf("  %-8s ABI %u.%u-%u.%u, release %u%s%s, build '%s'\n", "", c.abi_major,
           c.plugin_minor_min, c.abi_major, c.plugin_minor_max, c.release,
           c.release ? "" : ": ", c.release ? "" : c.reason, c.build_id);
  }
}

/* `vyre list --no-probe`: open with VYRE_HOST_NO_LOAD, run no plugin code. */
static int list_no_probe(const cli_command *self, int json) {
  vyre_host_options opt = {sizeof opt, VYRE_HOST_NO_LOAD, NULL, NULL};
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (vyre_host_open(&opt, &host, &err) != VYRE_OK) return cli_fail(self, "%s", err.message);
  uint32_t n = vyre_host_backend_count(host), listed = 0;
  for (uint32_t i = 0; i < n; i++) listed += candidate(host, i).status == VYRE_HOST_LISTED;
  const char *none = "no compatible backend found (--no-probe judges files only). Fix: run "
                     "`vyre list` without --no-probe for details, or add a plugin to "
                     "VYRE_BACKEND_PATH";
  if (json) {
    list_json(host, -1, listed ? NULL : none);
  } else {
    list_judged(host, listed);
    list_skipped(host);
    printf("\n`vyre list` without --no-probe loads them: it shows their ids and the backend "
           "`vyre run` uses.\n");
  }
  vyre_host_close(host);
  return listed ? CLI_OK : CLI_FAIL;
}

static int run_list(const cli_command *self, int argc, char **argv) {
  int json = 0, probe = 1;
  for (int i = 1; i < argc; i++) {
    if (cli_opt_flag(argv, i, "--json")) json = 1;
    else if (cli_opt_flag(argv, i, "--no-probe")) probe = 0;
    else return cli_usage(self, "unknown argument '%s'", argv[i]);
  }
  if (!probe) return list_no_probe(self, json);
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (cli_open_host(&host, &err) != VYRE_OK) return cli_fail(self, "%s", err.message);
  vyre_host_probe(host);
  int chosen = -1;
  uint32_t index = 0;
  const char *select_error = NULL;
  if (vyre_host_select(host, NULL, &index, &err) == VYRE_OK) chosen = (int)index;
  else select_error = err.message;
  if (json) list_json(host, chosen, select_error);
  else list_text(host, chosen, select_error);
  vyre_host_close(host);
  return chosen >= 0 ? CLI_OK : CLI_FAIL;
}

const cli_command cli_cmd_list = {
    "list",
    "list [--json] [--no-probe]",
    "list the backend plugins found, mark the one `vyre run` uses, show skipped ones and why",
    "Every candidate of the search (VYRE_BACKEND_PATH, then the build tree when vyre\n"
    "runs from one, then the installed plugin dir) is shown with its status:\n"
    "  ready        its factory works on this machine\n"
    "  unavailable  it loaded, but its factory failed here (the reason is shown)\n"
    "  loaded       registered; its factory was not tried\n"
    "  listed       (--no-probe) judged compatible from its file, not loaded\n"
    "  skipped      not usable at all: not a plugin, wrong ABI, bad registration,\n"
    "               duplicate id (the reason is shown)\n\n"
    "options:\n"
    "  --json       one JSON object: \"chosen\", \"forced\", \"candidates\", and\n"
    "               \"error\" when no backend is usable\n"
    "               (docs/schemas/vyre-list.schema.json)\n"
    "  --no-probe   run no plugin code: judge each file from its bytes (the\n"
    "               descriptor: ABI range, release, build id) and load none;\n"
    "               no backend is chosen, ids are unknown\n\n"
    "exit status:\n"
    "  0  a backend is usable (--no-probe: one is compatible)\n"
    "  1  none is (the list is still printed), or the host cannot open\n"
    "  2  the command line is wrong\n",
    run_list,
    NULL,
};

/* ------------------------------------------------------------------ */
/* info                                                                */
/* ------------------------------------------------------------------ */

static void print_wrapped(const char *label, const char *words) {
  int col = printf("  %-16s", label);
  const char *p = words;
  while (*p) {
    const char *sp = strchr(p, ' ');
    size_t len = sp ? (size_t)(sp - p) : strlen(p);
    if (col + (int)len + 1 > 78 && col > 19) {
      col = printf("\n  %-16s", "") - 1;
    }
    col += printf(" %.*s", (int)len, p);
    p += len;
    while (*p == ' ') p++;
  }
  printf("\n");
}

/* Each op; one supported at fewer types than its class allows shows
 * them ("add:u32,i32"). */
static void print_ops(const vyre_host_candidate *c) {
  size_t cap = (size_t)c->op_count * 96 + 16;
  char *buf = malloc(cap);
  if (!buf) return;
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < c->op_count; i++) {
    const vyre_op_info *op = vyre_op_lookup(c->ops[i]);
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? " " : "",
                             op ? op->mnemonic : "?");
    uint32_t mask = c->op_types ? c->op_types[i] : 0;
    if (!op || !mask || mask == op->type_mask) continue;
    for (uint32_t t = 0, first = 1; t < VYRE_T_COUNT_; t++)
      if (mask & (1u << t)) {
        used += (size_t)snprintf(buf + used, cap - used, "%c%s", first ? ':' : ',',
                                 vyre_type_name(t));
        first = 0;
      }
  }
  char label[32];
  snprintf(label, sizeof label, "ops (%u):", c->op_count);
  print_wrapped(label, c->op_count ? buf : "none");
  free(buf);
}

static void print_types(uint64_t types) {
  char buf[256] = "";
  size_t used = 0;
  for (uint32_t t = 1; t < VYRE_T_COUNT_; t++)
    if (types & (1ull << t))
      used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? " " : "",
                               vyre_type_name(t));
  print_wrapped("storage types:", used ? buf : "none");
}

static void print_bytes(const char *label, uint64_t bytes) {
  if (bytes >= (1ull << 30)) printf("  %-17s%.1f GiB\n", label, (double)bytes / (1ull << 30));
  else if (bytes >= (1ull << 20)) printf("  %-17s%.1f MiB\n", label, (double)bytes / (1ull << 20));
  else printf("  %-17s%llu bytes\n", label, (unsigned long long)bytes);
}

static void print_profile(const vyre_device_profile *p) {
  char caps[512], name[sizeof p->name];
  char uuid[VYRE__UUID_TEXT_SIZE];
  printf("device %u: %s\n", p->ordinal, cli_safe(name, sizeof name, p->name));
  if (!vyre__uuid_is_zero(p->uuid)) printf("  %-17s%s\n", "uuid:", vyre__uuid_format(p->uuid, uuid));
  if (p->compute_major || p->compute_minor)
    printf("  %-17s%u.%u\n", "compute cap:", p->compute_major, p->compute_minor);
  printf("  %-17s%u\n", "compute units:", p->compute_units);
  printf("  %-17s%u\n", "subgroup size:", p->subgroup_size);
  printf("  %-17s%u x %u x %u (%u invocations)\n", "max workgroup:", p->max_workgroup_size[0],
         p->max_workgroup_size[1], p->max_workgroup_size[2], p->max_invocations_per_workgroup);
  printf("  %-17s%u x %u x %u\n", "max workgroups:", p->max_workgroups[0], p->max_workgroups[1],
         p->max_workgroups[2]);
  print_bytes("shared memory:", p->shared_memory_per_workgroup);
  if (p->total_memory) print_bytes("total memory:", p->total_memory);
  if (p->free_memory) print_bytes("free memory:", p->free_memory);
  if (p->l2_bytes) print_bytes("L2:", p->l2_bytes);
  if (p->memory_bus_bits) printf("  %-17s%u bits\n", "memory bus:", p->memory_bus_bits);
  if (p->memory_clock_khz) printf("  %-17s%u MHz\n", "memory clock:", p->memory_clock_khz / 1000);
  if (p->driver_version)
    printf("  %-17s%u.%u\n", "driver:", p->driver_version / 1000, (p->driver_version % 1000) / 10);
  if (p->resident_budget) print_bytes("resident budget:", p->resident_budget);
  cli_format_caps(p->capabilities, caps, sizeof caps);
  print_wrapped("capabilities:", caps);
}

/* Every device of backend `id`, whose instance on ordinal 0 is `b`: the
 * count, then each device's profile (an instance is created on each other
 * ordinal).  Returns how many devices could not be shown. */
static int info_devices(vyre_host *host, const char *id, vyre_backend *b) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.struct_size = sizeof prof;
  int have = VYRE_HOST_HAS(b, device_profile) && b->vt->device_profile(b, &prof, &err) == VYRE_OK;
  uint32_t count = have ? prof.device_count : 0;
  if (count > CLI_MAX_DEVICES) count = CLI_MAX_DEVICES;
  if (count == 0 && cli_backend_devices(host, id, &count, NULL, NULL, &err) != VYRE_OK) count = 1;
  printf("devices: %u (ordinals 0 to %u)\n", count, count - 1);
  int failed = 0;
  if (have) {
    print_profile(&prof);
  } else {
    printf("device 0: profile unavailable: %s\n", err.message);
    failed++;
  }
  for (uint32_t d = 1; d < count; d++) {
    vyre_backend_options bo = {sizeof bo, d, 0, 0, NULL};
    vyre_backend *other = NULL;
    if (vyre_host_create(host, id, &bo, &other, NULL, &err) != VYRE_OK) {
      printf("device %u: unavailable: %s\n", d, err.message);
      failed++;
      continue;
    }
    memset(&prof, 0, sizeof prof);
    prof.struct_size = sizeof prof;
    if (VYRE_HOST_HAS(other, device_profile) &&
        other->vt->device_profile(other, &prof, &err) == VYRE_OK) {
      print_profile(&prof);
    } else {
      printf("device %u: profile unavailable: %s\n", d, err.message);
      failed++;
    }
    other->vt->destroy(other);
  }
  return failed;
}

/* Space-separated words as a JSON array ("none" and "" give []). */
static void json_words(vyre__json *w, const char *words) {
  vyre__json_array_begin(w);
  if (strcmp(words, "none") != 0)
    for (const char *p = words; *p;) {
      size_t n = strcspn(p, " ");
      if (n) vyre__json_string_n(w, p, n);
      p += n;
      while (*p == ' ') p++;
    }
  vyre__json_array_end(w);
}

static void json_types(vyre__json *w, uint64_t mask, uint32_t first) {
  vyre__json_array_begin(w);
  for (uint32_t t = first; t < VYRE_T_COUNT_; t++)
    if (mask & (1ull << t)) vyre__json_string(w, vyre_type_name(t));
  vyre__json_array_end(w);
}

static void json_dim3(vyre__json *w, const uint32_t v[3]) {
  vyre__json_array_begin(w);
  for (int k = 0; k < 3; k++) vyre__json_uint(w, v[k]);
  vyre__json_array_end(w);
}

/* The registration as info --json's "backend" object. */
static void info_json_backend(vyre__json *w, const vyre_host_candidate *c) {
  char text[512];
  vyre__json_key(w, "backend");
  vyre__json_object_begin(w);
  vyre__json_key(w, "id");
  vyre__json_string(w, c->id);
  vyre__json_key(w, "version");
  vyre__json_string(w, c->version);
  vyre__json_key(w, "description");
  vyre__json_string(w, c->description);
  vyre__json_key(w, "path");
  vyre__json_string(w, c->path);
  vyre__json_key(w, "origin");
  vyre__json_string(w, vyre_host_origin_name(c->origin));
  vyre__json_key(w, "build_id");
  vyre__json_string(w, c->build_id[0] ? c->build_id : NULL);
  vyre__json_key(w, "abi");
  snprintf(text, sizeof text, "%u.%u", c->abi_major, c->abi_minor);
  vyre__json_string(w, text);
  vyre__json_key(w, "plugin_abi_min");
  snprintf(text, sizeof text, "%u.%u", c->abi_major, c->plugin_minor_min);
  vyre__json_string(w, text);
  vyre__json_key(w, "plugin_abi_max");
  snprintf(text, sizeof text, "%u.%u", c->abi_major, c->plugin_minor_max);
  vyre__json_string(w, text);
  vyre__json_key(w, "precedence");
  vyre__json_int(w, c->precedence);
  vyre__json_key(w, "status");
  vyre__json_string(w, vyre_host_status_name(c->status));
  vyre__json_key(w, "capabilities");
  cli_format_caps(c->capabilities, text, sizeof text);
  json_words(w, text);
  vyre__json_key(w, "storage_types");
  json_types(w, c->storage_types, 1);
  vyre__json_key(w, "ops");
  vyre__json_array_begin(w);
  for (uint32_t i = 0; i < c->op_count; i++) {
    const vyre_op_info *op = vyre_op_lookup(c->ops[i]);
    uint32_t mask = c->op_types && c->op_types[i] ? c->op_types[i] : op ? op->type_mask : 0;
    vyre__json_object_begin(w);
    vyre__json_key(w, "name");
    vyre__json_string(w, op ? op->mnemonic : NULL);
    vyre__json_key(w, "types");
    json_types(w, mask, 0);
    vyre__json_object_end(w);
  }
  vyre__json_array_end(w);
  vyre__json_key(w, "extensions");
  json_words(w, c->extensions ? c->extensions : "");
  vyre__json_key(w, "unknown_ops");
  vyre__json_uint(w, c->unknown_op_count);
  vyre__json_key(w, "unknown_capabilities");
  snprintf(text, sizeof text, "0x%llx", (unsigned long long)c->unknown_capabilities);
  vyre__json_string(w, text);
  vyre__json_object_end(w);
}

static void info_json_profile(vyre__json *w, const vyre_device_profile *p) {
  char caps[512];
  vyre__json_object_begin(w);
  vyre__json_key(w, "ordinal");
  vyre__json_uint(w, p->ordinal);
  vyre__json_key(w, "name");
  vyre__json_string(w, p->name);
  vyre__json_key(w, "compute_capability");
  snprintf(caps, sizeof caps, "%u.%u", p->compute_major, p->compute_minor);
  vyre__json_string(w, p->compute_major || p->compute_minor ? caps : NULL);
  vyre__json_key(w, "compute_units");
  vyre__json_uint(w, p->compute_units);
  vyre__json_key(w, "subgroup_size");
  vyre__json_uint(w, p->subgroup_size);
  vyre__json_key(w, "max_workgroup_size");
  json_dim3(w, p->max_workgroup_size);
  vyre__json_key(w, "max_invocations_per_workgroup");
  vyre__json_uint(w, p->max_invocations_per_workgroup);
  vyre__json_key(w, "max_workgroups");
  json_dim3(w, p->max_workgroups);
  vyre__json_key(w, "shared_memory_per_workgroup");
  vyre__json_uint(w, p->shared_memory_per_workgroup);
  vyre__json_key(w, "total_memory");
  vyre__json_uint(w, p->total_memory);
  vyre__json_key(w, "free_memory");
  vyre__json_uint(w, p->free_memory);
  vyre__json_key(w, "l2_bytes");
  vyre__json_uint(w, p->l2_bytes);
  vyre__json_key(w, "memory_bus_bits");
  vyre__json_uint(w, p->memory_bus_bits);
  vyre__json_key(w, "memory_clock_khz");
  vyre__json_uint(w, p->memory_clock_khz);
  vyre__json_key(w, "driver_version");
  vyre__json_uint(w, p->driver_version);
  vyre__json_key(w, "resident_budget");
  vyre__json_uint(w, p->resident_budget);
  vyre__json_key(w, "device_count");
  vyre__json_uint(w, p->device_count);
  vyre__json_key(w, "uuid");
  vyre__json_string(w, vyre__uuid_is_zero(p->uuid) ? NULL : vyre__uuid_format(p->uuid, caps));
  vyre__json_key(w, "capabilities");
  cli_format_caps(p->capabilities, caps, sizeof caps);
  json_words(w, caps);
  vyre__json_object_end(w);
}

/* One device's profile, or null (counted in *failed) when it cannot be read. */
static void info_json_device(vyre__json *w, vyre_backend *b, int *failed) {
  vyre_error err = VYRE_ERROR_INIT;
  vyre_device_profile prof;
  memset(&prof, 0, sizeof prof);
  prof.struct_size = sizeof prof;
  if (VYRE_HOST_HAS(b, device_profile) && b->vt->device_profile(b, &prof, &err) == VYRE_OK) {
    info_json_profile(w, &prof);
  } else {
    vyre__json_null(w);
    (*failed)++;
  }
}

/* info --json: one object, the registration, the device profile, the
 * profiles of every device shown (all of them unless --device) and the
 * metrics (null when the instance does not give them).  Returns how many
 * devices could not be shown. */
static int info_json(vyre_host *host, const vyre_host_candidate *c, vyre_backend *b,
                     int all_devices) {
  vyre__json w;
  vyre_error err = VYRE_ERROR_INIT;
  int failed = 0, ignored = 0;
  vyre__json_init(&w, stdout);
  vyre__json_object_begin(&w);
  info_json_backend(&w, c);
  vyre__json_key(&w, "device");
  info_json_device(&w, b, &ignored);
  vyre__json_key(&w, "devices");
  vyre__json_array_begin(&w);
  info_json_device(&w, b, &failed);
  if (all_devices) {
    vyre_device_profile prof;
    memset(&prof, 0, sizeof prof);
    prof.struct_size = sizeof prof;
    uint32_t count = VYRE_HOST_HAS(b, device_profile) &&
                             b->vt->device_profile(b, &prof, &err) == VYRE_OK
                         ? prof.device_count
                         : 0;
    if (count > CLI_MAX_DEVICES) count = CLI_MAX_DEVICES;
    if (count == 0 && cli_backend_devices(host, c->id, &count, NULL, NULL, &err) != VYRE_OK)
      count = 1;
    for (uint32_t d = 1; d < count; d++) {
      vyre_backend_options bo = {sizeof bo, d, 0, 0, NULL};
      vyre_backend *other = NULL;
      if (vyre_host_create(host, c->id, &bo, &other, NULL, &err) != VYRE_OK) {
        vyre__json_null(&w);
        failed++;
        continue;
      }
      info_json_device(&w, other, &failed);
      other->vt->destroy(other);
    }
  }
  vyre__json_array_end(&w);
  vyre__json_key(&w, "metrics");
  uint32_t count = 0;
  static vyre_metric metrics[256];
  if (VYRE_HOST_HAS(b, metrics) && b->vt->metrics(b, metrics, 256, &count, &err) == VYRE_OK) {
    vyre__json_object_begin(&w);
    for (uint32_t i = 0; i < count && i < 256; i++) {
      metrics[i].name[sizeof metrics[i].name - 1] = '\0';
      vyre__json_key(&w, metrics[i].name);
      vyre__json_uint(&w, metrics[i].value);
    }
    vyre__json_object_end(&w);
  } else {
    vyre__json_null(&w);
  }
  vyre__json_object_end(&w);
  vyre__json_end(&w);
  return failed;
}

static int run_info(const cli_command *self, int argc, char **argv) {
  const char *id = NULL;
  uint32_t ordinal = 0;
  const char *uuid = NULL; /* --device GPU-... */
  int device_given = 0;
  int json = 0;
  for (int i = 1; i < argc;) {
    const char *v = NULL;
    if (cli_opt_flag(argv, i, "--json")) {
      json = 1;
      i++;
      continue;
    }
    int m = cli_opt_value(self, argc, argv, &i, "--device", &v);
    if (m < 0) return CLI_USAGE;
    if (m > 0) {
      if (cli_parse_devices(v, &ordinal, NULL, &uuid) != 0)
        return cli_usage(self, "--device '%s' is not a device number or UUID", v);
      device_given = 1;
      continue;
    }
    if (argv[i][0] == '-') return cli_usage(self, "unknown option '%s'", argv[i]);
    if (id) return cli_usage(self, "takes one backend id, got '%s' and '%s'", id, argv[i]);
    id = argv[i++];
  }
  vyre_host *host = NULL;
  vyre_error err = VYRE_ERROR_INIT;
  if (cli_open_host(&host, &err) != VYRE_OK) return cli_fail(self, "%s", err.message);
  if (uuid && cli_device_by_uuid(host, id, uuid, &ordinal, &err) != VYRE_OK) {
    vyre_host_close(host);
    return cli_fail(self, "%s", err.message);
  }
  vyre_backend_options bo = {sizeof bo, ordinal, 0, 0, NULL};
  vyre_backend *b = NULL;
  uint32_t index = 0;
  int rc = CLI_OK;
  vyre_status st = vyre_host_create(host, id, &bo, &b, &index, &err);
  int32_t shown = st == VYRE_OK ? (int32_t)index : (id ? vyre_host_find(host, id) : -1);
  if (shown < 0) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  vyre_host_candidate c = candidate(host, (uint32_t)shown);
  if (json) {
    if (st != VYRE_OK) rc = cli_fail(self, "%s", err.message);
    else if (info_json(host, &c, b, !device_given)) rc = CLI_FAIL;
    if (b) b->vt->destroy(b);
    goto done;
  }
  char caps[512], path[4096];
  printf("backend %s %s: %s\n", c.id, c.version, c.description);
  printf("  %-17s%s (%s)\n", "file:", cli_safe(path, sizeof path, c.path),
         vyre_host_origin_name(c.origin));
  if (c.build_id[0]) printf("  %-17s%s\n", "build id:", c.build_id);
  printf("  %-17s%u.%u (the plugin serves %u.%u to %u.%u)\n", "ABI:", c.abi_major, c.abi_minor,
         c.abi_major, c.plugin_minor_min, c.abi_major, c.plugin_minor_max);
  printf("  %-17s%d (lower wins)\n", "precedence:", c.precedence);
  printf("  %-17s%s\n", "status:", vyre_host_status_name(c.status));
  cli_format_caps(c.capabilities, caps, sizeof caps);
  print_wrapped("capabilities:", caps);
  print_types(c.storage_types);
  print_ops(&c);
  print_wrapped("extensions:", c.extensions && c.extensions[0] ? c.extensions : "none");
  if (c.unknown_op_count || c.unknown_capabilities)
    printf("  %-17s%u op id%s, capability bits 0x%llx (ignored)\n", "unknown here:",
           c.unknown_op_count, c.unknown_op_count == 1 ? "" : "s",
           (unsigned long long)c.unknown_capabilities);
  if (st != VYRE_OK) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  if (!device_given) {
    if (info_devices(host, c.id, b)) rc = CLI_FAIL;
  } else if (VYRE_HOST_HAS(b, device_profile)) {
    vyre_device_profile prof;
    memset(&prof, 0, sizeof prof);
    prof.struct_size = sizeof prof;
    if (b->vt->device_profile(b, &prof, &err) == VYRE_OK) print_profile(&prof);
    else printf("device profile: unavailable: %s\n", err.message);
  }
  if (VYRE_HOST_HAS(b, metrics)) {
    uint32_t count = 0;
    vyre_metric metrics[256];
    if (b->vt->metrics(b, metrics, 256, &count, &err) == VYRE_OK) {
      printf("metrics (%u):\n", count);
      for (uint32_t i = 0; i < count && i < 256; i++) {
        char name[sizeof metrics[i].name]; /* cli_safe reads at most its size - 1 */
        printf("  %-40s %llu\n", cli_safe(name, sizeof name, metrics[i].name),
               (unsigned long long)metrics[i].value);
      }
    } else {
      printf("metrics: unavailable: %s\n", err.message);
    }
  }
  b->vt->destroy(b);
done:
  vyre_host_close(host);
  return rc;
}

const cli_command cli_cmd_info = {
    "info",
    "info [BACKEND] [--device N|UUID] [--json]",
    "show a backend's registration, devices, capabilities, ops and metrics",
    "BACKEND is an id from `vyre list`; without it, the backend `vyre run` would\n"
    "use.  Without --device, every device of the backend: \"devices: K\", then\n"
    "each device's profile (an instance is created on each ordinal; the count\n"
    "is the profile's device_count, else the ordinals before the first that\n"
    "has no device), then the metrics of the instance on device 0.  With\n"
    "--device N, only device N's profile and metrics.  A device's \"uuid:\" line\n"
    "(NVIDIA's GPU-xxxxxxxx-... form) is left out when the backend reports none.\n\n"
    "options:\n"
    "  --device N   device ordinal (default: every device), or its UUID (all of\n"
    "               it or a unique prefix, GPU- optional)\n"
    "  --json       one JSON object: \"backend\" (the registration), \"device\" (the\n"
    "               profile of device N, default 0), \"devices\" (the profile of\n"
    "               every device shown, null for one that cannot be) and\n"
    "               \"metrics\" (docs/schemas/vyre-info.schema.json)\n\n"
    "exit status:\n"
    "  0  the backend was found and created, and every device shown\n"
    "  1  the backend is absent or cannot be created here (as text, its\n"
    "     registration is still printed when it was found), device N does not\n"
    "     exist, or one of its devices cannot be shown (\"device N: unavailable:\n"
    "     why\")\n"
    "  2  the command line is wrong\n",
    run_info,
    NULL,
};
