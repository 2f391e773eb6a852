/* SPDX-License-Identifier: MIT */
/* A stand-in for bionic's <sys/system_properties.h> on glibc: the two calls
 * and the one constant psi-lmkd uses, declared as bionic documents them, so
 * that tests/test-android.sh can compile the --with-android-properties code
 * (HAVE_ANDROID_PROPERTIES) here. Nothing defines the functions: the check
 * compiles, it does not link. */
#pragma once

#define PROP_VALUE_MAX 92

int __system_property_get(const char *name, char *value);
int __system_property_set(const char *name, const char *value);
