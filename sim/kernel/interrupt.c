/* interrupt.c — the one piece of process-global state: a signal can only reach the
 * program through a global flag. */
#include "sim/kernel/interrupt.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t interrupt_flag;

static void interrupt_handler(int signo)
{
    interrupt_flag = signo;
}

void interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = interrupt_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int interrupt_requested(void)
{
    return interrupt_flag != 0;
}

int interrupt_signal(void)
{
    return interrupt_flag;
}
