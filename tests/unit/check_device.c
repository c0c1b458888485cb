/* check_device.c -- the device module and device tensors where no GPU can be
 * used: every entry of device.h fails with "no CUDA device available: ...",
 * device tensors cannot be made and leave nothing charged behind, host
 * tensors are untouched by the device paths, device names parse and print as
 * torch spells them, and the staging rule (stage.h) stages exactly the device
 * tensors of engines without device memory.
 *
 * On a machine with a usable GPU the no-device tests say so and check
 * nothing (the GPU suite, tests/gpu/, covers that machine); the rest run
 * everywhere.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "run_suite.h"
#include "stage.h"
#include "tensor.h"

#define NO_DEVICE "no CUDA device available: "

static bool have_gpu(void) {
    if (cs_device_count() == 0) return false;
    fprintf(stderr, "check_device: a CUDA device is present, the no-device test is not run\n");
    return true;
}

static void ck_no_device_msg(const char *msg) {
    ck_assert_msg(strncmp(msg, NO_DEVICE, strlen(NO_DEVICE)) == 0, "message: %s", msg);
    ck_assert_msg(strlen(msg) > strlen(NO_DEVICE) + 5, "no reason given: %s", msg);
}

START_TEST(names_parse_and_print) {
    int d = 99;
    char buf[24];
    ck_assert(cs_device_parse("cpu", &d) && d == CS_DEVICE_CPU);
    ck_assert(cs_device_parse("cuda", &d) && d == CS_DEVICE_CURRENT);
    ck_assert(cs_device_parse("cuda:0", &d) && d == 0);
    ck_assert(cs_device_parse("cuda:12", &d) && d == 12);
    const char *bad[] = {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:1x", "cuda:99999999999",
                         "cuda 0", "cpu:0", "cudax"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!cs_device_parse(bad[i], &d), "accepted '%s'", bad[i]);
    ck_assert(!cs_device_parse(NULL, &d));
    ck_assert_str_eq(cs_device_name(CS_DEVICE_CPU, buf, sizeof buf), "cpu");
    ck_assert_str_eq(cs_device_name(3, buf, sizeof buf), "cuda:3");
}
END_TEST

START_TEST(every_entry_fails_without_a_device) {
    if (have_gpu()) return;
    unsigned char host[16] = {0};
    size_t used = 1;
    ck_assert_int_eq(cs_device_count(), 0);
    ck_no_device_msg(cs_device_errmsg());
    struct { const char *what; int rc; } calls[] = {
        {"set", cs_device_set(0)},
        {"current", cs_device_current()},
        {"memset", cs_device_memset(host, 0, sizeof host)},
        {"from_host", cs_device_from_host(host, host, sizeof host)},
        {"to_host", cs_device_to_host(host, host, sizeof host)},
        {"copy", cs_device_copy(host, host, sizeof host)},
        {"sync", cs_device_sync(0)},
        {"mem_used", cs_device_mem_used(0, &used)},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        ck_assert_msg(calls[i].rc == -1, "%s returned %d", calls[i].what, calls[i].rc);
    ck_assert_uint_eq(used, 1); /* untouched */
    ck_assert_ptr_null(cs_device_alloc(0, 64));
    ck_no_device_msg(cs_device_errmsg());
    ck_assert_ptr_null(cs_device_alloc(5, 0));
    ck_no_device_msg(cs_device_errmsg());
    cs_device_free(0, NULL); /* NULL-safe */
}
END_TEST

/* A failed device tensor: NULL, ENODEV, the device's message, nothing left
 * charged to the budget (a rank's cap would otherwise shrink with each try). */
START_TEST(device_tensors_fail_cleanly) {
    if (have_gpu()) return;
    cs_budget b = {0};
    int64_t shape[2] = {2, 3};
    int devices[] = {0, 1, CS_DEVICE_CURRENT};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        errno = 0;
        ck_assert_ptr_null(cs_tensor_new_on(&b, devices[i], CS_FLOAT32, 2, shape));
        ck_assert_int_eq(errno, ENODEV);
        ck_no_device_msg(cs_tensor_errmsg());
        ck_assert_uint_eq(atomic_load(&b.used), 0);
    }
    cs_tensor *h = cs_tensor_full(&b, CS_INT64, 2, shape, 7);
    ck_assert_ptr_nonnull(h);
    size_t charged = atomic_load(&b.used);
    errno = 0;
    ck_assert_ptr_null(cs_tensor_to_device(&b, h, CS_DEVICE_CURRENT));
    ck_assert_int_eq(errno, ENODEV);
    ck_no_device_msg(cs_tensor_errmsg());
    ck_assert_ptr_null(cs_tensor_to_device(&b, h, 0));
    ck_no_device_msg(cs_tensor_errmsg());
    ck_assert_uint_eq(atomic_load(&b.used), charged);
    ck_assert_int_eq(cs_tensor_get_i(h, 5), 7); /* the host tensor is as it was */
    cs_tensor_release(h);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
}
END_TEST

