#!/bin/bash
# run-tests: alone (its daemons take the machine's hw_random hand-over)
# SPDX-License-Identifier: GPL-2.0-or-later
# The LSB init script init/sysvinit/rngfeed, as "make install-init
# INITSCRIPTS=sysvinit" installs it, run on this machine against the built
# rngfeed, twice: with dpkg's start-stop-daemon and /lib/lsb/init-functions
# under /bin/sh, and with BusyBox (its sh and its start-stop-daemon applet,
# without /lib/lsb/init-functions).  Its PID file, defaults file and runtime
# directory are the test's own.  Each time:
#   status (3), start, status (0), start again (no second daemon), a credit
#   to the kernel (the metrics), reload (SIGHUP: a source the configuration
#   gained is read), stop (the daemon gone, the PID file too, status 3);
#   a configuration error makes start exit 2; reload when stopped exits 7;
#   and with the hw_random hand-over: rng_quality 0 while it runs and back
#   after stop; after kill -9 it stays 0 and status says so (1), then
#   "stop" puts it back; after another kill -9, "start" puts it back before
#   its daemon takes it over again; restart.
# Before that, make install-init: nothing without INITSCRIPTS=; with
# INITSCRIPTS=openrc the openrc-run script naming SBINDIR's binary and its
# conf.d file, kept once edited; uninstall-init; a wrong INITSCRIPTS= fails.
# The hand-over parts are skipped (with the reason) where no hw_random
# device can be handed over or another rngfeed owns it; the rest then runs
# on the other sources.  The OpenRC script is checked with sh -n here (no
# openrc-run on this machine) and booted in tests/vm/init-boot.sh.
set -u
cd "$(dirname "$0")/.." || exit 2
RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
SYSFS=/sys/class/misc/hw_random
# The scripts are sh: under make sanitize they would start the same daemon
# code test_daemon.sh and test_service.sh run there (CI's time).
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ echo "SKIP: make sanitize: the init scripts are sh; the daemon they start runs under ASan in test_daemon and test_service (make check runs this test)"; exit 77; }
QUALITY=$SYSFS/rng_quality

# shellcheck source=tests/lib_measure.sh
. tests/lib_measure.sh
need_feeder "start-stop-daemon, RNDADDENTROPY and the hand-over need root"
need_built "$RNGFEED"
need_tools "dpkg" start-stop-daemon
for f in init/sysvinit/rngfeed init/openrc/rngfeed; do
	sh -n "$f" || { echo "FAIL: $f: sh -n says it is not valid sh"; exit 1; }
done
ok "sh -n init/sysvinit/rngfeed init/openrc/rngfeed"

measure_temp test_initscripts

# ---- make install-init: what each INITSCRIPTS= installs, and where ---------------
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s "$@" >"$tmp/make.log" 2>&1
}
mk install-init DESTDIR="$tmp/i0" && [ ! -e "$tmp/i0" ] ||
	fail "make install-init without INITSCRIPTS= installed something: $(find "$tmp/i0" -type f 2>&1)"
mk install-init INITSCRIPTS=upstart DESTDIR="$tmp/i0" &&
	fail "make install-init INITSCRIPTS=upstart did not fail"
grep -q 'INITSCRIPTS=upstart: say sysvinit, openrc or none' "$tmp/make.log" ||
	fail "make install-init INITSCRIPTS=upstart: $(cat "$tmp/make.log")"
