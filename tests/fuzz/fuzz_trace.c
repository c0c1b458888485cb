/* fuzz_trace.c -- libFuzzer harness for the trace reader (and writer).
 *
 * Every input is written to a memfd and read to the end with cs_trace_read: the
 * reader must never crash, leak or hang, whatever the bytes. Each event it
 * accepts is also written back with the trace writer; reading that second trace
 * must give the same events, so the writer never produces what the reader
 * refuses and the two agree on every field.
 *
 * Build and run: `make fuzz` (each harness FUZZ_SECONDS, default 60; see
 * docs/hacking.md). tests/fuzz/corpus_trace holds the seeds (small valid
 * traces, a cut one, a few broken ones).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

static int make_memfd(const char *name, char *path, size_t len) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* The event as canonical text, doubles exact: what "same event" means here. */
static char *canon(const cs_event *ev) {
    json_t *o = cs_event_to_json(ev);
    char *s;
    if (!o) abort(); /* every event the reader accepts can be encoded */
    s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!s) abort();
    return s;
}

/* Strings over the writer's limits are truncated on the way back: skip those. */
static bool fits(const cs_event *ev) {
    return (!ev->text || strlen(ev->text) <= CS_TRACE_MAX_NAME) &&
           (!ev->engine || strlen(ev->engine) <= CS_TRACE_MAX_NAME) &&
           (!ev->send_mode || strlen(ev->send_mode) <= CS_TRACE_MAX_NAME);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[512];
    cs_event ev;
    char **seen = NULL;
    size_t n = 0, cap = 0;
    bool all_fit = true;
    int rc;

    if (in_fd < 0) {
        in_fd = make_memfd("trace_in", in_path, sizeof in_path);
        out_fd = make_memfd("trace_out", out_path, sizeof out_path);
    }
    if (ftruncate(in_fd, 0) < 0 || (size && pwrite(in_fd, data, size, 0) != (ssize_t)size)) abort();

    cs_trace_reader *r = cs_trace_reader_open(in_path, err, sizeof err);
    cs_trace_writer *w = cs_trace_open(out_path, err, sizeof err);
    if (!r || !w) abort();
    cs_sink sink = cs_trace_sink(w);
    while ((rc = cs_trace_read(r, &ev, err, sizeof err)) == 1) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            if (!(seen = realloc(seen, cap * sizeof *seen))) abort();
        }
        seen[n++] = canon(&ev);
        all_fit = all_fit && fits(&ev);
        sink.emit(sink.ud, &ev);
    }
    if (rc != 0 && rc != -1 && rc != CS_TRACE_CUT) abort();
    if (rc != 0 && !strstr(err, in_path)) abort(); /* every error names the file */
    if (cs_trace_read(r, &ev, err, sizeof err) != rc) abort(); /* and repeats */
    cs_trace_reader_close(r);
    if (cs_trace_close(w) < 0) abort(); /* the reader's events are all writable */

    /* Read back what the writer wrote: the same events, then a clean end. */
    r = cs_trace_reader_open(out_path, err, sizeof err);
    if (!r) abort();
    for (size_t i = 0; i < n; i++) {
        if (cs_trace_read(r, &ev, err, sizeof err) != 1) {
            fprintf(stderr, "re-read event %zu: %s\n", i, err);
            abort();
        }
        char *again = canon(&ev);
        if (all_fit && strcmp(again, seen[i]) != 0) {
            fprintf(stderr, "event %zu changed:\n  %s\n  %s\n", i, seen[i], again);
            abort();
        }
        free(again);
    }
    if (cs_trace_read(r, &ev, err, sizeof err) != (n ? 0 : -1)) abort();
    cs_trace_reader_close(r);

    for (size_t i = 0; i < n; i++) free(seen[i]);
    free(seen);
    return 0;
}
