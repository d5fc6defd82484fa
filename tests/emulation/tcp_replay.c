/* tcp_replay.c — plays hetsim's message trace over real TCP between network namespaces.
 *
 *   tcp_replay [--open-loop] [--congestion CC] NETNS_PREFIX SUBNET < TRACE
 *
 * TRACE is what `oracle_check export` writes (tests/oracle/oracle.c): simgrid_replay's
 * input (agents N, agent I FLOPS UP DOWN LATENCY, task ID c AGENT FLOPS START, task ID m
 * FROM TO BYTES START) with `# hetsim ID TRANSFER END` after each message. Node i lives
 * in the namespace NETNS_PREFIX<i> at the address SUBNET.<i+1>; run.sh built them and
 * shaped their links.
 *
 * When a task starts. A trace has start times but no causes. In hetsim a task starts in
 * the event that ended another (a message's arrival, a computation's end, the slowest
 * hop of an all-reduce step), so its start equals that task's end exactly. The replay
 * (causal, the default) starts a task once every task that ended at its start time in
 * hetsim has ended here (its causes), and a task without one at its trace time. So a
 * transfer slower than hetsim's delays what follows it, as it would in the run: a ring
 * all-reduce's 2(N-1) steps add up their errors instead of hiding them in the next
 * step's latency. Ties are taken as causes too (a client's computation also waits for
 * another client's download that ended at the same instant in hetsim), which delays
 * nothing when the replay agrees with hetsim. Causes are tasks that started before (or
 * at the same time and earlier in the trace), so there is no cycle. --open-loop starts
 * every task at its trace time, as simgrid_replay does.
 *
 * A computation is slept (its trace duration, FLOPS / the agent's speed). A message has
 * its own TCP connection, made before the replay starts (no handshake is timed, and two
 * messages between one pair are two flows, as in hetsim), with congestion control CC
 * (default cubic; set per socket, since a namespace's default may only be one the host
 * allows). Like SimGrid's replay (`delay` latency) its sender sleeps the message's
 * latency max(latency_from, latency_to) (there is no netem delay on the links), then
 * writes its bytes; the message arrives when its receiver has read the last byte.
 *
 * One process opens every socket: setns(2) moves the calling thread into a namespace,
 * and a socket stays in the namespace it was made in. So all times come from one
 * CLOCK_MONOTONIC and no two processes need to agree on anything. One thread per task
 * and one per receiver, blocking sockets: the tens of flows of a case at a few Mbit/s
 * cost nothing. Time t of the trace is t - t0 after the replay's epoch, t0 the first
 * task's start.
 *
 * Output, one line per message (times in the trace's seconds):
 *   message ID FROM TO BYTES START HETSIM_END TCP_START TCP_TRANSFER TCP_END RETRANSMITS
 * TCP_START is when its causes had ended here (its latency begins), TCP_TRANSFER when its
 * first byte was written. Exit status 0, 1 when a socket failed (the message says
 * which), 2 bad usage or input. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES 64

typedef struct Task {
    int id;
    char kind;                   /* 'c' computation, 'm' message */
    int from, to;                /* computation: the agent in from, to = -1 */
    double amount;               /* FLOPs or bytes */
    double start, end;           /* hetsim's, trace seconds */
    int *causes, n_causes;       /* indices of the tasks it waits for */
    int send_fd, recv_fd;
    double tcp_start, tcp_transfer, tcp_end; /* here, trace seconds */
    int done, failed;
    unsigned retransmits;
} Task;

static Task *tasks;
static int n_tasks, n_nodes;
static double speed[MAX_NODES], latency[MAX_NODES];
static struct timespec epoch; /* CLOCK_MONOTONIC instant of trace time t0 */
static double t0;
static const char *congestion = "cubic";
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

/* ---- time ---- */

static double now(void) /* trace seconds */
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return t0 + (double)(ts.tv_sec - epoch.tv_sec) + 1e-9 * (double)(ts.tv_nsec - epoch.tv_nsec);
}

static void sleep_until(double trace_t)
{
    long long ns = (long long)llround((trace_t - t0) * 1e9);
    if (ns < 0) return;
    struct timespec at = epoch;
    at.tv_sec += (time_t)(ns / 1000000000);
    at.tv_nsec += (long)(ns % 1000000000);
    if (at.tv_nsec >= 1000000000) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {}
}

/* ---- input ---- */