o=$tmp/i1/usr/local/etc
if mk install-init INITSCRIPTS=openrc DESTDIR="$tmp/i1" SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc &&
	[ -x "$o/init.d/rngfeed" ] && [ "$(stat -c %a "$o/conf.d/rngfeed")" = 644 ]; then
	head -n 1 "$o/init.d/rngfeed" | grep -qx '#!/sbin/openrc-run' &&
		grep -qx 'command=/usr/local/sbin/rngfeed' "$o/init.d/rngfeed" &&
		cmp -s "$o/conf.d/rngfeed" init/openrc/rngfeed.confd ||
		fail "INITSCRIPTS=openrc: the script does not run openrc-run with /usr/local/sbin/rngfeed, or conf.d/rngfeed is not init/openrc/rngfeed.confd"
	echo 'RNGFEED_OPTIONS="-x rdrand"' >>"$o/conf.d/rngfeed"
	mk install-init INITSCRIPTS=openrc DESTDIR="$tmp/i1" SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc
	grep -q '^RNGFEED_OPTIONS="-x rdrand"' "$o/conf.d/rngfeed" ||
		fail "a second make install-init INITSCRIPTS=openrc replaced the edited conf.d/rngfeed"
	mk uninstall-init DESTDIR="$tmp/i1" SBINDIR=/usr/local/sbin SYSCONFDIR=/usr/local/etc
	[ ! -e "$o/init.d/rngfeed" ] && [ -e "$o/conf.d/rngfeed" ] ||
		fail "make uninstall-init: the script should go, the edited conf.d file stay"
else
	fail "make install-init INITSCRIPTS=openrc: $(cat "$tmp/make.log"; find "$tmp/i1" 2>&1)"
fi
[ $failures -eq 0 ] && ok "make install-init: nothing by default; INITSCRIPTS=openrc puts the openrc-run script (with SBINDIR) and conf.d/rngfeed (kept once edited); uninstall-init; a wrong INITSCRIPTS= fails"
daemon_pid=''
run=$tmp/run
# Whatever happens: stop our daemon (by its PID), and put back what it
# changed if it could not (its record is left only after a kill), unless
# another rngfeed holds the hand-over then.
cleanup() {
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid"
		for _ in $(seq 50); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$daemon_pid" 2>/dev/null
	fi
	if [ -s "$run/hwrng-quality" ]; then
		if [ -s /run/rngfeed/hwrng-quality ]; then
			echo "WARNING: another rngfeed holds the hand-over now; our record ($(tr '\n' ' ' <"$run/hwrng-quality")) is left"
		else
			RUNTIME_DIRECTORY=$run "$RNGFEED" -c /dev/null --restore-hwrng-quality >/dev/null 2>&1 ||
				echo "WARNING: could not restore rng_quality from $run/hwrng-quality"
		fi
	fi
	measure_cleanup
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT

# ---- can this run take the hand-over? -----------------------------------------
handover=''
if [ ! -c /dev/hwrng ] || [ "$(stat -c '%t:%T' /dev/hwrng)" != "a:b7" ]; then
	handover="no /dev/hwrng that is the hw_random device (char 10:183)"
elif [ ! -r "$QUALITY" ]; then
	handover="no $QUALITY (no hw_random device, or a kernel before 5.18)"
elif case "$(cat $SYSFS/rng_current 2>/dev/null)" in "" | none) true ;; *) false ;; esac; then
	handover="no current hw_random device"
elif ! [ "$(cat "$QUALITY")" -gt 0 ] 2>/dev/null; then
	handover="rng_quality is already $(cat "$QUALITY"): nothing to hand over"
elif [ -s /run/rngfeed/hwrng-quality ] || [ -s /run/rngfeed/hwrng.lock ]; then
	handover="another rngfeed owns the hand-over (/run/rngfeed holds its record)"
fi
# The daemon's sources: with the hand-over, the hwrng source reads the
# device (virtio, which would read it otherwise, is off); without it,
# neither, and the CPU's or a TPM's are what it runs on.
conf=$tmp/rngfeed.conf
if [ -z "$handover" ]; then
	printf '[source virtio]\nenable = no\n' >"$conf.base"
	orig=$(cat "$QUALITY")
	cur=$(cat $SYSFS/rng_current)
else
	echo "SKIP: the hand-over parts: $handover"
	printf '[source hwrng]\nenable = no\n[source virtio]\nenable = no\n' >"$conf.base"
