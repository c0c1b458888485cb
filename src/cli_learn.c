/* cli_learn.c -- `commsim learn [CHAPTER] [--lessons DIR]`. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tui.h"

/* make install's $(pkgdatadir), set by Makefile.am. */
#ifndef CS_PKGDATADIR
#define CS_PKGDATADIR "/usr/local/share/commsim"
#endif

static void learn_usage(FILE *f) {
    fputs("usage: commsim learn [CHAPTER] [--lessons DIR]\n"
          "\n"
          "Browse the chapters: each chapter's text beside its scripts; enter runs the\n"
          "selected script in the visualizer, paused at its start (space steps, r runs,\n"
          "q comes back to the chapter). CHAPTER opens one chapter: its number (2), its\n"
          "name (point-to-point) or its directory (lessons/02-point-to-point).\n"
          "\n"
          "options:\n"
          "      --lessons DIR   where the chapters are (default: $COMMSIM_LESSONS, else\n"
          "                      ./lessons, else the lessons beside the commsim program,\n"
          "                      else the installed ones, " CS_PKGDATADIR "/lessons)\n"
          "  -h, --help          show this help\n"
          "\n"
          "Needs a terminal. Exit status 0, or 1 for a usage error.\n",
          f);
}

static bool is_dir(const char *p) {
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* $COMMSIM_LESSONS, ./lessons, ../lessons next to the program (the build
 * tree), ../share/commsim/lessons next to it (an installed tree, also when
 * moved or under a DESTDIR), then where make install put them. */
static const char *find_lessons(char *buf, size_t len) {
    const char *env = getenv("COMMSIM_LESSONS");
    if (env && *env) return env;
    if (is_dir("lessons")) return "lessons";
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(buf, len, "%s/../lessons", exe);
        if (is_dir(buf)) return buf;
        snprintf(buf, len, "%s/../share/commsim/lessons", exe);
        if (is_dir(buf)) return buf;
    }
    return CS_PKGDATADIR "/lessons";
}

int cs_cli_learn(int argc, char **argv) {
    static const struct option longopts[] = {
        {"lessons", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    char buf[PATH_MAX + 64];
    const char *dir = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'L': dir = optarg; break;
        case 'h': learn_usage(stdout); return 0;
        default: learn_usage(stderr); return 1;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "commsim learn: one chapter at a time\n");
        learn_usage(stderr);
        return 1;
    }
    if (!dir) dir = find_lessons(buf, sizeof buf);
    return cs_tui_learn(dir, optind < argc ? argv[optind] : NULL);
}
