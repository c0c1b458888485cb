/* screen.c -- ncurses behind a grid. */
#define _XOPEN_SOURCE_EXTENDED 1
#include "screen.h"

#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <ncurses.h>

static int opened;        /* nesting count */
static bool ascii, colors;
static bool at_exit_set;
static SCREEN *scr;

/* SIGINT and SIGTERM (kill, a job's time limit) while the screen is up:
 * from then on every key is Ctrl-C, so that each view on the screen (a
 * lesson run from the chapter browser, then the browser) ends as
 * interrupted by its normal path, the terminal restored. ncurses' own
 * handler would exit with status 1, leaving the browser's files behind.
 * A run started with its signals caught (commsim run) blocks them: its
 * signal thread ends the run. */
static volatile sig_atomic_t interrupted;
static struct sigaction prev_int, prev_term;

static void on_interrupt(int sig) {
    (void)sig;
    interrupted = 1;
}

static void catch_interrupts(void) {
    struct sigaction sa = {.sa_handler = on_interrupt}; /* no SA_RESTART: the key wait returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, NULL, &prev_int);
    sigaction(SIGTERM, NULL, &prev_term);
    if (prev_int.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, NULL);
    if (prev_term.sa_handler != SIG_IGN) sigaction(SIGTERM, &sa, NULL);
}

/* A script error, a deadlock or Ctrl-C all come back through the normal path;
 * this catches an exit() from anywhere else with the screen still up. */
static void restore_at_exit(void) {
    if (opened) {
        opened = 0;
        endwin();
    }
}

bool cs_screen_open(char *err, size_t errlen) {
    if (opened) {
        opened++;
        return true;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(err, errlen, "the visualizer needs a terminal (use --no-tui)");
        return false;
    }
    setlocale(LC_ALL, "");
    const char *cs = nl_langinfo(CODESET);
    ascii = !cs || strcmp(cs, "UTF-8") != 0;
    catch_interrupts(); /* first: ncurses leaves a handler that is set alone */
    interrupted = 0;
    const char *term = getenv("TERM");
    if (!(scr = newterm(term && *term ? term : "xterm", stdout, stdin))) {
        snprintf(err, errlen, "cannot use the terminal '%s' (use --no-tui)", term ? term : "");
        sigaction(SIGINT, &prev_int, NULL), sigaction(SIGTERM, &prev_term, NULL);
        return false;
    }
    if (!at_exit_set) atexit(restore_at_exit), at_exit_set = true;
    raw();          /* Ctrl-C arrives as a key: quitting is then the normal path */
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    const char *nc = getenv("NO_COLOR");
    colors = has_colors() && !(nc && *nc);
    if (colors) {
        start_color();
        use_default_colors();
        static const short map[CS_C_NCOLORS] = {
            [CS_C_RED] = COLOR_RED,       [CS_C_GREEN] = COLOR_GREEN, [CS_C_YELLOW] = COLOR_YELLOW,
            [CS_C_BLUE] = COLOR_BLUE,     [CS_C_MAGENTA] = COLOR_MAGENTA, [CS_C_CYAN] = COLOR_CYAN,
        };
        for (short i = 1; i < CS_C_NCOLORS; i++) init_pair(i, map[i], -1);
    }
    opened = 1;
    return true;
}

void cs_screen_close(void) {
    if (!opened || --opened) return;
    endwin();
    delscreen(scr);
    scr = NULL;
    sigaction(SIGINT, &prev_int, NULL), sigaction(SIGTERM, &prev_term, NULL);
}

bool cs_screen_ascii(void) { return ascii; }

void cs_screen_size(int *w, int *h) {
    getmaxyx(stdscr, *h, *w);
}

static attr_t attrs_of(const cs_cell *c) {
    attr_t a = 0;
    if (c->attr & CS_A_BOLD) a |= A_BOLD;
    if (c->attr & CS_A_REVERSE) a |= A_REVERSE;
    if (c->attr & CS_A_DIM) a |= A_DIM;
    if (c->attr & CS_A_UNDERLINE) a |= A_UNDERLINE;
    return a;
}

void cs_screen_show(const cs_grid *g) {
    static int last_w, last_h;
    int w, h;
    cs_screen_size(&w, &h);
    /* after a resize, blank first: the bottom-right cell is never written
     * below, and a window one column narrower would keep the old frame's
     * character there */
    if (w != last_w || h != last_h) erase();
    last_w = w, last_h = h;
    for (int y = 0; y < h && y < g->h; y++)
        for (int x = 0; x < w && x < g->w; x++) {
            /* ncurses scrolls if the bottom-right cell is written with add_wch */
            if (y == h - 1 && x == w - 1) continue;
            const cs_cell *c = &g->cells[y * g->w + x];
            /* a double-width character's right half: drawn with its left
             * (in ASCII, the character was one '?': the half is another) */
            if (c->ch == CS_CELL_CONT && !ascii) continue;
            wchar_t wc[2] = {(wchar_t)c->ch, 0};
            if (ascii && (c->ch > 0x7E || c->ch == CS_CELL_CONT)) wc[0] = '?';
            cchar_t cc;
            setcchar(&cc, wc, attrs_of(c), colors ? (short)c->fg : 0, NULL);
            mvadd_wch(y, x, &cc);
        }
    refresh();
}

static int mouse_key(int *x, int *y) {
    MEVENT me;
    if (getmouse(&me) != OK) return CS_KEY_NONE;
    *x = me.x;
    *y = me.y;
    if (me.bstate & BUTTON4_PRESSED) return CS_KEY_WHEEL_UP;
    if (me.bstate & BUTTON5_PRESSED) return CS_KEY_WHEEL_DOWN;
    if (me.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)) return CS_KEY_CLICK;
    return CS_KEY_NONE;
}

int cs_screen_key(int ms, int *x, int *y) {
    if (interrupted) return 3;
    timeout(ms);
    wint_t ch;
    int rc = get_wch(&ch);
    if (interrupted) return 3;
    if (rc == ERR) return CS_KEY_NONE;
    if (rc == KEY_CODE_YES) {
        switch (ch) {
        case KEY_UP: return CS_KEY_UP;
        case KEY_DOWN: return CS_KEY_DOWN;
        case KEY_LEFT: return CS_KEY_LEFT;
        case KEY_RIGHT: return CS_KEY_RIGHT;
        case KEY_BTAB: return CS_KEY_BTAB;
        case KEY_ENTER: return CS_KEY_ENTER;
        case KEY_PPAGE: return CS_KEY_PGUP;
        case KEY_NPAGE: return CS_KEY_PGDN;
        case KEY_HOME: return CS_KEY_HOME;
        case KEY_END: return CS_KEY_END;
        case KEY_RESIZE: return CS_KEY_RESIZE;
        case KEY_BACKSPACE: return CS_KEY_BACKSPACE;
        case KEY_MOUSE: return mouse_key(x, y);
        default: return CS_KEY_NONE;
        }
    }
    switch (ch) {
    case '\t': return CS_KEY_TAB;
    case '\r': case '\n': return CS_KEY_ENTER;
    case 27: return CS_KEY_ESC;
    case 127: case 8: return CS_KEY_BACKSPACE;
    default: return (int)ch;
    }
}
