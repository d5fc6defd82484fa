/* test_user.h — runs a check as a user that file permissions apply to. chmod 0444 or a
 * 0555 folder cannot stop root, and CI runs the suites as root, so a permission check
 * runs in a child process which, when the suite runs as root, first drops to nobody
 * (uid and gid 65534, no supplementary groups); as any other user it runs as that user.
 * The files the check touches must be reachable by nobody: world-traversable folders,
 * world-readable files.
 *
 * The check runs outside Check's bookkeeping, so it must not use ck_assert: under
 * CK_FORK=no a failed assertion would jump back into a copy of the runner. It returns 0
 * when it passed, else prints why on stderr and returns non-zero. */
#ifndef TESTS_TEST_USER_H
#define TESTS_TEST_USER_H

#include <stddef.h>

enum { TEST_USER_NOBODY = 65534 };

/* Runs check(arg) in a child (as nobody when the caller is root) and waits for it.
 * Returns 0 when the check passed; otherwise non-zero with what went wrong in why
 * (the check failed, it crashed, or the child could not drop its privileges). */
int test_user_run_unprivileged(int (*check)(void *arg), void *arg, char *why, size_t size);

#endif