static int read_trace(FILE *in)
{
    char line[65536];
    int cap = 0, n_messages = 0, n_ends = 0;
    while (fgets(line, sizeof line, in)) {
        int id, from, to, used;
        double amount, start, transfer, end, flops, up, down, lat;
        if (sscanf(line, "agents %d", &n_nodes) == 1) {
            if (n_nodes < 2 || n_nodes > MAX_NODES) return -1;
        } else if (sscanf(line, "agent %d %lf %lf %lf %lf", &from, &flops, &up, &down, &lat) == 5) {
            if (from < 0 || from >= n_nodes || !(flops > 0)) return -1;
            speed[from] = flops;
            latency[from] = lat;
        } else if (strncmp(line, "task ", 5) == 0) {
            Task t = {.to = -1, .end = NAN, .send_fd = -1, .recv_fd = -1};
            char kind;
            if (sscanf(line, "task %d %c%n", &id, &kind, &used) != 2 || id != n_tasks) return -1;
            t.id = id;
            t.kind = kind;
            if (kind == 'm') {
                if (sscanf(line + used, "%d %d %lf %lf", &from, &to, &amount, &start) != 4 || from < 0 ||
                    from >= n_nodes || to < 0 || to >= n_nodes || from == to || amount < 1)
                    return -1;
                t.to = to;
                n_messages++;
            } else if (kind == 'c') {
                if (sscanf(line + used, "%d %lf %lf", &from, &amount, &start) != 3 || from < 0 || from >= n_nodes)
                    return -1;
                t.end = start + amount / speed[from];
            } else {
                return -1;
            }
            t.from = from;
            t.amount = amount;
            t.start = start;
            if (n_tasks == cap) {
                cap = cap ? 2 * cap : 64;
                tasks = realloc(tasks, (size_t)cap * sizeof *tasks);
            }
            tasks[n_tasks++] = t;
        } else if (sscanf(line, "# hetsim %d %lf %lf", &id, &transfer, &end) == 3) {
            if (n_tasks == 0 || tasks[n_tasks - 1].id != id || tasks[n_tasks - 1].kind != 'm') return -1;
            tasks[n_tasks - 1].end = end;
            n_ends++;
        } else if (strncmp(line, "backbone", 8) == 0) {
            return -1; /* a link every message crosses: not emulated */
        }
    }
    return n_messages > 0 && n_ends == n_messages ? 0 : -1;
}

/* Every task's causes: the tasks that ended when it started (within 1e-9 s, since a
 * computation's end is recomputed from its FLOPs), started before it or at the same
 * time earlier in the trace. Quadratic: a case has tens of tasks. */
static void find_causes(void)
{
    for (int i = 0; i < n_tasks; i++) {
        Task *t = &tasks[i];
        t->causes = malloc((size_t)n_tasks * sizeof *t->causes);
        for (int j = 0; j < n_tasks; j++) {
            const Task *c = &tasks[j];
            if (j != i && fabs(c->end - t->start) <= 1e-9 && (c->start < t->start || (c->start == t->start && j < i)))
                t->causes[t->n_causes++] = j;
        }
    }
}

/* ---- connections ---- */

static int enter_netns(const char *prefix, int node)
{
    char path[512];
    snprintf(path, sizeof path, "/run/netns/%s%d", prefix, node);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "tcp_replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int status = setns(fd, CLONE_NEWNET);
    if (status != 0) fprintf(stderr, "tcp_replay: setns %s: %s\n", path, strerror(errno));
    close(fd);
    return status;
}

static void node_address(const char *subnet, int node, struct sockaddr_in *a)
{
    char text[64];
    snprintf(text, sizeof text, "%s.%d", subnet, node + 1);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    inet_pton(AF_INET, text, &a->sin_addr);
}

/* Opens message m's connection: a listener in the receiver's namespace, a connected
 * socket in the sender's, the accepted end back in the receiver's. 0 or -1. */
