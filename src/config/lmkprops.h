/* SPDX-License-Identifier: MIT */
/* lmkprops: Android lmkd's tunables -- ro.lmk.NAME, overridden by
 * persist.device_config.lmkd_native.NAME as lmkd reads them, and
 * ro.config.low_ram -- mapped onto psi-lmkd's configuration. Pure: the
 * values come through a lookup callback (lmkprops-source.c reads Android's
 * property area or a key=value file); every bad value is an error naming
 * the property and its value, never a silent default. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define LMKPROPS_RO "ro.lmk."
#define LMKPROPS_PERSIST "persist.device_config.lmkd_native."
#define LMKPROPS_LOW_RAM "ro.config.low_ram"
/* what lmkd publishes once it reports its kills (ActivityManager's
 * isLowMemoryKillReportSupported()) */
#define LMKPROPS_REPORTKILLS "sys.lmk.reportkills"
/* the Android profile's tiers that lmkd's medium and critical levels set */
#define LMKPROPS_TIER_MEDIUM "medium"
#define LMKPROPS_TIER_CRITICAL "critical"
/* lmkd's default partial stall on a low-RAM device (ro.config.low_ram) */
#define LMKPROPS_LOW_RAM_STALL_MS 200

/* A property's value into buf ("" when unset); 0 or -errno. */
typedef int (*lmkprops_get_fn)(void *ctx, const char *name, char *buf, size_t size);

/* Reads lmkd's properties through get and applies the ones with a
 * psi-lmkd meaning to c (a property wins over the file's value); records
 * every property found in c->props (used = false: read, no psi-lmkd
 * meaning) and points the keys it set there (CONFIG_PROPS_ORIGIN_FILE origins).
 * source names where they came from in messages ("property", a file).
 * 0, or -EINVAL with err = "SOURCE: NAME=VALUE: reason". */
int lmkprops_apply(struct config *c, lmkprops_get_fn get, void *ctx, const char *source, struct config_error *err);

/* Whether name is one of lmkd's properties that psi-lmkd knows (mapped or
 * ignored), under either prefix, or ro.config.low_ram / per_app_memcg. */
bool lmkprops_known(const char *name);
/* Whether name lies in lmkd's namespaces (ro.lmk., the persist prefix). */
bool lmkprops_in_namespace(const char *name);

/* A properties file (build.prop's form: NAME=VALUE lines, # comments),
 * keeping lmkd's properties only. */
#define LMKPROPS_FILE_MAX 64
struct lmkprops_file {
	size_t n;
	struct {
		char name[CONFIG_PROP_NAME_MAX];
		char value[CONFIG_PROP_VALUE_MAX];
		unsigned line; /* where the file sets it */
	} e[LMKPROPS_FILE_MAX];
};
/* Parses text (path for messages) into f: 0, or -EINVAL with err =
 * "PATH:LINE: reason" (not NAME=VALUE, an unknown name in lmkd's
 * namespaces, a name twice, a value too long, too many). */
int lmkprops_file_parse(struct lmkprops_file *f, const char *text, const char *path, struct config_error *err);
/* lmkprops_get_fn over a parsed file (ctx = the struct lmkprops_file). */
int lmkprops_file_get(void *ctx, const char *name, char *buf, size_t size);

/* lmkprops-source.c (I/O): c->lmkd_properties read and applied: the
 * property area (system) or the file. 0 or -errno with err set. */
int lmkprops_load(struct config *c, struct config_error *err);
/* Publishes sys.lmk.reportkills=1 in Android's property area: 0,
 * -ENOTSUP in a build without it, or -EIO. */
int lmkprops_publish_reportkills(void);
