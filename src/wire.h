/* wire.h -- the TCP engine's frames: header, limits, typed metadata, events.
 *
 * Every byte that crosses a socket is a frame: a fixed 20-byte header (magic,
 * version, type, metadata length, payload length), then the metadata, then the
 * payload. All integers are little-endian. Nothing read from a socket is
 * trusted: the header is checked against the limits of its type before anything
 * is allocated, and every metadata decoder checks its exact length and ranges.
 * docs/wire-protocol.md is the contract.
 */
#ifndef CS_WIRE_H
#define CS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event_schema.h"
#include "events.h"

#define CS_WIRE_MAGIC 0x4d495343u /* "CSIM" as bytes on the wire */
#define CS_WIRE_VERSION 4
#define CS_WIRE_HDR 20
#define CS_WIRE_TOKEN 32          /* hex characters of a job token */
#define CS_WIRE_MAX_WORLD 4096
#define CS_WIRE_MAX_TEXT 1024     /* a REFUSE or REJECT reason */
#define CS_WIRE_MAX_EVENT_TEXT CS_EV_MAX_TEXT
#define CS_WIRE_MAX_EVENT_REQS CS_EV_MAX_REQS
#define CS_WIRE_ENVELOPE (36 + 8 * CS_MAX_DIMS) /* bytes of a MSG/RTS/SYNC envelope */
#define CS_WIRE_SYNC_MAX (64 * 1024) /* the largest SYNC payload; larger ones go RTS/CTS */

typedef enum {
    CS_FR_HELLO = 1, /* rank -> controller: token, rank, world, listening address */
    CS_FR_WELCOME,   /* controller -> rank: the run's settings and every rank's address */
    CS_FR_PEER,      /* rank -> rank, first frame of a mesh connection: token, rank */
    CS_FR_MSG,       /* an eager message with its payload */
    CS_FR_RTS,       /* request to send: the envelope, no payload */
    CS_FR_CTS,       /* clear to send: the receive matched sreq_id, send to token */
    CS_FR_DATA,      /* the payload of a message cleared by CTS */
    CS_FR_REJECT,    /* the matched receive disagreed: fail sreq_id with the text */
    CS_FR_EVENT,     /* rank -> controller: one event */
    CS_FR_ABORT,     /* controller -> rank: end the run (reason) */
    CS_FR_FLUSH,     /* controller -> rank: send every event emitted so far */
    CS_FR_FLUSHED,   /* rank -> controller: done */
    CS_FR_BYE,       /* rank -> controller: the rank exited; no more events */
    CS_FR_REFUSE,    /* either side, before closing a handshake: why */
    CS_FR_SYNC,      /* a small rendezvous message with its payload: ACK when matched */
    CS_FR_ACK,       /* the receive matched sreq_id (of a SYNC): the send completes */
    CS_FR_GATE,      /* rank -> controller: the rank waits at its gate (gated runs) */
    CS_FR_GO,        /* controller -> rank: pass that gate */
    CS_FR_CLOCK,     /* controller -> rank: the virtual clock the rank asked for (--net) */
    CS_FR_ALIVE,     /* either way on the rank link: still here (the sender's heartbeat limit) */
    /* ---- the hub (hub.c: the nccl engine's ranks as processes) */
    CS_FR_HUB,       /* rank <-> hub: store, envelope relay, transfer tickets (kind byte) */
    /* ---- end of the hub's */
    CS_FR_NTYPES
} cs_frame_type;

/* ---- the hub's frame (hub.h has its codec): a fixed part, then up to
 * CS_HUB_MAX_DATA bytes (a stored blob, an envelope, a reason) */
#define CS_HUB_FIXED 48
#define CS_HUB_MAX_DATA 4096
/* ---- end of the hub's */

typedef struct cs_frame_hdr {
    uint8_t type;
    uint32_t meta_len;
    uint64_t data_len;
} cs_frame_hdr;

const char *cs_frame_name(int type);

/* Encode a header into 20 bytes. */
void cs_wire_hdr_put(uint8_t *out, int type, uint32_t meta_len, uint64_t data_len);
/* Decode and check 20 bytes: magic, version, a known type, metadata within its
 * type's limits, a payload only where the type has one and at most max_payload.
 * 0, or -1 with the reason in err. */
int cs_wire_hdr_get(const uint8_t *in, uint64_t max_payload, cs_frame_hdr *h, char *err,
                    size_t errlen);

/* ---- a bounded cursor over metadata: reads past the end set bad, never overrun */
typedef struct cs_cur {
    uint8_t *p;
    size_t len, pos;
    bool bad;
} cs_cur;

