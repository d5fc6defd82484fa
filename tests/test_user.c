/* test_user.c — fork, drop root to nobody, run the check, report through the exit status. */
#define _DEFAULT_SOURCE /* setgroups */
#include "tests/test_user.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

enum { TEST_USER_PRIVILEGES = 125 }; /* child exit status: could not become nobody */

int test_user_run_unprivileged(int (*check)(void *arg), void *arg, char *why, size_t size)
{
    int as_root = geteuid() == 0;
    fflush(NULL); /* no buffered output twice */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, size, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (as_root) {
            if (setgroups(0, NULL) != 0 || setgid(TEST_USER_NOBODY) != 0 || setuid(TEST_USER_NOBODY) != 0) {
                fprintf(stderr, "test_user: cannot become uid %d: %s\n", TEST_USER_NOBODY, strerror(errno));
                _exit(TEST_USER_PRIVILEGES);
            }
            if (geteuid() == 0 || setuid(0) == 0) _exit(TEST_USER_PRIVILEGES); /* root not gone for good */
        }
        /* _exit: the child must not run the parent's atexit handlers (Check's, the leak checker's) */
        _exit(check(arg) == 0 ? 0 : 1);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, size, "waitpid: %s", strerror(errno));
            return -1;
        }
    const char *who = as_root ? "as nobody (dropped from root)" : "as the current user";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        snprintf(why, size, "passed %s", who);
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_USER_PRIVILEGES)
        snprintf(why, size, "could not drop root to uid %d", TEST_USER_NOBODY);
    else if (WIFEXITED(status))
        snprintf(why, size, "the check failed %s (its reason is on stderr)", who);
    else if (WIFSIGNALED(status))
        snprintf(why, size, "the check died of signal %d %s", WTERMSIG(status), who);
    else
        snprintf(why, size, "the check ended with wait status %d", status);
    return 1;
}