fi
"$RNGFEED" -c "$conf.base" --list 2>/dev/null | awk 'NR > 1 && $5 == "yes"' | grep -q . ||
	skip "no source to run the daemon on here: $("$RNGFEED" -c "$conf.base" --list 2>&1 | awk 'NR > 1 && $2 == "available"' | cut -c1-60 | paste -sd';')"
head -c 100000 /dev/urandom >"$tmp/data"

quality() { cat "$QUALITY"; }
wait_quality() { # VALUE: up to 5 s
	for _ in $(seq $((50 * SCALE))); do
		[ "$(quality)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_metric() { # NAME [SOURCE]: until > 0, up to 30 s
	local v
	for _ in $(seq $((300 * SCALE))); do
		v=$(metric "$run/m.prom" "$@")
		[ -n "$v" ] && [ "$v" != 0 ] && return 0
		sleep 0.1
	done
	return 1
}
wait_row() { # NAME SOURCE: until the metrics have the row, up to 30 s
	for _ in $(seq $((300 * SCALE))); do
		[ -n "$(metric "$run/m.prom" "$@")" ] && return 0
		sleep 0.1
	done
	return 1
}
# ok only if nothing failed since the last ok or okif
mark=0
okif() {
	[ "$failures" -eq "$mark" ] && ok "$@"
	mark=$failures
}
gone() { # PID: up to 5 s
	for _ in $(seq $((50 * SCALE))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# ---- one round: KIND is dpkg or busybox -----------------------------------------
round() {
	local kind=$1 script=$tmp/$1/init.d/rngfeed sh=sh out rc pid pid2 bin msg
	local -a env=(env "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	mkdir -p "$tmp/$kind/sbin" "$tmp/$kind/bin"
	cp "$RNGFEED" "$tmp/$kind/sbin/rngfeed"
	bin=$tmp/$kind/sbin/rngfeed
	# The tree's Makefile installs the script, naming the binary and the
	# defaults file where they are here.
	mk install-init INITSCRIPTS=sysvinit INITDDIR="$tmp/$kind/init.d" SBINDIR="$tmp/$kind/sbin" \
		SYSCONFDIR="$tmp/$kind/etc" ||
		{ fail "$kind: make install-init failed: $(cat "$tmp/make.log")"; return; }
	grep -q "^DAEMON=$bin\$" "$script" && grep -q "^DEFAULTS=$tmp/$kind/etc/default/rngfeed\$" "$script" ||
		{ fail "$kind: the installed script does not name $bin and its defaults file"; return; }
	# Its PID file and runtime directory: the test's, not /run's.
	sed -i -e "s|^PIDFILE=.*|PIDFILE=$tmp/rngfeed.pid|" -e "s|^RUNDIR=.*|RUNDIR=$run|" "$script"
	if [ "$kind" = busybox ]; then
		# Every command the script runs is a BusyBox applet, nothing else
		# on its PATH.
		sh='busybox sh'
		for a in $(busybox --list); do
			ln -sf "$(command -v busybox)" "$tmp/$kind/bin/$a"
		done
		sed -i -e "s|^PATH=.*|PATH=$tmp/$kind/bin|" \
			-e "s|/lib/lsb/init-functions|$tmp/no-init-functions|g" "$script"
	fi
	mkdir -p "$tmp/$kind/etc/default"
	options() { # the defaults file with these RNGFEED_OPTIONS
		printf '# the test'"'"'s\nRNGFEED_INITRAMFS=no\nRNGFEED_OPTIONS="%s"\n' "$*" \
			>"$tmp/$kind/etc/default/rngfeed"
	}
	options "-c $conf --metrics $run/m.prom"
	cp "$conf.base" "$conf"
	rm -f "$run/m.prom"
	init() { # ACTION: runs the script; $out, $rc
		out=$("${env[@]}" $sh "$script" "$1" 2>&1)
		rc=$?
	}
	say "== $kind: $sh $script"

	init status
	[ $rc -eq 3 ] || fail "$kind: status before start: exit $rc, want 3 ($out)"
	init start
	if [ $rc -ne 0 ]; then
		fail "$kind: start: exit $rc ($out)"
		return
	fi
	pid=$(cat "$tmp/rngfeed.pid" 2>/dev/null)
	daemon_pid=$pid
	if [ -z "$pid" ] || [ "$(readlink "/proc/$pid/exe")" != "$bin" ]; then
		fail "$kind: after start, no daemon in the PID file ($pid: $(readlink "/proc/$pid/exe" 2>&1))"
		return
	fi
	okif "$kind: start: exit 0, daemon PID $pid ($out)"
	init status
	[ $rc -eq 0 ] && [[ "$out" == *"is running (PID $pid)"* ]] ||
		fail "$kind: status while running: exit $rc ($out)"
	init start
	[ $rc -eq 0 ] && [ "$(cat "$tmp/rngfeed.pid")" = "$pid" ] &&
		[ "$(pgrep -c -f "^$bin ")" = 1 ] ||
		fail "$kind: a second start: exit $rc, PID file $(cat "$tmp/rngfeed.pid"), $(pgrep -c -f "^$bin ") daemons ($out)"
	wait_metric rngfeed_credited_bits_total ||
		fail "$kind: no credit to the kernel in the metrics within 30 s"
	okif "$kind: credited $(metric "$run/m.prom" rngfeed_credited_bits_total) bits; status 0; a second start leaves it alone"
	if [ -z "$handover" ]; then
		wait_quality 0 || fail "$kind: rng_quality of $cur reads $(quality) while the daemon runs, not 0"
		grep -qx "quality=$orig" "$run/hwrng-quality" 2>/dev/null ||
			fail "$kind: no hand-over record in the script's runtime directory $run"
	fi

	# reload: the configuration gains a file source; the daemon takes it
	# (its row appears in the metrics: a source that was not there at the
	# start has none).
	[ -z "$(metric "$run/m.prom" rngfeed_source_enabled file)" ] ||
		fail "$kind: the file source was there before the reload"
	printf '[source file]\ndevice = %s\n' "$tmp/data" >>"$conf"
	init reload
	[ $rc -eq 0 ] || fail "$kind: reload: exit $rc ($out)"
	wait_row rngfeed_source_enabled file ||
		fail "$kind: after reload the daemon did not take the file source the configuration gained"
	kill -0 "$pid" 2>/dev/null || fail "$kind: the daemon is gone after reload"
	okif "$kind: reload: exit 0; the daemon took the file source its configuration gained"

	init stop
	[ $rc -eq 0 ] || fail "$kind: stop: exit $rc ($out)"
	gone "$pid" || fail "$kind: the daemon $pid still runs after stop"
	[ ! -e "$tmp/rngfeed.pid" ] || fail "$kind: stop left the PID file"
	init status
	[ $rc -eq 3 ] || fail "$kind: status after stop: exit $rc, want 3 ($out)"
	if [ -z "$handover" ]; then
		[ "$(quality)" = "$orig" ] || fail "$kind: after stop rng_quality reads $(quality), not $orig"
		[ ! -s "$run/hwrng-quality" ] || fail "$kind: a clean stop left the record"
	fi
	okif "$kind: stop: exit 0, the daemon and its PID file gone, status 3$([ -z "$handover" ] && echo ", rng_quality $orig again")"

	init reload
	[ $rc -eq 7 ] || fail "$kind: reload while stopped: exit $rc, want 7 ($out)"
	options "-c $conf --interval nonsense"
	init start
	[ $rc -eq 2 ] && [[ "$out" == *nonsense* ]] ||
		fail "$kind: start with a bad option: exit $rc, want 2 with the daemon's message ($out)"
	msg=$(grep -o 'rngfeed: [a-z].*nonsense.*' <<<"$out" | head -n 1)
	init status
	[ $rc -eq 3 ] || fail "$kind: status after a failed start: exit $rc ($out)"
	okif "$kind: a bad option: start exits 2 and says '$msg'; reload while stopped exits 7"
	options "-c $conf --metrics $run/m.prom"

	if [ -n "$handover" ]; then
		init restart
		[ $rc -eq 0 ] || fail "$kind: restart from stopped: exit $rc ($out)"
		daemon_pid=$(cat "$tmp/rngfeed.pid" 2>/dev/null)
		init stop
		return
	fi
	# kill -9: the record stays, rng_quality 0; status says so; stop puts it back.
	init start
	pid=$(cat "$tmp/rngfeed.pid" 2>/dev/null) daemon_pid=$pid
	wait_quality 0 || fail "$kind: rng_quality $(quality) after the second start"
	kill -KILL "$pid"
	gone "$pid" || fail "$kind: kill -9 did not end $pid"
	[ "$(quality)" = 0 ] && [ -s "$run/hwrng-quality" ] ||
		fail "$kind: after kill -9: rng_quality $(quality), record: $(cat "$run/hwrng-quality" 2>&1)"
	init status
	[ $rc -eq 1 ] && [[ "$out" == *"hand-over"* ]] ||
		fail "$kind: status after kill -9: exit $rc, want 1 naming the hand-over's record ($out)"
	init stop
	[ $rc -eq 0 ] && [ "$(quality)" = "$orig" ] && [[ "$out" == *"put back to $orig"* ]] ||
		fail "$kind: stop after kill -9: exit $rc, rng_quality $(quality), want $orig put back ($out)"
	[ ! -e "$run/hwrng-quality" ] || fail "$kind: the record is still there after stop"
	okif "$kind: after kill -9 rng_quality stays 0 and status exits 1; stop puts $orig back"

	# kill -9 again: start puts it back before its daemon takes it over.
	init start
	pid=$(cat "$tmp/rngfeed.pid" 2>/dev/null) daemon_pid=$pid
	wait_quality 0 || fail "$kind: rng_quality $(quality) after the third start"
	kill -KILL "$pid"
	gone "$pid" || fail "$kind: kill -9 did not end $pid"
	init start
	pid2=$(cat "$tmp/rngfeed.pid" 2>/dev/null) daemon_pid=$pid2
	[ $rc -eq 0 ] && [[ "$out" == *"put back to $orig"* ]] && [ "$pid2" != "$pid" ] &&
		kill -0 "$pid2" 2>/dev/null ||
		fail "$kind: start after kill -9: exit $rc, PID $pid2, want $orig put back first ($out)"
	wait_quality 0 || fail "$kind: the new daemon did not take the hand-over: rng_quality $(quality)"
	grep -qx "quality=$orig" "$run/hwrng-quality" 2>/dev/null ||
		fail "$kind: the new daemon's record does not say $orig: $(cat "$run/hwrng-quality" 2>&1)"
	okif "$kind: after kill -9, start put $orig back, then its daemon took the hand-over again"
	init restart
	pid=$(cat "$tmp/rngfeed.pid" 2>/dev/null) daemon_pid=$pid
	[ $rc -eq 0 ] && [ "$pid" != "$pid2" ] && gone "$pid2" && kill -0 "$pid" 2>/dev/null ||
		fail "$kind: restart: exit $rc, PID $pid2 -> $pid ($out)"
	init stop
	[ $rc -eq 0 ] && gone "$pid" && [ "$(quality)" = "$orig" ] ||
		fail "$kind: the last stop: exit $rc, rng_quality $(quality), want $orig"
	okif "$kind: restart gives a new daemon; the last stop leaves rng_quality $orig"
	daemon_pid=''
}

round dpkg
if command -v busybox >/dev/null 2>&1 && busybox start-stop-daemon --help >/dev/null 2>&1; then
	round busybox
else
	echo "SKIP: the BusyBox round: no busybox with a start-stop-daemon applet (apt-get install busybox)"
fi

[ $failures -eq 0 ] || exit 1
echo "PASS: the LSB init script starts, reports, reloads, stops and restores the hand-over, with dpkg's tools and with BusyBox's"
