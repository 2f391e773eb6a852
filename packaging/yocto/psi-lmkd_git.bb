# SPDX-License-Identifier: MIT
# psi-lmkd for Yocto / OpenEmbedded: copy this file into a layer of yours
# (e.g. meta-local/recipes-support/psi-lmkd/) and set SRC_URI to where you
# get psi-lmkd from. Needs meta-oe for libinih and cunit (cunit: configure
# requires it; the image gets no test).
SUMMARY = "Low-memory killer driven by pressure stall information (PSI)"
HOMEPAGE = "https://github.com/psi-lmkd/psi-lmkd"
SECTION = "admin"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE;md5=dfe5255979f8e591a61265a3db8751a9"

SRC_URI = "git://github.com/psi-lmkd/psi-lmkd.git;protocol=https;branch=main"
SRCREV = "${AUTOREV}"
PV = "0.1.0+git${SRCPV}"
S = "${WORKDIR}/git"

DEPENDS = "libinih libcap cunit"

inherit autotools pkgconfig systemd

PACKAGECONFIG ??= "${@bb.utils.filter('DISTRO_FEATURES', 'systemd', d)}"
PACKAGECONFIG[systemd] = "--with-systemd=yes --with-systemdsystemunitdir=${systemd_system_unitdir}, \
                          --with-systemd=no --with-systemdsystemunitdir=no, systemd"

EXTRA_OECONF = "--with-openrcdir=no --with-androidrcdir=no"

SYSTEMD_SERVICE:${PN} = "psi-lmkd.service"
SYSTEMD_AUTO_ENABLE:${PN} = "enable"
CONFFILES:${PN} = "${sysconfdir}/psi-lmkd.conf"
