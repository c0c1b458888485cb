/* commands.c -- the table of subcommands (tmux's cmd_table): name, usage,
 * summary, handler. Everything that lists or looks up a command reads it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "errmsg.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const cs_command commands[] = {
    {"run", {NULL}, "SCRIPT", "run a lesson script on N ranks and report what happened",
     cs_cli_run},
    {"replay", {NULL}, "TRACE", "replay a trace written by 'run --trace': the same report",
     cs_cli_replay},
    {"export", {NULL}, "TRACE", "draw a trace as SVG, Mermaid, Perfetto JSON or an asciicast",
     cs_cli_export},
    {"learn", {NULL}, "[CHAPTER]", "browse the chapters and run their scripts in the visualizer",
     cs_cli_learn},
    /* args kept short: the listing's column width is part of its tested output */
    {"bench", {NULL}, "[OPTIONS]", "measure latency, bandwidth and collectives on each engine",
     cs_cli_bench},
    {"grade", {NULL}, "EXERCISE", "grade a SOLUTION.lua, or a class folder, on an exercise",
     cs_cli_grade},
    {"help", {"--help", "-h", NULL}, "[CMD]", "show this help, or a command's", cmd_help},
    {"version", {"--version", NULL}, "", "print the version", cmd_version},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const cs_command *cs_command_find(const char *name) {
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const cs_command *c = &commands[i];
        if (strcmp(name, c->name) == 0) return c;
        for (int k = 0; k < 3 && c->alias[k]; k++)
            if (strcmp(name, c->alias[k]) == 0) return c;
    }
    return NULL;
}

void cs_commands_usage(FILE *f) {
    char use[NCOMMANDS][64];
    int width = 0;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        int n = snprintf(use[i], sizeof use[i], "%s%s%s", commands[i].name,
                         *commands[i].args ? " " : "", commands[i].args);
        if (n > width) width = n;
    }
    fputs("usage: commsim <command> [options]\n\ncommands:\n", f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-*s  %s\n", width, use[i], commands[i].summary);
    fputs("\n"
          "Run 'commsim help CMD' (or 'commsim CMD --help') for a command's options.\n"
          "Exit status: 0 ok, 1 usage or setup error, 2 a script raised an error,\n"
          "3 deadlock, 4 timeout or budget exceeded, 5 a rank process died,\n"
          "130 interrupted; commsim grade: 6 some case failed.\n",
          f);
}

static int cmd_help(int argc, char **argv) {
    if (argc < 2) {
        cs_commands_usage(stdout);
        return 0;
    }
    const cs_command *c = cs_command_find(argv[1]);
    if (!c) {
        fprintf(stderr, "commsim help: unknown command '%s'\n", argv[1]);
        cs_commands_usage(stderr);
        return 1;
    }
    if (c->exec == cmd_help || c->exec == cmd_version) {
        printf("usage: commsim %s%s%s\n\n%s\n", c->name, *c->args ? " " : "", c->args,
               c->summary);
        return 0;
    }
    char *args[] = {(char *)c->name, "--help", NULL};
    return c->exec(2, args);
}

static int cmd_version(int argc, char **argv) {
    printf("commsim %s\n", PACKAGE_VERSION);
    return 0;
}

int cs_commands_main(int argc, char **argv) {
    if (argc < 2) {
        cs_commands_usage(stderr);
        return 1;
    }
    const cs_command *c = cs_command_find(argv[1]);
    if (!c) {
        cs_errf(stderr, "unknown command '%s'\n", argv[1]); /* no command: "commsim:" */
        cs_commands_usage(stderr);
        return 1;
    }
    cs_errmsg_command(c->name); /* every message from here on says "commsim CMD:" */
    return c->exec(argc - 1, argv + 1);
}