void cs_put_u8(cs_cur *c, uint8_t v);
void cs_put_u16(cs_cur *c, uint16_t v);
void cs_put_u32(cs_cur *c, uint32_t v);
void cs_put_u64(cs_cur *c, uint64_t v);
void cs_put_bytes(cs_cur *c, const void *v, size_t n);
uint8_t cs_get_u8(cs_cur *c);
uint16_t cs_get_u16(cs_cur *c);
uint32_t cs_get_u32(cs_cur *c);
uint64_t cs_get_u64(cs_cur *c);
const uint8_t *cs_get_bytes(cs_cur *c, size_t n);

/* ---- typed metadata */

typedef struct cs_hello {
    char token[CS_WIRE_TOKEN + 1];
    uint32_t rank, world;
    uint32_t ip;    /* listening IPv4 address, network order (HELLO only) */
    uint16_t port;  /* host order */
} cs_hello;

#define CS_HELLO_LEN (CS_WIRE_TOKEN + 16)
#define CS_PEER_LEN (CS_WIRE_TOKEN + 8)
void cs_hello_put(cs_cur *c, const cs_hello *h, bool with_addr);
int cs_hello_get(cs_cur *c, cs_hello *h, bool with_addr);

#define CS_WIRE_BOOT_ID 36
#define CS_WIRE_COLL_FAMILIES 16 /* = CS_COLL_MAX_FAMILIES */
#define CS_WIRE_MAX_ALGO 32      /* algorithm ids on the wire are below this */

/* The settings every rank adopts from the controller, and the address book. */
#define CS_WELCOME_STRICT 1u /* --strict: pitfalls are errors */
#define CS_WELCOME_GATED 2u  /* a front end steps the run: every operation asks GATE/GO */
#define CS_WELCOME_NET 4u    /* a network model is on (--net): the figures below hold */

typedef struct cs_welcome {
    uint32_t world;
    uint64_t eager_limit;
    uint8_t rendezvous_only;
    uint8_t flags;       /* CS_WELCOME_* */
    uint64_t seed, mem_limit, step_limit;
    uint64_t elapsed_us; /* the controller's run clock when it sent this */
    uint8_t coll_algo[CS_WIRE_COLL_FAMILIES]; /* --algo: per collective family */
    /* The controller's clock: ranks on the same kernel (same boot id, so the
     * same CLOCK_MONOTONIC) take its origin exactly; others estimate it from
     * elapsed_us. */
    uint64_t t0_ns;
    char boot_id[CS_WIRE_BOOT_ID + 1];
    /* --net (with CS_WELCOME_NET): the model's figures; 0 otherwise */
    uint64_t alpha_ns, bandwidth, flops;
    uint64_t out_limit; /* bytes a rank may print, 0: none */
    uint32_t *ip;        /* world entries each; owned by the caller */
    uint16_t *port;
} cs_welcome;

#define CS_WELCOME_FIXED (46 + CS_WIRE_COLL_FAMILIES + 8 + CS_WIRE_BOOT_ID + 24 + 8)
size_t cs_welcome_len(uint32_t world);
void cs_welcome_put(cs_cur *c, const cs_welcome *w);
/* Decodes into w, allocating ip/port (free both). -1 when malformed. */
int cs_welcome_get(cs_cur *c, cs_welcome *w);

/* MSG/RTS envelope: the receiving side's cs_msg fields. */
typedef struct cs_envelope {
    int32_t src, tag, ctx;
    uint64_t bytes;
    uint8_t dtype, ndim;
    uint16_t coll_sig;   /* cs_msg's: a collective call's digest, 0 for program messages */
    int64_t shape[CS_MAX_DIMS];
    int32_t line;
    uint64_t sreq_id;
} cs_envelope;

void cs_envelope_put(cs_cur *c, const cs_envelope *e);
int cs_envelope_get(cs_cur *c, cs_envelope *e, int world);

/* GATE: what the rank is about to do, and the values of that operation's
 * tensor as printed (clipped to CS_WIRE_MAX_GATE_TEXT). GO answers with seq. */
#define CS_GATE_FIXED 21
#define CS_WIRE_MAX_GATE_TEXT (16 * 1024)

typedef struct cs_gate_msg {
    uint64_t seq;        /* the rank's gates so far, from 1 */
    uint8_t op;          /* cs_op */
    int32_t line, peer, tag;
    const char *text;    /* not NUL-terminated; decoded: points into the metadata */
    size_t text_len;
} cs_gate_msg;

size_t cs_gate_len(const cs_gate_msg *g);
void cs_gate_put(cs_cur *c, const cs_gate_msg *g);
/* Decode and range-check (peers against world). -1 when malformed. */
int cs_gate_get(cs_cur *c, cs_gate_msg *g, int world);

/* ---- events: a compact binary form (docs/wire-protocol.md lists the fields).
 * Texts, names and request lists beyond the limits are truncated by the encoder. */
