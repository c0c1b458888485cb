#include "export.h"
int cs_export_svg(FILE *f, const cs_export_ctx *x, char *err, size_t errlen) { (void)f; (void)x; snprintf(err, errlen, "todo"); return -1; }
