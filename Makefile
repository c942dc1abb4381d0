# rngfeed — plain GNU Makefile. Honours CC, CFLAGS, CPPFLAGS, LDFLAGS, PREFIX, DESTDIR.
# pkg-config results are expanded lazily (=, not :=) so that "make deps check" works on
# a machine where the libraries arrive only with the deps target.
VERSION     := 0.1.0
PREFIX      ?= /usr
SBINDIR     ?= $(PREFIX)/sbin
MANDIR      ?= $(PREFIX)/share/man
SYSCONFDIR  ?= /etc
# Where systemd wants units; /lib/systemd/system if systemd's .pc is absent.
SYSTEMDUNITDIR ?= $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
# The options file every init reads (RNGFEED_OPTIONS, RNGFEED_INITRAMFS):
# /etc/default/rngfeed on Debian, /etc/sysconfig/rngfeed in the RPM.
ENVFILE     ?= $(SYSCONFDIR)/default/rngfeed
# Where udev reads rules shipped with a package (the USB serial sticks' names).
UDEVRULESDIR ?= $(shell $(PKG_CONFIG) --variable=udevdir udev 2>/dev/null || echo /lib/udev)/rules.d

CC          ?= cc
PKG_CONFIG  ?= pkg-config
# make SYSTEMD=no: no libsystemd, for images without systemd (the notify
# protocol stays; no native journal, no socket activation: see
# docs/packaging.md).
SYSTEMD     ?= yes
ifeq ($(filter yes no,$(SYSTEMD)),)
$(error SYSTEMD must be yes or no, not '$(SYSTEMD)')
endif
PKGS        := libgcrypt libcap $(if $(filter yes,$(SYSTEMD)),libsystemd)
PKG_CFLAGS   = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
# PKCS#11's header only (libp11-kit-dev): the pkcs11 source dlopen()s the
# module it is given, and resolves a p11-kit module name itself.
P11_CFLAGS   = $(shell $(PKG_CONFIG) --cflags p11-kit-1 2>/dev/null)
P11_MODDIR   = $(shell $(PKG_CONFIG) --variable=p11_module_path p11-kit-1 2>/dev/null)
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
               -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral
# _FORTIFY_SOURCE at the level the packager's flags set (Fedora's and
# Ubuntu's 3), else 2: a second -D with another level is a redefinition,
# which -Werror makes an error (Ubuntu's CPPFLAGS, -D_FORTIFY_SOURCE=3).
FORTIFY     := $(if $(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),,-D_FORTIFY_SOURCE=2)
HARDEN      := -fstack-protector-strong -fPIE $(FORTIFY)
CFLAGS      ?= -O2 -g
override CFLAGS   += -std=gnu11 $(WARN) $(HARDEN) -pthread
# 32-bit targets (i386, armhf): 64-bit off_t, ino_t and time_t (readdir
# and stat fail with EOVERFLOW on 64-bit inode numbers; time_t past 2038).
override CPPFLAGS += -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64 -DRNGFEED_VERSION=\"$(VERSION)\" \
                     -DRNGFEED_SYSTEMD=$(if $(filter yes,$(SYSTEMD)),1,0) -Iinclude $(PKG_CFLAGS) \
                     $(P11_CFLAGS) $(if $(P11_MODDIR),-DRNGFEED_P11_MODULE_DIR=\"$(P11_MODDIR)\")
override LDFLAGS  += -pie -Wl,-z,relro -Wl,-z,now -pthread
# libdivsufsort: the suffix array behind the t-tuple and LRS estimates (issue 19).
LDLIBS       = $(PKG_LIBS) -ldivsufsort -lm

