/* script_hint.c -- what a script most likely meant, after the errors a habit
 * from Python produces in Lua.
 *
 * Lua says what is wrong in its own terms: "')' expected near '='" for a
 * keyword argument, "attempt to call a nil value (global 'range')" for a
 * Python loop. A student who writes PyTorch every day reads those and still
 * does not know what to write instead; the hint says it, in a line (and for
 * a recursion without end, which Python calls a RecursionError). A hint is
 * given only where the message (and, for some, the text of the line it points
 * at) leaves little doubt about the habit; otherwise Lua's message stands
 * alone.
 */
#include <string.h>

#include "script_internal.h"

typedef struct hint {
    const char *said; /* in Lua's message */
    const char *code; /* in the text of the line, or NULL: any line */
    const char *text;
} hint;

static const hint hints[] = {
    /* syntax */
    {"')' expected near '='", NULL,
     "Lua has no keyword arguments: dist.all_reduce(t, dist.ReduceOp.SUM); options go in a table, "
     "as in dist.send(t, 1, {tag = 7})"},
    {"near '!'", NULL, "Lua writes 'not equal' as ~= and 'not' as not"},
    {"'}' expected near ':'", NULL, "a Lua table is {a = 1} or {[\"a\"] = 1}: = where Python's dict has :"},
    {"expected near ':'", NULL,
     "a Lua block has no colon: if c then ... end, for i = 1, n do ... end, while c do ... end"},
    {"syntax error near", "+=", "Lua has no +=: x = x + 1"},
    {"syntax error near", "-=", "Lua has no -=: x = x - 1"},
    {"syntax error near", "*=", "Lua has no *=: x = x * 2"},
    {"syntax error near", "/=", "Lua has no /=: x = x / 2"},
    {"syntax error near", "elif ", "Lua writes elif as elseif"},
    {"syntax error near", "def ", "a Lua function is local function f(x) ... end"},
    {"syntax error near", "import ", "a script imports nothing: tensor and dist are there already"},
    {"near '['", NULL, "a Lua list is {1, 2, 3}; tensor.from({1, 2, 3}) makes a tensor of one"},
    /* names that are Python's */
    {"(global 'torch')", NULL,
     "there is no torch: tensors come from tensor (tensor.zeros(4), tensor.from({1, 2})), "
     "the communication from dist"},
    {"(global 'range')", NULL, "Lua counts with for i = 0, n - 1 do ... end"},
    {"(global 'len')", NULL, "#x is the length of a list or a string; t:numel() a tensor's"},
    {"(global 'str')", NULL, "tostring(x) makes a string"},
    {"(global 'int')", NULL, "math.floor(x) rounds down; math.tointeger(x) converts"},
    {"(global 'float')", NULL, "tonumber(x) converts"},
    {"(global 'enumerate')", NULL, "for i, v in ipairs(list) do ... end"},
    {"'append')", NULL, "table.insert(list, v), or list[#list + 1] = v"},
    {"(global 'f')", "f\"", "Lua has no f-strings: string.format(\"rank %d\", rank), or \"rank \" .. rank"},
    {"(global 'f')", "f'", "Lua has no f-strings: string.format('rank %d', rank), or 'rank ' .. rank"},
    /* torch.distributed's set-up, which the launcher does */
    {"'init_process_group')", NULL,
     "the process group is set up before the script runs (rank, world_size and dist are ready): "
     "leave the call out"},
    {"'destroy_process_group')", NULL, "the process group ends with the script: leave the call out"},
    /* a recursion without a base case (Python's RecursionError) */
    {"stack overflow", NULL,
     "a function (or a metamethod) calls itself without end: give the recursion a case that "
     "returns without calling it again"},
    /* counting from 0 */
    {"integer index", "[0]", "Lua counts from 1: t.shape[1] is torch's t.shape[0], list[1] the first"},
};

/* Line `line` of the script's source: its start, its length in *len. */
static const char *line_text(const cs_script *s, int line, size_t *len) {
    const char *p = s->source, *end = s->source + s->len;
    for (int n = 1; n < line && p; n++) {
        p = memchr(p, '\n', (size_t)(end - p));
        if (p) p++;
    }
    if (!p || line < 1) return NULL;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *len = (size_t)((nl ? nl : end) - p);
    return p;
}

static bool has_code(const char *text, size_t len, const char *code) {
    size_t n = strlen(code);
    for (size_t i = 0; text && i + n <= len; i++)
        if (memcmp(text + i, code, n) == 0) return true;
    return false;
}

const char *cs_script_hint(const cs_script *s, int line, const char *msg) {
    size_t len = 0;
    const char *text = line > 0 ? line_text(s, line, &len) : NULL;
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        const hint *h = &hints[i];
        if (strstr(msg, h->said) && (!h->code || has_code(text, len, h->code))) return h->text;
    }
    return NULL;
}
