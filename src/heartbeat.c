/* heartbeat.c -- the rank link's liveness bookkeeping (see heartbeat.h). */
#include "heartbeat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#define PER_LIMIT 6        /* ALIVEs per limit: a few may be late without harm */
#define MAX_INTERVAL 1.0   /* seconds: cheap, and a changed limit is learnt soon */
#define MIN_INTERVAL 0.005

int cs_heartbeat_limit(double *limit, char *err, size_t errlen) {
    const char *s = getenv(CS_HEARTBEAT_ENV);
    *limit = CS_HEARTBEAT_DEFAULT;
    if (!s || !*s) return 0;
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v < 0 || v > CS_HEARTBEAT_MAX || (v > 0 && v < 0.05)) {
        snprintf(err, errlen,
                 "%s=%s: want the seconds of silence after which the other side of a rank's "
                 "link is given up (0.05 to %g; 0: never)",
                 CS_HEARTBEAT_ENV, s, CS_HEARTBEAT_MAX);
        return -1;
    }
    *limit = v;
    return 0;
}

void cs_heartbeat_init(cs_heartbeat *h, double limit, double now) {
    *h = (cs_heartbeat){.limit = limit, .heard = now};
}

void cs_heartbeat_heard(cs_heartbeat *h, double now) { h->heard = now; }

void cs_heartbeat_peer(cs_heartbeat *h, uint32_t peer_ms, double now) {
    h->peer_limit = peer_ms * 1e-3;
    h->heard = now;
}

double cs_heartbeat_interval(const cs_heartbeat *h) {
    double t = MAX_INTERVAL;
    if (h->limit > 0 && h->limit / PER_LIMIT < t) t = h->limit / PER_LIMIT;
    if (h->peer_limit > 0 && h->peer_limit / PER_LIMIT < t) t = h->peer_limit / PER_LIMIT;
    return t < MIN_INTERVAL ? MIN_INTERVAL : t;
}

bool cs_heartbeat_due(cs_heartbeat *h, double now) {
    if (h->said && now - h->said < cs_heartbeat_interval(h)) return false;
    h->said = now;
    return true;
}

bool cs_heartbeat_silent(const cs_heartbeat *h, double now) {
    return h->limit > 0 && now - h->heard > h->limit;
}

uint32_t cs_heartbeat_ms(const cs_heartbeat *h) { return (uint32_t)lround(h->limit * 1e3); }

bool cs_heartbeat_unread(int fd) {
    char c;
    return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
}
