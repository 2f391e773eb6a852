#!/bin/sh
# SPDX-License-Identifier: MIT
# test-cross-armhf.sh - test-cross.sh for 32-bit ARM (arm-linux-gnueabihf,
# run under qemu-arm): 32-bit time_t, size_t and pointers, the stand-in for
# Android's armeabi-v7a. make check-pkg runs it beside the arm64 one.
PSI_LMKD_CROSS_HOST=arm-linux-gnueabihf
export PSI_LMKD_CROSS_HOST
exec "$(dirname "$0")/test-cross.sh" "$@"
