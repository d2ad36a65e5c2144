/* ptx.c -- `vyre emit-ptx`: lower a program to PTX with the CUDA plugin's code generator (no GPU needed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/codegen/codegen.h"
#include "vyre/vyre_support.h"
#include "cli.h"

/* "sm_90", "sm_100", "sm_121" (a trailing a/f is accepted and ignored),
 * "90" or "9.0" -> major, minor.  0 on success. */
static int parse_arch(const char *text, uint32_t *major, uint32_t *minor) {
  const char *p = text;
  if (strncmp(p, "sm_", 3) == 0 || strncmp(p, "SM_", 3) == 0) p += 3;
  const char *dot = strchr(p, '.');
  if (dot) {
    char head[16];
    size_t n = (size_t)(dot - p);
    if (n == 0 || n >= sizeof head) return -1;
    memcpy(head, p, n);
    head[n] = '\0';
    if (cli_parse_u32(head, 1, 99, major) != 0 || cli_parse_u32(dot + 1, 0, 9, minor) != 0)
      return -1;
    return 0;
  }
  char digits[16];
  size_t n = strspn(p, "0123456789");
  if (n < 2 || n >= sizeof digits) return -1;
  if (p[n] && !((p[n] == 'a' || p[n] == 'f') && p[n + 1] == '\0')) return -1;
  memcpy(digits, p, n);
  digits[n] = '\0';
  uint32_t v;
  if (cli_parse_u32(digits, 10, 999, &v) != 0) return -1;
  *major = v / 10;
  *minor = v % 10;
  return 0;
}

static int run_emit_ptx(const cli_command *self, int argc, char **argv) {
  const char *program = NULL, *arch = NULL, *out = NULL;
  cg_options opt;
  memset(&opt, 0, sizeof opt);
  int have_wg = 0, show_info = 0;
  for (int i = 1; i < argc;) {
    const char *v = NULL;
    int m;
    if (cli_opt_flag(argv, i, "--no-fastpath")) {
      opt.flags |= CG_NO_FASTPATH;
      i++;
      continue;
    }
    if (cli_opt_flag(argv, i, "--info")) {
      show_info = 1;
      i++;
      continue;
    }
    if ((m = cli_opt_value(self, argc, argv, &i, "--arch", &v)) < 0) return CLI_USAGE;
    if (m > 0) {
      arch = v;
      continue;
    }
    if ((m = cli_opt_value(self, argc, argv, &i, "--ulp", &v)) < 0) return CLI_USAGE;
    if (m > 0) {
      if (cli_parse_u32(v, 0, 1u << 30, &opt.ulp_budget) != 0)
        return cli_usage(self, "--ulp '%s' is not a number of ulps (0 = strict)", v);
      continue;
    }
    if ((m = cli_opt_value(self, argc, argv, &i, "--wg", &v)) < 0) return CLI_USAGE;
    if (m > 0) {
      if (cli_parse_dim3(v, opt.workgroup) != 0)
        return cli_usage(self, "--wg '%s' is not X[,Y[,Z]] with each at least 1", v);
      have_wg = 1;
      continue;
    }
    if ((m = cli_opt_value(self, argc, argv, &i, "-o", &v)) < 0) return CLI_USAGE;
    if (m > 0) {
      out = v;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      return cli_usage(self, "unknown option '%s'", argv[i]);
    if (program) return cli_usage(self, "takes one PROGRAM, got '%s' and '%s'", program, argv[i]);
    program = argv[i++];
  }
  if (!program) return cli_usage(self, "PROGRAM is missing");
  if (!arch) return cli_usage(self, "--arch is missing (e.g. --arch sm_90)");
  if (parse_arch(arch, &opt.sm_major, &opt.sm_minor) != 0)
    return cli_usage(self, "--arch '%s' is not a compute capability such as sm_90 or 9.0", arch);

  vyre_error err = VYRE_ERROR_INIT;
  void *bytes = NULL;
  size_t size = 0;
  vyre_program *prog = NULL;
  char *ptx = NULL;
  size_t length = 0;
  cg_kernel_info info;
  int rc = CLI_OK;
  if (cli_load_program(program, &bytes, &size, NULL, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  if (vyre_program_decode(bytes, size, &prog, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s: %s", program, err.message);
    goto done;
  }
  if (!have_wg)
    for (int k = 0; k < 3; k++) opt.workgroup[k] = prog->header.workgroup_size[k];
  if (cg_emit_ptx(prog, &opt, &ptx, &length, &info, &err) != VYRE_OK) {
    rc = cli_fail(self, "%s: %s", program, err.message);
    goto done;
  }
  if (cli_write_file(out ? out : "-", ptx, length, &err) != 0) {
    rc = cli_fail(self, "%s", err.message);
    goto done;
  }
  if (show_info)
    fprintf(stderr,
            "entry %s: PTX ISA %u.%u, %u buffer pointer%s + params (%u words), %u bytes shared, "
            "grid mode %s (%u element%s per thread)%s%s\n",
            info.entry, info.ptx_isa_major, info.ptx_isa_minor, info.kernel_buffers,
            info.kernel_buffers == 1 ? "" : "s", info.params_words, info.shared_bytes,
            info.grid_mode == CG_GRID_ELEMENTWISE ? "elementwise" : "logical",
            info.elements_per_thread, info.elements_per_thread == 1 ? "" : "s",
            info.uses_grid_barrier ? ", cooperative launch" : "",
            info.uses_trap ? ", checks trap words" : "");
done:
  free(ptx);
  vyre_program_free(prog);
  free(bytes);
  return rc;
}

const cli_command cli_cmd_emit_ptx = {
    "emit-ptx",
    "emit-ptx PROGRAM --arch sm_XY [--ulp N] [--wg X,Y,Z] [--no-fastpath] [--info] [-o OUT]",
    "print the PTX the CUDA backend generates for a program (no GPU needed)",
    "PROGRAM is text or binary (\"-\" = stdin).  The PTX goes to stdout unless -o OUT\n"
    "is given (-o - is stdout too).\n\n"
    "options:\n"
    "  --arch sm_XY      target compute capability: sm_90, sm_100, 9.0, ...\n"
    "  --ulp N           ulp budget for transcendentals (default 0 = strict, which\n"
    "                    refuses them with a clear error)\n"
    "  --wg X,Y,Z        workgroup size the kernel is launched with (default: the\n"
    "                    program's)\n"
    "  --no-fastpath     never use the vectorised elementwise form\n"
    "  --info            describe the kernel (entry, parameters, launch mode) on stderr\n\n"
    "exit status:\n"
    "  0  the PTX was written\n"
    "  1  the program is invalid or cannot be lowered for this target, or a file\n"
    "     cannot be read or written\n"
    "  2  the command line is wrong\n",
    run_emit_ptx,
    NULL,
};
