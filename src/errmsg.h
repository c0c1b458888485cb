/* errmsg.h -- the one form of commsim's messages on standard error:
 * "commsim CMD: what went wrong", CMD the command running (run, grade, ...).
 *
 * The command is set once, when the command line names it; everything
 * printed after that, by the command's own option parsing or by the runtime
 * it shares with the other commands (launching, engines, the controller),
 * carries its name, so a user sees one form whichever part of the program
 * speaks. Before a command is known the prefix is "commsim".
 */
#ifndef CS_ERRMSG_H
#define CS_ERRMSG_H

#include <stdio.h>

/* Name the running command (at most 31 bytes are kept); NULL: none. Called
 * once, before any thread starts. */
void cs_errmsg_command(const char *cmd);
/* "commsim CMD", or "commsim" when no command is known. */
const char *cs_errmsg_prefix(void);
/* Print "PREFIX: " and the formatted message to f. */
void cs_errf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
