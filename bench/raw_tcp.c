/* raw_tcp.c -- the yardstick for the tcp engine: the same measurements as
 * bench/pingpong.lua (ping-pong half round trip for 8 B and 64 KiB, streaming
 * bandwidth of 4 MiB messages) between two processes over a loopback TCP
 * connection with nothing on top: blocking send/recv, TCP_NODELAY. Then the
 * 8 B and 4 MiB figures again with a polling receiver (recv with
 * MSG_DONTWAIT until the bytes are there, as Open MPI's tcp transport polls
 * on a core of its own): the lower bound a waiting rank that polls can reach.
 *
 * The stream goes as `commsim bench --op bw` and bench/mpi_bench.c send it
 * (osu_bw's way): windows of messages, each message from and into a buffer
 * of its own (64 MiB a window at 4 MiB, as theirs), one small ack per window.
 * Streaming every message through one 4 MiB buffer instead copies from and
 * to memory the cache still holds, which those runs do not: with the polling
 * receiver it measured 5.81 GB/s against 4.54 windowed (2 vCPUs, load 2,
 * medians of 9 alternations).
 *
 *   bench/raw_tcp [ITERS_8B ITERS_64K ITERS_4M]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int polling; /* receive with MSG_DONTWAIT, again and again */

static void xfer(int fd, char *buf, size_t len, int out) {
    while (len) {
        ssize_t n = out ? send(fd, buf, len, MSG_NOSIGNAL)
                        : recv(fd, buf, len, polling ? MSG_DONTWAIT : 0);
        if (n < 0 && !out && polling && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) {
            perror(out ? "send" : "recv");
            exit(1);
        }
        buf += n;
        len -= (size_t)n;
    }
}

/* Half round trip in seconds: rank 0 sends first, rank 1 answers. */
static double pingpong(int fd, int rank, char *buf, size_t len, int iters) {
    for (int i = 0; i < 100; i++) { /* warm up, as the Lua bench does */
        xfer(fd, buf, len, rank == 0);
        xfer(fd, buf, len, rank != 0);
    }
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        xfer(fd, buf, len, rank == 0);
        xfer(fd, buf, len, rank != 0);
    }
    return (now() - t0) / iters / 2;
}

/* commsim bench's window: 64 messages, at most 64 MiB in all, at least 2. */
static int window(size_t len) {
    size_t w = (64u << 20) / len;
    return w < 2 ? 2 : w > 64 ? 64 : (int)w;
}

/* Bytes per second: iters messages of len, in windows over bufs[window(len)]. */
static double stream(int fd, int rank, char **bufs, size_t len, int iters) {
    int w = window(len);
    char ack = 0;
    double t0 = now();
    for (int i = 0; i < iters;) {
        for (int k = 0; k < w && i < iters; k++, i++) xfer(fd, bufs[k], len, rank == 0);
        xfer(fd, &ack, 1, rank != 0);
    }
    return (double)len * iters / (now() - t0);
}

static int connected_pair(int *a, int *b) {
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&sa, &len) < 0)
        return -1;
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(*a, (struct sockaddr *)&sa, sizeof sa) < 0) return -1;
    *b = accept(l, NULL, NULL);
    close(l);
    setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return *b < 0 ? -1 : 0;
}

/* Argument i as a count of iterations, def when absent. */
static int iters_arg(int argc, char **argv, int i, int def) {
    if (argc <= i) return def;
    char *end;
    long n = strtol(argv[i], &end, 10);
    if (*end || n < 1 || n > 100000000) {
        fprintf(stderr, "raw_tcp: '%s' is not a count of iterations\n"
                        "usage: raw_tcp [ITERS_8B ITERS_64K ITERS_4M]\n", argv[i]);
        exit(2);
    }
    return (int)n;
}

int main(int argc, char **argv) {
    int it8 = iters_arg(argc, argv, 1, 20000);
    int it64 = iters_arg(argc, argv, 2, 2000);
    int it4m = iters_arg(argc, argv, 3, 200);
    int fds[2];
    if (connected_pair(&fds[0], &fds[1]) < 0) {
        perror("loopback connection");
        return 1;
    }
    size_t big = 4u << 20;
    char *buf = calloc(1, big), *bufs[64];
    int nw = window(big);
    if (!buf) return 1;
    for (int k = 0; k < nw; k++) { /* written through, as a tensor is: no page left to fault in */
        if (!(bufs[k] = malloc(big))) return 1;
        memset(bufs[k], k, big);
    }
    pid_t pid = fork();
    int rank = pid == 0 ? 1 : 0, fd = fds[rank];
    close(fds[1 - rank]);
    double l8 = pingpong(fd, rank, buf, 8, it8);
    double l64 = pingpong(fd, rank, buf, 64 << 10, it64);
    double bw = stream(fd, rank, bufs, big, it4m);
    polling = 1;
    double p8 = pingpong(fd, rank, buf, 8, it8);
    double pbw = stream(fd, rank, bufs, big, it4m);
    if (rank == 1) return 0;
    waitpid(pid, NULL, 0);
    printf("half round trip, 8 B:    %8.2f us\n", l8 * 1e6);
    printf("half round trip, 64 KiB: %8.2f us\n", l64 * 1e6);
    printf("bandwidth, 4 MiB:        %8.2f GB/s\n", bw / 1e9);
    printf("polling, 8 B half round trip: %8.2f us\n", p8 * 1e6);
    printf("polling, 4 MiB bandwidth:     %8.2f GB/s\n", pbw / 1e9);
    return 0;
}
