/* cli.h -- the subcommands' option parsing and --help texts. */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdio.h>

int cs_cli_run(int argc, char **argv);
int cs_cli_replay(int argc, char **argv); /* cli_replay.c */
int cs_cli_learn(int argc, char **argv); /* cli_learn.c */
int cs_cli_bench(int argc, char **argv); /* cli_bench.c */

#endif
