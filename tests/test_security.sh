#!/bin/bash
# Security properties of a running daemon: only the file descriptors it
# needs, the DRBG state in locked memory, not dumpable unless asked, and
# no other capability than CAP_SYS_ADMIN (see also test_service.sh).
set -u
RNGFEED=${RNGFEED:-./rngfeed}
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
	{ echo "SKIP: root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"; exit 77; }
"$RNGFEED" --list | grep -q '^rdrand *available' ||
	{ echo "SKIP: needs the rdrand source"; exit 77; }

tmp=$(mktemp -d) || exit 1
. tests/lib_pids.sh
pid=
trap '[ "$BASHPID" != $$ ] || { kill_ours "$pid"; rm -rf "$tmp"; }' EXIT
chmod 0755 "$tmp"

start() { # ARGS... → $pid, waits until it has fed
	# Started with nothing open but stdio, so what is open later is
	# the daemon's own doing.
	(
		for f in /proc/$BASHPID/fd/*; do
			n=${f##*/}
			[ "$n" -gt 2 ] && eval "exec $n>&-"
		done
		exec "$RNGFEED" -f -n rdrand --metrics "$tmp/m" "$@"
	) 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q '^rngfeed_fed_bytes_total [1-9]' "$tmp/m" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || fail "daemon died: $(cat "$tmp/err")"
		sleep 0.05
	done
	fail "daemon did not feed: $(cat "$tmp/err")"
}
stop() {
	kill -TERM "$pid"
	wait "$pid" || fail "exit status $? on SIGTERM: $(cat "$tmp/err")"
	pid=
	rm -f "$tmp/m"
}

# 1. File descriptors beyond stdio (inherited, whatever they are): the
# kernel's random device, the signalfd, the eventfd and the uevent socket
# (VM generation changes); no config file, sysfs file or source left open
# (rdrand needs no descriptor).
start
fds=$(for f in /proc/$pid/fd/*; do
	case "${f##*/}" in 0 | 1 | 2) continue ;; esac
	readlink "$f"
done | sed 's/^socket:\[[0-9]*\]$/socket/' | sort)
want=$(printf '%s\n' /dev/random "anon_inode:[eventfd]" "anon_inode:[signalfd]" socket | sort)
[ "$fds" = "$want" ] || fail "open descriptors beyond stdio: $(echo $fds), expected: $(echo $want)"

# 2. Locked memory: libgcrypt's secure memory pool, where the DRBG's key
# and V live, is mlock()ed: some mapping of the process is locked, and
# VmLck counts it.
# AddressSanitizer makes mlock() a no-op (it cannot lock the shadow
# memory), so in a sanitized build (make sanitize sets RNGFEED_SANITIZED)
# this part is skipped.
if [ -n "${RNGFEED_SANITIZED:-}" ]; then
	echo "SKIP: locked memory: mlock() is a no-op under AddressSanitizer"
else
	locked=$(awk '$1 == "VmLck:" { print $2 }' /proc/$pid/status)
	[ "${locked:-0}" -ge 16 ] || fail "VmLck is ${locked:-0} kB: the DRBG state is not locked"
	grep -q '^Locked: *[1-9]' /proc/$pid/smaps || fail "no locked mapping in smaps"
fi

# 3. Not dumpable: the kernel gives the /proc/PID files of a non-dumpable
# process to root whatever its uid, those of a dumpable one to its user.
# Checked with the daemon running as nobody, where only the flag decides:
# first by default, then with --dumpable.  (Reading its memory as another
# process of the same user would not tell: holding CAP_SYS_ADMIN already
# shields it from a process without it.)
stop
chmod 0777 "$tmp"
start -D nobody
owner=$(stat -c %U /proc/$pid/maps)
[ "$owner" = root ] || fail "/proc/$pid/maps belongs to $owner: the daemon is dumpable"
stop
start -D nobody --dumpable
owner=$(stat -c %U /proc/$pid/maps)
[ "$owner" = nobody ] || fail "--dumpable: /proc/$pid/maps belongs to $owner"
stop

echo "fds, locked DRBG memory and the dumpable flag checked"
exit 0
