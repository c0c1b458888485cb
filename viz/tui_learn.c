/* tui_learn.c -- `commsim learn`: the chapter browser's loop. A script runs
 * in the visualizer on the same screen, paused at its start; when the user
 * leaves it, the browser comes back with the run's outcome in its footer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn.h"
#include "screen.h"
#include "script.h"
#include "tui.h"

static const char *outcome(int status) {
    switch (status) {
    case 0: return "ok";
    case CS_END_ERROR: return "a script error";
    case CS_END_DEADLOCK: return "deadlock";
    case CS_END_TIMEOUT: return "timeout or budget exceeded";
    case CS_END_QUIT: return "left before the end";
    default: return "could not run";
    }
}

/* The first line the launcher wrote (a setup error: syntax, header). */
static void first_line(FILE *f, char *buf, size_t len) {
    buf[0] = 0;
    rewind(f);
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
}

static void run_lesson(cs_learn *l) {
    const cs_lesson *ls = &l->book->ch[l->chapter].lesson[l->lesson];
    FILE *sink = tmpfile(); /* the plain summary must not scribble on the screen */
    cs_tui_opts to = {.paused = true, .speed = 10};
    cs_tui *t = cs_tui_new(&to);
    if (!t || !sink) {
        snprintf(l->message, sizeof l->message, "out of memory");
        if (sink) fclose(sink);
        cs_tui_free(t);
        return;
    }
    cs_frontend fe = cs_tui_frontend(t);
    cs_run_opts o = {.script = ls->path, .mem_limit = CS_DEFAULT_MEM_LIMIT,
                     .step_limit = CS_DEFAULT_STEP_LIMIT, .out = sink, .err = sink, .ui = &fe};
    int status = cs_launch_run(&o);
    cs_tui_free(t);
    char why[160];
    first_line(sink, why, sizeof why);
    fclose(sink);
    if (status == 1 && why[0])
        snprintf(l->message, sizeof l->message, "%s", why);
    else
        snprintf(l->message, sizeof l->message, "%s ended: %s (status %d). enter runs it again",
                 ls->file, outcome(status), status);
}

int cs_learn_print(const char *lessons_dir, const char *chapter) {
    cs_book book;
    char err[512];
    if (cs_book_load(&book, lessons_dir, err, sizeof err) < 0) {
        fprintf(stderr, "commsim learn: %s\n", err);
        return 1;
    }
    int ch = chapter ? cs_book_find(&book, chapter) : -1;
    if (chapter && ch < 0) {
        fprintf(stderr, "commsim learn: no chapter '%s'; the chapters are:\n", chapter);
        for (int i = 0; i < book.n; i++) fprintf(stderr, "  %s\n", book.ch[i].slug);
        cs_book_free(&book);
        return 1;
    }
    if (ch < 0) {
        printf("chapters (commsim learn N --no-tui prints one):\n");
        for (int i = 0; i < book.n; i++)
            printf("  %-22s %s\n", book.ch[i].slug, book.ch[i].title);
    } else {
        const cs_chapter *c = &book.ch[ch];
        fputs(c->readme, stdout);
        if (c->readme[0] && c->readme[strlen(c->readme) - 1] != '\n') putchar('\n');
        printf("\nscripts (commsim run %s/FILE runs one):\n", c->slug);
        for (int i = 0; i < c->nlessons; i++)
            printf("  %-22s %s\n", c->lesson[i].file, c->lesson[i].title);
    }
    cs_book_free(&book);
    return 0;
}

int cs_tui_learn(const char *lessons_dir, const char *chapter) {
    cs_book book;
    char err[512];
    if (cs_book_load(&book, lessons_dir, err, sizeof err) < 0) {
        fprintf(stderr, "commsim learn: %s\n", err);
        return 1;
    }
    int ch = -1;
    if (chapter && (ch = cs_book_find(&book, chapter)) < 0) {
        fprintf(stderr, "commsim learn: no chapter '%s'; the chapters are:\n", chapter);
        for (int i = 0; i < book.n; i++) fprintf(stderr, "  %s\n", book.ch[i].slug);
        cs_book_free(&book);
        return 1;
    }
    if (!cs_screen_open(err, sizeof err)) {
        fprintf(stderr, "commsim learn: %s\n", err);
        cs_book_free(&book);
        return 1;
    }
    cs_learn l;
    cs_learn_init(&l, &book, ch);
    cs_grid g = {0};
    for (;;) {
        int w, h, x, y;
        cs_screen_size(&w, &h);
        if ((g.w != w || g.h != h) && (cs_grid_free(&g), cs_grid_init(&g, w, h) < 0)) break;
        cs_learn_render(&l, &g, cs_screen_ascii());
        cs_screen_show(&g);
        int key = cs_screen_key(200, &x, &y);
        if (key == CS_KEY_NONE) continue;
        cs_learn_action a = cs_learn_key(&l, key);
        if (a == CS_LEARN_QUIT) break;
        if (a == CS_LEARN_RUN) run_lesson(&l);
    }
    cs_grid_free(&g);
    cs_learn_free(&l);
    cs_screen_close();
    cs_book_free(&book);
    return 0;
}