#define CS_WIRE_MAX_NAME CS_EV_MAX_ALGO /* a collective's algo or reduce_op */

/* Where a decoded event's strings and arrays live until the next decode. */
typedef struct cs_wire_scratch {
    uint64_t reqs[CS_WIRE_MAX_EVENT_REQS];
    int group[CS_WIRE_MAX_WORLD];
    char str[CS_WIRE_MAX_EVENT_TEXT + 2 * CS_WIRE_MAX_NAME + CS_EV_MAX_PITFALL + 4]; /* each NUL-terminated */
} cs_wire_scratch;

size_t cs_wire_event_len(const cs_event *ev);
void cs_wire_event_put(cs_cur *c, const cs_event *ev);
/* Decode and range-check (world bounds ranks, peers and group members); the
 * event's strings and arrays point into s. -1 when malformed. */
int cs_wire_event_get(cs_cur *c, cs_event *ev, int world, cs_wire_scratch *s);

/* ---- tokens and sockets */

/* A fresh random token: CS_WIRE_TOKEN hex characters and a NUL. */
int cs_wire_token_new(char *out);
/* Constant-time comparison of two tokens of CS_WIRE_TOKEN characters. */
bool cs_wire_token_eq(const char *a, const char *b);
/* A token given by a user: exactly CS_WIRE_TOKEN hex characters. */
bool cs_wire_token_valid(const char *s);

/* Write all of buf to a (possibly non-blocking) socket, waiting at most until
 * deadline (cs_now() seconds). 0, or -1. */
int cs_wire_write_all(int fd, const void *buf, size_t len, double deadline);
/* Read one whole frame whose metadata is at most max_meta bytes and that has no
 * payload, waiting at most until deadline: the handshake path. *meta is
 * malloc'd (free it). 0, or -1 with the reason in err. */
int cs_wire_read_frame(int fd, double deadline, uint32_t max_meta, cs_frame_hdr *h,
                       uint8_t **meta, char *err, size_t errlen);
/* Send a frame with metadata and no payload, blocking until deadline. */
int cs_wire_send(int fd, int type, const void *meta, uint32_t meta_len, double deadline);

/* "HOST:PORT" or "HOST" (port default) into an IPv4 address (resolving names).
 * 0, or -1 with the reason in err. */
int cs_wire_parse_addr(const char *s, int default_port, uint32_t *ip, uint16_t *port,
                       char *err, size_t errlen);
/* --bind's "HOST": the address a rank listens on for its peers (any free
 * port of it; a port given is refused). 0, or -1 with the reason in err. */
int cs_wire_parse_bind(const char *s, uint32_t *ip, char *err, size_t errlen);
/* This kernel's boot id (36 characters and a NUL; empty if unknown). */
void cs_wire_boot_id(char *out);
/* "a.b.c.d:port" */
const char *cs_wire_addr_str(uint32_t ip, uint16_t port, char *buf, size_t len);
/* Room for need more open files (a socket per rank) past those open now
 * (*open: past the standard three, often inherited): the soft RLIMIT_NOFILE
 * goes up towards want more, at most to the hard limit. 0 when need fits;
 * else -1 with the most this process may open in *limit. */
int cs_wire_files(unsigned long need, unsigned long want, unsigned long long *limit,
                  unsigned long *open);

#endif

/* ---- reading frames from a non-blocking socket, for any number of frames */

typedef struct cs_rx cs_rx;
typedef struct cs_rx_ops {
    /* A frame's header and metadata arrived. For a frame with a payload, set
     * *dst to where its h->data_len bytes go. 0, or -1 (err filled) to stop. */
    int (*frame)(void *ud, const cs_frame_hdr *h, cs_cur *meta, void **dst, char *err,
                 size_t errlen);
    /* The payload of the last frame is complete. 0, or -1 to stop. */
    int (*payload)(void *ud, char *err, size_t errlen);
} cs_rx_ops;

struct cs_rx {
    uint8_t *buf;
    size_t cap, off, len;   /* unread bytes are buf[off, off + len) */
    uint8_t *dst;           /* a payload being read straight into place */
    uint64_t left;
    uint64_t max_payload;
};

int cs_rx_init(cs_rx *rx, uint64_t max_payload);
void cs_rx_free(cs_rx *rx);
/* Read what the socket has and hand over every complete frame. Returns 0 (no
 * more bytes for now), 1 (the peer closed cleanly between frames), -1 (a
 * malformed frame or a callback refused) or -2 (the connection broke: a socket
 * error or EOF inside a frame, as when a process dies). The reason is in err. */
int cs_rx_pump(cs_rx *rx, int fd, const cs_rx_ops *ops, void *ud, char *err, size_t errlen);
