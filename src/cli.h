/* cli.h -- the subcommands' option parsing and --help texts. */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "netmodel.h"

int cs_cli_run(int argc, char **argv);
int cs_cli_replay(int argc, char **argv); /* cli_replay.c */
int cs_cli_learn(int argc, char **argv); /* cli_learn.c */
int cs_cli_bench(int argc, char **argv); /* cli_bench.c */
int cs_cli_grade(int argc, char **argv); /* cli_grade.c */
int cs_cli_export(int argc, char **argv); /* cli_export.c */
/* run --export FORMAT:FILE: draw the run's trace; 0 or 1 */
int cs_cli_export_spec(const char *spec, const char *trace);
/* The same spec checked before the run: 0, or 1 with the reason on stderr. */
int cs_cli_export_check(const char *spec);
/* getopt's '?' or ':' (with opterr 0 and a ':' leading the short options):
 * one line naming the option and where the help is. Returns 1. */
int cs_cli_bad_option(const char *cmd, int c, char **argv);
/* --net MODEL of commsim CMD: the model in *m; false after saying why. */
bool cs_cli_net_option(const char *cmd, const char *arg, cs_netmodel *m);

#endif
