#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# rngfeed as a systemd service: the unit verifies and is hardened (exposure
# <= 2.0), the notify protocol really speaks (READY=1, STATUS=, WATCHDOG=1,
# STOPPING=1), and after start-up only CAP_SYS_ADMIN is left, as the
# chosen user with its group alone (no supplementary group kept).  Beside
# another rngfeed that owns the machine's hw_random hand-over (a running
# service), the -D part on hwrng waits for tested hwrng blocks instead of
# credit, which that daemon does not give then ("SKIP: ...",
# tests/lib_handover.sh).
set -u
. tests/lib_handover.sh
RNGFEED=${RNGFEED:-./rngfeed}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || exit 1
. tests/lib_pids.sh
pids=()
cleanup() {
	kill_ours "${pids[@]}"
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
skipped=()

# --- the unit file -----------------------------------------------------
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze security --offline=yes systemd/rngfeed.service 2>&1)
	score=$(sed -n 's/.*Overall exposure level for rngfeed.service: \([0-9.]*\).*/\1/p' <<<"$out")
	[ -n "$score" ] || fail "no exposure score: $out"
	awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "exposure $score > 2.0"
	echo "unit exposure: $score"
	# The assessment thread lowers its own priority (setpriority(2),
	# src/assessor.c): the unit's system call filter, read in order as
	# systemd reads it (the first line an allow list, "~" takes away, a
	# plain line adds back), must end with setpriority allowed (with
	# ~@resources alone it was refused, and nice stayed 0).
	in_group() { # SET NAME: is NAME SET or in it (groups expanded)?
		local item
		[ "$1" = "$2" ] && return 0
		[ "${1#@}" != "$1" ] || return 1
		while read -r item; do
			case $item in '' | '#'* | "$1") continue ;; esac
			in_group "$item" "$2" && return 0
		done < <(systemd-analyze syscall-filter "$1" 2>/dev/null)
		return 1
	}
	if grep -q 'setpriority(' src/assessor.c; then
		allowed=0
		while read -r f; do
			# "~" denies every name on its line.
			for set in ${f#\~}; do
				in_group "$set" setpriority || continue
				if [ "${f#\~}" != "$f" ]; then allowed=0; else allowed=1; fi
			done
		done < <(sed -n 's/^SystemCallFilter=//p' systemd/rngfeed.service)
		[ $allowed = 1 ] || fail "the unit's SystemCallFilter= refuses setpriority, which the assessment thread calls"
		echo "unit: SystemCallFilter= allows the assessment thread's setpriority"
	fi
	# verify resolves ExecStart= and ExecReload= in a root holding what
	# "make install" puts there, plus the host's /bin/sh that every
	# system has.  Documentation= is checked by test_man.sh.
	make -s install DESTDIR="$tmp/root" >/dev/null || fail "make install failed"
	mkdir -p "$tmp/root/bin" && cp /bin/sh "$tmp/root/bin/sh"
	out=$(systemd-analyze verify --man=no --root="$tmp/root" rngfeed.service 2>&1) ||
		fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify printed: $out"
else
	skipped+=("systemd-analyze is missing: unit checks skipped")
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: feeding the kernel and dropping privileges need root"
	exit 77
fi
# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
	{ echo "SKIP: root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"; exit 77; }
"$RNGFEED" --list | grep -q '^rdrand *available' || {
	echo "SKIP: needs the rdrand source (x86 with RDRAND)"
	exit 77
}

# --- sd_notify ------------------------------------------------------------
tests/helper_notify -w 300000 2 "$RNGFEED" -f -n rdrand >"$tmp/notify" 2>"$tmp/err" ||
	fail "daemon under helper_notify failed: $(cat "$tmp/notify" "$tmp/err")"
grep -qx 'notify: READY=1' "$tmp/notify" || fail "no READY=1: $(cat "$tmp/notify")"
grep -q '^notify: STATUS=Feeding from rdrand; [0-9]* bits credited.*kernel CRNG ready' "$tmp/notify" ||
	fail "no STATUS line naming the source and credit: $(cat "$tmp/notify")"
n=$(grep -cx 'notify: WATCHDOG=1' "$tmp/notify")
[ "$n" -ge 3 ] || fail "expected WATCHDOG=1 every 0.15 s for 2 s, got $n"
grep -qx 'notify: STOPPING=1' "$tmp/notify" || fail "no STOPPING=1"
# READY=1 comes only after credited entropy reached the kernel.
ready_line=$(grep -nx 'notify: READY=1' "$tmp/notify" | cut -d: -f1)
credited=$(sed -n "$((ready_line + 1))p" "$tmp/notify")
grep -q 'STATUS=.* [1-9][0-9]* bits credited' <<<"$credited" ||
	fail "READY=1 not followed by a status with credit: $credited"

# WATCHDOG_PID naming another process: the watchdog is that one's, so no
# WATCHDOG=1 (sd_watchdog_enabled(3)'s rule, which rngfeed reads itself).
tests/helper_notify -w 300000 1 /usr/bin/env WATCHDOG_PID=1 "$RNGFEED" -f -n rdrand \
	>"$tmp/notify4" 2>"$tmp/err4n" ||
	fail "daemon with another WATCHDOG_PID failed: $(cat "$tmp/notify4" "$tmp/err4n")"
grep -qx 'notify: READY=1' "$tmp/notify4" || fail "another WATCHDOG_PID: no READY=1: $(cat "$tmp/notify4")"
n=$(grep -cx 'notify: WATCHDOG=1' "$tmp/notify4")
[ "$n" -eq 0 ] || fail "WATCHDOG_PID=1 (not rngfeed's): $n WATCHDOG=1 pings, want none"

# --- privileges -------------------------------------------------------------
cap_sys_admin=0000000000200000 # 1 << CAP_SYS_ADMIN (21)
check_caps() { # PID USER-ID [GROUP-ID]
	local st=/proc/$1/status
	for f in CapPrm CapEff CapBnd; do
		v=$(awk -v f="$f:" '$1 == f { print $2 }' "$st")
		[ "$v" = "$cap_sys_admin" ] || fail "$f is $v, not only CAP_SYS_ADMIN"
	done
	v=$(awk '$1 == "CapInh:" || $1 == "CapAmb:" { print $2 }' "$st" | sort -u)
	[ "$v" = 0000000000000000 ] || fail "inheritable/ambient capabilities left: $v"
	[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' "$st")" = 1 ] || fail "NoNewPrivs is not set"
	uids=$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "$st")
	[ "$uids" = "$2 $2 $2 $2" ] || fail "uids are $uids, expected $2"
	# After a user switch: that group, and it alone as the supplementary
	# list (setgroups() before setresgid(): none of root's groups kept).
	if [ $# -ge 3 ]; then
		v=$(awk '$1 == "Gid:" { print $2, $3, $4, $5 }' "$st")
		[ "$v" = "$3 $3 $3 $3" ] || fail "gids are $v, expected $3"
		v=$(awk '$1 == "Groups:" { $1 = ""; print }' "$st" | xargs)
		[ "$v" = "$3" ] || fail "supplementary groups are '$v', expected only $3"
	fi
	# Every thread, not only the main one.
	for t in /proc/$1/task/*; do
		v=$(awk '$1 == "CapEff:" { print $2 }' "$t/status")
		[ "$v" = "$cap_sys_admin" ] || fail "thread $t has CapEff $v"
	done
}

# TEST_TIME_SCALE (an integer, default 1) stretches the wait for a slow
# daemon: make valgrind sets it.
wait_metric() { # FILE NAME → waits until the metric is > 0
	for _ in $(seq $((50 * ${TEST_TIME_SCALE:-1}))); do
		v=$(awk -v m="$2" '$1 == m { print $2 }' "$1" 2>/dev/null)
		[ -n "$v" ] && [ "$v" != 0 ] && return 0
		sleep 0.1
	done
	fail "$2 stayed 0 in $1"
}

"$RNGFEED" -f -n rdrand --metrics "$tmp/m1" 2>"$tmp/e1" &
pids+=($!)
wait_metric "$tmp/m1" rngfeed_fed_bytes_total
check_caps "${pids[-1]}" 0
kill -TERM "${pids[-1]}"; wait "${pids[-1]}" || fail "daemon exited non-zero: $(cat "$tmp/e1")"

nobody=$(id -u nobody 2>/dev/null) || fail "no user nobody"
nobody_gid=$(id -g nobody)
chmod 0777 "$tmp" # the metrics file is written as nobody
# Started with root's groups and disk (6) as supplementary groups: none of
# them may survive the switch to nobody.
with_groups=()
if command -v setpriv >/dev/null; then
	with_groups=(setpriv --groups 0,6)
else
	skipped+=("no setpriv: the switch to nobody starts without extra supplementary groups")
fi
"${with_groups[@]}" "$RNGFEED" -f -n rdrand -D nobody --metrics "$tmp/m2" 2>"$tmp/e2" &
pids+=($!)
wait_metric "$tmp/m2" rngfeed_fed_bytes_total
check_caps "${pids[-1]}" "$nobody" "$nobody_gid"
kill -TERM "${pids[-1]}"; wait "${pids[-1]}" || fail "daemon as nobody exited non-zero: $(cat "$tmp/e2")"

"$RNGFEED" -f -n rdrand -D no-such-user-here 2>"$tmp/e3"
rc=$?
[ $rc -eq 2 ] || fail "unknown user: exit $rc, want 2 (bad usage)"
[ "$(wc -l <"$tmp/e3")" -eq 1 ] && grep -q "unknown user 'no-such-user-here'" "$tmp/e3" ||
	fail "unknown user message: $(cat "$tmp/e3")"

# --- READY=1 bounded (issue 15 defect 2) --------------------------------------
# Nothing creditable (a credit-0 source): READY=1 still comes, after
# --ready-timeout, with a STATUS= saying why nothing was credited.  Before
# the fix READY=1 waited for a credit that never came (boot waited for
# systemd's start timeout).
timeout 20 tests/helper_notify 1 "$RNGFEED" -f -n rdrand -O rdrand:credit=0 \
	--ready-timeout 1 >"$tmp/notify2" 2>"$tmp/err2n"
grep -qx 'notify: READY=1' "$tmp/notify2" ||
	fail "credit 0: no READY=1 after --ready-timeout: $(cat "$tmp/notify2" "$tmp/err2n")"
grep -q '^notify: STATUS=.*none yet: rdrand has credit 0' "$tmp/notify2" ||
	fail "credit 0: STATUS does not say why nothing was credited: $(cat "$tmp/notify2")"
grep -q 'ready after .* without a credit yet: rdrand has credit 0' "$tmp/err2n" ||
	fail "credit 0: no log line for the READY without credit: $(cat "$tmp/err2n")"

# Nothing credited can come (credit 0 only): READY=1 at once, not after
# the bounded wait (which here is 600 s; the helper stops it after 1 s).
timeout 20 tests/helper_notify 1 "$RNGFEED" -f -n rdrand -O rdrand:credit=0 \
	--ready-timeout 600 >"$tmp/notify3" 2>"$tmp/err3n"
grep -qx 'notify: READY=1' "$tmp/notify3" ||
	fail "credit 0: READY=1 waited for --ready-timeout: $(cat "$tmp/notify3" "$tmp/err3n")"

# --- -D under the unit's own bounding set (issue 15 defect 1) -------------------
# /dev/hwrng is root's: it must be opened before the switch to nobody, and
# the switch must work with only the capabilities the shipped unit leaves
# (CapabilityBoundingSet=, NoNewPrivileges=).  Before the fix: "cannot
# open /dev/hwrng: Permission denied", and under the unit's set "switching
# to user 'nobody' needs root".
if [ -c /dev/hwrng ] && "$RNGFEED" --list -n hwrng 2>/dev/null | grep -q '^hwrng *available' &&
	command -v setpriv >/dev/null; then
	bset=$(sed -n 's/^CapabilityBoundingSet=//p' systemd/rngfeed.service |
		tr ' ' '\n' | sed 's/^CAP_/+/' | tr 'A-Z' 'a-z' | paste -sd, -)
	[ -n "$bset" ] || fail "no CapabilityBoundingSet= in the unit"
	beside=false
	handover_elsewhere && beside=true
	setpriv --bounding-set "-all,$bset" --no-new-privs \
		"$RNGFEED" -f -n hwrng -D nobody --metrics "$tmp/m4" 2>"$tmp/e4" &
	pids+=($!)
	if $beside; then
		wait_metric "$tmp/m4" 'rngfeed_source_blocks_passed_total{source="hwrng"}'
		handover_waited "$tmp/e4" ||
			fail "hwrng as nobody: another rngfeed owns the hand-over, but the daemon did not say it waits for it: $(cat "$tmp/e4")"
		echo "SKIP: -D nobody on hwrng: credit not awaited (its blocks were tested): $HANDOVER_WHY"
	else
		wait_metric "$tmp/m4" rngfeed_credited_bits_total
	fi
	check_caps "${pids[-1]}" "$nobody" "$nobody_gid"
	kill -TERM "${pids[-1]}"; wait "${pids[-1]}" ||
		fail "hwrng as nobody exited non-zero: $(cat "$tmp/e4")"
else
	skipped+=("no usable /dev/hwrng or no setpriv: -D with a root-only device not checked")
fi

for s in "${skipped[@]}"; do echo "SKIP: $s"; done
echo "notify, watchdog, capabilities and user switch checked"
exit 0
