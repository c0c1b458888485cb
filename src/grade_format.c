/* grade_format.c -- the results of a grading in text, JSON, TAP, JUnit XML
 * and Gradescope's results.json, and the class CSV. No real timings: grading
 * the same solutions twice writes the same bytes (the JSON's modelled times
 * are a function of the program, as a replay's are). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"
#include "utf8.h"
#include "xalloc.h"

bool cs_grade_format_parse(const char *s, cs_grade_format *f) {
    static const char *const names[] = {"text", "json", "tap", "junit", "gradescope"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) return *f = (cs_grade_format)i, true;
    return false;
}

/* A hidden case's failure keeps its details to itself; a missing solution
 * tells nothing of the case, and says why the student scored nothing. */
static const char *shown(const cs_grade_result *r, bool show_hidden) {
    if (r->pass || !r->message) return NULL;
    return r->hidden && !show_hidden && !r->unrun ? "(hidden case: details are not shown)" : r->message;
}

/* A student's text (an error message, a file name) may hold any byte: a
 * control character written as is would drive the reader's terminal (ESC
 * starts a sequence) or break the format. Write the character at p, a
 * control one as \xHH (C1 controls, U+0080 to U+009F, which a UTF-8
 * terminal obeys too, as \u00HH), a newline as is only when keep_nl; the
 * last byte written. */
static const char *put_char(FILE *f, const char *p, bool keep_nl) {
    unsigned char c = (unsigned char)*p, d = (unsigned char)p[1];
    if ((c < 0x20 && c != '\t' && !(c == '\n' && keep_nl)) || c == 0x7f) fprintf(f, "\\x%02X", c);
    else if (c == 0xc2 && d >= 0x80 && d <= 0x9f) fprintf(f, "\\u00%02X", d), p++;
    else fputc(c, f);
    return p;
}

static void put_safe(FILE *f, const char *s) {
    for (; *s; s++) s = put_char(f, s, false);
}

static void indent(FILE *f, const char *text, const char *pad) {
    fputs(pad, f);
    for (const char *p = text; *p; p++) {
        p = put_char(f, p, true);
        if (*p == '\n' && p[1]) fputs(pad, f);
    }
    fputc('\n', f);
}

static void text(FILE *f, const cs_grade_spec *s, const cs_grade_sub *sub, bool show_hidden) {
    put_safe(f, sub->student), fputs(": ", f), put_safe(f, s->title), fputc('\n', f);
    for (int i = 0; i < sub->nresults; i++) {
        const cs_grade_result *r = &sub->results[i];
        fprintf(f, "  %s %g/%g  ", r->pass ? "\u2713" : "\u2717", r->score, r->max);
        put_safe(f, r->name), fputs(r->hidden ? " (hidden)\n" : "\n", f);
    }
    for (int i = 0; i < sub->nresults; i++) {
        const cs_grade_result *r = &sub->results[i];
        const char *m = shown(r, show_hidden);
        if (!m) continue;
        fputc('\n', f), put_safe(f, r->name), fputs(":\n", f);
        indent(f, m, "  ");
        if (r->trace && (!r->hidden || show_hidden) && r->at.line > 0)
            fprintf(f, "  see it: commsim replay %s --at %d:%d\n", r->trace, r->at.rank, r->at.line);
        else if (r->trace && (!r->hidden || show_hidden))
            fprintf(f, "  see it: commsim replay %s --end\n", r->trace);
    }
    fprintf(f, "total: %g/%g\n", sub->score, sub->max);
}

/* A case's modelled times: per variant its world, engine and send mode, then
 * the fields of its run's --report json "time". */
static json_t *times_json(const cs_grade_result *r) {
    json_t *a = json_array();
    for (int k = 0; k < r->ntimes; k++) {
        const cs_grade_time *v = &r->times[k];
        json_t *o = json_pack("{s:i, s:s, s:s}", "world", v->world, "engine", v->engine, "send_mode", v->mode);
        json_t *t = cs_outcome_time_json(&v->t, v->world);
        json_object_update(o, t);
        json_decref(t);
        json_array_append_new(a, o);
    }
    return a;
}

