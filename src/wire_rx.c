/* wire_rx.c -- frames from a non-blocking socket: as many as one read
 * brings, each handed over whole (its metadata) and its payload copied, or
 * read in place when large, to where the frame's handler says. See wire.h. */
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* ---- the frame reader */

#define RX_INITIAL (64 * 1024)

int cs_rx_init(cs_rx *rx, uint64_t max_payload) {
    memset(rx, 0, sizeof *rx);
    rx->buf = malloc(RX_INITIAL);
    rx->cap = RX_INITIAL;
    rx->max_payload = max_payload;
    return rx->buf ? 0 : -1;
}

void cs_rx_free(cs_rx *rx) {
    free(rx->buf);
    rx->buf = NULL;
}

/* The copy of a payload's bytes to where the receiver wants them (often a
 * receive tensor): out of line, so that a sanitizer can exempt the script's
 * own data race of reading a tensor an irecv still fills (a pitfall the
 * lessons show; tests/tsan.supp), and nothing else. */
__attribute__((noinline)) static void payload_copy(uint8_t *to, const uint8_t *from, size_t n) {
    memcpy(to, from, n);
}

/* Copy buffered bytes into the payload in progress. 1 when it is complete. */
static int rx_fill(cs_rx *rx) {
    size_t n = rx->len < rx->left ? rx->len : (size_t)rx->left;
    if (n) payload_copy(rx->dst, rx->buf + rx->off, n);
    rx->dst += n;
    rx->left -= n;
    rx->off += n;
    rx->len -= n;
    return rx->left == 0;
}

/* Hand over every complete frame in the buffer. 0, or -1. */
static int rx_parse(cs_rx *rx, const cs_rx_ops *ops, void *ud, char *err, size_t errlen) {
    for (;;) {
        if (rx->dst) {
            if (!rx_fill(rx)) return 0;
            rx->dst = NULL;
            if (ops->payload(ud, err, errlen) < 0) return -1;
            continue;
        }
        if (rx->len < CS_WIRE_HDR) return 0;
        cs_frame_hdr h;
        if (cs_wire_hdr_get(rx->buf + rx->off, rx->max_payload, &h, err, errlen) < 0) return -1;
        size_t need = CS_WIRE_HDR + (size_t)h.meta_len;
        if (need > rx->cap) { /* within the type's limit, checked above */
            uint8_t *nb = malloc(need);
            if (!nb) {
                snprintf(err, errlen, "out of memory reading a frame");
                return -1;
            }
            memcpy(nb, rx->buf + rx->off, rx->len);
            free(rx->buf);
            rx->buf = nb;
            rx->cap = need;
            rx->off = 0;
        }
        if (rx->len < need) return 0;
        cs_cur meta = {.p = rx->buf + rx->off + CS_WIRE_HDR, .len = h.meta_len};
        void *dst = NULL;
        if (ops->frame(ud, &h, &meta, &dst, err, errlen) < 0) return -1;
        rx->off += need;
        rx->len -= need;
        if (h.data_len) {
            if (!dst) {
                snprintf(err, errlen, "a %s frame's payload has nowhere to go", cs_frame_name(h.type));
                return -1;
            }
            rx->dst = dst;
            rx->left = h.data_len;
        } else if (h.type == CS_FR_MSG || h.type == CS_FR_DATA || h.type == CS_FR_SYNC) {
            if (ops->payload(ud, err, errlen) < 0) return -1;
        }
    }
}

int cs_rx_pump(cs_rx *rx, int fd, const cs_rx_ops *ops, void *ud, char *err, size_t errlen) {
    for (;;) {
        ssize_t n;
        if (rx->dst && rx->len == 0 && rx->left >= RX_INITIAL) {
            /* a large payload: read it in place, skipping the buffer */
            n = recv(fd, rx->dst, rx->left, MSG_DONTWAIT);
            if (n > 0) {
                rx->dst += n;
                rx->left -= (uint64_t)n;
                if (rx->left == 0) {
                    rx->dst = NULL;
                    if (ops->payload(ud, err, errlen) < 0) return -1;
                }
                continue;
            }
        } else {
            if (rx->off + rx->len == rx->cap || (rx->off && rx->len < CS_WIRE_HDR)) {
                memmove(rx->buf, rx->buf + rx->off, rx->len);
                rx->off = 0;
            }
            size_t room = rx->cap - rx->off - rx->len;
            n = recv(fd, rx->buf + rx->off + rx->len, room, MSG_DONTWAIT);
            if (n > 0) {
                rx->len += (size_t)n;
                if (rx_parse(rx, ops, ud, err, errlen) < 0) return -1;
                /* A short read emptied the socket: spare the recv that would
                 * say so (epoll reports what arrives next). */
                if ((size_t)n < room) return 0;
                continue;
            }
        }
        if (n == 0) {
            if (rx->len == 0 && !rx->dst) return 1;
            snprintf(err, errlen, "connection closed in the middle of a frame");
            return -2;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        snprintf(err, errlen, "%s", strerror(errno));
        return -2;
    }
}
