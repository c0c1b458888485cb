/* commands.h -- the table of subcommands. main.c dispatches through it, and
 * `commsim help`, `help CMD`, `--help` and the unknown-command error are all
 * printed from it. A new command is one row in commands.c and its own file. */
#ifndef CS_COMMANDS_H
#define CS_COMMANDS_H

#include <stdio.h>

typedef struct cs_command {
    const char *name;
    const char *alias[3];   /* other spellings ("--help", "-h"), NULL-ended */
    const char *args;       /* what follows the name in a usage line */
    const char *summary;    /* one line for `commsim help` */
    /* argv[0] is the command's name; returns the exit status. A handler
     * prints its own usage for `CMD --help`, which `help CMD` relies on. */
    int (*exec)(int argc, char **argv);
} cs_command;

const cs_command *cs_command_find(const char *name);
void cs_commands_usage(FILE *f);
int cs_commands_main(int argc, char **argv);

#endif
