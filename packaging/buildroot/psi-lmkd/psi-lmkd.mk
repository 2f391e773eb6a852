# SPDX-License-Identifier: MIT
################################################################################
#
# psi-lmkd
#
################################################################################

# Set the version and site to where you get psi-lmkd from: a git commit or
# branch here; for a `make dist` tarball set PSI_LMKD_SOURCE and PSI_LMKD_SITE
# to it, drop SITE_METHOD and AUTORECONF (the tarball has its configure).
PSI_LMKD_VERSION = main
PSI_LMKD_SITE = https://github.com/psi-lmkd/psi-lmkd.git
PSI_LMKD_SITE_METHOD = git
PSI_LMKD_LICENSE = MIT
PSI_LMKD_LICENSE_FILES = LICENSE
PSI_LMKD_AUTORECONF = YES
PSI_LMKD_DEPENDENCIES = host-pkgconf inih libcap cunit
PSI_LMKD_CONF_OPTS = --with-openrcdir=no --with-androidrcdir=no

ifeq ($(BR2_PACKAGE_SYSTEMD),y)
PSI_LMKD_DEPENDENCIES += systemd
PSI_LMKD_CONF_OPTS += --with-systemd=yes --with-systemdsystemunitdir=/usr/lib/systemd/system
else
PSI_LMKD_CONF_OPTS += --with-systemd=no --with-systemdsystemunitdir=no
endif

# BusyBox init and SysV init: start it from S50psi-lmkd
define PSI_LMKD_INSTALL_INIT_SYSV
	printf '#!/bin/sh\ncase "$$1" in\nstart) /usr/sbin/psi-lmkd ;;\nstop) killall psi-lmkd ;;\nesac\n' \
		> $(TARGET_DIR)/etc/init.d/S50psi-lmkd
	chmod 0755 $(TARGET_DIR)/etc/init.d/S50psi-lmkd
endef

$(eval $(autotools-package))
