/* SPDX-License-Identifier: MIT */
/* moom: the ManagedOOM messages of PID 1, the set of managed units and
 * their pressure clock (moom.h). Pure. The JSON reader knows only what the
 * messages need: objects, arrays, strings, unsigned integers, true and
 * false; any other value is checked and skipped. Nesting, string and
 * message lengths are bounded; nothing is allocated while reading. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moom.h"

struct jcur {
	const char *p, *end;
	int depth;
};

static void ws(struct jcur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool eat(struct jcur *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static int hex4(const char *p, unsigned *v)
{
	unsigned x = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char h = p[i];

		x <<= 4;
		if (h >= '0' && h <= '9')
			x |= (unsigned)(h - '0');
		else if (h >= 'a' && h <= 'f')
			x |= (unsigned)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			x |= (unsigned)(h - 'A' + 10);
		else
			return -1;
	}
	*v = x;
	return 0;
}

/* A string into out (size bytes with the NUL; NULL: skipped). Escapes are
 * decoded, \u0000 and lone surrogates refused. -EBADMSG malformed,
 * -ENAMETOOLONG too long for out (the cursor is then past it). */
static int jstring(struct jcur *c, char *out, size_t size)
{
	size_t o = 0;
	bool too_long = false;

	ws(c);
	if (c->p >= c->end || *c->p != '"')
		return -EBADMSG;
	c->p++;
	while (c->p < c->end && *c->p != '"') {
		unsigned char b[4];
		size_t nb = 1, i;
		unsigned char ch = (unsigned char)*c->p++;

		if (ch < 0x20)
			return -EBADMSG;
		b[0] = ch;
		if (ch == '\\') {
			if (c->p >= c->end)
				return -EBADMSG;
			ch = (unsigned char)*c->p++;
			switch (ch) {
			case '"': case '\\': case '/': b[0] = ch; break;
			case 'b': b[0] = '\b'; break;
			case 'f': b[0] = '\f'; break;
			case 'n': b[0] = '\n'; break;
			case 'r': b[0] = '\r'; break;
			case 't': b[0] = '\t'; break;
			case 'u': {
				unsigned u, lo;

				if (c->end - c->p < 4 || hex4(c->p, &u) < 0)
					return -EBADMSG;
				c->p += 4;
				if (u == 0 || (u >= 0xdc00 && u <= 0xdfff))
					return -EBADMSG;
				if (u >= 0xd800 && u <= 0xdbff) {
					if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u' || hex4(c->p + 2, &lo) < 0 ||
					    lo < 0xdc00 || lo > 0xdfff)
						return -EBADMSG;
					c->p += 6;
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				}
				if (u < 0x80) {
					b[0] = (unsigned char)u;
				} else if (u < 0x800) {
					b[0] = (unsigned char)(0xc0 | (u >> 6));
					b[1] = (unsigned char)(0x80 | (u & 0x3f));
					nb = 2;
				} else if (u < 0x10000) {
					b[0] = (unsigned char)(0xe0 | (u >> 12));
					b[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
					b[2] = (unsigned char)(0x80 | (u & 0x3f));
					nb = 3;
				} else {
					b[0] = (unsigned char)(0xf0 | (u >> 18));
					b[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3f));
					b[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
					b[3] = (unsigned char)(0x80 | (u & 0x3f));
					nb = 4;
				}
				break;
			}
			default:
				return -EBADMSG;
			}
		}
		if (!out)
			continue;
		if (o + nb >= size) {
			too_long = true;
			continue;
		}
		for (i = 0; i < nb; i++)
			out[o++] = (char)b[i];
	}
	if (c->p >= c->end)
		return -EBADMSG;
	c->p++;
	if (out)
		out[too_long ? 0 : o] = '\0';
	return too_long ? -ENAMETOOLONG : 0;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Any JSON number, checked and skipped; *u gets it when it is an unsigned
 * integer that fits (else *is_u false). */
static int jnumber(struct jcur *c, uint64_t *u, bool *is_u)
{
	uint64_t v = 0;
	bool neg = false, frac = false, over = false;

	ws(c);
	if (c->p < c->end && *c->p == '-') {
		neg = true;
		c->p++;
	}
	if (c->p >= c->end || !is_digit(*c->p))
		return -EBADMSG;
	if (*c->p == '0' && c->end - c->p > 1 && is_digit(c->p[1]))
		return -EBADMSG;
	while (c->p < c->end && is_digit(*c->p)) {
		unsigned dgt = (unsigned)(*c->p++ - '0');

		if (v > (UINT64_MAX - dgt) / 10)
			over = true;
		else
			v = v * 10 + dgt;
	}
	if (c->p < c->end && *c->p == '.') {
		frac = true;
		c->p++;
		if (c->p >= c->end || !is_digit(*c->p))
			return -EBADMSG;
		while (c->p < c->end && is_digit(*c->p))
			c->p++;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		frac = true;
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (c->p >= c->end || !is_digit(*c->p))
			return -EBADMSG;
		while (c->p < c->end && is_digit(*c->p))
			c->p++;
	}
	*is_u = !neg && !frac && !over;
	*u = v;
	return 0;
}

static bool word(struct jcur *c, const char *w)
{
	size_t n = strlen(w);

	ws(c);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
		return false;
	c->p += n;
	return true;
}

static int jskip(struct jcur *c);

/* Iterates an object: for each key, calls on_key with the cursor at its
 * value, which on_key must consume. */
typedef int (*key_fn)(struct jcur *c, const char *key, void *ctx);

static int jobject(struct jcur *c, key_fn on_key, void *ctx)
{
	char key[64];
	int r;

	if (!eat(c, '{'))
		return -EBADMSG;
	if (++c->depth > MOOM_DEPTH_MAX)
		return -EBADMSG;
	if (eat(c, '}')) {
		c->depth--;
		return 0;
	}
	for (;;) {
		r = jstring(c, key, sizeof(key));
		if (r == -ENAMETOOLONG)
			key[0] = '\0'; /* no key of ours is that long: skipped */
		else if (r < 0)
			return r;
		if (!eat(c, ':'))
			return -EBADMSG;
		r = on_key ? on_key(c, key, ctx) : jskip(c);
		if (r < 0)
			return r;
		if (eat(c, ','))
			continue;
		if (eat(c, '}'))
			break;
		return -EBADMSG;
	}
	c->depth--;
	return 0;
}

typedef int (*elem_fn)(struct jcur *c, void *ctx);

static int jarray(struct jcur *c, elem_fn on_elem, void *ctx)
{
	int r;

	if (!eat(c, '['))
		return -EBADMSG;
	if (++c->depth > MOOM_DEPTH_MAX)
		return -EBADMSG;
	if (eat(c, ']')) {
		c->depth--;
		return 0;
	}
	for (;;) {
		r = on_elem ? on_elem(c, ctx) : jskip(c);
		if (r < 0)
			return r;
		if (eat(c, ','))
			continue;
		if (eat(c, ']'))
			break;
		return -EBADMSG;
	}
	c->depth--;
	return 0;
}

static int jskip(struct jcur *c)
{
	uint64_t u;
	bool is_u;
	int r;

	ws(c);
	if (c->p >= c->end)
		return -EBADMSG;
	switch (*c->p) {
	case '{':
		return jobject(c, NULL, NULL);
	case '[':
		return jarray(c, NULL, NULL);
	case '"':
		r = jstring(c, NULL, 0);
		return r == -ENAMETOOLONG ? 0 : r;
	case 't':
		return word(c, "true") ? 0 : -EBADMSG;
	case 'f':
		return word(c, "false") ? 0 : -EBADMSG;
	case 'n':
		return word(c, "null") ? 0 : -EBADMSG;
	default:
		return jnumber(c, &u, &is_u);
	}
}

uint32_t moom_limit_permyriad(uint64_t raw)
{
	if (raw >= UINT32_MAX)
		return 10000;
	return (uint32_t)((raw * 10000 + UINT32_MAX / 2) / UINT32_MAX);
}

int moom_path_check(const char *in, char *out, size_t size)
{
	const char *p = in;
	size_t n = strlen(in);

	if (n == 0) {
		if (size < 2)
			return -EINVAL;
		memcpy(out, "/", 2);
		return 0;
	}
	if (in[0] != '/' || n >= size || (n > 1 && in[n - 1] == '/'))
		return -EINVAL;
	if (n == 1) {
		memcpy(out, "/", 2);
		return 0;
	}
	while (*p) {
		const char *s = ++p; /* past the '/' */
		size_t len;

		while (*p && *p != '/') {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return -EINVAL;
			p++;
		}
		len = (size_t)(p - s);
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return -EINVAL;
	}
	memcpy(out, in, n + 1);
	return 0;
}

/* one element of "cgroups" */
struct elem {
	struct moom_entry e;
	char mode[16], prop[64];
	bool has_mode, has_path, has_prop, bad;
	uint64_t limit, duration;
	bool has_limit, has_duration;
};

static int elem_key(struct jcur *c, const char *key, void *ctx)
{
	struct elem *x = ctx;
	uint64_t u;
	bool is_u;
	int r;

	if (strcmp(key, "mode") == 0 || strcmp(key, "property") == 0 || strcmp(key, "path") == 0) {
		char *dst = key[1] == 'o' ? x->mode : key[1] == 'r' ? x->prop : x->e.path;
		size_t size = key[1] == 'o' ? sizeof(x->mode) : key[1] == 'r' ? sizeof(x->prop) : sizeof(x->e.path);

		ws(c);
		if (c->p < c->end && *c->p != '"') {
			x->bad = true;
			return jskip(c);
		}
		r = jstring(c, dst, size);
		if (r == -ENAMETOOLONG) {
			x->bad = true;
			return 0;
		}
		if (r < 0)
			return r;
		if (key[1] == 'o')
			x->has_mode = true;
		else if (key[1] == 'r')
			x->has_prop = true;
		else
			x->has_path = true;
		return 0;
	}
	if (strcmp(key, "limit") == 0 || strcmp(key, "duration") == 0) {
		ws(c);
		if (c->p < c->end && (*c->p == '-' || is_digit(*c->p))) {
			r = jnumber(c, &u, &is_u);
			if (r < 0)
				return r;
			if (!is_u) {
				x->bad = true;
				return 0;
			}
			if (key[0] == 'l') {
				x->limit = u;
				x->has_limit = true;
			} else {
				x->duration = u;
				x->has_duration = true;
			}
			return 0;
		}
		x->bad = true;
		return jskip(c);
	}
	return jskip(c);
}

struct walk {
	struct moom_reply *r;
	moom_entry_fn fn;
	void *ctx;
	int fn_err;
};

static int cgroups_elem(struct jcur *c, void *ctx)
{
	struct walk *w = ctx;
	struct elem x;
	char path[CONFIG_PATH_MAX];
	int r;

	memset(&x, 0, sizeof(x));
	ws(c);
	if (c->p < c->end && *c->p != '{') {
		w->r->rejected++;
		return jskip(c);
	}
	r = jobject(c, elem_key, &x);
	if (r < 0)
		return r;
	if (x.bad || !x.has_mode || !x.has_path || !x.has_prop)
		goto reject;
	if (strcmp(x.mode, "kill") == 0)
		x.e.kill = true;
	else if (strcmp(x.mode, "auto") != 0)
		goto reject;
	if (strcmp(x.prop, "ManagedOOMMemoryPressure") == 0)
		x.e.prop = MOOM_PRESSURE;
	else if (strcmp(x.prop, "ManagedOOMSwap") == 0)
		x.e.prop = MOOM_SWAP;
	else
		goto reject;
	if (moom_path_check(x.e.path, path, sizeof(path)) < 0)
		goto reject;
	memcpy(x.e.path, path, strlen(path) + 1);
	if (x.has_limit && x.limit > UINT32_MAX)
		goto reject;
	x.e.limit_permyriad = x.has_limit && x.limit > 0 ? moom_limit_permyriad(x.limit) : 0;
	x.e.duration_us = x.has_duration && x.duration != UINT64_MAX ? x.duration : 0;
	w->r->entries++;
	if (w->fn && !w->fn_err) {
		r = w->fn(w->ctx, &x.e);
		if (r < 0)
			w->fn_err = r;
	}
	return 0;
reject:
	w->r->rejected++;
	return 0;
}

static int params_key(struct jcur *c, const char *key, void *ctx)
{
	if (strcmp(key, "cgroups") == 0) {
		ws(c);
		if (c->p < c->end && *c->p == '[')
			return jarray(c, cgroups_elem, ctx);
	}
	return jskip(c);
}

static int top_key(struct jcur *c, const char *key, void *ctx)
{
	struct walk *w = ctx;
	int r;

	if (strcmp(key, "parameters") == 0) {
		ws(c);
		if (c->p < c->end && *c->p == '{')
			return jobject(c, params_key, ctx);
		return jskip(c);
	}
	if (strcmp(key, "continues") == 0) {
		if (word(c, "true")) {
			w->r->continues = true;
			return 0;
		}
		return jskip(c);
	}
	if (strcmp(key, "method") == 0) {
		ws(c);
		if (c->p < c->end && *c->p == '"') {
			r = jstring(c, w->r->method, sizeof(w->r->method));
			if (r == -ENAMETOOLONG)
				w->r->method[0] = '\0'; /* no method of ours is that long */
			else if (r < 0)
				return r;
			return 0;
		}
		return jskip(c);
	}
	if (strcmp(key, "error") == 0) {
		ws(c);
		if (c->p < c->end && *c->p == '"') {
			r = jstring(c, w->r->error_id, sizeof(w->r->error_id));
			if (r == -ENAMETOOLONG)
				snprintf(w->r->error_id, sizeof(w->r->error_id), "(a name too long)");
			else if (r < 0)
				return r;
			w->r->error = true;
			return 0;
		}
		return jskip(c);
	}
	return jskip(c);
}

int moom_parse(const char *msg, size_t len, struct moom_reply *r, moom_entry_fn fn, void *ctx)
{
	struct jcur c = { .p = msg, .end = msg + len };
	struct walk w = { .r = r };
	int e;

	memset(r, 0, sizeof(*r));
	if (len > MOOM_MSG_MAX || memchr(msg, '\0', len))
		return -EBADMSG;
	/* the whole message first: a bad one delivers nothing */
	ws(&c);
	if (c.p >= c.end || *c.p != '{' || jskip(&c) < 0)
		return -EBADMSG;
	ws(&c);
	if (c.p != c.end)
		return -EBADMSG;
	c = (struct jcur){ .p = msg, .end = msg + len };
	w.fn = fn;
	w.ctx = ctx;
	e = jobject(&c, top_key, &w);
	if (e < 0) {
		memset(r, 0, sizeof(*r));
		return -EBADMSG;
	}
	if (r->error)
		r->entries = 0; /* an error reply has no settings */
	return w.fn_err;
}

void moom_defaults_init(struct moom_defaults *d)
{
	d->limit_permyriad = MOOM_DEFAULT_LIMIT_PERMYRIAD;
	d->duration_us = MOOM_DEFAULT_DURATION_US;
	d->swap_used_permyriad = MOOM_SWAP_USED_PERMYRIAD;
}

/* "60%", "60.5%", "60.55%" (config.h's percentages), "605‰", "6055‱"
 * (systemd's parse_permyriad takes these too) */
static int parse_permyriad(const char *v, uint32_t *out)
{
	struct mem_amount a;
	unsigned long whole = 0;
	const char *p = v;
	char why[128];

	while (is_digit(*p) && whole <= 10000)
		whole = whole * 10 + (unsigned long)(*p++ - '0');
	if (p != v && strcmp(p, "\xe2\x80\xb1") == 0 && whole <= 10000) { /* ‱ */
		*out = (uint32_t)whole;
		return 0;
	}
	if (p != v && strcmp(p, "\xe2\x80\xb0") == 0 && whole <= 1000) { /* ‰ */
		*out = (uint32_t)whole * 10;
		return 0;
	}
	if (config_parse_amount(v, true, &a, why, sizeof(why)) < 0 || !a.percent)
		return -EINVAL;
	*out = (uint32_t)a.value;
	return 0;
}

/* systemd's time spans: "20s", "1min 30s", "500ms", a bare number is seconds */
static int parse_timespan(const char *v, uint64_t *out)
{
	static const struct {
		const char *s;
		uint64_t us;
	} units[] = { { "usec", 1 }, { "us", 1 }, { "msec", 1000 }, { "ms", 1000 }, { "seconds", 1000000 },
		      { "second", 1000000 }, { "sec", 1000000 }, { "s", 1000000 }, { "minutes", 60000000 },
		      { "minute", 60000000 }, { "min", 60000000 }, { "m", 60000000 }, { "hours", 3600000000ULL },
		      { "hour", 3600000000ULL }, { "hr", 3600000000ULL }, { "h", 3600000000ULL } };
	uint64_t total = 0;
	const char *p = v;
	bool any = false;

	for (;;) {
		uint64_t n = 0, mult = 1000000;
		size_t i, best = 0;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (!is_digit(*p))
			return -EINVAL;
		while (is_digit(*p)) {
			if (n > 100000000)
				return -ERANGE;
			n = n * 10 + (uint64_t)(*p++ - '0');
		}
		while (*p == ' ')
			p++;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].s);

			if (strncmp(p, units[i].s, l) == 0 && (p[l] == '\0' || p[l] == ' ' || is_digit(p[l])) && l > best) {
				best = l;
				mult = units[i].us;
			}
		}
		if (!best && *p && !is_digit(*p))
			return -EINVAL;
		p += best;
		total += n * mult;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*out = total;
	return 0;
}

