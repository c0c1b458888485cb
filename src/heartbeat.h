/* heartbeat.h -- liveness on the rank link: whether the other side still
 * speaks.
 *
 * A process can stop without closing its sockets (SIGSTOP, a debugger, a
 * frozen machine): the connection stays up and silent, and whoever waits on
 * it would wait forever. So both sides of the rank link say ALIVE at an
 * interval, and each gives the other up once it has heard nothing at all (no
 * frame of any kind) for its limit: the controller reports the rank as
 * stopped responding, a rank leaves as if the controller had gone.
 *
 * Every ALIVE carries its sender's limit, so the receiver says ALIVE often
 * enough for it (six times per limit, at most once a second), whatever its
 * own setting. The limit comes from COMMSIM_HEARTBEAT (seconds; 0: this side
 * never gives the other up, but still answers). This file holds the
 * bookkeeping; rank_link.c and controller.c send and judge.
 */
#ifndef CS_HEARTBEAT_H
#define CS_HEARTBEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CS_HEARTBEAT_ENV "COMMSIM_HEARTBEAT"
#define CS_HEARTBEAT_DEFAULT 30.0 /* seconds: far beyond any scheduling delay */
#define CS_HEARTBEAT_MAX 86400.0  /* a day; the limit travels as u32 milliseconds */

typedef struct cs_heartbeat {
    double limit;      /* seconds of silence before the other side is given up; 0: never */
    double peer_limit; /* the other side's, from its last ALIVE; 0 while unknown or off */
    double heard;      /* when anything last arrived from the other side */
    double said;       /* when this side last said ALIVE, or 0: never yet */
} cs_heartbeat;

/* This process's limit: COMMSIM_HEARTBEAT, else CS_HEARTBEAT_DEFAULT.
 * 0, or -1 with the reason in err (not a number of seconds). */
int cs_heartbeat_limit(double *limit, char *err, size_t errlen);

/* Start watching at now: the other side has limit seconds to be heard. */
void cs_heartbeat_init(cs_heartbeat *h, double limit, double now);
/* Something arrived from the other side. */
void cs_heartbeat_heard(cs_heartbeat *h, double now);
/* An ALIVE arrived saying the other side's limit (ms). */
void cs_heartbeat_peer(cs_heartbeat *h, uint32_t peer_ms, double now);
/* Seconds between two ALIVEs of this side. */
double cs_heartbeat_interval(const cs_heartbeat *h);
/* Whether an ALIVE is due now; if so it counts as said. */
bool cs_heartbeat_due(cs_heartbeat *h, double now);
/* Whether the other side has been silent past the limit. */
bool cs_heartbeat_silent(const cs_heartbeat *h, double now);
/* Whether something (bytes, or the close) waits unread on fd: the other side
 * spoke while this one was not looking (a loaded machine, a long stall of its
 * own), so it is not silent. Asked before giving the other side up. */
bool cs_heartbeat_unread(int fd);
/* This side's limit as an ALIVE carries it (ms). */
uint32_t cs_heartbeat_ms(const cs_heartbeat *h);

#endif
