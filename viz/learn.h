/* learn.h -- the chapter browser of `commsim learn`: the chapters found on
 * disk, and a frame drawn from the browser's state. Pure, apart from loading
 * the chapters; the loop is in tui_learn.c. */
#ifndef CS_LEARN_H
#define CS_LEARN_H

#include <stdbool.h>
#include <stddef.h>

#include "grid.h"
#include "markdown.h"
#include "replay.h"

typedef struct cs_lesson {
    char *path;    /* the script */
    char *file;    /* its file name */
    char *title;   /* its "--- title:", or "" */
} cs_lesson;

/* An exercise: a folder exercises/NAME/ of the chapter holding spec.lua (the
 * grader's cases), README.md (the statement) and starter.lua. */
typedef struct cs_exercise {
    char *name;    /* ring */
    char *dir;     /* lessons/02-point-to-point/exercises/ring */
    char *readme;  /* the statement */
} cs_exercise;

typedef struct cs_chapter {
    char *dir;     /* lessons/02-point-to-point */
    char *slug;    /* 02-point-to-point */
    char *title;   /* the README's first heading, or the slug */
    char *readme;  /* the README's text, "" if none */
    cs_lesson *lesson;
    int nlessons;
    cs_exercise *ex;  /* by name */
    int nex;
} cs_chapter;

typedef struct cs_book {
    cs_chapter *ch;
    int n;
} cs_book;

/* Chapters are the subdirectories NN-slug of dir, in order (numbers may skip);
 * their scripts the *.lua files in them, in teaching order (see
 * cs_learn_order_scripts). -1 with a message in err if there are none. */
int cs_book_load(cs_book *b, const char *dir, char *err, size_t errlen);
void cs_book_free(cs_book *b);
/* The chapter named by arg: its number ("2", "02"), its slug, or its directory
 * name; -1 if none matches. */
int cs_book_find(const cs_book *b, const char *arg);

/* Teaching order: a script's place is the first line of the chapter's README
 * that is a heading ("### chain.lua: passing along a line") or a table row
 * ("| `broadcast.lua` | ...") and names it as a word of its own, outside code
 * blocks; scripts the README names nowhere so follow, by name. Sorts names[]
 * in place. cs_learn_script_place gives that line's number (0-based), -1 if
 * none. */
void cs_learn_order_scripts(char **names, int n, const char *readme);
int cs_learn_script_place(const char *readme, const char *file);

/* The last grading of a student's file, shown in place of the statement. */
typedef struct cs_learn_grade {
    int chapter, ex;  /* which exercise; chapter -1: none yet */
    char *text;       /* the grader's text result */
    char **fail_case, **fail_trace; /* the visible failing cases and their traces */
    cs_replay_at *fail_at; /* where each failed (line 0: at the end); may be NULL */
    int nfail, sel;   /* sel: the one v opens */
} cs_learn_grade;

typedef struct cs_learn {
    const cs_book *book;
    const char *work; /* the student's files: WORK/NAME.lua for exercise NAME */
    int chapter;
    int lesson;       /* the chapter's scripts, then its exercises: nlessons + k is exercise k */
    bool on_lessons;  /* the focus: the chapter's scripts, else the chapter list */
    int scroll;       /* the text's first line shown */
    int text_h;       /* the text's rows in the last frame: a page */
    cs_md md;         /* the text laid out */
    int md_chapter, md_item, md_width, md_kind; /* what md holds */
    char message[200];
    bool help;
    int help_top, help_max;     /* its scroll, and its end at the last frame's size */
    bool show_grade;  /* the selected exercise shows its grading, not its statement */
    cs_learn_grade grade;
} cs_learn;

typedef enum {
    CS_LEARN_NONE, CS_LEARN_QUIT, CS_LEARN_RUN,
    CS_LEARN_INTERRUPT, /* Ctrl-C: quit with the interrupt's status */
    CS_LEARN_GRADE,   /* grade the student's file for the selected exercise */
    CS_LEARN_STARTER, /* copy the exercise's starter.lua to the student's file */
    CS_LEARN_FAILURE, /* open the selected failing case's trace at its failure */
} cs_learn_action;

void cs_learn_init(cs_learn *l, const cs_book *b, int chapter);
/* The selected exercise, or NULL when a script (or nothing) is selected. */
const cs_exercise *cs_learn_exercise(const cs_learn *l);
/* The student's file for exercise e: WORK/NAME.lua in buf; whether it exists. */
bool cs_learn_student_file(const cs_learn *l, const cs_exercise *e, char *buf, size_t len);
/* Keep a grading of the selected exercise (text, the failing cases' names,
 * traces and failing events, all malloc'ed: the browser owns them now) and
 * show it. fail_at may be NULL: every case opens at its trace's end. */
void cs_learn_set_grade(cs_learn *l, char *text, char **fail_case, char **fail_trace, cs_replay_at *fail_at,
                        int nfail);
void cs_learn_free(cs_learn *l);
/* A key (screen.h codes): moves the selection, scrolls, or asks to run the
 * selected script, to grade or start the selected exercise, to open a
 * failing case, or to quit. */
cs_learn_action cs_learn_key(cs_learn *l, int key);
void cs_learn_render(cs_learn *l, cs_grid *g, bool ascii);

#endif