int moom_defaults_parse(struct moom_defaults *d, const char *text)
{
	const char *line = text;
	bool in_oom = false;
	int skipped = 0;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[256], *k, *v, *e;

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			for (k = buf; *k == ' ' || *k == '\t'; k++)
				;
			for (e = k + strlen(k); e > k && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
				*(e - 1) = '\0';
			if (*k == '[')
				in_oom = strcmp(k, "[OOM]") == 0;
			else if (in_oom && *k && *k != '#' && *k != ';' && (v = strchr(k, '='))) {
				uint32_t pm;
				uint64_t us;

				for (e = v; e > k && (e[-1] == ' ' || e[-1] == '\t'); e--)
					;
				*e = '\0';
				for (v++; *v == ' ' || *v == '\t'; v++)
					;
				if (strcmp(k, "SwapUsedLimit") == 0) {
					if (parse_permyriad(v, &pm) == 0)
						d->swap_used_permyriad = pm;
					else
						skipped++;
				} else if (strcmp(k, "DefaultMemoryPressureLimit") == 0) {
					if (parse_permyriad(v, &pm) == 0)
						d->limit_permyriad = pm;
					else
						skipped++;
				} else if (strcmp(k, "DefaultMemoryPressureDurationSec") == 0) {
					if (parse_timespan(v, &us) == 0 && us >= 1000000)
						d->duration_us = us;
					else
						skipped++;
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
	return skipped;
}

void moom_set_init(struct moom_set *s)
{
	memset(s, 0, sizeof(*s));
	moom_defaults_init(&s->def);
}

void moom_set_defaults(struct moom_set *s, const struct moom_defaults *def)
{
	size_t i;

	s->def = *def;
	for (i = 0; i < s->n; i++) {
		if (s->u[i].limit_default)
			s->u[i].limit_permyriad = def->limit_permyriad;
		if (s->u[i].duration_default)
			s->u[i].duration_us = def->duration_us;
	}
}

void moom_set_free(struct moom_set *s)
{
	size_t i;

	struct moom_defaults def = s->def;

	for (i = 0; i < s->n; i++)
		free(s->u[i].path);
	free(s->u);
	moom_set_init(s);
	s->def = def;
}

/* the user manager's subtree of uid: "/user.slice/user-UID.slice/user@UID.service" */
int moom_user_manager_group(unsigned long uid, char *buf, size_t size)
{
	int n = snprintf(buf, size, "/user.slice/user-%lu.slice/user@%lu.service", uid, uid);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

static bool under(const char *path, const char *prefix, size_t n)
{
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool moom_user_path_ok(unsigned long uid, const char *path)
{
	char p[96];
	int n;

	if (uid == 0)
		return true;
	n = moom_user_manager_group(uid, p, sizeof(p));
	return n > 0 && under(path, p, (size_t)n);
}

size_t moom_set_count_user(const struct moom_set *s, unsigned long uid)
{
	char p[96];
	size_t i, k = 0;
	int n = moom_user_manager_group(uid, p, sizeof(p));

	for (i = 0; n > 0 && i < s->n; i++)
		k += under(s->u[i].path, p, (size_t)n);
	return k;
}

struct moom_unit *moom_set_find(struct moom_set *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->u[i].path, path) == 0)
			return &s->u[i];
	return NULL;
}

static void remove_at(struct moom_set *s, size_t i)
{
	free(s->u[i].path);
	s->u[i] = s->u[s->n - 1];
	s->n--;
}

void moom_set_begin(struct moom_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->u[i].seen_pressure = s->u[i].seen_swap = false;
	s->full = true;
}

void moom_set_end(struct moom_set *s)
{
	size_t i = 0;

	while (i < s->n) {
		struct moom_unit *u = &s->u[i];

		if (!u->seen_pressure)
			u->pressure = false;
		if (!u->seen_swap)
			u->swap = false;
		if (!u->pressure && !u->swap)
			remove_at(s, i);
		else
			i++;
	}
	s->full = false;
}

int moom_set_apply(struct moom_set *s, const struct moom_entry *e)
{
	struct moom_unit *u = moom_set_find(s, e->path);
	uint32_t limit = e->limit_permyriad ? e->limit_permyriad : s->def.limit_permyriad;
	uint64_t duration = e->duration_us ? e->duration_us : s->def.duration_us;
	int changed = 0;

	if (!u) {
		if (!e->kill)
			return 0;
		if (s->n >= MOOM_UNITS_MAX) {
			s->refused++;
			return -ENOSPC;
		}
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 16;
			struct moom_unit *nu = realloc(s->u, cap * sizeof(*nu));

			if (!nu)
				return -ENOMEM;
			s->u = nu;
			s->cap = cap;
		}
		u = &s->u[s->n];
		memset(u, 0, sizeof(*u));
		u->path = strdup(e->path);
		if (!u->path)
			return -ENOMEM;
		s->n++;
		changed = 1;
	}
	if (e->prop == MOOM_PRESSURE) {
		u->seen_pressure = true;
		if (u->pressure != e->kill || (e->kill && (u->limit_permyriad != limit || u->duration_us != duration)))
			changed = 1;
		if (u->pressure != e->kill)
			u->above = false;
		u->pressure = e->kill;
		if (e->kill) {
			u->limit_permyriad = limit;
			u->duration_us = duration;
			u->limit_default = !e->limit_permyriad;
			u->duration_default = !e->duration_us;
		}
	} else {
		u->seen_swap = true;
		if (u->swap != e->kill)
			changed = 1;
		u->swap = e->kill;
	}
	if (!u->pressure && !u->swap && !s->full)
		remove_at(s, (size_t)(u - s->u));
	return changed;
}

size_t moom_set_count(const struct moom_set *s, enum moom_prop p)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		n += p == MOOM_PRESSURE ? s->u[i].pressure : s->u[i].swap;
	return n;
}

bool moom_pressure_due(struct moom_unit *u, uint32_t avg10, uint64_t now_us)
{
	u->last_avg10 = avg10;
	if (!u->pressure || avg10 <= u->limit_permyriad) {
		u->above = false;
		return false;
	}
	if (!u->above) {
		u->above = true;
		u->above_since_us = now_us;
	}
	return now_us - u->above_since_us >= u->duration_us;
}

void moom_unit_acted(struct moom_unit *u, uint64_t now_us)
{
	u->above = true;
	u->above_since_us = now_us;
}

/* total * share / 10000 without overflow */
static uint64_t share_of(uint64_t total, uint64_t permyriad)
{
	return total / 10000 * permyriad + total % 10000 * permyriad / 10000;
}

bool moom_swap_due(uint32_t swap_used_permyriad, uint64_t mem_total, uint64_t mem_available, uint64_t swap_total,
		   uint64_t swap_free)
{
	uint64_t free_share = 10000 - (swap_used_permyriad > 10000 ? 10000 : swap_used_permyriad);

	if (swap_total == 0 || mem_total == 0)
		return false;
	return mem_available < share_of(mem_total, free_share) && swap_free < share_of(swap_total, free_share);
}

bool moom_swap_candidate(uint64_t swap_bytes, uint64_t swap_total)
{
	return swap_bytes > swap_total / 100 * MOOM_SWAP_CANDIDATE_PERCENT;
}