static int connect_message(Task *m, const char *prefix, const char *subnet)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    int one = 1, listener = -1;
    node_address(subnet, m->to, &addr);
    if (enter_netns(prefix, m->to) != 0) return -1;
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&addr, &len) != 0)
        goto fail;
    if (enter_netns(prefix, m->from) != 0) goto fail;
    m->send_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m->send_fd < 0 || setsockopt(m->send_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        setsockopt(m->send_fd, IPPROTO_TCP, TCP_CONGESTION, congestion, (socklen_t)strlen(congestion)) != 0 ||
        connect(m->send_fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        goto fail;
    m->recv_fd = accept(listener, NULL, NULL);
    if (m->recv_fd < 0) goto fail;
    close(listener);
    return 0;
fail:
    fprintf(stderr, "tcp_replay: message %d (%d -> %d): %s\n", m->id, m->from, m->to, strerror(errno));
    if (listener >= 0) close(listener);
    return -1;
}

/* ---- the replay ---- */

/* Waits for t's causes; returns when the last of them ended here (its trace time when it
 * has none). A failed cause fails t. */
static double wait_for_causes(Task *t)
{
    if (t->n_causes == 0) {
        sleep_until(t->start);
        return t->start;
    }
    double last = -INFINITY;
    pthread_mutex_lock(&lock);
    for (int k = 0; k < t->n_causes; k++) {
        const Task *c = &tasks[t->causes[k]];
        while (!c->done) pthread_cond_wait(&changed, &lock);
        if (c->tcp_end > last) last = c->tcp_end;
        if (c->failed) t->failed = 1;
    }
    pthread_mutex_unlock(&lock);
    return last;
}

static void finish(Task *t, int failed)
{
    pthread_mutex_lock(&lock);
    t->tcp_end = now();
    t->failed |= failed;
    t->done = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void *run_task(void *arg)
{
    Task *t = arg;
    t->tcp_start = wait_for_causes(t);
    if (t->kind == 'c') {
        sleep_until(t->tcp_start + (t->end - t->start));
        finish(t, 0);
        return NULL;
    }
    static const char zeros[65536];
    sleep_until(t->tcp_start + (latency[t->from] > latency[t->to] ? latency[t->from] : latency[t->to]));
    t->tcp_transfer = now();
    long left = t->failed ? 0 : lround(t->amount);
    while (left > 0) {
        ssize_t w = write(t->send_fd, zeros, (size_t)(left < (long)sizeof zeros ? left : (long)sizeof zeros));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        left -= w;
    }
    shutdown(t->send_fd, SHUT_WR); /* a failed sender: its receiver reads an end of file */
    return NULL;
}

static void *receive_message(void *arg)
{
    Task *m = arg;
    static char sink[65536]; /* shared: the bytes are never looked at */
    long got = 0, want = lround(m->amount);
    while (got < want) {
        ssize_t r = read(m->recv_fd, sink, sizeof sink);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += r;
    }
    finish(m, got < want);
    return NULL;
}

int main(int argc, char **argv)
{
    int open_loop = 0, a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--open-loop") == 0) open_loop = 1;
        else if (strcmp(argv[a], "--congestion") == 0 && a + 1 < argc) congestion = argv[++a];
        else break;
    }
    if (argc - a != 2) {
        fprintf(stderr, "usage: tcp_replay [--open-loop] [--congestion CC] NETNS_PREFIX SUBNET < TRACE\n");
        return 2;
    }
    if (read_trace(stdin) != 0) {
        fprintf(stderr, "tcp_replay: bad trace (oracle_check export's format, messages with hetsim times, "
                        "no backbone, at most %d nodes)\n", MAX_NODES);
        return 2;
    }
    if (open_loop) {
        for (int i = 0; i < n_tasks; i++) tasks[i].causes = NULL;
    } else {
        find_causes();
    }
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), status = 0;
    t0 = INFINITY;
    for (int i = 0; i < n_tasks; i++) {
        if (tasks[i].start < t0) t0 = tasks[i].start;
        if (status == 0 && tasks[i].kind == 'm' && connect_message(&tasks[i], argv[a], argv[a + 1]) != 0) status = 1;
    }
    if (home >= 0) {
        setns(home, CLONE_NEWNET);
        close(home);
    }
    pthread_t *threads = calloc(2 * (size_t)n_tasks, sizeof *threads);
    int started = 0;
    if (status == 0) {
        clock_gettime(CLOCK_MONOTONIC, &epoch);
        epoch.tv_nsec += 200000000; /* 0.2 s for the threads to start */
        if (epoch.tv_nsec >= 1000000000) {
            epoch.tv_sec++;
            epoch.tv_nsec -= 1000000000;
        }
        for (int i = 0; i < n_tasks && status == 0; i++) {
            if (tasks[i].kind == 'm') {
                if (pthread_create(&threads[started], NULL, receive_message, &tasks[i]) == 0) started++;
                else status = 1;
            }
            if (status == 0 && pthread_create(&threads[started], NULL, run_task, &tasks[i]) == 0) started++;
            else status = 1;
        }
        if (status != 0) { /* what started ends: every receiver reads an end of file, every waiter a failure */
            fprintf(stderr, "tcp_replay: cannot start a thread\n");
            pthread_mutex_lock(&lock);
            for (int i = 0; i < n_tasks; i++) {
                if (tasks[i].kind == 'm') shutdown(tasks[i].send_fd, SHUT_RDWR);
                else if (!tasks[i].done) tasks[i].done = tasks[i].failed = 1;
            }
            pthread_cond_broadcast(&changed);
            pthread_mutex_unlock(&lock);
        }
    }
    for (int k = 0; k < started; k++) pthread_join(threads[k], NULL);
    free(threads);
    for (int i = 0; i < n_tasks; i++) {
        Task *m = &tasks[i];
        free(m->causes);
        if (m->kind != 'm') continue;
        struct tcp_info info;
        socklen_t len = sizeof info;
        if (m->send_fd >= 0 && getsockopt(m->send_fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0)
            m->retransmits = info.tcpi_total_retrans;
        if (m->send_fd >= 0) close(m->send_fd);
        if (m->recv_fd >= 0) close(m->recv_fd);
        if (status == 0 && m->failed) {
            fprintf(stderr, "tcp_replay: message %d (%d -> %d) did not complete\n", m->id, m->from, m->to);
            status = 1;
        }
        if (status == 0)
            printf("message %d %d %d %.0f %.9f %.9f %.9f %.9f %.9f %u\n", m->id, m->from, m->to, m->amount, m->start,
                   m->end, m->tcp_start, m->tcp_transfer, m->tcp_end, m->retransmits);
    }
    free(tasks);
    return status;
}
