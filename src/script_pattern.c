/* script_pattern.c -- Lua's string patterns (string.find, match, gmatch and
 * gsub), with their work counted as it is done.
 *
 * Lua's own matcher backtracks in C, where the count hook never fires: a
 * pattern such as ("a*"):rep(30) .. "b" tried against thirty a's runs for
 * hours inside one call, past any instruction budget and deaf to the end of
 * the run. This is the same algorithm, with the same results and the same
 * errors as Lua 5.4's (its manual, section 6.4.1), that counts a step for
 * every pattern item it tries, every character a repetition tests and every
 * byte it compares. Every CHARGE_EVERY steps it hands them to the caller's
 * charge function, which may stop the rank: the script's functions charge its
 * budget and look whether the run is ending (cs_script_pattern_charge), so
 * such a pattern stops like an endless loop, at its line, with status 4.
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "script_internal.h"

#define ESC '%'
#define SPECIALS "^$*+?.([%-"
#define MAX_CAPTURES 32 /* Lua's LUA_MAXCAPTURES */
#define MAX_DEPTH 200   /* Lua's MAXCCALLS: nested items before "pattern too complex" */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)
#define CHARGE_EVERY 4096

#define uchar(c) ((unsigned char)(c))

typedef struct matcher {
    const char *src, *src_end; /* the subject */
    const char *p_end;         /* the pattern's end (it may hold '\0's) */
    lua_State *L;
    cs_pattern_charge charge;
    uint64_t steps; /* counted and not yet charged */
    int depth;      /* nested matches left */
    int level;      /* captures opened so far */
    struct {
        const char *init;
        ptrdiff_t len; /* or CAP_UNFINISHED, CAP_POSITION */
    } cap[MAX_CAPTURES];
} matcher;

/* ---- counting */

static void charge(matcher *m) {
    uint64_t n = m->steps;
    m->steps = 0;
    m->charge(m->L, n);
}

static inline void step(matcher *m, uint64_t n) {
    m->steps += n;
    if (m->steps >= CHARGE_EVERY) charge(m);
}

/* The charge function the closures carry as their first upvalue. */
static cs_pattern_charge charge_of(lua_State *L) {
    return *(const cs_pattern_charge *)lua_touserdata(L, lua_upvalueindex(1));
}

static void prepare(matcher *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->charge = charge_of(L);
    m->src = s;
    m->src_end = s + ls;
    m->p_end = p + lp;
    m->steps = 0;
}

static void restart(matcher *m) {
    m->level = 0;
    m->depth = MAX_DEPTH;
}

/* ---- single characters */

static int class_matches(int c, int cl) {
    int res;
    switch (tolower(cl)) {
    case 'a': res = isalpha(c); break;
    case 'c': res = iscntrl(c); break;
    case 'd': res = isdigit(c); break;
    case 'g': res = isgraph(c); break;
    case 'l': res = islower(c); break;
    case 'p': res = ispunct(c); break;
    case 's': res = isspace(c); break;
    case 'u': res = isupper(c); break;
    case 'w': res = isalnum(c); break;
    case 'x': res = isxdigit(c); break;
    case 'z': res = c == 0; break; /* deprecated in Lua 5.2, still there */
    default: return cl == c; /* an escaped character stands for itself */
    }
    return isupper(cl) ? !res : res != 0;
}

/* c against the set [...] from p (its '[') to ec (its ']'). */
static int set_matches(int c, const char *p, const char *ec) {
    int in = 1;
    if (*(p + 1) == '^') {
        in = 0;
        p++;
    }
    while (++p < ec) {
        if (*p == ESC) {
            p++;
            if (class_matches(c, uchar(*p))) return in;
        } else if (*(p + 1) == '-' && p + 2 < ec) {
            p += 2;
            if (uchar(*(p - 2)) <= c && c <= uchar(*p)) return in;
        } else if (uchar(*p) == c) {
            return in;
        }
    }
    return !in;
}

