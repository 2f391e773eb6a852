/* SPDX-License-Identifier: MIT */
/* escape: \xHH escaping of user-chosen bytes, for every mode in one loop,
 * and the UTF-8 check every mode relies on. */
#include <string.h>

#include "escape.h"

size_t escape_utf8_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	size_t n, i;

	if (len == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2 || p[0] > 0xf4) /* a continuation byte, an overlong lead, beyond U+10FFFF */
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (p[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (p[0] == 0xed)
		hi = 0x9f; /* UTF-16 surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (len < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static bool plain_ascii(unsigned char c, enum escape_mode mode)
{
	if (c < 0x20 || c == 0x7f)
		return false;
	switch (mode) {
	case ESCAPE_CONTROL:
		return true;
	case ESCAPE_NAME:
		return c != '\\';
	case ESCAPE_TOKEN:
		return c > 0x20 && c != '=' && c != '"';
	}
	return false;
}

/* The next unit of s[0..len): its length, and in *keep whether it is copied
 * as it is (else it is one byte, escaped). A C1 control character (U+0080
 * to U+009F) is escaped like C0 ones: its lead byte, then its second byte,
 * a stray continuation byte on its own. */
static size_t next_unit(const unsigned char *s, size_t len, enum escape_mode mode, bool *keep)
{
	size_t n;

	if (s[0] < 0x80) {
		*keep = plain_ascii(s[0], mode);
		return 1;
	}
	n = mode == ESCAPE_TOKEN ? 0 : escape_utf8_len((const char *)s, len);
	*keep = n > 1 && !(s[0] == 0xc2 && s[1] < 0xa0);
	return *keep ? n : 1;
}

size_t escape_bytes(char *dst, size_t size, const char *src, size_t len, enum escape_mode mode, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t i, n, o = 0, need = 0;
	bool full = size == 0, keep;

	for (i = 0; i < len; i += n) {
		n = next_unit(s + i, len - i, mode, &keep);
		need += keep ? n : 4;
		if (full || need >= size) {
			full = true; /* nothing more, not even a shorter unit after a cut one */
			continue;
		}
		if (used)
			*used = i + n;
		if (keep) {
			memcpy(dst + o, s + i, n);
			o += n;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[s[i] >> 4];
			dst[o++] = hex[s[i] & 15];
		}
	}
	if (used && o == 0)
		*used = 0;
	if (size)
		dst[o] = '\0';
	return need;
}
