/* failalloc.h -- host allocation failures for tests: malloc, calloc, realloc and pthread_mutex_init of the test process, the n-th of them failing on request. */
#ifndef VYRE_TESTS_FAILALLOC_H
#define VYRE_TESTS_FAILALLOC_H

/*
 * failalloc.c defines malloc, calloc, realloc and pthread_mutex_init
 * (a lock may need memory: it fails with ENOMEM) in the test program
 * itself (linked -rdynamic), so they take the place of the C library's
 * for every object of the process, the dlopen'd plugin included, and for
 * the C library's own allocations on its behalf (strdup, fopen, ...);
 * each forwards to glibc's __libc_malloc and kin.  While armed, every
 * call is counted and the chosen one returns NULL with errno ENOMEM.
 * Calls made from the code of excluded objects (the test program itself,
 * with Check; the fake driver, whose allocations stand for the driver's
 * own memory, faulted separately) are neither counted nor failed.
 *
 * A tool that replaces malloc itself (valgrind, a sanitizer) takes the
 * place of these: failalloc_active() says whether they are in use.
 * Leaks are watched the same way: blocks that one tracked object (the
 * plugin) allocates while armed are remembered until freed.  Not
 * thread-safe to arm; the counting itself is atomic.
 */

/* 1 when this process's malloc is failalloc's. */
int failalloc_active(void);
/* Calls from the code of the object (the program or a shared object)
 * holding `addr` are never counted or failed; up to 4 objects; NULL
 * clears the list.  0, or -1 if no object holds it or the list is full. */
int failalloc_exclude(const void *addr);
/* Blocks that the code of the shared object holding `addr` allocates
 * directly while armed are remembered until freed (free is failalloc's
 * too); NULL clears.  0, or -1 if no object holds it. */
int failalloc_track(const void *addr);
/* How many remembered blocks are not freed yet. */
unsigned long failalloc_live(void);
/* Count from now on; the nth counted call (1 = the next) fails, or none
 * when nth is 0. */
void failalloc_arm(unsigned long nth);
/* Stop counting; returns how many calls were counted since the arm. */
unsigned long failalloc_disarm(void);
/* Whether the armed failure has happened. */
int failalloc_fired(void);

#endif /* VYRE_TESTS_FAILALLOC_H */