LIB_SRCS    := $(filter-out src/main.c,$(wildcard src/*.c src/sources/*.c))
LIB_OBJS    := $(LIB_SRCS:%.c=build/%.o)
LIB         := build/librngfeed.a
HEADERS     := $(wildcard include/rngfeed/*.h src/*.h)

UNIT_TESTS  := $(patsubst %.c,%,$(wildcard tests/check_*.c))
TEST_TOOLS  := $(if $(wildcard tests/cavp-ctr-drbg.c),tests/cavp-ctr-drbg)
TEST_HELPERS := $(patsubst %.c,%,$(wildcard tests/helper_*.c)) \
                $(if $(wildcard tests/fault_drivers.c),tests/rngfeed-faulty)
TEST_SCRIPTS := $(sort $(wildcard tests/test_*.sh))
BENCHES     := $(patsubst %.c,%,$(wildcard bench/bench_*.c))

.PHONY: all check check-programs clean deps test-deps run bench bench-smoke vm-test vm-test-smoke vm-test-systemd vm-test-stuck vm-test-bootcost vm-test-systemd-cases vm-test-arm64 install uninstall soak

all: rngfeed

rngfeed: build/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# "make V=1" shows the full commands.
Q := $(if $(V),,@)

# The objects of the two builds (SYSTEMD=yes, no) never mix: build/config
# names the one build/ holds, is rewritten only when that changes, and
# every object depends on it.
BUILD_CONFIG := build/config
$(BUILD_CONFIG): FORCE
	@mkdir -p $(dir $@)
	@# a temporary file of this shell's own: tests run make side by side
	@t=$@.$$$$; echo 'SYSTEMD=$(SYSTEMD)' >$$t; cmp -s $$t $@ && rm -f $$t || mv -f $$t $@

build/%.o: %.c $(HEADERS) $(BUILD_CONFIG)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

tests/check_%: tests/check_%.c $(LIB) $(HEADERS) $(wildcard tests/*.h)
	$(CC) $(CPPFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(CHECK_LIBS) $(LDLIBS)

tests/helper_%: tests/helper_%.c $(LIB) $(HEADERS) $(wildcard tests/*.h)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The daemon with a driver table that adds fault-injecting drivers (for the
# faults CPU instructions or devices cannot be made to show on demand).
tests/rngfeed-faulty: build/src/main.o tests/fault_drivers.c $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ build/src/main.o tests/fault_drivers.c $(LIB) $(LDLIBS)

tests/cavp-ctr-drbg: tests/cavp-ctr-drbg.c $(wildcard tests/cavp.c tests/cavp.h) $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(LIB) $(LDLIBS)

bench/bench_%: bench/bench_%.c bench/bench.h $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# "sudo make deps run" and "sudo make deps test-deps check" build as the
# user who ran sudo (when that user owns the tree), and only run as root:
# so no root-owned file is left in the user's tree.  Plain root, or a tree
# the user does not own: built as root, as before.
AS_USER := $(if $(and $(SUDO_USER),$(filter 0,$(shell id -u)),$(filter-out root,$(SUDO_USER)),\
             $(filter $(SUDO_UID),$(shell stat -c %u . 2>/dev/null))),runuser -u $(SUDO_USER) --)

# Every unit test program and integration script runs; tests/run-tests.sh
# prints each result and one closing "N passed, N failed, N skipped" line.
# make check TESTS=...: only these (everything is still built): .ci/run's smoke
# of the README's sudo form runs one.
TESTS = $(UNIT_TESTS) $(TEST_SCRIPTS)
# How many tests run at once (tests/run-tests.sh: never two that take the
# machine's hw_random hand-over).  The suite mostly waits on its daemons.
CHECK_JOBS ?= 3
check-programs: rngfeed $(UNIT_TESTS) $(TEST_TOOLS) $(TEST_HELPERS) bench/shim.so tests/fakep11.so

# A PKCS#11 module that tests/test_pkcs11.sh tells to fail (no CKF_RNG, a
# lost session, a C_GenerateRandom that hangs).
tests/fakep11.so: tests/fakep11.c
	$(CC) $(CPPFLAGS) -O2 -g $(WARN) -fPIC -shared -o $@ $<

# The programs are built one per CPU by a make of their own (GNU make 4.3
# takes no -j from a Makefile, and "make deps test-deps check" must not run
# its goals side by side); a caller's own -j (make -j2 check) is kept.
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_PAR   = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS))
check:
	$(AS_USER) $(MAKE) --no-print-directory $(BUILD_PAR) check-programs
	@RNGFEED=./rngfeed RUN_TESTS_JOBS=$(CHECK_JOBS) tests/run-tests.sh $(TESTS)

# make check-beside: the tests that take the machine's hw_random hand-over
# (a line "# run-tests: alone") beside another rngfeed that owns it, as
# where the package's service runs: tests/check-beside.sh starts one in
# directories of its own, runs them, stops it and checks it put
# rng_quality back.  BESIDE_TESTS=...: only these.
ALONE_SCRIPTS = $(shell for f in $(TEST_SCRIPTS); do head -n 5 $$f | grep -q '^\# run-tests: alone' && echo $$f; done)
.PHONY: check-beside
check-beside:
	$(AS_USER) $(MAKE) --no-print-directory $(BUILD_PAR) check-programs
	@RNGFEED=./rngfeed tests/check-beside.sh $(or $(BESIDE_TESTS),$(ALONE_SCRIPTS))

# Not in CI: SOAK_SECONDS (default 1800) on every source with signals.
soak: rngfeed
	RNGFEED=./rngfeed tests/soak.sh

# The LD_PRELOAD instrument both daemons are measured through (issue 9).
bench/shim.so: bench/shim.c
	$(CC) $(CPPFLAGS) -O2 -g $(WARN) -fPIC -shared -o $@ $< -ldl

# make liveness (issues 24, 33): the daemon in eight configurations (the
# kernel output, --stdout, the EGD server on a unix socket and over TCP,
# -t, stderr a pipe, detached with -D and -p, the hwrng source on a
# fixture hw_random directory); every distinct call site of a call that
# can wait that its main thread reaches meets a peer that never gets
# ready; peers stop for real (stdout, stderr, EGD clients, the PID file's
# keeper, syslog, the configuration file a FIFO, a stuck source); the
# errors each call can return, at each site; signals during start-up.
# SIGTERM must stop the daemon within 1 s every time.  tests/liveness/run.sh
# says how; about 4 minutes, LIVENESS_JOBS (3) cases at a time.  Ends with
# "liveness: N distinct sites blocked (...), M stopped within 1 s".  Needs
# root.  make liveness-regressions (not in CI, a build each): every
# regression in tests/liveness/regressions/ makes its part of it fail.
.PHONY: liveness liveness-regressions
build/liveness/interpose.so: tests/liveness/interpose.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -O2 -g $(WARN) -fPIC -shared -o $@ $< -ldl

build/liveness/supervisor: tests/liveness/supervisor.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -O2 -g $(WARN) -o $@ $<

liveness: rngfeed build/liveness/interpose.so build/liveness/supervisor tests/helper_egd_client
	RNGFEED=./rngfeed tests/liveness/run.sh

liveness-regressions: rngfeed build/liveness/interpose.so build/liveness/supervisor tests/helper_egd_client
	RNGFEED=./rngfeed tests/liveness/regressions.sh

# make bench: every stage against its ceiling and the daemon against its
# peers (installed with apt-get if missing), one Markdown table, also
# written to bench/results.md.  Not in CI: noisy and minutes long.
# make bench-smoke: the same scripts in a few seconds, no peers (CI).
# bench/assess.sh makes its data with two test helpers and bench/assess_data
# (real timing measurements, taken at run time).
BENCH_HELPERS := $(filter tests/helper_streams tests/helper_estimate_gen,$(TEST_HELPERS)) \
                 bench/assess_data

bench/assess_data: bench/assess_data.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

bench: rngfeed $(BENCHES) $(BENCH_HELPERS) $(if $(wildcard bench/shim.c),bench/shim.so)
	RNGFEED=./rngfeed bench/run.sh

bench-smoke: rngfeed $(BENCHES) $(BENCH_HELPERS) $(if $(wildcard bench/shim.c),bench/shim.so)
	RNGFEED=./rngfeed BENCH_SMOKE=1 bench/run.sh

# Whole-VM boots under QEMU (issue 10): the initramfs boot matrix, a short
# form of it for CI, and a real Debian 12 systemd boot (not in CI).
vm-test: rngfeed
	RNGFEED=./rngfeed tests/vm/boot-matrix.sh

vm-test-smoke: rngfeed
	RNGFEED=./rngfeed VM_SMOKE=1 tests/vm/boot-matrix.sh

vm-test-systemd: rngfeed
	RNGFEED=./rngfeed tests/vm/systemd-boot.sh

# Not in CI (minutes each): the kernel alone with a stuck virtio-rng, per kernel
# (issue 14); the unit's boot cost beside jitterentropy-rngd's, and the systemd
# boots with user = nobody, a source that only fails, a stuck virtio-rng (issue 15).
vm-test-stuck: rngfeed
	RNGFEED=./rngfeed tests/vm/stuck-virtio.sh

vm-test-bootcost:
	tests/vm/bootcost.sh

vm-test-systemd-cases:
	tests/vm/systemd-cases.sh

# Not in CI (about 5 minutes): the arm64 boot (issue 16), rngfeed cross-built from
# HEAD (VM_REV) or RNGFEED_ARM64, feeding the guest kernel from RNDRRS.
vm-test-arm64:
	tests/vm/arm64-boot.sh

# Issue 17: the EGD server behind QEMU's rng-egd and libvirt's egd backend
# (tests/vm/egd-boot.sh): one guest, eight at once, the server restarted
# mid-boot, rngfeed's virtio source in a guest, the egd source on the host.
# Not in CI (about 8 minutes on two loaded cores); the one-guest smoke is
# about 40 s of host time.
.PHONY: vm-test-egd vm-test-egd-smoke
vm-test-egd: rngfeed
	RNGFEED=./rngfeed tests/vm/egd-boot.sh

vm-test-egd-smoke: rngfeed
	RNGFEED=./rngfeed VM_SMOKE=1 tests/vm/egd-boot.sh

# tests/vm/hotplug-boot.sh: hw_random devices that arrive after rngfeed
# (healthy, stuck), a TPM beside a virtio-rng, PCI hot-unplug and hot-plug, strict mode
# (6.12) and the fill watermark (5.10), on Debian's 5.10, 6.1 and 6.12. Not in CI
# (see docs/early-boot-hotplug.md for how long); the smoke boots 6.12's stuck device.
.PHONY: vm-test-hotplug vm-test-hotplug-smoke
vm-test-hotplug: rngfeed
	RNGFEED=./rngfeed tests/vm/hotplug-boot.sh

vm-test-hotplug-smoke: rngfeed
	RNGFEED=./rngfeed VM_SMOKE=1 tests/vm/hotplug-boot.sh

# A USB serial TRNG stick plugged into a running guest (tests/vm/usb-boot.sh):
# QEMU's usb-serial on an xHCI bus, backed by tests/helper_ttyrng speaking
# the OneRNG protocol, plugged, unplugged and plugged back through the
# monitor, then a stuck one. Not in CI (a few minutes).
.PHONY: vm-test-usb
vm-test-usb: rngfeed tests/helper_ttyrng
	RNGFEED=./rngfeed tests/vm/usb-boot.sh

# Debian 12 packages, for a newcomer on a fresh machine: make deps what
# builds and runs rngfeed; make test-deps adds what make check and the
# gates (sanitize, analyze, valgrind, fuzz) use.
DEB_DEPS      := build-essential pkg-config libgcrypt20-dev libsystemd-dev \
                 libcap-dev libdivsufsort-dev libp11-kit-dev
DEB_TEST_DEPS := check rng-tools5 swtpm swtpm-tools softhsm2 strace procps \
                 man-db groff-base clang libclang-rt-14-dev valgrind cppcheck clang-tools-14
deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_DEPS)

test-deps: deps
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_TEST_DEPS)

# Foreground with readable logs, on every source available here.
run:
	$(AS_USER) $(MAKE) --no-print-directory $(BUILD_PAR) rngfeed
	./rngfeed -f -v

# The installed binary: the same objects, with config.c compiled for the
# configuration path under SYSCONFDIR (./rngfeed keeps /etc/rngfeed.conf,
# so a make install with other directories changes nothing the tests run).
# build/install/paths holds the directories it was built for: it is
# rewritten, and the binary relinked, only when they change.
INSTALL_BIN := build/install/rngfeed
build/install/paths: FORCE
	@mkdir -p $(dir $@)
	@t=$@.$$$$; echo 'SYSCONFDIR=$(SYSCONFDIR)' >$$t; cmp -s $$t $@ && rm -f $$t || mv -f $$t $@

# config.c and config_usage.c (--help) name the configuration path.
build/install/%.o: src/%.c build/install/paths $(HEADERS) $(BUILD_CONFIG)
	$(CC) $(CPPFLAGS) -DCONFIG_DEFAULT_PATH='"$(SYSCONFDIR)/rngfeed.conf"' $(CFLAGS) -c -o $@ $<

# Its config objects come first, so the library's copies are never pulled in.
$(INSTALL_BIN): build/install/config.o build/install/config_usage.o build/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: FORCE
FORCE:

# The unit names the binary and the configuration where they are installed.
install: $(INSTALL_BIN)
	install -D -m 0755 $(INSTALL_BIN) $(DESTDIR)$(SBINDIR)/rngfeed
	install -D -m 0644 man/rngfeed.8 $(DESTDIR)$(MANDIR)/man8/rngfeed.8
	install -D -m 0644 man/rngfeed.conf.5 $(DESTDIR)$(MANDIR)/man5/rngfeed.conf.5
	@# Written straight into DESTDIR: a file in the tree that two installs
	@# (tests side by side) wrote at once was once empty, a masked unit.
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed -e 's|/usr/sbin/rngfeed|$(SBINDIR)/rngfeed|g' \
	    -e 's|/etc/rngfeed\.conf|$(SYSCONFDIR)/rngfeed.conf|g' \
	    -e 's|/etc/default/rngfeed|$(ENVFILE)|g' \
	    systemd/rngfeed.service >$(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service
	install -D -m 0644 udev/60-rngfeed.rules $(DESTDIR)$(UDEVRULESDIR)/60-rngfeed.rules
	@# Never overwrite a configuration the administrator edited.
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/rngfeed.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/rngfeed.conf"; \
	else \
		install -D -m 0644 systemd/rngfeed.conf $(DESTDIR)$(SYSCONFDIR)/rngfeed.conf; \
	fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/rngfeed $(DESTDIR)$(MANDIR)/man8/rngfeed.8 \
	      $(DESTDIR)$(MANDIR)/man5/rngfeed.conf.5 \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service \
	      $(DESTDIR)$(UDEVRULESDIR)/60-rngfeed.rules

# ---- the initramfs: initramfs-tools hook and boot scripts, dracut module ----
# Installed always; they put rngfeed into the initramfs only when
# $(SYSCONFDIR)/default/rngfeed says RNGFEED_INITRAMFS=yes (shipped "no",
# kept when the administrator edited it), and read it there.  Where initramfs-tools and dracut look for
# them, whatever PREFIX is; the scripts name the binary at $(SBINDIR).
INITRAMFSTOOLSDIR ?= /usr/share/initramfs-tools
DRACUTMODULESDIR  ?= /usr/lib/dracut/modules.d
INITRAMFS_SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		      -e 's|@ENVFILE@|$(ENVFILE)|g'
install: install-initramfs
install-initramfs:
	install -d $(DESTDIR)$(INITRAMFSTOOLSDIR)/hooks \
		$(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-top \
		$(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-bottom \
		$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed
	$(INITRAMFS_SUBST) initramfs/initramfs-tools/hooks-rngfeed \
		>$(DESTDIR)$(INITRAMFSTOOLSDIR)/hooks/rngfeed
	$(INITRAMFS_SUBST) initramfs/initramfs-tools/scripts/init-top/rngfeed \
		>$(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-top/rngfeed
	$(INITRAMFS_SUBST) initramfs/initramfs-tools/scripts/init-bottom/rngfeed \
		>$(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-bottom/rngfeed
	$(INITRAMFS_SUBST) initramfs/initramfs-tools/scripts/init-top/rngfeed \
		>$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/initramfs-start
	$(INITRAMFS_SUBST) initramfs/initramfs-tools/scripts/init-bottom/rngfeed \
		>$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/initramfs-stop
	for f in module-setup.sh rngfeed-initrd.service rngfeed-start.sh rngfeed-stop.sh; do \
		$(INITRAMFS_SUBST) initramfs/dracut/90rngfeed/$$f \
			>$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/$$f || exit 1; \
	done
	chmod 0755 $(DESTDIR)$(INITRAMFSTOOLSDIR)/hooks/rngfeed \
		$(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-top/rngfeed \
		$(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-bottom/rngfeed \
		$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/*.sh \
		$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/initramfs-start \
		$(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/initramfs-stop
	chmod 0644 $(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed/rngfeed-initrd.service
	@if [ -e $(DESTDIR)$(ENVFILE) ]; then \
		echo "keeping $(DESTDIR)$(ENVFILE)"; \
	else \
		install -d $(dir $(DESTDIR)$(ENVFILE)) && \
		$(INITRAMFS_SUBST) initramfs/default >$(DESTDIR)$(ENVFILE) && \
		chmod 0644 $(DESTDIR)$(ENVFILE); \
	fi

uninstall: uninstall-initramfs
uninstall-initramfs:
	rm -f $(DESTDIR)$(INITRAMFSTOOLSDIR)/hooks/rngfeed \
	      $(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-top/rngfeed \
	      $(DESTDIR)$(INITRAMFSTOOLSDIR)/scripts/init-bottom/rngfeed
	rm -rf $(DESTDIR)$(DRACUTMODULESDIR)/90rngfeed

# Boots a real initramfs made by Debian's mkinitramfs with the hook, under
# QEMU (not in CI: about 10 minutes; tests/vm/initramfs-boot.sh).
vm-test-initramfs:
	tests/vm/initramfs-boot.sh

.PHONY: install-initramfs uninstall-initramfs vm-test-initramfs

# ---- init scripts and the AppArmor profile (none by default) ----
# INITSCRIPTS=sysvinit: init/sysvinit/rngfeed, the LSB script (options from
# $(ENVFILE)), as $(INITDDIR)/rngfeed; INITSCRIPTS=openrc:
# init/openrc/rngfeed, the openrc-run script, there instead, with
# $(SYSCONFDIR)/conf.d/rngfeed (kept when it exists).  APPARMOR=yes:
# apparmor/usr.sbin.rngfeed in $(APPARMORDIR), named after the binary's
# path, and apparmor/rngfeed.service.conf, the unit's drop-in that loads it
# before the first start.  Each names the binary at $(SBINDIR) and the files under
# $(SYSCONFDIR).  Enabling is the system's: update-rc.d rngfeed defaults,
# rc-update add rngfeed boot, apparmor_parser -r.
INITSCRIPTS ?= none
APPARMOR    ?= no
INITDDIR    ?= $(SYSCONFDIR)/init.d
APPARMORDIR ?= $(SYSCONFDIR)/apparmor.d
APPARMOR_PROFILE = $(subst /,.,$(patsubst /%,%,$(SBINDIR))).rngfeed
INIT_SUBST = sed -e 's|/usr/sbin/rngfeed|$(SBINDIR)/rngfeed|g' \
	-e 's|/etc/default/rngfeed|$(ENVFILE)|g' \
	-e 's|/etc/rngfeed\.conf|$(SYSCONFDIR)/rngfeed.conf|g' \
	-e 's|/etc/apparmor\.d/|$(APPARMORDIR)/|g' \
	-e 's|usr\.sbin\.rngfeed|$(APPARMOR_PROFILE)|g'

install: install-init install-apparmor
install-init:
ifeq ($(INITSCRIPTS),sysvinit)
	install -d $(DESTDIR)$(INITDDIR)
	$(INIT_SUBST) init/sysvinit/rngfeed >$(DESTDIR)$(INITDDIR)/rngfeed
	chmod 0755 $(DESTDIR)$(INITDDIR)/rngfeed
else ifeq ($(INITSCRIPTS),openrc)
	install -d $(DESTDIR)$(INITDDIR)
	$(INIT_SUBST) init/openrc/rngfeed >$(DESTDIR)$(INITDDIR)/rngfeed
	chmod 0755 $(DESTDIR)$(INITDDIR)/rngfeed
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/conf.d/rngfeed ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/conf.d/rngfeed"; \
	else \
		install -D -m 0644 init/openrc/rngfeed.confd $(DESTDIR)$(SYSCONFDIR)/conf.d/rngfeed; \
	fi
else ifneq ($(INITSCRIPTS),none)
	$(error INITSCRIPTS=$(INITSCRIPTS): say sysvinit, openrc or none)
endif

install-apparmor:
ifeq ($(APPARMOR),yes)
	install -d $(DESTDIR)$(APPARMORDIR)
	$(INIT_SUBST) apparmor/usr.sbin.rngfeed >$(DESTDIR)$(APPARMORDIR)/$(APPARMOR_PROFILE)
	chmod 0644 $(DESTDIR)$(APPARMORDIR)/$(APPARMOR_PROFILE)
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service.d
	$(INIT_SUBST) apparmor/rngfeed.service.conf >$(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service.d/apparmor.conf
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service.d/apparmor.conf
else ifneq ($(APPARMOR),no)
	$(error APPARMOR=$(APPARMOR): say yes or no)
endif

# The script and the profile are removed whatever was installed; the
# administrator's conf.d file stays, as /etc/rngfeed.conf does.
uninstall: uninstall-init
uninstall-init:
	rm -f $(DESTDIR)$(INITDDIR)/rngfeed $(DESTDIR)$(APPARMORDIR)/$(APPARMOR_PROFILE) \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service.d/apparmor.conf
	-rmdir $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service.d 2>/dev/null

# Whole-VM boots of Debian 12 with sysvinit, OpenRC, and systemd with the
# AppArmor profile enforcing (tests/vm/init-boot.sh; not in CI, 20 minutes
# or more on a loaded machine).
vm-test-init:
	tests/vm/init-boot.sh

.PHONY: install-init install-apparmor uninstall-init vm-test-init

# ---- the RPM (rpm/rngfeed.spec) ----
# make rpm: the source and binary RPMs from the working tree, built with
# rpmbuild in build/rpm (Debian: apt-get install rpm rpmlint; the spec's
# BuildRequires are Fedora's names, so rpmbuild runs with --nodeps), the
# unit tests in its %check, then rpmlint on the spec and both packages
# (rpm/rpmlint.toml) and tests/test_rpm.sh on them.  rpm/make-rpm.sh says
# how; docs/packaging.md why.  RPM_OPTS: more rpmbuild options (.ci/run:
# --without check, its unit tests having run in the suite already).
.PHONY: rpm
rpm:
	rpm/make-rpm.sh build/rpm $(RPM_OPTS)
	RPM_TOPDIR=$(CURDIR)/build/rpm bash tests/test_rpm.sh

# ---- sanitize, valgrind, analyze ----
# make sanitize: all of "make check" (unit tests and integration scripts;
# ./rngfeed and the test programs are the sanitized ones) built with
# AddressSanitizer and UBSan.  It builds in build/sanitize/tree, a copy of
# the working tree without build/ and .git: sanitized objects never meet the
# normal ones, the tree's own build is neither cleaned nor rebuilt (so
# "make check" after it relinks nothing), and a failed run is left to look
# into.  Every sanitizer report also goes to build/sanitize/reports/
# (log_path): a report from a process whose exit status a script ignores
# still fails the target.
# LeakSanitizer checks at exit by stopping the process with ptrace.  The
# daemon's privilege drop does not prevent that (setresuid sets all three
# uids alike, and LSan makes the process dumpable for the check); a process
# strace already traces does, so test_daemon.sh turns leak checks off for
# its strace runs only.  ASan makes mlock() a no-op, so test_security.sh
# skips its locked-memory part when RNGFEED_SANITIZED is set.  The scripts'
# time bounds stretch by TEST_TIME_SCALE=2 (ASan's 2-3x cost on a loaded
# machine), as make valgrind's and make tsan's do by 4.
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer -O1 -g
SAN_DIR     := build/sanitize
SAN_REPORTS := $(CURDIR)/$(SAN_DIR)/reports
SAN_ENV     := ASAN_OPTIONS=log_path=$(SAN_REPORTS)/asan:detect_stack_use_after_return=1:strict_string_checks=1 \
               UBSAN_OPTIONS=log_path=$(SAN_REPORTS)/ubsan:print_stacktrace=1 \
               RNGFEED_SANITIZED=1 TEST_TIME_SCALE=2

# make valgrind: the normal build under valgrind's memcheck.  The unit tests
# with CK_FORK=no (so the checks run in the process valgrind watches) and
# RNGFEED_VALGRIND=1 (a check that times code skips, with the reason), and
# the scripts that drive the daemon, with RNGFEED=tests/valgrind-rngfeed.
# TEST_TIME_SCALE stretches the scripts' waits.  Left out: test_faults.sh
# (35 daemons at once on second-scale deadlines, and it asserts each uses
# under 10 % CPU, which memcheck's 20-50x cost breaks by design),
# test_security.sh (it inspects the process's descriptors and locked
# memory, which valgrind's own add to), and the scripts that do not run the
# daemon beyond printing text (cavp, install, man, fuzz regressions: the
# DRBG and parsers they use are in the unit tests).
# --child-silent-after-fork: a unit test's fork()ed helpers (system()'s
# shell before its exec, a child killed to simulate a crash) end without a
# summary of their own; the test process is the one checked.
VG          := valgrind --error-exitcode=1 --leak-check=full \
               --child-silent-after-fork=yes \
               --suppressions=$(CURDIR)/tests/valgrind.supp
VG_DIR      := build/valgrind
# Two at a time: memcheck keeps one core busy per process; two cores here.
VG_JOBS     ?= 2
VG_SCRIPTS  := $(filter $(addprefix tests/,test_daemon.sh test_service.sh \
                 test_sources.sh test_tpm.sh test_virtio.sh test_vmgenid.sh \
                 test_check_vs_rngtest.sh),$(TEST_SCRIPTS))

# make analyze: cppcheck and the clang static analyzer, zero findings.
# cppcheck sees the x86-64 Linux GCC build (without the defines it skips the
# code under #if __x86_64__ and reports what only that code uses as unused).
# The tests are checked for warnings and portability, not style.
# Suppressions, each with its reason:
#   readdirCalled: cppcheck recommends readdir_r, which glibc deprecates;
#     readdir is safe on a DIR that one thread uses.
#   varFuncNullUB in check_config.c: its argument lists end with NULL, which
#     glibc defines as ((void *)0), a pointer that va_arg may read as a
#     const char * (C11 7.16.1.1).
#   In the code: // cppcheck-suppress comments, each with its reason.
# scan-build builds a copy of the tree (build/analyze/tree) like sanitize.
# Only the project's own files: src/, include/ and the C files of tests/
# named here, never what the VM tests (tests/vm/work/, a copy of the tree),
# builds or caches leave in the checkout.  A file clang cannot compile is
# not analysed (scan-build prints "1 error generated", the build goes on
# with the compiler and exits 0): any such failure report fails the target.
ANALYZE_TEST_SRCS := $(wildcard tests/*.c tests/*.h tests/fuzz/*.c tests/fuzz/*.h \
                       tests/liveness/*.c tests/vm/*.c)
CPPCHECK    := cppcheck --error-exitcode=1 --inline-suppr -q \
               --platform=unix64 --library=posix -D_GNU_SOURCE -D__GNUC__=12 \
               -D__x86_64__ -D__linux__ -Iinclude -Itests
SCAN_BUILD  ?= $(firstword $(shell command -v scan-build scan-build-14 2>/dev/null) scan-build)

.PHONY: sanitize valgrind analyze tsan

# make tsan: ThreadSanitizer over the tests that start reader threads
# (issue 15 defect 7): the reader unit test (request, take, discard, stop,
# errors, end of input, over test-double drivers), and the daemon with two
# readers (rdrand and a regular file) through SIGTERM at random moments,
# SIGUSR2 and vmgenid discards and SIGHUP reloads (test_sigterm.sh, a short
# run with its stop limit stretched), the read-once file source and the
# vmgenid test.  It builds in build/tsan/tree, a copy of the tree like
# sanitize's, so its objects never meet the normal ones.  halt_on_error
# makes the first report end the process, and every report also goes to
# build/tsan/reports/: any report fails the target, even from a process
# whose exit status a script ignores.
TSAN_FLAGS   := -fsanitize=thread -fno-omit-frame-pointer -O1 -g
# monitor.c and monitor_scan.c are built without TSan: GCC instruments the
# resolvers of their target_clones functions, which the dynamic loader runs
# before TSan is set up (a crash at start).  The monitor is pure code on one
# reader's state.
build/src/monitor.o build/src/monitor_scan.o: override CFLAGS += $(MONITOR_EXTRA_CFLAGS)
TSAN_DIR     := build/tsan
TSAN_REPORTS := $(CURDIR)/$(TSAN_DIR)/reports
TSAN_UNITS   := tests/check_reader
TSAN_SCRIPTS := $(filter $(addprefix tests/,test_file_once.sh test_vmgenid.sh \
                  test_sigterm.sh),$(TEST_SCRIPTS))
TSAN_ENV     := TSAN_OPTIONS=halt_on_error=1:log_path=$(TSAN_REPORTS)/tsan:second_deadlock_stack=1 \
                RNGFEED_SANITIZED=1 TEST_TIME_SCALE=4 SIGTERM_ROUNDS=2 SIGTERM_WORKERS=2

tsan:
	@$(call copy_tree,$(TSAN_DIR)/tree)
	@rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	@rc=0; $(MAKE) -s -j2 -C $(TSAN_DIR)/tree rngfeed $(TSAN_UNITS) tests/helper_uevent \
		CFLAGS='$(TSAN_FLAGS)' LDFLAGS='-fsanitize=thread' \
		MONITOR_EXTRA_CFLAGS=-fno-sanitize=thread || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
		cd $(TSAN_DIR)/tree && $(TSAN_ENV) RNGFEED=./rngfeed \
			tests/run-tests.sh $(TSAN_UNITS) $(TSAN_SCRIPTS) || rc=$$?; cd $(CURDIR); \
	fi; \
	for f in $(TSAN_REPORTS)/*; do \
		[ -e "$$f" ] || continue; rc=1; echo "==== $$f"; cat "$$f"; \
	done; \
	[ $$rc -eq 0 ] && echo "tsan: no ThreadSanitizer reports" || echo "tsan: FAILED"; \
	exit $$rc


# A copy of the working tree, without build/ and .git, built from clean.
# Not what the VM tests (tests/vm/work: a copy of the tree, 1.7 GB),
# make bench and make cross-check leave in the checkout.
copy_tree = rm -rf $(1) && mkdir -p $(1) && \
	tar -c --exclude=./build --exclude=./.git --exclude=./.cache \
		--exclude=./tests/vm/work --exclude=./tests/vm/cache --exclude=./bench/work . | \
		tar -x -C $(1) && \
	$(MAKE) -s -C $(1) clean

sanitize:
	@$(call copy_tree,$(SAN_DIR)/tree)
	@mkdir -p $(SAN_REPORTS)
	@rc=0; $(SAN_ENV) $(MAKE) -j2 -C $(SAN_DIR)/tree check \
		CFLAGS='$(SAN_FLAGS)' LDFLAGS='-fsanitize=address,undefined' || rc=$$?; \
	for f in $(SAN_REPORTS)/*; do \
		[ -e "$$f" ] || continue; rc=1; echo "==== $$f"; cat "$$f"; \
	done; \
	[ $$rc -eq 0 ] && echo "sanitize: no sanitizer reports" || echo "sanitize: FAILED"; \
	exit $$rc

valgrind: rngfeed $(UNIT_TESTS) $(TEST_TOOLS) $(TEST_HELPERS)
	@rm -rf $(VG_DIR) && mkdir -p $(VG_DIR)
	@rc=0; printf '%s\n' $(UNIT_TESTS) | xargs -P $(VG_JOBS) -n 1 sh -c ' \
		n=$${1##*/}; t0=$$(date +%s); \
		CK_FORK=no RNGFEED_VALGRIND=1 $(VG) --log-file=$(VG_DIR)/$$n.%p.log ./$$1 >$(VG_DIR)/$$n.out 2>&1; r=$$?; \
		printf "%-44s %s (%d s)\n" "$$1" "$$(grep -E "^[0-9]+%: Checks" $(VG_DIR)/$$n.out || echo "no Check summary")" $$(($$(date +%s) - t0)); \
		exit $$r' sh || rc=1; \
	RNGFEED=tests/valgrind-rngfeed RNGFEED_VG_LOGS=$(CURDIR)/$(VG_DIR) RUN_TESTS_JOBS=$(VG_JOBS) \
		TEST_TIME_SCALE=4 tests/run-tests.sh $(VG_SCRIPTS) || rc=1; \
	for f in $(VG_DIR)/*.log; do \
		grep -q 'ERROR SUMMARY: 0 errors' "$$f" && continue; \
		rc=1; echo "==== $$f"; cat "$$f"; \
	done; \
	for f in $(VG_DIR)/*.log; do \
		grep -q 'ERROR SUMMARY: 0 errors' "$$f" && continue; \
		echo "valgrind: the first error in $$f:"; grep -m1 'Command:' "$$f"; \
		awk '/== (Invalid|Conditional|Use of|Syscall|Mismatched|Source and|Argument|Process terminating)|bytes in [0-9,]+ blocks are (definitely|possibly)/ { on = 1 } \
			on && n++ < 16' "$$f"; \
	done; \
	[ $$rc -eq 0 ] && echo "valgrind: no errors, no leaks" || echo "valgrind: FAILED"; \
	exit $$rc

analyze:
	$(CPPCHECK) --enable=warning,style,performance,portability src include
	$(CPPCHECK) --enable=warning,performance,portability \
		--suppress=readdirCalled --suppress=varFuncNullUB:tests/check_config.c $(ANALYZE_TEST_SRCS)
	@$(call copy_tree,build/analyze/tree)
	@rm -rf build/analyze/reports
	$(SCAN_BUILD) --status-bugs -o $(CURDIR)/build/analyze/reports \
		$(MAKE) -s -j2 -C build/analyze/tree rngfeed $(UNIT_TESTS) $(TEST_TOOLS) $(TEST_HELPERS)
	@rc=0; for f in $$(find build/analyze/reports -path '*/failures/*.info.txt' \
			! -name 'clang_attribute_ignored*' 2>/dev/null); do \
		rc=1; echo "analyze: clang could not analyse $$(sed -n 1p "$$f" | sed 's|.*/build/analyze/tree/||') ($$(sed -n 2p "$$f")):"; \
		sed 's/^/    /' "$${f%.info.txt}.stderr.txt" 2>/dev/null | head -n 20; \
	done; exit $$rc

clean:
	rm -rf build rngfeed $(UNIT_TESTS) $(TEST_HELPERS) tests/rngfeed-faulty tests/cavp-ctr-drbg $(BENCHES) bench/shim.so bench/assess_data tests/fakep11.so bench/work

# ---- fuzzing (make fuzz, make fuzz-short) ----
# libFuzzer harnesses in tests/fuzz/ for every parser of outside input.
# Needs clang and its runtime (Debian 12: clang, libclang-rt-14-dev).  Each
# harness and the sources it covers are compiled with the sanitizers and
# fuzzer instrumentation into build/fuzz/; "make fuzz" runs each for
# FUZZ_TIME seconds (default 60), "make fuzz-short" for 10 (CI), both on a
# temporary copy of tests/fuzz/corpus/NAME so nothing in the tree changes,
# and fail on any crash, leak, timeout or failed invariant; the input that
# did it is kept in build/fuzz/artifacts/NAME/.  The same harnesses, built
# normally as replay programs, run the saved corpus (with every regression
# input) in "make check" (tests/test_fuzz_regressions.sh).
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1
FUZZ_CFLAGS  := -std=gnu11 $(WARN) -pthread $(FUZZ_SAN)
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_NAMES:%=build/fuzz/fuzz_%)
FUZZ_REPLAYS := $(FUZZ_NAMES:%=build/fuzz/replay/fuzz_%)
FUZZ_HDRS    := $(HEADERS) $(wildcard tests/fuzz/*.h) tests/cavp.h
# What each harness parses, and what that code links against.
FUZZ_SOURCES_LIB := src/source.c src/privs.c src/util.c src/drivers.c src/cpu_rng.c \
                    src/hwrandom.c src/tpm2.c src/egd_proto.c src/file_ledger.c src/drbg.c \
                    src/serial_tty.c src/serial_profile.c src/pkcs11_token.c \
                    src/sysfs_io.c src/metrics.c \
                    $(wildcard src/sources/*.c)
FUZZ_SRCS_config  := src/config.c src/conffile.c $(FUZZ_SOURCES_LIB)
FUZZ_SRCS_options := src/config.c src/conffile.c $(FUZZ_SOURCES_LIB)
FUZZ_SRCS_tpm2    := src/tpm2.c
FUZZ_SRCS_sysfs   := src/hwrandom.c src/sysfs_io.c src/util.c
FUZZ_SRCS_egd     := src/egd_proto.c src/util.c
FUZZ_SRCS_cavp    := tests/cavp.c
FUZZ_EXTRA_replay_cavp := tests/cavp.c
# See fuzz_cavp.c: one reused line buffer instead of an mmap per run.
FUZZ_LINK_cavp    := -DFUZZ_WRAP_MALLOC -Wl,--wrap=malloc -Wl,--wrap=free
fuzz_objs = $(patsubst %.c,build/fuzz/obj/%.o,$(FUZZ_SRCS_$(1)))
# Kept between runs (make would delete them as intermediates).
.SECONDARY: $(sort $(foreach n,$(FUZZ_NAMES),$(call fuzz_objs,$(n))))

.PHONY: fuzz fuzz-short fuzz-build

build/fuzz/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

.SECONDEXPANSION:
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(call fuzz_objs,$$*) $(FUZZ_HDRS)
	$(if $(Q),@echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_LINK_$*) \
		-o $@ $< $(call fuzz_objs,$*) -lm -lgcrypt -lcap

# Replay programs: the harness and tests/fuzz/replay.c, ordinary build.
build/fuzz/replay/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $$(FUZZ_EXTRA_replay_$$*) $(LIB) $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(LIB) $(LDLIBS)

check-programs: $(FUZZ_REPLAYS)

fuzz-build: $(FUZZ_BINS)

fuzz: FUZZ_SECONDS = $(or $(FUZZ_TIME),60)
fuzz-short: FUZZ_SECONDS = $(or $(FUZZ_TIME),10)
# FUZZ_JOBS harnesses at a time (default: one per CPU), each report printed
# whole once all have run.
FUZZ_JOBS ?= $(BUILD_JOBS)
fuzz fuzz-short:
	@$(MAKE) --no-print-directory $(BUILD_PAR) fuzz-build
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	printf '%s\n' $(FUZZ_NAMES) | xargs -P $(FUZZ_JOBS) -I{} sh -c ' \
		h=$$1 d=$$2/$$1; mkdir -p "$$d/corpus" "$$d/artifacts"; \
		cp tests/fuzz/corpus/$$h/* "$$d/corpus/"; \
		build/fuzz/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-print_final_stats=1 -artifact_prefix="$$d/artifacts/" \
			"$$d/corpus" >"$$d/log" 2>&1 || touch "$$d/failed"' sh {} "$$tmp"; \
	rc=0; for h in $(FUZZ_NAMES); do \
		echo "== fuzz_$$h, $(FUZZ_SECONDS) s"; \
		if [ -e "$$tmp/$$h/failed" ]; then \
			tail -n 60 "$$tmp/$$h/log"; \
			mkdir -p build/fuzz/artifacts/$$h; \
			cp "$$tmp/$$h"/artifacts/* build/fuzz/artifacts/$$h/ 2>/dev/null || true; \
			echo "fuzz_$$h FAILED; input(s) in build/fuzz/artifacts/$$h/"; \
			rc=1; continue; \
		fi; \
		grep -E '^#[0-9]+[[:space:]]+DONE' "$$tmp/$$h/log" || tail -n 3 "$$tmp/$$h/log"; \
		grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$$tmp/$$h/log" | tr '\n' ' '; echo; \
	done; exit $$rc

# ---- other architectures under qemu-user (issue 16) ----
# make cross-check ARCH=arm64 (s390x, i386, armhf, ppc64el): rngfeed and
# its tests built for ARCH and run under qemu-user in a Debian 12 root of
# ARCH in CROSS_CACHE (git-ignored), made on first use; then
# tests/cross/proofs.sh (--list per CPU model, --raw through rngtest).
# Needs root and: apt-get install qemu-user-static binfmt-support
# mmdebstrap arch-test gcc-aarch64-linux-gnu (or the ARCH's cross gcc).
# CROSS_BUILD=host (default): the host's cross gcc with the root as
#   --sysroot, a root unpacked without emulation (mmdebstrap extract).
# CROSS_BUILD=chroot: gcc inside a full chroot (mmdebstrap buildd: every
#   maintainer script and the compiler under emulation).  Same tests.
# Host is the default because it is what fits CI: measured on this 2-core
# machine shared with other jobs (load 13-20), arm64: root 133 s (26 s of
# CPU) against 1664 s for the full chroot, build 184 s against 464 s.
# The binary is left in build/cross/ARCH/rngfeed.
# make cross-deb ARCH=arm64: dpkg-buildpackage -b in the full chroot, lintian
# on the host.
ARCH         ?= arm64
CROSS_ARCHES := arm64 s390x i386 armhf ppc64el
CROSS_CACHE  ?= $(CURDIR)/.cache/cross
CROSS_BUILD  ?= host
# make test-deps's list less the compiler and the native gates' tools.
CROSS_DEPS   := $(filter-out build-essential pkg-config swtpm swtpm-tools softhsm2 strace \
                  man-db groff-base clang libclang-rt-14-dev valgrind cppcheck \
                  clang-tools-14,$(DEB_DEPS) $(DEB_TEST_DEPS))
CROSS_UNITS  := $(UNIT_TESTS)
# The scripts that need neither a kernel device nor RNDADDENTROPY (qemu-user
# does not emulate it: "Function not implemented"), swtpm or strace; the
# rest of make check is about this machine's kernel and devices.
CROSS_SCRIPTS := $(filter $(addprefix tests/,test_cavp.sh test_check_vs_rngtest.sh \
                  test_fuzz_regressions.sh test_list.sh test_messages.sh \
                  test_misuse.sh),$(TEST_SCRIPTS))

.PHONY: cross-check cross-check-all cross-programs cross-deb cross-roots

# What the tests run: built by cross-check (through CROSS_PROGRAMS).
cross-programs: rngfeed $(UNIT_TESTS) $(TEST_TOOLS) $(TEST_HELPERS) $(FUZZ_REPLAYS)

# Passes with a line "cross-check ARCH: SKIP: reason" where the Debian
# archive stayed unreachable (tests/cross/archive-retry.sh).
cross-check:
	CROSS_FROM='$(CROSS_FROM)' \
	CROSS_CACHE='$(CROSS_CACHE)' CROSS_BUILD='$(CROSS_BUILD)' \
	CROSS_DEPS='$(CROSS_DEPS)' CROSS_UNITS='$(CROSS_UNITS)' \
	CROSS_SCRIPTS='$(CROSS_SCRIPTS)' tests/cross/cross-check.sh $(ARCH) || [ $$? -eq 77 ]

# The root of ARCH alone (.ci/run makes them while the native stages run).
cross-roots:
	tests/cross/mkchroot.sh $(if $(filter chroot,$(CROSS_BUILD)),buildd,sysroot) $(ARCH) \
		$(CROSS_CACHE)/$(ARCH)$(if $(filter chroot,$(CROSS_BUILD)),-buildd) $(CROSS_DEPS)

cross-check-all:
	@rc=0; for a in $(CROSS_ARCHES); do $(MAKE) -s cross-check ARCH=$$a || rc=1; done; exit $$rc

cross-deb:
	CROSS_FROM='$(CROSS_FROM)' CROSS_CACHE='$(CROSS_CACHE)' CROSS_DEPS='$(CROSS_DEPS)' \
		tests/cross/cross-deb.sh $(ARCH)