/* A JSON string of s: a student's file name, or a spec's text, may hold
 * bytes that are not UTF-8, which jansson refuses (the field, or the whole
 * document, would go missing): each such byte becomes U+FFFD. */
static json_t *jstr(const char *s) {
    json_t *j = json_string(s);
    if (j) return j;
    char *clean = cs_utf8_clean(s);
    if (!clean) cs_oom("grade", strlen(s) * 3 + 1);
    j = json_string(clean);
    free(clean);
    return j ? j : json_string("");
}

static json_t *sub_json(const cs_grade_sub *sub, bool show_hidden, bool gradescope) {
    json_t *tests = json_array();
    for (int i = 0; i < sub->nresults; i++) {
        const cs_grade_result *r = &sub->results[i];
        const char *m = shown(r, show_hidden);
        json_t *t = json_pack("{s:o, s:f, s:f}", "name", jstr(r->name), "score", r->score, "max_score", r->max);
        if (gradescope) {
            json_object_set_new(t, "output", jstr(r->pass ? "passed" : m ? m : "failed"));
            json_object_set_new(t, "visibility", json_string(r->hidden ? "after_published" : "visible"));
        } else {
            json_object_set_new(t, "pass", json_boolean(r->pass));
            json_object_set_new(t, "hidden", json_boolean(r->hidden));
            json_object_set_new(t, "message", m ? jstr(m) : json_null());
            /* a hidden case's trace (its name tells the world size) and
             * where it failed are details too, as in the text */
            bool details = !r->hidden || show_hidden;
            if (r->trace && details) json_object_set_new(t, "trace", jstr(r->trace));
            if (r->trace && details && r->at.line > 0) {
                char at[32];
                snprintf(at, sizeof at, "%d:%d", r->at.rank, r->at.line);
                json_object_set_new(t, "trace_at", json_string(at));
            }
            if (r->ntimes && details) json_object_set_new(t, "time", times_json(r));
        }
        json_array_append_new(tests, t);
    }
    json_t *o = json_pack("{s:f, s:o}", "score", sub->score, "tests", tests);
    if (!gradescope) {
        json_object_set_new(o, "student", jstr(sub->student));
        json_object_set_new(o, "max_score", json_real(sub->max));
    }
    return o;
}

static void dump(FILE *f, json_t *j) {
    json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    fputc('\n', f);
    json_decref(j);
}

/* A TAP description: '#' would start a directive (a failing case named
 * "# TODO" would pass as a TODO), so it is escaped as TAP 13 says; a newline
 * would end the line; other control characters as put_char writes them. */
static void tap_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '#' || *s == '\\') fputc('\\', f);
        if (*s == '\n' || *s == '\r') fputc(' ', f);
        else s = put_char(f, s, false);
    }
}

/* XML text of s. The document says UTF-8: a byte that starts no UTF-8
 * sequence (a file name may hold any) is written as U+FFFD, and a parser
 * never stops at it. */
static void xml(FILE *f, const char *s) {
    for (size_t n = strlen(s); *s; s++, n--) switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x80) {
                size_t len = cs_utf8_seq(s, n);
                /* U+FFFE and U+FFFF are no XML characters either */
                if (!len || (len == 3 && !memcmp(s, "\xEF\xBF", 2) && (unsigned char)s[2] >= 0xBE))
                    fputs(CS_UTF8_REPLACEMENT, f), len = len ? len : 1;
                else fwrite(s, 1, len, f);
                s += len - 1, n -= len - 1;
                break;
            }
            /* XML 1.0 has no other control characters, even escaped */
            fputc((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r' ? '?' : *s, f);
        }
}

