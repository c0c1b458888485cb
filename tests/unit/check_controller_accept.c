/* check_controller_accept.c -- the tcp controller out of descriptors at its
 * listening socket (controller_join.c): accept() fails with EMFILE, for real
 * (the soft RLIMIT_NOFILE lowered to the lowest free descriptor; Check runs
 * every test in a process of its own). With strangers unproven, the oldest
 * makes room and the next turn accepts; with none, the listener is no longer
 * watched (a queued connection would make it readable forever: a busy loop),
 * and a job still gathering its ranks ends with status 1, saying why. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "controller_internal.h"
#include "run_suite.h"

static controller k;
static struct sockaddr_in addr;

/* A controller with only what accepting needs: a listener on loopback,
 * watched, and err a file the test reads. */
static void setup(void) {
    memset(&k, 0, sizeof k);
    k.epfd = epoll_create1(EPOLL_CLOEXEC);
    k.err = tmpfile();
    k.log_strangers = true;
    k.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    ck_assert(k.epfd >= 0 && k.err && k.lfd >= 0);
    ck_assert_int_eq(bind(k.lfd, (struct sockaddr *)&addr, sizeof addr), 0);
    ck_assert_int_eq(listen(k.lfd, 16), 0);
    ck_assert_int_eq(getsockname(k.lfd, (struct sockaddr *)&addr, &len), 0);
    controller_watch(&k, k.lfd, TAG(TAG_LISTEN, 0));
}

/* A connection queued at the listener (loopback: the handshake is done). */
static int dial(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return fd;
}

/* No descriptor left: the next one would be the lowest free, at the limit. */
static void no_more_files(void) {
    int fd = dup(0);
    ck_assert(fd >= 0);
    close(fd);
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = (rlim_t)fd;
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static bool listener_watched(void) {
    struct epoll_event ev;
    return epoll_wait(k.epfd, &ev, 1, 0) == 1 && ev.data.u64 == TAG(TAG_LISTEN, 0);
}

static const char *said(void) {
    static char buf[512];
    fflush(k.err);
    rewind(k.err);
    size_t n = fread(buf, 1, sizeof buf - 1, k.err);
    buf[n] = 0;
    return buf;
}

START_TEST(test_joining_ends_the_job) {
    setup();
    int c = dial();
    no_more_files();
    ck_assert(listener_watched());
    controller_accept(&k);
    ck_assert_int_eq(k.status, 1);
    ck_assert(!listener_watched()); /* the queued connection no longer wakes the loop */
    ck_assert_str_eq(said(), "commsim: cannot accept a connection: Too many open files; "
                             "the ranks cannot join (ulimit -n)\n");
    close(c);
}
END_TEST

START_TEST(test_running_goes_on) {
    setup();
    k.welcomed = true;
    int c = dial();
    no_more_files();
    controller_accept(&k);
    ck_assert_int_eq(k.status, 0); /* every rank is in: only strangers are turned away */
    ck_assert(!listener_watched());
    ck_assert_str_eq(said(), "commsim: cannot accept a connection: Too many open files\n");
    close(c);
}
END_TEST

START_TEST(test_a_stranger_makes_room) {
    setup();
    int s = dial();
    controller_accept(&k); /* a stranger that never says HELLO */
    ck_assert(k.pending && !k.pending->next);
    int c = dial();
    no_more_files();
    controller_accept(&k); /* EMFILE: the stranger goes */
    ck_assert(!k.pending);
    ck_assert_int_eq(k.status, 0);
    ck_assert(strstr(said(), ": Too many open files\n"));
    ck_assert(listener_watched()); /* c still waits, and now there is room */
    controller_accept(&k);
    ck_assert(k.pending && !k.pending->next);
    controller_free_pending(&k);
    close(s);
    close(c);
}
END_TEST

static Suite *accept_suite(void) {
    Suite *s = suite_create("controller_accept");
    TCase *tc = tcase_create("emfile");
    tcase_add_test(tc, test_joining_ends_the_job);
    tcase_add_test(tc, test_running_goes_on);
    tcase_add_test(tc, test_a_stranger_makes_room);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(accept_suite());
}
