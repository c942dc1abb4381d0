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

CC          ?= cc
PKG_CONFIG  ?= pkg-config
PKGS        := libgcrypt libsystemd libcap
PKG_CFLAGS   = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
               -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral
HARDEN      := -fstack-protector-strong -fPIE -D_FORTIFY_SOURCE=2
CFLAGS      ?= -O2 -g
override CFLAGS   += -std=gnu11 $(WARN) $(HARDEN) -pthread
override CPPFLAGS += -D_GNU_SOURCE -DRNGFEED_VERSION=\"$(VERSION)\" -Iinclude $(PKG_CFLAGS)
override LDFLAGS  += -pie -Wl,-z,relro -Wl,-z,now -pthread
LDLIBS       = $(PKG_LIBS) -lm

LIB_SRCS    := $(filter-out src/main.c,$(wildcard src/*.c src/sources/*.c))
LIB_OBJS    := $(LIB_SRCS:%.c=build/%.o)
LIB         := build/librngfeed.a
HEADERS     := $(wildcard include/rngfeed/*.h)

UNIT_TESTS  := $(patsubst %.c,%,$(wildcard tests/check_*.c))
TEST_TOOLS  := $(if $(wildcard tests/cavp-ctr-drbg.c),tests/cavp-ctr-drbg)
TEST_HELPERS := $(patsubst %.c,%,$(wildcard tests/helper_*.c)) \
                $(if $(wildcard tests/fault_drivers.c),tests/rngfeed-faulty)
TEST_SCRIPTS := $(sort $(wildcard tests/test_*.sh))
BENCHES     := $(patsubst %.c,%,$(wildcard bench/bench_*.c))

.PHONY: all check clean deps run bench install uninstall

all: rngfeed

rngfeed: build/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# "make V=1" shows the full commands.
Q := $(if $(V),,@)

build/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

tests/check_%: tests/check_%.c $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(CHECK_LIBS) $(LDLIBS)

tests/helper_%: tests/helper_%.c $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The daemon with a driver table that adds fault-injecting drivers (for the
# faults CPU instructions or devices cannot be made to show on demand).
tests/rngfeed-faulty: build/src/main.o tests/fault_drivers.c $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ build/src/main.o tests/fault_drivers.c $(LIB) $(LDLIBS)

tests/cavp-ctr-drbg: tests/cavp-ctr-drbg.c $(wildcard tests/cavp.c tests/cavp.h) $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(LIB) $(LDLIBS)

bench/bench_%: bench/bench_%.c $(LIB) $(HEADERS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Every unit test program and integration script runs; tests/run-tests.sh
# prints each result and one closing "N passed, N failed, N skipped" line.
check: rngfeed $(UNIT_TESTS) $(TEST_TOOLS) $(TEST_HELPERS)
	@RNGFEED=./rngfeed tests/run-tests.sh $(UNIT_TESTS) $(TEST_SCRIPTS)

bench: rngfeed $(BENCHES)
	@set -e; for b in $(BENCHES); do echo "== $$b"; $$b; done

# Debian 12 build and test dependencies, for a newcomer on a fresh machine.
DEB_DEPS := build-essential pkg-config libgcrypt20-dev libsystemd-dev \
            libcap-dev check rng-tools5 swtpm swtpm-tools strace
deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_DEPS)

# Foreground with readable logs, on every source available here.
run: rngfeed
	./rngfeed -f -v

install: rngfeed
	install -D -m 0755 rngfeed $(DESTDIR)$(SBINDIR)/rngfeed
	install -D -m 0644 man/rngfeed.8 $(DESTDIR)$(MANDIR)/man8/rngfeed.8
	install -D -m 0644 man/rngfeed.conf.5 $(DESTDIR)$(MANDIR)/man5/rngfeed.conf.5
	install -D -m 0644 systemd/rngfeed.service $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service
	@# Never overwrite a configuration the administrator edited.
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/rngfeed.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/rngfeed.conf"; \
	else \
		install -D -m 0644 systemd/rngfeed.conf $(DESTDIR)$(SYSCONFDIR)/rngfeed.conf; \
	fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/rngfeed $(DESTDIR)$(MANDIR)/man8/rngfeed.8 \
	      $(DESTDIR)$(MANDIR)/man5/rngfeed.conf.5 \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/rngfeed.service

clean:
	rm -rf build rngfeed $(UNIT_TESTS) $(TEST_HELPERS) tests/rngfeed-faulty tests/cavp-ctr-drbg $(BENCHES)
