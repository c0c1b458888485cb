/* lessons.h -- where the lessons are: the one lookup that `commsim learn`,
 * the replay's source panel and anything else naming a lesson or chapter
 * without a path go through. */
#ifndef CS_LESSONS_H
#define CS_LESSONS_H

#include <stddef.h>

/* The lessons directory: $COMMSIM_LESSONS, else ./lessons, else ../lessons
 * beside the program (the build tree), else ../share/commsim/lessons beside
 * it (an installed tree, also moved or under a DESTDIR), else the directory
 * make install filled (CS_LESSONS_INSTALLED). The result may point into buf. */
const char *cs_lessons_dir(char *buf, size_t len);

extern const char *const CS_LESSONS_INSTALLED;

/* A script named as a user would name a lesson: SCRIPT itself when it is a
 * file; else, in the lessons directory, SCRIPT or SCRIPT.lua
 * ("02-point-to-point/chain"), then the first chapter (in order) holding
 * SCRIPT or SCRIPT.lua ("chain"); else SCRIPT, for the caller's error. The
 * result may point into buf. */
const char *cs_lessons_script(const char *script, char *buf, size_t len);

#endif
