/* check_bench_fit.c -- bench --calibrate's line fit and its --net string:
 * exact points give the line back, noise is weighted relatively, a fit that
 * cannot be a network (one size, time falling with size) is refused, and
 * the string uses only plain decimals and the units --net reads. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/bench.h"
#include "run_suite.h"

START_TEST(exact_line) {
    double x[] = {8, 1024, 65536, 1048576}, t[4];
    for (int i = 0; i < 4; i++) t[i] = 10e-6 + x[i] / 1e9;
    cs_bench_fit_result f;
    ck_assert(cs_bench_fit(x, t, 4, &f));
    ck_assert_double_eq_tol(f.alpha_s, 10e-6, 1e-15);
    ck_assert_double_eq_tol(f.bandwidth, 1e9, 1e-3);
    ck_assert_double_le(f.max_err, 1e-9);
    ck_assert_int_eq(f.points, 4);
    char s[96];
    cs_bench_net_string(&f, s, sizeof s);
    ck_assert_str_eq(s, "alpha=10.0us,bandwidth=1.00GB/s");
}
END_TEST

/* A 30% error at the smallest size weighs as much as one at the largest: a
 * plain least-squares line would be pulled by the large sizes alone. */
START_TEST(relative_weights) {
    double x[] = {8, 64, 512, 4096, 32768, 262144, 2097152}, t[7];
    for (int i = 0; i < 7; i++) t[i] = 5e-6 + x[i] / 2e9;
    t[6] *= 1.3; /* the largest point is off */
    cs_bench_fit_result f;
    ck_assert(cs_bench_fit(x, t, 7, &f));
    ck_assert_double_gt(f.alpha_s, 4e-6); /* alpha survives */
    ck_assert_double_lt(f.alpha_s, 6e-6);
    ck_assert_double_gt(f.max_err, 0.05);
}
END_TEST

START_TEST(negative_intercept_clamped) {
    double x[] = {1000, 2000, 4000}, t[] = {0.5e-6, 1.6e-6, 3.8e-6};
    cs_bench_fit_result f;
    ck_assert(cs_bench_fit(x, t, 3, &f));
    ck_assert_double_eq(f.alpha_s, 0);
    ck_assert_double_gt(f.bandwidth, 0);
    char s[96];
    cs_bench_net_string(&f, s, sizeof s);
    ck_assert_msg(strncmp(s, "alpha=0.001us,bandwidth=", 24) == 0, "%s", s); /* 1ns: --net's least */
}
END_TEST

START_TEST(refused) {
    cs_bench_fit_result f;
    double one[] = {8}, t1[] = {1e-6};
    ck_assert(!cs_bench_fit(one, t1, 1, &f));
    double same[] = {8, 8, 8}, ts[] = {1e-6, 2e-6, 3e-6};
    ck_assert(!cs_bench_fit(same, ts, 3, &f));
    double x[] = {8, 1024, 65536}, falling[] = {30e-6, 20e-6, 10e-6};
    ck_assert(!cs_bench_fit(x, falling, 3, &f));
    double bad[] = {NAN, -1, 0};
    ck_assert(!cs_bench_fit(x, bad, 3, &f));
}
END_TEST

/* Units follow the size: 3 significant digits, never an exponent. */
START_TEST(net_strings) {
    static const struct { double alpha, bw; const char *want; } cases[] = {
        {4.213e-6, 5.31e9, "alpha=4.21us,bandwidth=5.31GB/s"},
        {45.83e-6, 2.4213e9, "alpha=45.8us,bandwidth=2.42GB/s"},
        {1234.5e-6, 850e6, "alpha=1230us,bandwidth=850MB/s"},
        {0.0123e-6, 12.5e3, "alpha=0.0123us,bandwidth=12.5KB/s"},
        {2e-6, 125e9, "alpha=2.00us,bandwidth=125GB/s"},
        {1e-6, 0.5, "alpha=1.00us,bandwidth=0.500B/s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_bench_fit_result f = {.alpha_s = cases[i].alpha, .bandwidth = cases[i].bw};
        char s[96];
        cs_bench_net_string(&f, s, sizeof s);
        ck_assert_str_eq(s, cases[i].want);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("bench_fit");
    TCase *tc = tcase_create("fit");
    tcase_add_test(tc, exact_line);
    tcase_add_test(tc, relative_weights);
    tcase_add_test(tc, negative_intercept_clamped);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, net_strings);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
