/* outq.h -- standard output and standard error written by a thread of their
 * own, so that a reader who stops reading does not stop the writer.
 *
 * The tcp engine's controller is one loop: it reads its ranks' events, says
 * ALIVE to them and keeps the run's --timeout. Printing a rank's output
 * straight to a pipe that a pager (less) has stopped reading blocked that
 * loop, and after the heartbeat's limit the ranks gave the controller up: the
 * run ended with status 5 though nothing had failed. Through an output queue
 * the loop only copies the bytes into memory; the queue's thread writes them,
 * both streams in the order they were printed, when the reader takes them.
 * Past a cap of unwritten bytes a printer waits, as on a full pipe.
 */
#ifndef CS_OUTQ_H
#define CS_OUTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct cs_outq cs_outq;

/* A queue writing to out_fd and err_fd, holding at most cap bytes unwritten;
 * NULL when it cannot start (out of memory, no thread): print directly. */
cs_outq *cs_outq_open(int out_fd, int err_fd, size_t cap);
/* Its two streams (line buffered): what is printed to them goes to their
 * descriptors in the order printed, across both. */
FILE *cs_outq_out(cs_outq *q);
FILE *cs_outq_err(cs_outq *q);
/* Flush both streams, wait until everything is written (or a descriptor
 * failed: its bytes are dropped, as a closed pipe's are) and free q. */
void cs_outq_close(cs_outq *q);

/* With own (a headless run printing to this process's standard output and
 * error), those two through a queue (at most CS_OUTQ_CAP bytes unwritten: a
 * chatty run's minutes of output, while a reader pauses), *out and *err its
 * streams; NULL, and the two left as they are, without own or when the
 * queue cannot start. Either way cs_outq_close(the result) at the end. */
#define CS_OUTQ_CAP (64u << 20)
cs_outq *cs_outq_std(bool own, FILE **out, FILE **err);

#endif
