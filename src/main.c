/* main.c -- commsim's entry point: the table in commands.c does the rest. */
#include "commands.h"

int main(int argc, char **argv) {
    return cs_commands_main(argc, argv);
}
