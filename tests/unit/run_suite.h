/* run_suite.h -- every Check program's main ends the same way: run the suite,
 * exit non-zero if any test failed. */
#ifndef CS_RUN_SUITE_H
#define CS_RUN_SUITE_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
