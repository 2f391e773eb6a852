/* SPDX-License-Identifier: MIT */
/* lmkprops-source: where lmkd's properties are read from (I/O): Android's
 * property area through bionic (a build with --with-android-properties), or
 * a key=value file; and the one property psi-lmkd publishes there,
 * sys.lmk.reportkills. The mapping itself is lmkprops.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_ANDROID_PROPERTIES
#include <sys/system_properties.h>
#endif

#include "coldtext.h"
#include "config-private.h"
#include "fileio.h"
#include "lines.h"
#include "lmkprops.h"

#define PROPS_FILE_SIZE_MAX (256 * 1024)

#ifdef HAVE_ANDROID_PROPERTIES
static int system_get(void *ctx, const char *name, char *buf, size_t size)
{
	char v[PROP_VALUE_MAX] = "";

	(void)ctx;
	/* the length of the value, 0 when the property is unset */
	if (__system_property_get(name, v) < 0)
		return -EIO;
	snprintf(buf, size, "%s", v);
	return 0;
}
#endif

static int load_file(struct config *c, struct config_error *err)
{
	struct lmkprops_file *f;
	const char *path = c->lmkd_properties_file;
	char *text = NULL;
	size_t len = 0;
	int r = read_regular_file(path, PROPS_FILE_SIZE_MAX, &text, &len);

	if (r < 0) {
		char where[CONFIG_WHERE_MAX];
		unsigned origin = c->origin[0][config_key_index(config_daemon_keys, "lmkd_properties")];

		snprintf(err->msg, sizeof(err->msg), "%.200s: lmkd_properties = %.200s: cannot read lmkd's properties: %s",
			 config_where(c, origin, where, sizeof(where)), path, strerror(-r));
		return r;
	}
	if (strlen(text) != len) {
		snprintf(err->msg, sizeof(err->msg), "%.300s:%u: the file contains a NUL byte", path,
			 lines_number(text, text + strlen(text)));
		free(text);
		return -EINVAL;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		free(text);
		snprintf(err->msg, sizeof(err->msg), "%.300s: out of memory", path);
		return -ENOMEM;
	}
	r = lmkprops_file_parse(f, text, path, err);
	free(text);
	if (r == 0)
		r = lmkprops_apply(c, lmkprops_file_get, f, path, err);
	free(f);
	return r;
}

COLD_TEXT int lmkprops_load(struct config *c, struct config_error *err)
{
	switch (c->lmkd_properties) {
	case CONFIG_PROPS_OFF:
		c->n_props = 0;
		c->lmk_debug = false;
		return 0;
	case CONFIG_PROPS_FILE:
		return load_file(c, err);
	case CONFIG_PROPS_SYSTEM:
#ifdef HAVE_ANDROID_PROPERTIES
		return lmkprops_apply(c, system_get, NULL, "property", err);
#else
		break; /* config-keys.c refuses "system" in this build */
#endif
	}
	snprintf(err->msg, sizeof(err->msg), "lmkd_properties: this build cannot read Android's property area");
	return -ENOTSUP;
}

COLD_TEXT int lmkprops_publish_reportkills(void)
{
#ifdef HAVE_ANDROID_PROPERTIES
	return __system_property_set(LMKPROPS_REPORTKILLS, "1") == 0 ? 0 : -EIO;
#else
	return -ENOTSUP;
#endif
}