/* Where the single-character class starting at p ends. */
static const char *item_end(matcher *m, const char *p) {
    switch (*p++) {
    case ESC:
        if (p == m->p_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    case '[':
        if (*p == '^') p++;
        do { /* up to the closing ']'; "%]" does not close */
            if (p == m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
            if (*(p++) == ESC && p < m->p_end) p++;
        } while (*p != ']');
        return p + 1;
    default:
        return p;
    }
}

static int single_matches(const matcher *m, const char *s, const char *p, const char *ep) {
    if (s >= m->src_end) return 0;
    int c = uchar(*s);
    switch (*p) {
    case '.': return 1;
    case ESC: return class_matches(c, uchar(*(p + 1)));
    case '[': return set_matches(c, p, ep - 1);
    default: return uchar(*p) == c;
    }
}

/* ---- the matcher: where the match of the pattern from p starting at s
 * ends, or NULL */

static const char *match(matcher *m, const char *s, const char *p);

/* %bxy */
static const char *match_balance(matcher *m, const char *s, const char *p) {
    if (p >= m->p_end - 1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (*s != *p) return NULL; /* the subject ends in '\0': *src_end is readable */
    const char *from = s;
    int open = *p, close = *(p + 1), depth = 1;
    while (++s < m->src_end) {
        if (*s == close) {
            if (--depth == 0) {
                step(m, (uint64_t)(s - from));
                return s + 1;
            }
        } else if (*s == open) {
            depth++;
        }
    }
    step(m, (uint64_t)(s - from));
    return NULL;
}

/* item* and item+: as many as match, then give them back one at a time. */
static const char *max_expand(matcher *m, const char *s, const char *p, const char *ep) {
    ptrdiff_t i = 0;
    while (step(m, 1), single_matches(m, s + i, p, ep)) i++;
    for (; i >= 0; i--) {
        const char *res = match(m, s + i, ep + 1);
        if (res) return res;
    }
    return NULL;
}

/* item-: as few as will do. */
static const char *min_expand(matcher *m, const char *s, const char *p, const char *ep) {
    for (;;) {
        const char *res = match(m, s, ep + 1);
        if (res) return res;
        step(m, 1);
        if (!single_matches(m, s, p, ep)) return NULL;
        s++;
    }
}

static const char *start_capture(matcher *m, const char *s, const char *p, ptrdiff_t what) {
    int level = m->level;
    if (level >= MAX_CAPTURES) luaL_error(m->L, "too many captures");
    m->cap[level].init = s;
    m->cap[level].len = what;
    m->level = level + 1;
    const char *res = match(m, s, p);
    if (!res) m->level--; /* undo */
    return res;
}

static const char *end_capture(matcher *m, const char *s, const char *p) {
    int l = m->level - 1;
    while (l >= 0 && m->cap[l].len != CAP_UNFINISHED) l--;
    if (l < 0) luaL_error(m->L, "invalid pattern capture");
    m->cap[l].len = s - m->cap[l].init;
    const char *res = match(m, s, p);
    if (!res) m->cap[l].len = CAP_UNFINISHED; /* undo */
    return res;
}

static int capture_index(matcher *m, int digit) {
    int l = digit - '1';
    if (l < 0 || l >= m->level || m->cap[l].len == CAP_UNFINISHED)
        return luaL_error(m->L, "invalid capture index %%%d", l + 1);
    return l;
}

/* %1 to %9: the text of that capture again. */
static const char *match_capture(matcher *m, const char *s, int digit) {
    int l = capture_index(m, digit);
    size_t len = (size_t)m->cap[l].len;
    step(m, len);
    if ((size_t)(m->src_end - s) >= len && memcmp(m->cap[l].init, s, len) == 0) return s + len;
    return NULL;
}

static const char *match(matcher *m, const char *s, const char *p) {
    if (m->depth-- == 0) luaL_error(m->L, "pattern too complex");
again: /* the next item, without nesting a call */
    step(m, 1);
    if (p != m->p_end) {
        switch (*p) {
        case '(':
            if (*(p + 1) == ')') s = start_capture(m, s, p + 2, CAP_POSITION);
            else s = start_capture(m, s, p + 1, CAP_UNFINISHED);
            break;
        case ')':
            s = end_capture(m, s, p + 1);
            break;
        case '$':
            if (p + 1 != m->p_end) goto single; /* a '$' inside is a character */
            s = s == m->src_end ? s : NULL;
            break;
        case ESC:
            switch (*(p + 1)) {
            case 'b':
                s = match_balance(m, s, p + 2);
                if (s) {
                    p += 4;
                    goto again;
                }
                break;
            case 'f': { /* %f[set]: a frontier */
                p += 2;
                if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
                const char *ep = item_end(m, p);
                int before = s == m->src ? '\0' : uchar(*(s - 1));
                if (!set_matches(before, p, ep - 1) && set_matches(uchar(*s), p, ep - 1)) {
                    p = ep;
                    goto again;
                }
                s = NULL;
                break;
            }
            case '0': case '1': case '2': case '3': case '4':
            case '5': case '6': case '7': case '8': case '9':
                s = match_capture(m, s, uchar(*(p + 1)));
                if (s) {
                    p += 2;
                    goto again;
                }
                break;
            default:
                goto single;
            }
            break;
        default:
        single: {
            const char *ep = item_end(m, p);
            if (!single_matches(m, s, p, ep)) {
                if (*ep == '*' || *ep == '?' || *ep == '-') { /* zero of them will do */
                    p = ep + 1;
                    goto again;
                }
                s = NULL;
                break;
            }
            switch (*ep) {
            case '?': {
                const char *res = match(m, s + 1, ep + 1);
                if (res) {
                    s = res;
                } else {
                    p = ep + 1;
                    goto again;
                }
                break;
            }
            case '+': s = max_expand(m, s + 1, p, ep); break; /* one matched already */
            case '*': s = max_expand(m, s, p, ep); break;
            case '-': s = min_expand(m, s, p, ep); break;
            default:
                s++;
                p = ep;
                goto again;
            }
            break;
        }
        }
    }
    m->depth++;
    return s;
}

/* ---- results */

/* Capture i (the whole match s..e when there are none): its text's length,
 * with *cap its start; or CAP_POSITION, the position then pushed. */
static ptrdiff_t get_capture(matcher *m, int i, const char *s, const char *e, const char **cap) {
    if (i >= m->level) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *cap = s;
        return e - s;
    }
    ptrdiff_t len = m->cap[i].len;
    *cap = m->cap[i].init;
    if (len == CAP_UNFINISHED) luaL_error(m->L, "unfinished capture");
    else if (len == CAP_POSITION) lua_pushinteger(m->L, (m->cap[i].init - m->src) + 1);
    return len;
}

static void push_capture(matcher *m, int i, const char *s, const char *e) {
    const char *cap;
    ptrdiff_t len = get_capture(m, i, s, e, &cap);
    if (len != CAP_POSITION) lua_pushlstring(m->L, cap, (size_t)len);
}

/* The captures, or the whole match when there are none and s is given. */
static int push_captures(matcher *m, const char *s, const char *e) {
    int n = m->level == 0 && s ? 1 : m->level;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(m, i, s, e);
    return n;
}

/* ---- the library functions */

/* A 1-based start, negative from the end, as string.find reads its init. */
static size_t start_index(lua_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

/* No magic character anywhere in p, '\0's included. */
static int no_specials(const char *p, size_t lp) {
    size_t upto = 0;
    do {
        if (strpbrk(p + upto, SPECIALS)) return 0;
        upto += strlen(p + upto) + 1;
    } while (upto <= lp);
    return 1;
}

/* A plain find: one step per byte it scans or may compare. */
static const char *find_plain(matcher *m, const char *s, size_t ls, const char *p, size_t lp) {
    if (lp == 0) return s;
    if (lp > ls) return NULL;
    size_t rest = lp - 1;      /* the bytes after the first */
    size_t span = ls - rest;   /* where the first byte can be */
    const char *at;
    while (span > 0 && (at = memchr(s, *p, span)) != NULL) {
        step(m, (uint64_t)(at - s) + 1 + rest);
        if (memcmp(at + 1, p + 1, rest) == 0) return at;
        span -= (size_t)(at + 1 - s);
        s = at + 1;
    }
    step(m, span);
    return NULL;
}

static int find_aux(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    matcher m;
    if (find && (lua_toboolean(L, 4) || no_specials(p, lp))) {
        prepare(&m, L, s, ls, p, lp);
        const char *at = find_plain(&m, s + init, ls - init, p, lp);
        charge(&m);
        if (at) {
            lua_pushinteger(L, (at - s) + 1);
            lua_pushinteger(L, (lua_Integer)((size_t)(at - s) + lp));
            return 2;
        }
    } else {
        const char *s1 = s + init;
        int anchor = *p == '^';
        if (anchor) {
            p++;
            lp--;
        }
        prepare(&m, L, s, ls, p, lp);
        do {
            restart(&m);
            const char *e = match(&m, s1, p);
            if (e) {
                charge(&m);
                if (find) {
                    lua_pushinteger(L, (s1 - s) + 1);
                    lua_pushinteger(L, e - s);
                    return push_captures(&m, NULL, 0) + 2;
                }
                return push_captures(&m, s1, e);
            }
        } while (s1++ < m.src_end && !anchor);
        charge(&m);
    }
    luaL_pushfail(L);
    return 1;
}

static int pat_find(lua_State *L) { return find_aux(L, 1); }
static int pat_match(lua_State *L) { return find_aux(L, 0); }

typedef struct gmatch_state {
    const char *next;      /* where the next search starts */
    const char *p;         /* the pattern */
    const char *lastmatch; /* the end of the last match: an empty match there is skipped */
    matcher m;
} gmatch_state;

static int gmatch_next(lua_State *L) {
    gmatch_state *g = lua_touserdata(L, lua_upvalueindex(3));
    g->m.L = L;
    for (const char *at = g->next; at <= g->m.src_end; at++) {
        restart(&g->m);
        const char *e = match(&g->m, at, g->p);
        if (e && e != g->lastmatch) {
            g->next = g->lastmatch = e;
            charge(&g->m);
            return push_captures(&g->m, at, e);
        }
    }
    charge(&g->m);
    return 0;
}

static int pat_gmatch(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2); /* the subject and the pattern live on as upvalues */
    gmatch_state *g = lua_newuserdatauv(L, sizeof *g, 0);
    if (init > ls) init = ls + 1; /* past the end: nothing to find */
    prepare(&g->m, L, s, ls, p, lp);
    g->next = s + init;
    g->p = p;
    g->lastmatch = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* gsub's replacement string, its %0 to %9 and %% read. */
static void add_string(matcher *m, luaL_Buffer *b, const char *s, const char *e) {
    lua_State *L = m->L;
    size_t l;
    const char *news = lua_tolstring(L, 3, &l);
    const char *p;
    step(m, l);
    while ((p = memchr(news, ESC, l)) != NULL) {
        luaL_addlstring(b, news, (size_t)(p - news));
        p++;
        if (*p == ESC) {
            luaL_addchar(b, *p);
        } else if (*p == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit(uchar(*p))) {
            const char *cap;
            ptrdiff_t len = get_capture(m, *p - '1', s, e, &cap);
            if (len == CAP_POSITION) luaL_addvalue(b);
            else luaL_addlstring(b, cap, (size_t)len);
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", ESC);
        }
        l -= (size_t)(p + 1 - news);
        news = p + 1;
    }
    luaL_addlstring(b, news, l);
}

/* Add the replacement of the match s..e; 0 when it kept the original text. */
static int add_value(matcher *m, luaL_Buffer *b, const char *s, const char *e, int tr) {
    lua_State *L = m->L;
    switch (tr) {
    case LUA_TFUNCTION: {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
        break;
    }
    case LUA_TTABLE:
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
        break;
    default: /* a string or a number */
        add_string(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: keep the original */
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1))
        return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int pat_gsub(lua_State *L) {
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *lastmatch = NULL;
    int tr = lua_type(L, 3);
    lua_Integer max_n = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    int anchor = *p == '^';
    lua_Integer n = 0;
    int changed = 0;
    luaL_argexpected(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                     3, "string/function/table");
    matcher m;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (anchor) {
        p++;
        lp--;
    }
    prepare(&m, L, src, ls, p, lp);
    while (n < max_n) {
        restart(&m);
        const char *e = match(&m, src, p);
        if (e && e != lastmatch) {
            n++;
            changed = add_value(&m, &b, src, e, tr) | changed;
            src = lastmatch = e;
        } else if (src < m.src_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchor) break;
    }
    charge(&m);
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, src, (size_t)(m.src_end - src));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

void cs_pattern_open(lua_State *L, const cs_pattern_charge *charge) {
    static const luaL_Reg fns[] = {
        {"find", pat_find}, {"match", pat_match}, {"gmatch", pat_gmatch}, {"gsub", pat_gsub}, {NULL, NULL}};
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushlightuserdata(L, (void *)charge);
        lua_pushcclosure(L, f->func, 1);
        lua_setfield(L, -2, f->name);
    }
}
