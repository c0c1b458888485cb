/* screen.h -- the only code that touches ncurses: open and restore the
 * terminal, copy a grid to it, read keys and mouse clicks. One thread (the
 * main one) uses it. Opening is counted, so a view started from another view
 * (a lesson run from the chapter browser) shares the screen. */
#ifndef CS_SCREEN_H
#define CS_SCREEN_H

#include <stdbool.h>

#include "grid.h"

enum { /* keys beyond characters, as cs_screen_key returns them */
    CS_KEY_NONE = -1,
    CS_KEY_UP = 0x110000, CS_KEY_DOWN, CS_KEY_LEFT, CS_KEY_RIGHT, CS_KEY_TAB, CS_KEY_BTAB,
    CS_KEY_ENTER, CS_KEY_ESC, CS_KEY_PGUP, CS_KEY_PGDN, CS_KEY_HOME, CS_KEY_END, CS_KEY_RESIZE,
    CS_KEY_CLICK, CS_KEY_WHEEL_UP, CS_KEY_WHEEL_DOWN, CS_KEY_BACKSPACE
};

/* false when the terminal cannot be used (the message says why). */
bool cs_screen_open(char *err, size_t errlen);
void cs_screen_close(void);
/* Box drawing and arrows need a UTF-8 locale; otherwise draw in ASCII. */
bool cs_screen_ascii(void);
void cs_screen_size(int *w, int *h);
void cs_screen_show(const cs_grid *g);
/* The next key, waiting at most ms milliseconds (CS_KEY_NONE if none came).
 * For CS_KEY_CLICK and the wheel, x and y are where. After SIGINT or
 * SIGTERM while the screen is open, every key is Ctrl-C (3). */
int cs_screen_key(int ms, int *x, int *y);

#endif
