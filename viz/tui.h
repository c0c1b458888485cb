/* tui.h -- the visualizer as the front end of a live run (cs_frontend of
 * launch.h), the trace replay view, and the chapter browser. */
#ifndef CS_TUI_H
#define CS_TUI_H

#include <stdbool.h>

#include "launch.h"
#include "replay.h"

typedef struct cs_tui_opts {
    bool paused;     /* start paused (--step) */
    double speed;    /* operations per second; 0 = full speed */
    double timeout;  /* seconds; 0 = none (the user ends the run) */
    bool print_after; /* print the plain report (output, warnings) once the screen closes */
} cs_tui_opts;

typedef struct cs_tui cs_tui;

cs_tui *cs_tui_new(const cs_tui_opts *o);
void cs_tui_free(cs_tui *t);
/* The front end to put in cs_run_opts.ui; t must outlive the run. */
cs_frontend cs_tui_frontend(cs_tui *t);
/* Could the screen be opened? (false: message in err; run headless instead.) */
bool cs_tui_usable(char *err, size_t errlen);

/* `commsim replay FILE` in the visualizer, opened where at says (replay.h):
 * at the start of the run, at its end (where a deadlocked or failed run
 * failed), after an event, or at a rank's line (where the grader saw a case
 * fail: a forbidden call, a pitfall's warning). Returns the exit status. */
int cs_tui_replay(const char *path, const cs_replay_at *at);
/* `commsim learn [CHAPTER]`: lessons_dir holds NN-slug/ chapters; work holds
 * the student's files for the exercises (WORK/NAME.lua). */
int cs_tui_learn(const char *lessons_dir, const char *chapter, const char *work);
/* `commsim learn --no-tui [CHAPTER]`: the chapter list, or one chapter's text
 * and scripts, printed; given: lessons_dir is --lessons', not the default
 * (its exercises are then graded by folder, not by name). */
int cs_learn_print(const char *lessons_dir, bool given, const char *chapter, const char *work);

#endif
