/* refhost.h -- a Check fixture that loads the reference backend from the build tree, for the suites that run programs on the oracle (check_fill, check_fuse). */
#ifndef VYRE_TESTS_RUNTIME_REFHOST_H
#define VYRE_TESTS_RUNTIME_REFHOST_H

#include "vyre/vyre_host.h"

/* The reference backend between refhost_setup and refhost_teardown. */
extern vyre_backend *ref;

void refhost_setup(void);
void refhost_teardown(void);

#endif /* VYRE_TESTS_RUNTIME_REFHOST_H */
