/* hub.h -- the hub of an engine whose ranks are processes but whose payload
 * moves on a transport with no envelopes of its own (the nccl engine).
 *
 * One process of the job (rank 0's) runs the hub; every rank, rank 0's
 * included, connects to it once (PEER with the job token and its rank, as on
 * the tcp mesh), and then exchanges HUB frames with it:
 *
 *   - a store: PUT a blob under a key, GET it (answered with VALUE as soon
 *     as it is there): how the ranks share NCCL's unique ids, the world's and
 *     each group's, without the controller knowing what they are;
 *   - a relay: ENV carries a send's envelope to its destination's matcher
 *     (messages of one pair keep their order: one connection each way, and
 *     the hub forwards in the order it reads);
 *   - a sequencer: when a receive has matched an envelope, the receiver
 *     says MATCH; the hub numbers the transfer and sends the same TICKET to
 *     both ends, in the order of its numbers on every connection. Each rank
 *     issues its transfers in the order its tickets arrive, so all ranks
 *     issue them in one global order (docs/engines.md says why that cannot
 *     deadlock the streams);
 *   - REJECT takes a mismatch's reason back to the sender.
 *
 * Nothing here knows CUDA: the frames, the store and the sequencing are
 * tested with real processes on any machine (tests/unit/check_hub.c).
 * The frame is wire.h's CS_FR_HUB; docs/wire-protocol.md has its layout.
 */
#ifndef CS_HUB_H
#define CS_HUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* wire.h is included once per file (its reader part has no guard): the
 * cursor is declared here, CS_HUB_FIXED and CS_HUB_MAX_DATA are wire.h's. */
typedef struct cs_cur cs_cur;

typedef enum {
    CS_HUB_PUT = 1, /* rank -> hub: key, the blob */
    CS_HUB_GET,     /* rank -> hub: key */
    CS_HUB_VALUE,   /* hub -> rank: key, the blob */
    CS_HUB_ENV,     /* rank -> hub: peer = the destination; hub -> rank: peer = the source;
                     * data: the envelope (wire.h's, CS_WIRE_ENVELOPE bytes) */
    CS_HUB_MATCH,   /* receiver -> hub: peer = the sender, sreq, rid, bytes */
    CS_HUB_TICKET,  /* hub -> both ends: seq, peer = the sender, peer2 = the receiver,
                     * sreq, rid, bytes */
    CS_HUB_REJECT,  /* receiver -> hub: peer = the sender, sreq, data: why;
                     * hub -> sender: peer = the receiver */
    CS_HUB_NKINDS
} cs_hub_kind;

typedef struct cs_hub_msg {
    uint8_t kind;
    uint32_t peer, peer2, key;
    uint64_t seq, sreq, rid, bytes;
    const uint8_t *data; /* decoded: points into the frame */
    uint32_t len;
} cs_hub_msg;

/* The frame's metadata: CS_HUB_FIXED + len bytes. */
size_t cs_hub_msg_len(const cs_hub_msg *m);
void cs_hub_msg_put(cs_cur *c, const cs_hub_msg *m);
/* Decode and check against world (peers, lengths per kind). -1 when malformed. */
int cs_hub_msg_get(cs_cur *c, cs_hub_msg *m, int world);

/* ---- the hub (in rank 0's process) */

typedef struct cs_hub cs_hub;

/* A hub for world ranks proving token, listening on ip (network order; 0:
 * every address) at a free port. NULL with why in err. */
cs_hub *cs_hub_new(const char *token, int world, uint32_t ip, char *err, size_t errlen);
uint16_t cs_hub_port(const cs_hub *h);
/* Serve on a thread of its own. 0, or -1. */
int cs_hub_start(cs_hub *h);
/* Stop serving, close every connection, free. */
void cs_hub_free(cs_hub *h);
/* Transfers numbered so far. */
uint64_t cs_hub_tickets(cs_hub *h);

/* ---- a rank's connection to the hub */

typedef struct cs_hub_client cs_hub_client;

/* What arrives from the hub besides VALUE (ENV, TICKET, REJECT), on the
 * client's reader thread, in the order the hub sent it; m NULL: the hub is
 * gone (why says how) and nothing more comes. */
typedef void (*cs_hub_fn)(void *ud, const cs_hub_msg *m, const char *why);

/* Connect to the hub at ip:port (retried while nobody listens, until
 * deadline, cs_now() seconds), prove token for rank, and start the reader.
 * Frames that arrive before cs_hub_client_on are kept for the handler.
 * NULL with why in err. */
cs_hub_client *cs_hub_dial(uint32_t ip, uint16_t port, const char *token, int rank, int world,
                           double deadline, char *err, size_t errlen);
/* From now on frames go to fn (those kept so far first). */
void cs_hub_client_on(cs_hub_client *c, cs_hub_fn fn, void *ud);
/* Send m (any thread). 0, or -1 once the hub is gone. */
int cs_hub_send(cs_hub_client *c, const cs_hub_msg *m);
int cs_hub_put(cs_hub_client *c, uint32_t key, const void *blob, size_t len);
/* The blob stored under key: waits for it until deadline, or until stop(ud)
 * says the run is over (polled). Its length, or -1 with why in err. */
long cs_hub_get(cs_hub_client *c, uint32_t key, void *buf, size_t cap, double deadline,
                bool (*stop)(void *), void *ud, char *err, size_t errlen);
/* Stop the reader and close the connection. */
void cs_hub_client_free(cs_hub_client *c);

#endif
