/* SPDX-License-Identifier: MIT */
/* fuzz-moom: PID 1's ManagedOOM messages (moom.h) through moom_parse(), the
 * entries into a set of managed units: every entry's path is checked and
 * normalized, limits are at most 100%, a malformed message delivers
 * nothing, and the set never holds a unit with no setting on. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "moom.h"

struct ctx {
	struct moom_set set;
	size_t n;
};

static int on_entry(void *p, const struct moom_entry *e)
{
	struct ctx *c = p;
	char norm[CONFIG_PATH_MAX];

	c->n++;
	FUZZ_CHECK(e->path[0] == '/');
	FUZZ_CHECK(moom_path_check(e->path, norm, sizeof(norm)) == 0 && strcmp(norm, e->path) == 0);
	FUZZ_CHECK(!strstr(e->path, "/../") && !strstr(e->path, "//"));
	FUZZ_CHECK(e->limit_permyriad <= 10000);
	return moom_set_apply(&c->set, e) == -ENOMEM ? -ENOMEM : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c;
	struct moom_reply r;
	size_t i;
	int e;

	memset(&c, 0, sizeof(c));
	moom_set_init(&c.set);
	moom_set_begin(&c.set);
	e = moom_parse((const char *)data, size, &r, on_entry, &c);
	moom_set_end(&c.set);
	FUZZ_CHECK(e == 0 || e == -EBADMSG);
	if (e == -EBADMSG)
		FUZZ_CHECK(c.n == 0 && c.set.n == 0);
	else
		FUZZ_CHECK(c.n == r.entries);
	for (i = 0; i < c.set.n; i++)
		FUZZ_CHECK(c.set.u[i].pressure || c.set.u[i].swap);
	moom_set_free(&c.set);
	return 0;
}
