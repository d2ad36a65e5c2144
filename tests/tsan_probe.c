/* tsan_probe.c -- tests/tsan-wrap's question to the machine: does a ThreadSanitizer program start, run a thread and exit cleanly here? */
#include <pthread.h>
#include <stdio.h>

static void *run(void *arg) { return arg; }

int main(void) {
  pthread_t t;
  static int token;
  void *back = NULL;
  if (pthread_create(&t, NULL, run, &token) != 0 || pthread_join(t, &back) != 0 ||
      back != &token) {
    fprintf(stderr, "tsan_probe: a thread could not run\n");
    return 1;
  }
  return 0;
}