/* The device paths leave host tensors alone: to_device("cpu") is the tensor
 * itself when contiguous and a contiguous copy of a view otherwise. */
START_TEST(host_tensors_stay_on_the_host) {
    int64_t shape[2] = {3, 4};
    cs_tensor *t = cs_tensor_arange(NULL, CS_INT32, 12);
    cs_tensor *m = cs_tensor_view(t, 2, shape);
    ck_assert_int_eq(cs_tensor_device(m), CS_DEVICE_CPU);
    ck_assert(!cs_tensor_on_device(m));
    cs_tensor *same = cs_tensor_to_device(NULL, m, CS_DEVICE_CPU);
    ck_assert_ptr_eq(same, m);
    cs_tensor *col = cs_tensor_narrow(m, 1, 1, 2);
    cs_tensor *c = cs_tensor_to_device(NULL, col, CS_DEVICE_CPU);
    ck_assert_ptr_ne(c, col);
    ck_assert(cs_tensor_is_contiguous(c));
    ck_assert(cs_tensor_equal(c, col));
    ck_assert_int_eq(cs_tensor_get_i(c, 3), 6); /* row 1, column 2 */
    char *s = cs_tensor_format(c);
    ck_assert_str_eq(s, "tensor([[ 1,  2],\n        [ 5,  6],\n        [ 9, 10]], dtype=torch.int32)");
    free(s);
    /* copy_bytes between host tensors, and its refusal of a view */
    cs_tensor *d = cs_tensor_new(NULL, CS_INT32, 2, (int64_t[]){3, 2});
    ck_assert_int_eq(cs_tensor_copy_bytes(d, c), 0);
    ck_assert(cs_tensor_equal(d, c));
    ck_assert_int_eq(cs_tensor_copy_bytes(d, col), -1);
    cs_tensor *all[] = {t, m, same, col, c, d};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cs_tensor_release(all[i]);
}
END_TEST

/* Staging: device bytes on an engine that moves host memory only, and
 * nothing else; every engine of the table answers by its capabilities. */
START_TEST(staging_rule) {
    ck_assert(!cs_stage_wanted(CS_DEVICE_CPU, 0));
    ck_assert(!cs_stage_wanted(CS_DEVICE_CPU, CS_ENGINE_DEVICE));
    ck_assert(cs_stage_wanted(0, 0));
    ck_assert(cs_stage_wanted(3, CS_ENGINE_PROCESSES | CS_ENGINE_TAGS));
    ck_assert(!cs_stage_wanted(0, CS_ENGINE_DEVICE));
    ck_assert(!cs_stage_wanted(1, CS_ENGINE_DEVICE | CS_ENGINE_PROCESSES));
    const cs_engine_kind *thread = cs_engine_find("thread"), *tcp = cs_engine_find("tcp");
    ck_assert_ptr_nonnull(thread);
    ck_assert_ptr_nonnull(tcp);
    ck_assert(cs_stage_wanted(0, thread->caps));
    ck_assert(cs_stage_wanted(0, tcp->caps));
    for (int i = 0; cs_engine_at(i); i++) /* an engine that takes device memory is never staged for */
        if (cs_engine_at(i)->caps & CS_ENGINE_DEVICE) ck_assert(!cs_stage_wanted(0, cs_engine_at(i)->caps));
}
END_TEST

/* A collective's stage set over host tensors: nothing copied, the caller's
 * pointers and arrays untouched, the call's result passed through. */
START_TEST(stage_set_of_host_tensors) {
    cs_tensor *t = cs_tensor_arange(NULL, CS_FLOAT32, 4);
    cs_tensor *list[2] = {t, t}, **lp = list, *tp = t;
    cs_stage_set s = {0};
    /* no rank is needed when nothing lives on a device: the rule answers first */
    ck_assert_int_eq(cs_stage_tensor(NULL, &s, &tp, true), CS_OK);
    ck_assert_int_eq(cs_stage_list(NULL, &s, &lp, 2, false), CS_OK);
    ck_assert_ptr_eq(tp, t);
    ck_assert_ptr_eq(lp, list);
    ck_assert_int_eq(s.n, 0);
    ck_assert_int_eq(cs_stage_end(NULL, &s, CS_EMISMATCH), CS_EMISMATCH);
    ck_assert_int_eq(cs_stage_end(NULL, &s, CS_OK), CS_OK);
    cs_tensor_release(t);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("device");
    TCase *tc = tcase_create("device");
    tcase_add_test(tc, names_parse_and_print);
    tcase_add_test(tc, every_entry_fails_without_a_device);
    tcase_add_test(tc, device_tensors_fail_cleanly);
    tcase_add_test(tc, host_tensors_stay_on_the_host);
    tcase_add_test(tc, staging_rule);
    tcase_add_test(tc, stage_set_of_host_tensors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(suite());
}
