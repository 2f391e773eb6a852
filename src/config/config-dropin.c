/* SPDX-License-Identifier: MIT */
/* config-dropin: which files are read after the main one. <path>.d/ *.conf,
 * then (for the default config) the vendor directory's *.conf that no file
 * of the same name in <path>.d masks, all sorted by name; and the names of
 * the files read, for messages and --check-config. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coldtext.h"
#include "config-private.h"

_Static_assert(sizeof(((struct dirent *)0)->d_name) <= sizeof(((struct config_dropin *)0)->name),
	       "a drop-in's name fits");

/* *.conf, and not hidden (editors' and package managers' leftovers are) */
static bool dropin_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".conf") == 0;
}

static bool have_dropin(const struct config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_dropins; i++)
		if (strcmp(c->dropins[i].name, name) == 0)
			return true;
	return false;
}

/* Adds the drop-ins of dir that c does not have yet. A missing directory has
 * none; any other failure is an error, as is one file too many. */
COLD_TEXT static int list_dir(struct config *c, const char *dir, bool vendor, struct config_error *err)
{
	const struct dirent *e;
	DIR *d = opendir(dir);
	int r = 0;

	if (!d && errno == ENOENT)
		return 0;
	if (!d) {
		r = -errno;
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read the drop-in directory: %s", dir, strerror(-r));
		return r;
	}
	for (errno = 0; r == 0 && (e = readdir(d)); errno = 0) {
		if (!dropin_name(e->d_name) || have_dropin(c, e->d_name))
			continue;
		if (c->n_dropins == CONFIG_DROPINS_MAX) {
			snprintf(err->msg, sizeof(err->msg), "%s: too many drop-in files: more than %d%s", dir,
				 CONFIG_DROPINS_MAX, vendor ? " with those of the config's own .d directory" : "");
			r = -EINVAL;
			break;
		}
		c->dropins[c->n_dropins].vendor = vendor;
		strcpy(c->dropins[c->n_dropins++].name, e->d_name);
	}
	if (r == 0 && errno) {
		r = -errno;
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read the drop-in directory: %s", dir, strerror(-r));
	}
	closedir(d);
	return r;
}

COLD_TEXT static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct config_dropin *)a)->name, ((const struct config_dropin *)b)->name);
}

COLD_TEXT int config_list_dropins(struct config *c, struct config_error *err)
{
	char dir[CONFIG_PATH_MAX + 2];
	int r;

	c->n_dropins = 0;
	snprintf(dir, sizeof(dir), "%s.d", c->path);
	r = list_dir(c, dir, false, err);
	if (r == 0 && *c->vendor_dir)
		r = list_dir(c, c->vendor_dir, true, err);
	if (r == 0)
		qsort(c->dropins, c->n_dropins, sizeof(c->dropins[0]), by_name);
	return r;
}

const char *config_file_name(const struct config *c, unsigned file, char *buf, size_t size)
{
	const struct config_dropin *d = file && file <= c->n_dropins ? &c->dropins[file - 1] : NULL;

	if (!d)
		snprintf(buf, size, "%s", c->path);
	else if (d->vendor)
		snprintf(buf, size, "%s/%s", c->vendor_dir, d->name);
	else
		snprintf(buf, size, "%s.d/%s", c->path, d->name);
	return buf;
}

const char *config_where(const struct config *c, unsigned origin, char *buf, size_t size)
{
	char name[CONFIG_WHERE_MAX];
	unsigned i = CONFIG_ORIGIN_LINE(origin) - 1;

	if (CONFIG_ORIGIN_FILE(origin) == CONFIG_PROPS_ORIGIN_FILE && i < c->n_props) {
		snprintf(buf, size, "property %s=%s", c->props[i].name, c->props[i].value);
		return buf;
	}
	snprintf(buf, size, "%s:%u", config_file_name(c, CONFIG_ORIGIN_FILE(origin), name, sizeof(name)),
		 CONFIG_ORIGIN_LINE(origin));
	return buf;
}
