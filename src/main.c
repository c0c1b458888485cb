/* main.c -- commsim's entry point: dispatch to a subcommand, nothing else. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        cs_cli_usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return cs_cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "replay") == 0) return cs_cli_replay(argc - 1, argv + 1);
    if (strcmp(cmd, "learn") == 0) return cs_cli_learn(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("commsim %s\n", PACKAGE_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2 && strcmp(argv[2], "run") == 0) {
            char *args[] = {argv[2], "--help", NULL};
            return cs_cli_run(2, args);
        }
        if (argc > 2 && strcmp(argv[2], "replay") == 0) {
            char *args[] = {argv[2], "--help", NULL};
            return cs_cli_replay(2, args);
        }
        if (argc > 2 && strcmp(argv[2], "learn") == 0) {
            char *args[] = {argv[2], "--help", NULL};
            return cs_cli_learn(2, args);
        }
        cs_cli_usage(stdout);
        return 0;
    }
    fprintf(stderr, "commsim: unknown command '%s'\n", cmd);
    cs_cli_usage(stderr);
    return 1;
}