void cs_grade_write(FILE *f, cs_grade_format fmt, const cs_grade_spec *s, const cs_grade_sub *subs,
                    int nsubs, bool show_hidden) {
    switch (fmt) {
    case CS_GF_TEXT:
        for (int i = 0; i < nsubs; i++) {
            if (i) fputc('\n', f);
            text(f, s, &subs[i], show_hidden);
        }
        break;
    case CS_GF_GRADESCOPE: /* one submission per results.json, as Gradescope runs them */
        if (nsubs == 1) dump(f, sub_json(&subs[0], show_hidden, true));
        else {
            json_t *a = json_array();
            for (int i = 0; i < nsubs; i++) json_array_append_new(a, sub_json(&subs[i], show_hidden, true));
            dump(f, a);
        }
        break;
    case CS_GF_JSON: {
        json_t *a = json_array();
        for (int i = 0; i < nsubs; i++) json_array_append_new(a, sub_json(&subs[i], show_hidden, false));
        dump(f, json_pack("{s:o, s:o, s:o}", "exercise", jstr(s->name), "title", jstr(s->title), "submissions", a));
        break;
    }
    case CS_GF_TAP: {
        int n = 0;
        for (int i = 0; i < nsubs; i++) n += subs[i].nresults;
        fprintf(f, "TAP version 13\n1..%d\n", n);
        n = 0;
        for (int i = 0; i < nsubs; i++)
            for (int k = 0; k < subs[i].nresults; k++) {
                const cs_grade_result *r = &subs[i].results[k];
                fprintf(f, "%s %d - ", r->pass ? "ok" : "not ok", ++n);
                tap_text(f, subs[i].student), fputs(": ", f), tap_text(f, r->name), fputc('\n', f);
                const char *m = shown(r, show_hidden);
                if (m) {
                    fputs("  ---\n  message: |\n", f);
                    indent(f, m, "    ");
                    fputs("  ...\n", f);
                }
            }
        break;
    }
    case CS_GF_JUNIT: {
        /* One testsuite for the exercise; each submission's cases are its
         * testcases, told apart by classname EXERCISE.STUDENT (CI tools group
         * by it). */
        int n = 0, fails = 0;
        for (int i = 0; i < nsubs; i++)
            for (int k = 0; k < subs[i].nresults; k++) n++, fails += !subs[i].results[k].pass;
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
        xml(f, s->name);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\">\n  <testsuite name=\"", n, fails);
        xml(f, s->name);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\">\n", n, fails);
        for (int i = 0; i < nsubs; i++)
            for (int k = 0; k < subs[i].nresults; k++) {
                const cs_grade_result *r = &subs[i].results[k];
                fputs("    <testcase classname=\"", f);
                xml(f, s->name), fputc('.', f), xml(f, subs[i].student);
                fputs("\" name=\"", f), xml(f, r->name), fputs("\"", f);
                const char *m = shown(r, show_hidden);
                if (r->pass) fputs("/>\n", f);
                else {
                    fputs(">\n      <failure message=\"failed\">", f);
                    xml(f, m ? m : "failed");
                    fputs("</failure>\n    </testcase>\n", f);
                }
            }
        fputs("  </testsuite>\n</testsuites>\n", f);
        break;
    }
    }
}

/* A CSV field, inside quotes: a quote doubled, control characters as
 * put_char writes them (a newline may stand inside quotes). A field that a
 * spreadsheet would take for a formula (a student's file named
 * =HYPERLINK(...).lua) starts with a quote mark, as OWASP advises, so that
 * opening the class's CSV runs nothing. */
static void csv_field(FILE *f, const char *s, bool starts) {
    if (starts && *s && strchr("=+-@\t\r", *s)) fputc('\'', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        s = put_char(f, s, true);
    }
}

void cs_grade_csv(FILE *f, const cs_grade_sub *subs, int nsubs) {
    fputs("student,score,max,failing\n", f);
    for (int i = 0; i < nsubs; i++) {
        fputc('"', f);
        csv_field(f, subs[i].student, true);
        fprintf(f, "\",%g,%g,\"", subs[i].score, subs[i].max);
        int n = 0;
        for (int k = 0; k < subs[i].nresults; k++)
            if (!subs[i].results[k].pass) {
                if (n++) fputc(';', f);
                csv_field(f, subs[i].results[k].name, n == 1);
            }
        fputs("\"\n", f);
    }
}
