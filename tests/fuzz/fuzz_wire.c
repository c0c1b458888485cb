/* fuzz_wire.c -- libFuzzer harness for the tcp engine's frame parser.
 *
 * Every input is a byte stream as a peer could send it. It goes through a
 * socket into cs_rx_pump, and every frame the reader hands over is decoded with
 * the decoder its type uses in the engine and the controller (HELLO, PEER,
 * WELCOME, envelopes, events, gates, the hub's frames, ids, texts); payloads are read into buffers of
 * the announced size. Nothing may crash, leak, overrun or hang, whatever the
 * bytes: the reader and the decoders check every length before using it.
 *
 * Build and run: `make fuzz` (each harness FUZZ_SECONDS, default 60; see
 * docs/hacking.md). tests/fuzz/corpus_wire holds the seeds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hub.h"
#include "wire.h"

#define MAX_PAYLOAD (1 << 20)
#define WORLD 8

typedef struct sink {
    uint8_t *payload;
    cs_wire_scratch s;
} sink;

static int on_frame(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                    size_t errlen) {
    (void)err, (void)errlen;
    sink *s = ud;
    cs_hello hello;
    cs_welcome wel;
    cs_envelope env;
    cs_event ev;
    cs_gate_msg gate;
    switch (h->type) {
    case CS_FR_HELLO: cs_hello_get(meta, &hello, true); break;
    case CS_FR_PEER: cs_hello_get(meta, &hello, false); break;
    case CS_FR_WELCOME:
        if (cs_welcome_get(meta, &wel) == 0) {
            free(wel.ip);
            free(wel.port);
        }
        break;
    case CS_FR_MSG: case CS_FR_RTS: case CS_FR_SYNC:
        if (cs_envelope_get(meta, &env, WORLD) < 0) return -1;
        break;
    case CS_FR_GATE:
        if (cs_gate_get(meta, &gate, WORLD) == 0 && gate.text_len)
            (void)memchr(gate.text, 0, gate.text_len);
        break;
    case CS_FR_HUB: { /* the nccl engine's hub (hub.c): an envelope inside ENV */
        cs_hub_msg hm;
        if (cs_hub_msg_get(meta, &hm, WORLD) < 0) return -1;
        if (hm.kind == CS_HUB_ENV) {
            cs_cur in = {.p = (uint8_t *)hm.data, .len = hm.len};
            cs_envelope_get(&in, &env, WORLD);
        }
        break;
    }
    case CS_FR_EVENT:
        if (cs_wire_event_get(meta, &ev, WORLD, &s->s) == 0 && ev.text)
            (void)strlen(ev.text);
        break;
    default:
        while (meta->pos < meta->len) cs_get_u8(meta);
        break;
    }
    if (h->data_len) {
        free(s->payload);
        s->payload = malloc(h->data_len); /* bounded by the header check */
        if (!s->payload) return -1;
        *dst = s->payload;
    }
    return 0;
}

static int on_payload(void *ud, char *err, size_t errlen) {
    (void)err, (void)errlen;
    sink *s = ud;
    free(s->payload);
    s->payload = NULL;
    return 0;
}

static const cs_rx_ops ops = {on_frame, on_payload};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0) return 0;
    int one = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof one);
    static sink s;
    cs_rx rx;
    if (cs_rx_init(&rx, MAX_PAYLOAD) < 0) abort();
    char err[256];
    /* the first byte picks the chunk size, so frames split at many places */
    size_t chunk = size ? (size_t)data[0] % 64 + 1 : 1, off = 0;
    int rc = 0;
    while (off < size && rc == 0) {
        size_t n = size - off < chunk ? size - off : chunk;
        ssize_t w = send(sv[0], data + off, n, 0);
        if (w <= 0) break;
        off += (size_t)w;
        rc = cs_rx_pump(&rx, sv[1], &ops, &s, err, sizeof err);
    }
    close(sv[0]);
    if (rc == 0) rc = cs_rx_pump(&rx, sv[1], &ops, &s, err, sizeof err);
    close(sv[1]);
    free(s.payload);
    s.payload = NULL;
    cs_rx_free(&rx);
    return 0;
}
