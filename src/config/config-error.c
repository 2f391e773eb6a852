/* SPDX-License-Identifier: MIT */
/* config-error: the parse's first error, as "file:line: reason". The lowest
 * of the config files: the ini glue (config.c) and the key handlers
 * (config-keys.c) both report through it, so neither calls the other back. */
#include <stdarg.h>
#include <stdio.h>

#include "coldtext.h"
#include "config-private.h"

COLD_TEXT __attribute__((format(printf, 3, 4))) void config_fail(struct parser *p, unsigned line, const char *fmt, ...)
{
	char name[CONFIG_WHERE_MAX];
	unsigned file = p->file;
	va_list ap;
	int n;

	if (p->err_line)
		return;
	if (line > CONFIG_LINE_MAX) {
		file = CONFIG_ORIGIN_FILE(line);
		line = CONFIG_ORIGIN_LINE(line);
	}
	p->err_line = line ? line : 1;
	n = snprintf(p->err->msg, sizeof(p->err->msg), "%s:%u: ", config_file_name(p->c, file, name, sizeof(name)),
		     p->err_line);
	if (n < 0 || (size_t)n >= sizeof(p->err->msg))
		return;
	va_start(ap, fmt);
	vsnprintf(p->err->msg + n, sizeof(p->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
}
