/* interrupt.h — SIGINT/SIGTERM become a flag the run loop polls between events, so an
 * interrupted run ends through the normal path: its row says "interrupted", never "done". */
#ifndef SIM_INTERRUPT_H
#define SIM_INTERRUPT_H

/* Installs handlers for SIGINT and SIGTERM (main only). */
void interrupt_install(void);
int interrupt_requested(void);
/* The signal number that arrived, 0 if none. */
int interrupt_signal(void);

#endif
