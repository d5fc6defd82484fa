/* tcp_replay.c — plays hetsim's message trace over real TCP between network namespaces.
 *
 *   tcp_replay NETNS_PREFIX SUBNET [CONGESTION] < TRACE
 *
 * TRACE is what `oracle_check export` writes (tests/oracle/oracle.c): simgrid_replay's
 * input (agents, agent I FLOPS UP DOWN LATENCY, task ID c|m ...) with `# hetsim ID
 * TRANSFER END` after each message. Node i lives in the namespace NETNS_PREFIX<i> at the
 * address SUBNET.<i+1>; run.sh built them and shaped their links. Computations are not
 * replayed (they use no network); their time is in the messages' start times.
 *
 * Every message gets its own TCP connection, set up before the replay starts (so no
 * handshake is timed and concurrent messages between one pair are separate flows, as in
 * hetsim), with the congestion control CONGESTION (default cubic; set per socket, since
 * a namespace's default may only be one the host allows). Like SimGrid's replay (`delay` latency), a message's sender sleeps until the
 * trace's start plus the message's latency max(latency_from, latency_to) (there is no
 * netem delay on the links), then writes its bytes; the message arrives when its
 * receiver has read the last byte. The replay starts at the trace's first message: time
 * t of the trace is t - t0 after the replay's epoch. One thread per sender and one per
 * receiver, blocking sockets: the tens of flows of a case at a few Mbit/s cost nothing.
 *
 * One process opens every socket: setns(2) moves the calling thread into a namespace,
 * and a socket stays in the namespace it was made in. So all times come from one
 * CLOCK_MONOTONIC and no two processes need to agree on anything.
 *
 * Output, one line per message (times in the trace's seconds):
 *   message ID FROM TO BYTES START HETSIM_END TCP_TRANSFER TCP_END RETRANSMITS
 * Exit status 0, 1 when a socket failed (the message says which), 2 bad usage or input. */
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

typedef struct Message {
    int id, from, to;
    long bytes;
    double start, hetsim_end; /* trace seconds */
    int send_fd, recv_fd;
    double tcp_transfer, tcp_end; /* trace seconds */
    unsigned retransmits;
    int failed;
} Message;

static Message *messages;
static int n_messages, n_nodes;
static double latency[MAX_NODES];
static struct timespec epoch; /* CLOCK_MONOTONIC instant of trace time t0 */
static double t0;
static const char *congestion = "cubic";

static double since_epoch(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - epoch.tv_sec) + 1e-9 * (double)(now.tv_nsec - epoch.tv_nsec);
}

static void sleep_until(double trace_t)
{
    double offset = trace_t - t0;
    struct timespec at = epoch;
    long long ns = (long long)llround(offset * 1e9);
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
    char line[4096];
    int cap = 0, n_hetsim = 0;
    while (fgets(line, sizeof line, in)) {
        int id, from, to, agent;
        double amount, start, transfer, end, flops, up, down, lat;
        if (sscanf(line, "agents %d", &n_nodes) == 1) {
            if (n_nodes < 2 || n_nodes > MAX_NODES) return -1;
        } else if (sscanf(line, "agent %d %lf %lf %lf %lf", &agent, &flops, &up, &down, &lat) == 5) {
            if (agent < 0 || agent >= n_nodes) return -1;
            latency[agent] = lat;
        } else if (sscanf(line, "task %d m %d %d %lf %lf", &id, &from, &to, &amount, &start) == 5) {
            if (from < 0 || from >= n_nodes || to < 0 || to >= n_nodes || from == to || amount < 1) return -1;
            if (n_messages == cap) {
                cap = cap ? 2 * cap : 64;
                messages = realloc(messages, (size_t)cap * sizeof *messages);
            }
            messages[n_messages++] = (Message){.id = id, .from = from, .to = to, .bytes = lround(amount),
                                               .start = start, .hetsim_end = NAN, .send_fd = -1, .recv_fd = -1};
        } else if (sscanf(line, "# hetsim %d %lf %lf", &id, &transfer, &end) == 3) {
            if (n_messages == 0 || messages[n_messages - 1].id != id) return -1;
            messages[n_messages - 1].hetsim_end = end;
            n_hetsim++;
        } else if (strncmp(line, "backbone", 8) == 0) {
            return -1; /* a link every message crosses: not emulated */
        }
    }
    return n_messages > 0 && n_hetsim == n_messages ? 0 : -1;
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
static int connect_message(Message *m, const char *prefix, const char *subnet)
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

static void *send_message(void *arg)
{
    Message *m = arg;
    static const char zeros[65536];
    sleep_until(m->start + (latency[m->from] > latency[m->to] ? latency[m->from] : latency[m->to]));
    m->tcp_transfer = t0 + since_epoch();
    long left = m->bytes;
    while (left > 0) {
        ssize_t w = write(m->send_fd, zeros, (size_t)(left < (long)sizeof zeros ? left : (long)sizeof zeros));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            m->failed = 1;
            return NULL;
        }
        left -= w;
    }
    shutdown(m->send_fd, SHUT_WR);
    return NULL;
}

