/* lessons.c -- where the lessons are (see lessons.h). */
#include "lessons.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* make install's $(pkgdatadir), set by Makefile.am. */
#ifndef CS_PKGDATADIR
#define CS_PKGDATADIR "/usr/local/share/commsim"
#endif

const char *const CS_LESSONS_INSTALLED = CS_PKGDATADIR "/lessons";

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/name or dir/name.lua into buf, if either is a file. */
static bool lesson_in(const char *dir, const char *name, char *buf, size_t len) {
    return ((size_t)snprintf(buf, len, "%s/%s", dir, name) < len && is_file(buf)) ||
           ((size_t)snprintf(buf, len, "%s/%s.lua", dir, name) < len && is_file(buf));
}

const char *cs_lessons_dir(char *buf, size_t len) {
    const char *env = getenv("COMMSIM_LESSONS");
    if (env && *env) return env;
    if (is_dir("lessons")) return "lessons";
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0 && len) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        static const char *const beside[] = {"../lessons", "../share/commsim/lessons"};
        for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++)
            if ((size_t)snprintf(buf, len, "%s/%s", exe, beside[i]) < len && is_dir(buf))
                return buf;
    }
    return CS_LESSONS_INSTALLED;
}

const char *cs_lessons_script(const char *script, char *buf, size_t len) {
    if (!*script || is_file(script)) return script;
    char dirbuf[PATH_MAX], chapter[PATH_MAX];
    const char *dir = cs_lessons_dir(dirbuf, sizeof dirbuf);
    if (lesson_in(dir, script, buf, len)) return buf;
    if (strchr(script, '/')) return script;
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    bool found = false;
    for (int i = 0; i < n; i++) {
        if (!found && names[i]->d_name[0] != '.' &&
            (size_t)snprintf(chapter, sizeof chapter, "%s/%s", dir, names[i]->d_name) < sizeof chapter)
            found = lesson_in(chapter, script, buf, len);
        free(names[i]);
    }
    if (n >= 0) free(names);
    return found ? buf : script;
}
