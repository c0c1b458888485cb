/* wire_socket.c -- what the controller, the hub and a rank's start-up use to
 * talk before their sockets go non-blocking under epoll: a frame written or
 * read whole within a deadline, the run's tokens, addresses. See wire.h. */
#include "wire.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- tokens */

int cs_wire_token_new(char *out) {
    uint8_t raw[CS_WIRE_TOKEN / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof raw; i++) sprintf(out + 2 * i, "%02x", raw[i]);
    out[CS_WIRE_TOKEN] = 0;
    return 0;
}

bool cs_wire_token_eq(const char *a, const char *b) {
    unsigned diff = 0;
    for (int i = 0; i < CS_WIRE_TOKEN; i++) diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
    return diff == 0;
}

bool cs_wire_token_valid(const char *s) {
    size_t n = strlen(s);
    if (n != CS_WIRE_TOKEN) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* ---- blocking helpers with a deadline */

static int wait_fd(int fd, short what, double deadline) {
    for (;;) {
        double left = deadline - cs_now();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = what};
        int rc = poll(&p, 1, (int)(left * 1000) + 1);
        if (rc > 0) return 0;
        if (rc < 0 && errno != EINTR) return -1;
    }
}

int cs_wire_write_all(int fd, const void *buf, size_t len, double deadline) {
    const uint8_t *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, POLLOUT, deadline) < 0) return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len, double deadline) {
    uint8_t *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0) {
            errno = ECONNRESET;
            return -1;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (wait_fd(fd, POLLIN, deadline) < 0) return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

int cs_wire_read_frame(int fd, double deadline, uint32_t max_meta, cs_frame_hdr *h,
                       uint8_t **meta, char *err, size_t errlen) {
    uint8_t hdr[CS_WIRE_HDR];
    *meta = NULL;
    if (read_all(fd, hdr, sizeof hdr, deadline) < 0) {
        snprintf(err, errlen, "%s", errno == ETIMEDOUT ? "no handshake in time"
                                    : errno == ECONNRESET ? "connection closed" : strerror(errno));
        return -1;
    }
    if (cs_wire_hdr_get(hdr, 0, h, err, errlen) < 0) return -1;
    if (h->meta_len > max_meta) {
        snprintf(err, errlen, "unexpected %s frame", cs_frame_name(h->type));
        return -1;
    }
    *meta = malloc(h->meta_len ? h->meta_len : 1);
    if (!*meta) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (read_all(fd, *meta, h->meta_len, deadline) < 0) {
        snprintf(err, errlen, "connection closed in a frame");
        free(*meta);
        *meta = NULL;
        return -1;
    }
    return 0;
}

int cs_wire_send(int fd, int type, const void *meta, uint32_t meta_len, double deadline) {
    uint8_t hdr[CS_WIRE_HDR];
    cs_wire_hdr_put(hdr, type, meta_len, 0);
    if (cs_wire_write_all(fd, hdr, sizeof hdr, deadline) < 0) return -1;
    return meta_len ? cs_wire_write_all(fd, meta, meta_len, deadline) : 0;
}

/* ---- addresses */

int cs_wire_parse_addr(const char *s, int default_port, uint32_t *ip, uint16_t *port,
                       char *err, size_t errlen) {
    char host[256];
    const char *colon = strrchr(s, ':');
    if (s[0] == '[' || (colon && memchr(s, ':', (size_t)(colon - s)))) { /* "::1", "[::1]:29500" */
        snprintf(err, errlen, "'%s' is an IPv6 address; the tcp engine speaks IPv4 (an IPv4 "
                 "address, or a host name that has one)", s);
        return -1;
    }
    size_t hl = colon ? (size_t)(colon - s) : strlen(s);
    if (hl == 0 || hl >= sizeof host) {
        snprintf(err, errlen, "'%s' is not HOST or HOST:PORT", s);
        return -1;
    }
    memcpy(host, s, hl);
    host[hl] = 0;
    long p = default_port;
    if (colon) {
        char *end;
        p = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || p < 0 || p > 65535) {
            snprintf(err, errlen, "'%s': the port must be a number from 0 to 65535", s);
            return -1;
        }
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
        return -1;
    }
    *ip = ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
    *port = (uint16_t)p;
    freeaddrinfo(res);
    return 0;
}

int cs_wire_parse_bind(const char *s, uint32_t *ip, char *err, size_t errlen) {
    uint16_t port;
    if (cs_wire_parse_addr(s, 0, ip, &port, err, errlen) < 0) return -1;
    if (port) { /* it would be ignored: a rank listens on a free port */
        snprintf(err, errlen, "'%s': an address without a port (a rank listens on any free port of it)", s);
        return -1;
    }
    return 0;
}

void cs_wire_boot_id(char *out) {
    memset(out, 0, CS_WIRE_BOOT_ID + 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(out, CS_WIRE_BOOT_ID + 1, f)) out[0] = 0;
    fclose(f);
    if (strlen(out) != CS_WIRE_BOOT_ID) memset(out, 0, CS_WIRE_BOOT_ID + 1);
}

const char *cs_wire_addr_str(uint32_t ip, uint16_t port, char *buf, size_t len) {
    char a[INET_ADDRSTRLEN];
    struct in_addr in = {.s_addr = ip};
    inet_ntop(AF_INET, &in, a, sizeof a);
    snprintf(buf, len, "%s:%u", a, port);
    return buf;
}

/* ---- descriptors */

/* Descriptors open now past the standard three: mostly what the shell or the
 * program that started this one left open (not close-on-exec). */
static unsigned long open_files(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    unsigned long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) > 2 && atoi(e->d_name) != dirfd(d)) n++;
    closedir(d);
    return n;
}

int cs_wire_files(unsigned long need, unsigned long want, unsigned long long *limit,
                  unsigned long *open) {
    /* Those open already count against the limit too (it bounds a new
     * descriptor's number, and the lowest free one is taken). The callers'
     * need has room for their own few and some 16 more: past those, the
     * ones open already would leave too few. */
    *open = open_files();
    need += *open > 16 ? *open - 16 : 0;
    want += *open;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return 0;
    rlim_t cur = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
    if (rl.rlim_cur > cur && setrlimit(RLIMIT_NOFILE, &rl) < 0) rl.rlim_cur = cur;
    *limit = rl.rlim_cur;
    return rl.rlim_cur >= need ? 0 : -1;
}
