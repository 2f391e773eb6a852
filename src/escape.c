/* escape: \xHH escaping of user-chosen bytes, for every mode in one loop. */
#include <stdbool.h>

#include "escape.h"

static bool plain(unsigned char c, enum escape_mode mode)
{
	if (c < 0x20 || c == 0x7f)
		return false;
	switch (mode) {
	case ESCAPE_CONTROL:
		return true;
	case ESCAPE_NAME:
		return c != '\\';
	case ESCAPE_TOKEN:
		return c > 0x20 && c < 0x7f && c != '=' && c != '"';
	}
	return false;
}

size_t escape_bytes(char *dst, size_t size, const char *src, size_t len, enum escape_mode mode, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0, need = 0;
	bool full = size == 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)src[i];
		bool p = plain(c, mode);

		need += p ? 1 : 4;
		if (full || need >= size) {
			full = true; /* nothing more, not even a shorter byte after a cut one */
			continue;
		}
		if (used)
			*used = i + 1;
		if (p) {
			dst[o++] = (char)c;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	if (used && o == 0)
		*used = 0;
	if (size)
		dst[o] = '\0';
	return need;
}