static void *receive_message(void *arg)
{
    Message *m = arg;
    static char sink[65536]; /* shared: the bytes are never looked at */
    long got = 0;
    while (got < m->bytes) {
        ssize_t r = read(m->recv_fd, sink, sizeof sink);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            m->failed = 1;
            return NULL;
        }
        got += r;
    }
    m->tcp_end = t0 + since_epoch();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: tcp_replay NETNS_PREFIX SUBNET [CONGESTION] < TRACE\n");
        return 2;
    }
    if (argc == 4) congestion = argv[3];
    if (read_trace(stdin) != 0) {
        fprintf(stderr, "tcp_replay: bad trace (oracle_check export's format, messages with hetsim times, "
                        "no backbone, at most %d nodes)\n", MAX_NODES);
        return 2;
    }
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), status = 0;
    t0 = INFINITY;
    for (int k = 0; k < n_messages; k++) {
        if (messages[k].start < t0) t0 = messages[k].start;
        if (status == 0 && connect_message(&messages[k], argv[1], argv[2]) != 0) status = 1;
    }
    if (home >= 0) {
        setns(home, CLONE_NEWNET);
        close(home);
    }
    pthread_t *threads = calloc(2 * (size_t)n_messages, sizeof *threads);
    int started = 0;
    if (status == 0) {
        clock_gettime(CLOCK_MONOTONIC, &epoch);
        epoch.tv_nsec += 200000000; /* 0.2 s for the threads to start */
        if (epoch.tv_nsec >= 1000000000) {
            epoch.tv_sec++;
            epoch.tv_nsec -= 1000000000;
        }
        for (int k = 0; k < n_messages && status == 0; k++) {
            if (pthread_create(&threads[started], NULL, receive_message, &messages[k]) == 0) started++;
            else status = 1;
            if (status == 0 && pthread_create(&threads[started], NULL, send_message, &messages[k]) == 0) started++;
            else status = 1;
        }
        if (status != 0) { /* the receivers already started read an end of file and stop */
            fprintf(stderr, "tcp_replay: cannot start a thread\n");
            for (int k = 0; k < n_messages; k++) shutdown(messages[k].send_fd, SHUT_RDWR);
        }
    }
    for (int k = 0; k < started; k++) pthread_join(threads[k], NULL);
    free(threads);
    for (int k = 0; k < n_messages; k++) {
        Message *m = &messages[k];
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
            printf("message %d %d %d %ld %.9f %.9f %.9f %.9f %u\n", m->id, m->from, m->to, m->bytes, m->start,
                   m->hetsim_end, m->tcp_transfer, m->tcp_end, m->retransmits);
    }
    free(messages);
    return status;
}
