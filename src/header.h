/* header.h -- the "--- key: value" lines at the top of a lesson script. */
#ifndef CS_HEADER_H
#define CS_HEADER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cs_header {
    char title[256];
    int world;            /* 0: not given */
    char send_mode[64];   /* "" : not given */
    char expect[64];      /* "ok", "deadlock", "error", ... ; "": not given */
    char net[128];        /* the network model (--net syntax); "": not given */
    char warning[160];    /* "FILE:LINE: ..." for the first unknown key that is
                           * a known one misspelt (wrld), else "" */
} cs_header;

/* Parse the leading comment block. Unknown keys are ignored (a likely typo of
 * a known one is named in warning); a malformed known value is an error:
 * returns -1 with "FILE:LINE: reason" in err. */
int cs_header_parse(const char *name, const char *src, size_t len, cs_header *h,
                    char *err, size_t errlen);

#endif
