/* refhost.c -- the reference backend from the build tree as a Check fixture (refhost.h). */
#include "refhost.h"

#include <check.h>
#include <stdio.h>

#ifndef VYRE_TEST_BUILD_DIR
#define VYRE_TEST_BUILD_DIR "."
#endif

vyre_backend *ref;
static vyre_host *host;

void refhost_setup(void) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/host-stub/ref/.libs/libvyre-ref.so", VYRE_TEST_BUILD_DIR);
  vyre_host_options o = {sizeof o, VYRE_HOST_NO_ENV | VYRE_HOST_NO_DEFAULT_DIRS, path, NULL};
  vyre_error err = VYRE_ERROR_INIT;
  ck_assert_msg(vyre_host_open(&o, &host, &err) == VYRE_OK, "host: %s", err.message);
  ck_assert_msg(vyre_host_create(host, "reference", NULL, &ref, NULL, &err) == VYRE_OK,
                "the reference plugin must load from the build tree: %s", err.message);
}

void refhost_teardown(void) {
  if (ref) ref->vt->destroy(ref);
  ref = NULL;
  vyre_host_close(host);
  host = NULL;
}
