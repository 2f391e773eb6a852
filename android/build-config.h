/* SPDX-License-Identifier: MIT */
/* android/build-config.h: what configure writes into build-config.h, for
 * the Soong build (Android.bp), which runs no configure: a current bionic
 * (<sys/pidfd.h>, the kernel headers' syscall numbers, the property area),
 * no libsystemd, and Android's paths. */
#pragma once

#define PACKAGE "psi-lmkd"
#define VERSION "0.1.0"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
/* as configure's AC_SYS_LARGEFILE: 64-bit off_t and ino_t on 32-bit ABIs
 * (armeabi-v7a), so that readdir() and stat() never fail with EOVERFLOW */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#define HAVE_ANDROID_PROPERTIES 1
#define HAVE_SYS_PIDFD_H 1
#define HAVE_DECL_SYS_PIDFD_OPEN 1
#define HAVE_DECL_SYS_PIDFD_SEND_SIGNAL 1
#define HAVE_DECL_SYS_PROCESS_MRELEASE 1
/* the default configuration and its vendor drop-ins; init/psi-lmkd.rc
 * names /system/etc/psi-lmkd-android.conf with -c */
#define SYSCONFDIR "/system/etc"
#define VENDOR_CONFDIR "/vendor/etc/psi-lmkd/conf.d"
