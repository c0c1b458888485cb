/* gpu_leak.c -- the GPU suite's leak check: after a run on the nccl engine
 * (communicators, streams, events, device tensors, eager copies), the device
 * memory in use is back to where it was before the run.
 *
 * The first run is a warm-up: it creates the CUDA context and whatever NCCL
 * keeps for the process's lifetime. Every later run must leave the figure of
 * cuda:0 exactly as it found it. Exit status 77 (skipped) without a GPU or
 * without the nccl engine in this build; 0 or 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "device.h"
#include "launch.h"
#include "script.h"

#define RUNS 3

static int run(const char *script, FILE *devnull) {
    cs_run_opts o = {.script = script, .nranks = 1, .engine = "nccl",
                     .mem_limit = CS_DEFAULT_MEM_LIMIT, .step_limit = CS_DEFAULT_STEP_LIMIT,
                     .timeout = 60, .rank = -1, .out = devnull, .err = devnull};
    return cs_launch_run(&o);
}

int main(int argc, char **argv) {
#ifndef HAVE_NCCL
    (void)argc, (void)argv;
    printf("skip: this build has no nccl engine\n");
    return 77;
#else
    const char *dir = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
    char script[4096];
    snprintf(script, sizeof script, "%s/tests/gpu/%s", dir, argc > 1 ? argv[1] : "p2p_self.lua");
    if (cs_device_count() < 1) {
        printf("skip: no GPU here: %s\n", cs_device_errmsg());
        return 77;
    }
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull) return 1;
    int status = run(script, devnull); /* the warm-up */
    size_t before = 0, after = 0;
    if (status != 0 || cs_device_mem_used(0, &before) < 0) {
        printf("FAIL: the warm-up run of %s: status %d (%s)\n", script, status, cs_device_errmsg());
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < RUNS; i++) {
        status = run(script, devnull);
        if (status != 0 || cs_device_mem_used(0, &after) < 0) {
            printf("FAIL: run %d: status %d\n", i + 1, status);
            return 1;
        }
        printf("%s - run %d: %zu bytes in use on cuda:0, %zu before\n",
               after == before ? "ok" : "FAIL", i + 1, after, before);
        bad += after != before;
    }
    fclose(devnull);
    printf("%d passed, %d failed\n", RUNS - bad, bad);
    return bad ? 1 : 0;
#endif
}
