/* child.c -- libvyre-host: judge a new plugin file in a child process (vyre-probe) before this process maps it, and keep the verdict in a per-user cache (docs/host.md, "Judging a new plugin in a child"). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

#define PROBE_VERDICT_TAG "vyre-probe-verdict 1 "
#define PROBE_REPORT_MAX 4096

int host_probe_wanted(uint32_t flags) {
  if (flags & VYRE_HOST_NO_PROBE) return 0;
  const char *env = (flags & VYRE_HOST_NO_ENV) ? NULL : vyre__env(VYRE__ENV_PROBE);
  return !(env && strcmp(env, "0") == 0);
}

/* ------------------------------------------------------------------ */
/* The verdict cache: one small file per plugin identity               */
/* ------------------------------------------------------------------ */

/* The cache directory (VYRE_CACHE_DIR/probe, else XDG_CACHE_HOME/vyre/probe,
 * else HOME/.cache/vyre/probe) into dir; 0, or -1 when none is set. */
static int cache_dir(char *dir, size_t size) {
  const char *base;
  int n;
  if ((base = vyre__env(VYRE__ENV_CACHE_DIR)) && *base)
    n = snprintf(dir, size, "%s/probe", base);
  else if ((base = vyre__env(VYRE__ENV_XDG_CACHE_HOME)) && *base)
    n = snprintf(dir, size, "%s/vyre/probe", base);
  else if ((base = vyre__env(VYRE__ENV_HOME)) && *base)
    n = snprintf(dir, size, "%s/.cache/vyre/probe", base);
  else
    return -1;
  return n > 0 && (size_t)n < size - 128 ? 0 : -1;
}

/* FNV-1a over 8-byte words (the tail bytewise): a cheap fingerprint. */
static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

#define HASH_CHUNK 65536u
/* A fingerprint of the bytes a corrupt or replaced plugin most likely
 * differs in: the first and last 64 KiB (ELF header, program headers,
 * section headers) and the dynamic section the program headers name.
 * With the identity it keys the verdict: a file replaced within one
 * timestamp tick on a reused inode (same size) still gets its own. */
static uint64_t fingerprint(int fd, off_t size) {
  static unsigned char buf[HASH_CHUNK]; /* guarded by the caller's lock */
  uint64_t h = 0xcbf29ce484222325ull;
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return h;
  h = hash_bytes(h, buf, (size_t)n);
  ElfW(Ehdr) eh;
  uint64_t dyn_off = 0, dyn_size = 0;
  if ((size_t)n >= sizeof eh) {
    memcpy(&eh, buf, sizeof eh);
    for (unsigned i = 0; i < eh.e_phnum && eh.e_phentsize == sizeof(ElfW(Phdr)); i++) {
      uint64_t at = eh.e_phoff + (uint64_t)i * sizeof(ElfW(Phdr));
      if (at > (uint64_t)n || (uint64_t)n - at < sizeof(ElfW(Phdr))) break;
      ElfW(Phdr) ph;
      memcpy(&ph, buf + at, sizeof ph);
      if (ph.p_type == PT_DYNAMIC) dyn_off = ph.p_offset, dyn_size = ph.p_filesz;
    }
  }
  if (dyn_size && dyn_off < (uint64_t)size) {
    n = pread(fd, buf, dyn_size < sizeof buf ? (size_t)dyn_size : sizeof buf, (off_t)dyn_off);
    if (n > 0) h = hash_bytes(h, buf, (size_t)n);
  }
  if (size > (off_t)HASH_CHUNK) {
    n = pread(fd, buf, sizeof buf, size - (off_t)HASH_CHUNK);
    if (n > 0) h = hash_bytes(h, buf, (size_t)n);
  }
  return h;
}

/* The entry name: the file's identity (device, inode, size, mtime,
 * ctime), its fingerprint and the host's ABI minor (the entry is called
 * with it), so a rebuilt or replaced file is judged again.  Every name
 * starts "v1-". */
static void cache_name(char *name, size_t size, const struct stat *st, uint64_t print) {
  snprintf(name, size, "v1-m%u-%llx-%llx-%llx-%llx.%lx-%llx.%lx-%016llx",
           (unsigned)VYRE_HOST_ABI_MINOR, (unsigned long long)st->st_dev,
           (unsigned long long)st->st_ino, (unsigned long long)st->st_size,
           (unsigned long long)st->st_mtim.tv_sec, (unsigned long)st->st_mtim.tv_nsec,
           (unsigned long long)st->st_ctim.tv_sec, (unsigned long)st->st_ctim.tv_nsec,
           (unsigned long long)print);
}

