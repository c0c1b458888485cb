/* driver.c -- a stand-in for libFuzzer where clang is missing (make fuzz).
 *
 *   fuzz_NAME SECONDS SEEDDIR...
 *
 * Feeds every seed to LLVMFuzzerTestOneInput, then random mutations of them
 * (bit flips, byte inserts and deletes, cuts, splices of two seeds) until
 * SECONDS have passed. No coverage guidance: the sanitizers the harness is
 * built with do the finding. An input that crashes is written to
 * crash-PID-N in the current directory before the process dies.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The sanitizers' runtime has it; without one the signal handler does. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

#define MAX_LEN (64 * 1024)

static uint8_t **seed;
static size_t *seedlen, nseeds;
static uint8_t cur[MAX_LEN];
static size_t curlen;
static unsigned long runs;

static void save_crash(void) {
    char name[64];
    snprintf(name, sizeof name, "crash-%ld-%lu", (long)getpid(), runs);
    FILE *f = fopen(name, "wb");
    if (!f) return;
    fwrite(cur, 1, curlen, f);
    fclose(f);
    fprintf(stderr, "driver: the input is in %s\n", name);
}

static void on_signal(int sig) {
    save_crash();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void add_seed(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return;
    uint8_t *buf = malloc(MAX_LEN);
    size_t n = buf ? fread(buf, 1, MAX_LEN, f) : 0;
    fclose(f);
    uint8_t **s = realloc(seed, (nseeds + 1) * sizeof *seed);
    size_t *l = s ? realloc(seedlen, (nseeds + 1) * sizeof *seedlen) : NULL;
    if (!buf || !s || !l) {
        fprintf(stderr, "driver: out of memory reading %s\n", path);
        exit(1);
    }
    seed = s, seedlen = l;
    seed[nseeds] = buf, seedlen[nseeds++] = n;
}

static void add_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        add_seed(dir); /* a single file */
        return;
    }
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            add_seed(path);
        }
    closedir(d);
}

static void mutate(void) {
    size_t k = nseeds ? (size_t)rand() % nseeds : 0;
    curlen = nseeds ? seedlen[k] : 0;
    if (curlen) memcpy(cur, seed[k], curlen);
    for (int m = 1 + rand() % 4; m > 0; m--) {
        size_t at = curlen ? (size_t)rand() % curlen : 0;
        switch (rand() % 5) {
        case 0: if (curlen) cur[at] ^= (uint8_t)(1u << (rand() % 8)); break;
        case 1: /* insert a byte */
            if (curlen < MAX_LEN) {
                memmove(cur + at + 1, cur + at, curlen - at);
                cur[at] = (uint8_t)rand(), curlen++;
            }
            break;
        case 2: /* delete a byte */
            if (curlen) memmove(cur + at, cur + at + 1, curlen - at - 1), curlen--;
            break;
        case 3: curlen = at; break; /* cut */
        case 4: /* splice another seed's tail */
            if (nseeds) {
                size_t j = (size_t)rand() % nseeds, from = seedlen[j] ? (size_t)rand() % seedlen[j] : 0;
                size_t n = seedlen[j] - from;
                if (at + n > MAX_LEN) n = MAX_LEN - at;
                memcpy(cur + at, seed[j] + from, n);
                curlen = at + n;
            }
            break;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SECONDS SEEDDIR...\n", argv[0]);
        return 2;
    }
    double secs = atof(argv[1]);
    for (int i = 2; i < argc; i++) add_dir(argv[i]);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(save_crash);
    signal(SIGSEGV, on_signal);
    signal(SIGABRT, on_signal);
    unsigned rseed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(rseed);
    for (size_t i = 0; i < nseeds; i++, runs++) {
        curlen = seedlen[i];
        memcpy(cur, seed[i], curlen);
        LLVMFuzzerTestOneInput(cur, curlen);
    }
    time_t end = time(NULL) + (time_t)secs;
    while (time(NULL) < end)
        for (int i = 0; i < 256; i++, runs++) {
            mutate();
            LLVMFuzzerTestOneInput(cur, curlen);
        }
    printf("driver: %lu runs, %zu seeds, %g s, srand %u: no crash\n", runs, nseeds, secs, rseed);
    for (size_t i = 0; i < nseeds; i++) free(seed[i]);
    free(seed);
    free(seedlen);
    return 0;
}
