/* mpi_bench.c -- the Open MPI side of bench/compare.sh: the same three
 * measurements as commsim bench's pingpong, bw and all_reduce, written the
 * way osu_latency, osu_bw and nccl-tests write them, so the two compare.
 * Built with mpicc by compare.sh when Open MPI is installed; not by make.
 *
 *   mpirun -np 2 mpi_bench pingpong BYTES ITERS   half round trip, us
 *   mpirun -np 2 mpi_bench bw BYTES ITERS         GB/s, a window of messages
 *   mpirun -np N mpi_bench all_reduce BYTES ITERS float SUM: time us, busbw GB/s
 *   mpirun -np N mpi_bench ring BYTES ROUNDS      bench/ring_rounds.lua: each
 *                                                 round every rank isends to its
 *                                                 right, receives from its left,
 *                                                 waits; seconds from MPI_Init's
 *                                                 end to the last rank's finish
 *
 * Rank 0 prints one line: "NAME BYTES VALUE [VALUE]".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

/* commsim bench's window: 64 messages, at most 64 MiB in all, at least 2. */
static int window(int bytes) {
    int w = (64 << 20) / bytes;
    return w < 2 ? 2 : w > WINDOW ? WINDOW : w;
}

static double pingpong(int me, char *buf, int bytes, int iters) {
    int peer = 1 - me;
    double t0 = 0;
    for (int i = -iters / 10 - 1; i < iters; i++) { /* the first tenth warms up */
        if (i == 0) t0 = MPI_Wtime();
        if (me == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / iters / 2;
}

/* osu_bw: a window of non-blocking sends answered by one small ack. Each
 * message has its own buffer and the window is sized as commsim bench's. */
static double bw(int me, char **bufs, int bytes, int iters) {
    int peer = 1 - me, nw = window(bytes);
    MPI_Request q[WINDOW];
    char ack = 0;
    double t0 = 0;
    for (int i = -iters / 10 - 1; i < iters; i++) {
        if (i == 0) t0 = MPI_Wtime();
        for (int w = 0; w < nw; w++) {
            if (me == 0) MPI_Isend(bufs[w], bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &q[w]);
            else MPI_Irecv(bufs[w], bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &q[w]);
        }
        MPI_Waitall(nw, q, MPI_STATUSES_IGNORE);
        if (me == 0) MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
    return (double)bytes * nw * iters / (MPI_Wtime() - t0);
}

/* nccl-tests: the slowest rank's average time per call. */
static double all_reduce(float *buf, int bytes, int iters) {
    int n = bytes / 4 > 0 ? bytes / 4 : 1;
    double t0 = 0;
    for (int i = -iters / 10 - 1; i < iters; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double el = (MPI_Wtime() - t0) / iters, worst;
    MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* bench/ring_rounds.lua, round for round. */
static double ring(int me, int size, char *out, char *in, int bytes, int rounds) {
    int right = (me + 1) % size, left = (me - 1 + size) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < rounds; i++) {
        MPI_Request q;
        MPI_Isend(out, bytes, MPI_BYTE, right, 4, MPI_COMM_WORLD, &q);
        MPI_Recv(in, bytes, MPI_BYTE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    double el = MPI_Wtime() - t0, worst;
    MPI_Allreduce(&el, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (me == 0) fprintf(stderr, "usage: mpi_bench pingpong|bw|all_reduce|ring BYTES ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *op = argv[1];
    int bytes = atoi(argv[2]), iters = atoi(argv[3]);
    if (bytes < 1 || iters < 1) MPI_Abort(MPI_COMM_WORLD, 1);
    if (strcmp(op, "pingpong") == 0 || strcmp(op, "bw") == 0) {
        if (size != 2) MPI_Abort(MPI_COMM_WORLD, 1);
        int nb = strcmp(op, "bw") == 0 ? window(bytes) : 1;
        char *bufs[WINDOW];
        for (int w = 0; w < nb; w++) bufs[w] = calloc(1, (size_t)bytes);
        if (nb == 1) {
            double s = pingpong(me, bufs[0], bytes, iters);
            if (me == 0) printf("pingpong %d %.3f\n", bytes, s * 1e6);
        } else {
            double b = bw(me, bufs, bytes, iters);
            if (me == 0) printf("bw %d %.4f\n", bytes, b / 1e9);
        }
        for (int w = 0; w < nb; w++) free(bufs[w]);
    } else if (strcmp(op, "all_reduce") == 0) {
        float *buf = calloc((size_t)bytes / 4 + 1, sizeof *buf);
        double s = all_reduce(buf, bytes, iters);
        double busbw = (double)bytes / s * 2.0 * (size - 1) / size;
        if (me == 0) printf("all_reduce %d %.3f %.4f\n", bytes, s * 1e6, busbw / 1e9);
        free(buf);
    } else if (strcmp(op, "ring") == 0) {
        char *out = calloc(1, (size_t)bytes), *in = calloc(1, (size_t)bytes);
        double s = ring(me, size, out, in, bytes, iters);
        if (me == 0) printf("ring %d %.4f\n", bytes, s);
        free(out);
        free(in);
    } else {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