/* A cached verdict: 1 with *skip and reason set; 0 when there is none or
 * it cannot be read (then the file is probed again). */
static int cache_read(const char *path, int *skip, char *reason, size_t reason_size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return 0;
  struct stat st;
  char buf[VYRE_HOST_REASON_MAX + 64];
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (off_t)sizeof buf)
    n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *nl = memchr(buf, '\n', (size_t)n);
  size_t tag = sizeof PROBE_VERDICT_TAG - 1;
  if (!nl || strncmp(buf, PROBE_VERDICT_TAG, tag) != 0) return 0;
  *nl = '\0';
  const char *v = buf + tag;
  if (strcmp(v, "ok") == 0) {
    *skip = 0;
    return 1;
  }
  if (strncmp(v, "skip ", 5) == 0 && v[5]) {
    *skip = 1;
    size_t len = strnlen(v + 5, reason_size - 1);
    memcpy(reason, v + 5, len);
    reason[len] = '\0';
    return 1;
  }
  return 0;
}

/* mkdir -p, mode 0700. */
static void make_dirs(char *dir) {
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    mkdir(dir, 0700);
    *p = '/';
  }
  mkdir(dir, 0700);
}

/* Keep at most HOST_PROBE_CACHE_MAX - 1 entries before one is added:
 * the oldest go (by mtime). */
static void cache_trim(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char oldest[NAME_MAX + 1] = "";
  struct timespec when = {0, 0};
  unsigned count = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    if (strncmp(de->d_name, "v1-", 3) != 0 || strchr(de->d_name, '~')) continue;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    count++;
    if (!oldest[0] || st.st_mtim.tv_sec < when.tv_sec ||
        (st.st_mtim.tv_sec == when.tv_sec && st.st_mtim.tv_nsec < when.tv_nsec)) {
      snprintf(oldest, sizeof oldest, "%s", de->d_name);
      when = st.st_mtim;
    }
  }
  if (count >= HOST_PROBE_CACHE_MAX && oldest[0]) unlinkat(dirfd(d), oldest, 0);
  closedir(d);
  if (count > HOST_PROBE_CACHE_MAX) cache_trim(dir); /* one over per pass */
}

/* Write the verdict: a temporary file renamed over the entry, so that a
 * reader sees the old verdict or the new one, never half of one. */
static void cache_write(char *dir, const char *name, int skip, const char *reason) {
  make_dirs(dir);
  cache_trim(dir);
  char tmp[PATH_MAX + 256], path[PATH_MAX + 256];
  /* Unique per process and per write: two threads (or hosts) judging
   * the same file never share a temporary. */
  static atomic_uint writes;
  unsigned seq = atomic_fetch_add(&writes, 1u);
  if (snprintf(tmp, sizeof tmp, "%s/%s~%ld.%u", dir, name, (long)getpid(), seq) >=
          (int)sizeof tmp ||
      snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
    return;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    host_log("probe cache %s not written: %s", tmp, strerror(errno));
    return;
  }
  char line[VYRE_HOST_REASON_MAX + 64];
  int n = snprintf(line, sizeof line, "%s%s%s\n", PROBE_VERDICT_TAG, skip ? "skip " : "ok",
                   skip ? reason : "");
  int ok = n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) == n;
  if (close(fd) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) {
    host_log("probe cache %s not written: %s", path, strerror(errno));
    unlink(tmp);
  }
}

/* ------------------------------------------------------------------ */
/* The child                                                           */
/* ------------------------------------------------------------------ */

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Read the child's report until EOF or the deadline: 1 at EOF, 0 when
 * the deadline passed. */
static int read_report(int fd, char *buf, size_t size, long long deadline) {
  size_t used = 0;
  for (;;) {
    long long left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r == 0 ? 0 : 1;
    char chunk[512];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 1;
    size_t take = (size_t)n < size - 1 - used ? (size_t)n : size - 1 - used;
    memcpy(buf + used, chunk, take);
    used += take;
    buf[used] = '\0';
  }
}

/* Wait for the child until the deadline, then kill it.  Its wait status,
 * or -1 when it had to be killed (or was reaped by someone else). */
static int reap(pid_t pid, long long deadline, int *killed) {
  int status;
  *killed = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1; /* ECHILD: SIGCHLD ignored by the application */
    if (now_ms() >= deadline) break;
    struct timespec pause_ = {0, 1000000};
    nanosleep(&pause_, NULL);
  }
  kill(pid, SIGKILL);
  *killed = 1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return -1;
}

