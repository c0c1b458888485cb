/* grade_internal.h -- what the grade modules share and nothing else reads. */
#ifndef CS_GRADE_INTERNAL_H
#define CS_GRADE_INTERNAL_H

/* Marks the epilogue's lines among a rank's printed output. */
#define CS_GRADE_MARK "\x1e" "cs-result "

#endif
