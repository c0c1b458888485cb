/* cli_learn.c -- `commsim learn [CHAPTER] [--lessons DIR]`. */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "lessons.h"
#include "tui.h"

static void learn_usage(FILE *f) {
    fprintf(f,
          "usage: commsim learn [CHAPTER] [--lessons DIR] [--work DIR] [--no-tui]\n"
          "\n"
          "Browse the chapters: each chapter's text beside its scripts; enter runs the\n"
          "selected script in the visualizer, paused at its start (space steps, r runs,\n"
          "q comes back to the chapter). CHAPTER opens one chapter: its number (2), its\n"
          "name (point-to-point) or its directory (lessons/02-point-to-point).\n"
          "\n"
          "A chapter's exercises follow its scripts (e goes to them): the statement\n"
          "beside, c copies the starter to your file WORK/NAME.lua, g grades that file\n"
          "as 'commsim grade NAME WORK/NAME.lua' does and shows the result, and v opens\n"
          "a failing case in the visualizer where it failed.\n"
          "\n"
          "options:\n"
          "      --lessons DIR   where the chapters are (default: $COMMSIM_LESSONS, else\n"
          "                      ./lessons, else the lessons beside the commsim program,\n"
          "                      else the installed ones, %s)\n"
          "      --work DIR      where your exercise files are (default: the current\n"
          "                      directory)\n"
          "      --no-tui        print the chapter list, or CHAPTER's text, scripts and\n"
          "                      exercises\n"
          "  -h, --help          show this help\n"
          "\n"
          "Needs a terminal, except with --no-tui. Exit status 0, or 1 for a usage error.\n",
          CS_LESSONS_INSTALLED);
}

int cs_cli_learn(int argc, char **argv) {
    static const struct option longopts[] = {
        {"lessons", required_argument, NULL, 'L'},
        {"no-tui", no_argument, NULL, 'T'},
        {"work", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    char buf[PATH_MAX];
    const char *dir = NULL, *work = ".";
    int c;
    bool plain = false;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'L': dir = optarg; break;
        case 'T': plain = true; break;
        case 'W': work = optarg; break;
        case 'h': learn_usage(stdout); return 0;
        default: return cs_cli_bad_option("learn", c, argv);
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "commsim learn: one chapter at a time\n");
        learn_usage(stderr);
        return 1;
    }
    bool given = dir != NULL;
    if (!dir) dir = cs_lessons_dir(buf, sizeof buf);
    const char *chapter = optind < argc ? argv[optind] : NULL;
    return plain ? cs_learn_print(dir, given, chapter, work) : cs_tui_learn(dir, chapter, work);
}