/* Start vyre-probe on fd (passed as its fd 3 when /proc works, else by
 * path); its stdout into *out_fd.  0, or an errno value. */
static int spawn_probe(const char *program, const char *path, int fd, int by_fd, pid_t *pid,
                       int *out_fd) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return errno;
  char minor[16], file[32];
  snprintf(minor, sizeof minor, "%u", (unsigned)VYRE_HOST_ABI_MINOR);
  snprintf(file, sizeof file, "/proc/self/fd/3");
  char *argv[] = {(char *)"vyre-probe", minor, by_fd ? file : (char *)path, NULL};
  /* dup2(3, 3) would keep the descriptor's close-on-exec flag. */
  int src = fd, dup_fd = -1;
  if (by_fd && fd == 3) src = dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 4);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc != 0) goto fail_fa;
  rc = posix_spawnattr_init(&attr);
  if (rc != 0) goto fail_attr;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  if (!vyre__log_debug()) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (by_fd && src >= 0) posix_spawn_file_actions_adddup2(&fa, src, 3);
  rc = (by_fd && src < 0) ? errno : posix_spawn(pid, program, &fa, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
fail_attr:
  posix_spawn_file_actions_destroy(&fa);
fail_fa:
  if (dup_fd >= 0) close(dup_fd);
  close(pipefd[1]);
  if (rc != 0) close(pipefd[0]);
  else *out_fd = pipefd[0];
  return rc;
}

/* The child's verdict: 0 when it reported in full and exited 0, else -1
 * with `reason` saying what became of it. */
static int verdict(const char *report, int completed, int status, int killed, char *reason,
                   size_t size) {
  if (killed || !completed) {
    snprintf(reason, size, "hung the probe process: no verdict in %u s, killed", HOST_PROBE_TIMEOUT_MS / 1000);
    return -1;
  }
  if (status != -1 && WIFSIGNALED(status)) {
    snprintf(reason, size, "crashed the probe process: signal %d (%s) while loading it, in its "
             "constructors, entry or registration", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return -1;
  }
  int reported = strncmp(report, "vyre-probe 1\n", 13) == 0 && strstr(report, "\nend\n");
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0 && !reported) {
    snprintf(reason, size, "the probe process exited with status %d before its report (the "
             "plugin's code or the dynamic linker ended the process)", WEXITSTATUS(status));
    return -1;
  }
  if (!reported) {
    snprintf(reason, size, "the probe process ended without a complete report (a plugin "
             "closed or wrote to its output)");
    return -1;
  }
  /* After its report the child only runs exit(0): the plugin's destructors
   * and fini tables.  A failure there would be the host's at its exit (a
   * sanitizer turns a crash into exit status 1 rather than a signal). */
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    snprintf(reason, size, "the probe process exited with status %d after its report, in the "
             "plugin's destructors or fini tables", WEXITSTATUS(status));
    return -1;
  }
  return 0;
}

int host_probe_file(const char *program, const char *path, int fd, const struct stat *st,
                    int by_fd, char *reason, size_t reason_size) {
  char dir[PATH_MAX], name[160], entry_path[PATH_MAX + 160];
  int have_cache = cache_dir(dir, sizeof dir) == 0;
  static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&print_lock);
  uint64_t print = fingerprint(fd, st->st_size);
  pthread_mutex_unlock(&print_lock);
  cache_name(name, sizeof name, st, print);
  snprintf(entry_path, sizeof entry_path, "%s/%s", have_cache ? dir : "", name);
  int skip = 0;
  if (have_cache && cache_read(entry_path, &skip, reason, reason_size)) {
    host_log("probe verdict for %s from the cache %s: %s", path, entry_path,
             skip ? reason : "ok");
    return skip ? -1 : 0;
  }
  pid_t pid = 0;
  int out = -1;
  long long deadline = now_ms() + HOST_PROBE_TIMEOUT_MS;
  int rc = spawn_probe(program, path, fd, by_fd, &pid, &out);
  if (rc != 0) {
    host_log("cannot start %s (%s): %s loaded without judging it in a child", program,
             strerror(rc), path);
    return 0;
  }
  char report[PROBE_REPORT_MAX] = "";
  int completed = read_report(out, report, sizeof report, deadline);
  close(out);
  int killed;
  int status = reap(pid, completed ? deadline : 0, &killed);
  host_log("probe of %s: %s", path, report[0] ? report : "(no report)");
  skip = verdict(report, completed, status, killed, reason, reason_size) != 0;
  if (have_cache) cache_write(dir, name, skip, reason);
  return skip ? -1 : 0;
}
