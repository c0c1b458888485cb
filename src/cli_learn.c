/* cli_learn.c -- `commsim learn [CHAPTER] [--lessons DIR]`. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "cli.h"
#include "lessons.h"
#include "tui.h"

static void learn_usage(FILE *f) {
    fprintf(f,
          "usage: commsim learn [CHAPTER] [--lessons DIR]\n"
          "\n"
          "Browse the chapters: each chapter's text beside its scripts; enter runs the\n"
          "selected script in the visualizer, paused at its start (space steps, r runs,\n"
          "q comes back to the chapter). CHAPTER opens one chapter: its number (2), its\n"
          "name (point-to-point) or its directory (lessons/02-point-to-point).\n"
          "\n"
          "options:\n"
          "      --lessons DIR   where the chapters are (default: $COMMSIM_LESSONS, else\n"
          "                      ./lessons, else the lessons beside the commsim program,\n"
          "                      else the installed ones, %s)\n"
          "  -h, --help          show this help\n"
          "\n"
          "Needs a terminal. Exit status 0, or 1 for a usage error.\n",
          CS_LESSONS_INSTALLED);
}

int cs_cli_learn(int argc, char **argv) {
    static const struct option longopts[] = {
        {"lessons", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    char buf[PATH_MAX];
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
    if (!dir) dir = cs_lessons_dir(buf, sizeof buf);
    return cs_tui_learn(dir, optind < argc ? argv[optind] : NULL);
}
