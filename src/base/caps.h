/* SPDX-License-Identifier: MIT */
/* caps: what the daemon may do, read and reduced through libcap. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/capability.h>

/* The capabilities psi-lmkd keeps, each only if it was permitted at start
 * (caps.c says what each one is for). */
extern const cap_value_t caps_needed[];
extern const size_t caps_n_needed;

/* true if cap is in the process's effective set (false if the set cannot be read) */
bool caps_have(cap_value_t cap);
/* 1 if cap is in the process's effective set, 0 if not, or -errno if the set
 * cannot be read (-ENOMEM: libcap ran out of memory). */
int caps_query(cap_value_t cap);
/* The same for the permitted set. */
int caps_query_permitted(cap_value_t cap);

/* Reduces the process to caps_needed ∩ permitted: those become the effective
 * and permitted sets, the inheritable and ambient sets are cleared, the
 * bounding set is cut down to the same (needs CAP_SETPCAP), no_new_privs is
 * set and, with CAP_SETPCAP, the securebits are locked so that neither an
 * uid change nor the ambient set can bring capabilities back. A capability
 * that was not permitted is silently not kept; a bounding set or securebits
 * that cannot be changed only adds a warning to err ("" when there is none).
 * Returns 0, or -errno if the capability sets themselves could not be set. */
int caps_drop_to_needed(char *err, size_t len);

/* As caps_drop_to_needed(), keeping also up to CAPS_EXTRA_MAX more
 * capabilities (if permitted) in the permitted set only, never effective:
 * e.g. CAP_SETUID and CAP_SETGID, which only the on_kill hook's child raises,
 * just before it switches users. -EINVAL if n_extra is too large. */
#define CAPS_EXTRA_MAX 8
int caps_drop_keep(const cap_value_t *extra, size_t n_extra, char *err, size_t len);

/* Removes caps from the effective and permitted sets for good (a reload
 * that no longer needs them). Returns 0 or -errno. */
int caps_drop_permitted(const cap_value_t *caps, size_t n);

/* Writes the effective set as "cap_kill,cap_ipc_lock,..." ("none" if empty).
 * Returns 0, -ENOSPC if buf was too small (the text is cut), or -errno. */
int caps_describe(char *buf, size_t len);
