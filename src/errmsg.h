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

#include <stdbool.h>
#include <stdio.h>

/* Name the running command (at most 31 bytes are kept); NULL: none. Called
 * once, before any thread starts. */
void cs_errmsg_command(const char *cmd);
/* "commsim CMD", or "commsim" when no command is known. */
const char *cs_errmsg_prefix(void);
/* Print "PREFIX: " and the formatted message to f. */
void cs_errf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write n bytes of s, a script's text (its output, an error, a file name),
 * so that a terminal shows it without obeying it: a control character as
 * \xHH (ESC would start a sequence), a C1 control (U+0080 to U+009F, which
 * a UTF-8 terminal obeys too) as \u00HH, a byte that starts no UTF-8
 * sequence as U+FFFD (as a trace records it, so a replay shows the same);
 * tabs as they are, and newlines when keep_nl. */
void cs_fput_text(FILE *f, const char *s, size_t n, bool keep_nl);

#endif
