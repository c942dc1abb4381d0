#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# "rngfeed --list" says what a run with the same options and config does
# (issue 18 item 2): for each case, --list's RUN, CREDIT and H columns and
# its reason for an unused source agree with what "-f -v" then logs
# ("NAME: using it, credit C/1024, health-test H X", "NAME: not used: ...",
# "NAME: unavailable: ...").  Cases: the defaults (hwrng and virtio read one
# device), -x, enable = no in a config file, -n, -x virtio, a credit set
# with -O, --wait-for-source on a missing source, run by nobody, and -D
# nobody run by root.  The old --list said "available" for hwrng, for an
# excluded rdrand and for virtio as nobody.
# Beside another rngfeed that owns the machine's hw_random hand-over (a
# running service), a run credits the device's source 0 while --list says
# its credit: that source's credit is then not compared ("SKIP: ..."), the
# rest is (tests/lib_handover.sh).
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_list.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh
. tests/lib_handover.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
measure_temp test_list
chmod 0755 "$tmp"
pid=

need_built "$RNGFEED"
need_feeder "needs root (the daemon feeds the kernel)"
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available' ||
	{ echo "SKIP: no RDRAND here (every case keeps one source that runs)"; exit 77; }

# Run "$@ -f -v" until its readers have started, then SIGTERM; the log in
# $tmp/log.  $RUNAS: a prefix that runs it as another user.
run_daemon() {
	local i
	${RUNAS:-} "$BIN" -f -v "$@" >"$tmp/log" 2>&1 &
	pid=$!
	for ((i = 0; i < 100 * SCALE; i++)); do
		grep -q 'using it, credit' "$tmp/log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.5
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}

# One case: --list and a run with the same arguments, compared source by
# source.
compare() { # NAME ARGS...
	local name=$1 src state credit h run rest used line reason bad=0 beside=false
	shift
	handover_elsewhere && beside=true
	${RUNAS:-} "$BIN" "$@" --list >"$tmp/list" 2>"$tmp/list.err" ||
		{ fail "$name: --list exited $?: $(cat "$tmp/list.err")"; return; }
	run_daemon "$@"
	while read -r src state credit h run rest; do
		case "$state" in available | unavailable) ;; *) continue ;; esac
		used=$(grep -E "^rngfeed: $src: using it, credit" "$tmp/log")
		case "$run" in
		yes | wait)
			line="rngfeed: $src: using it, credit $credit/1024, health-test H $h"
			if [ "$used" != "$line" ] && $beside &&
				grep -q "^rngfeed: $src: another rngfeed owns the hand-over" "$tmp/log" &&
				[ "$used" = "rngfeed: $src: using it, credit 0/1024, health-test H $h" ]; then
				say "SKIP: $name: $src's credit not compared (--list $credit, the run 0): $HANDOVER_WHY"
			elif [ "$used" != "$line" ]; then
				fail "$name: --list says $src runs ($run, credit $credit, H $h); the run logged '${used:-nothing}'"
				bad=1
			fi
			;;
		no)
			if [ -n "$used" ]; then
				fail "$name: --list says $src is not used; the run logged '$used'"
				bad=1
			fi
			reason=$(sed -n 's/.*; not used: //p' <<<"$rest")
			case "$reason" in
			*" source already")
				grep -qxF "rngfeed: $src: not used: $reason" "$tmp/log" || {
					fail "$name: --list says $src: '$reason'; the run did not say so"
					bad=1
				}
				;;
			"")
				# Unavailable: the run says why in the words --list used.
				line=$(sed -n "s/^rngfeed: $src: unavailable: //p" "$tmp/log")
				if [ -z "$line" ] || [[ "$rest" != *"$line"* ]]; then
					fail "$name: $src: --list '$rest'; the run said '${line:-nothing}'"
					bad=1
				fi
				;;
			*)
				# Turned off or not named: the run does not mention it.
				if grep -q "^rngfeed: $src: " "$tmp/log"; then
					fail "$name: $src is off ('$reason') but the run mentions it: $(grep "^rngfeed: $src: " "$tmp/log" | head -1)"
					bad=1
				fi
				;;
			esac
			;;
		*)
			fail "$name: $src: no RUN column in '$run $rest'"
			bad=1
			;;
		esac
	done <"$tmp/list"
	if [ "$bad" -eq 0 ]; then
		ok "$name: --list agrees with -f -v ($(awk '$5 == "yes" || $5 == "wait" { printf "%s%s", s, $1; s = " " }' "$tmp/list"))"
	else
		sed 's/^/    list| /' "$tmp/list"
		sed 's/^/    log | /' "$tmp/log" | head -20
	fi
}

BIN=$RNGFEED
compare "defaults" -c /dev/null
grep -qE '^rdrand .* no .*not used: turned off' < <("$BIN" -c /dev/null -x rdrand --list) ||
	fail "-x rdrand: --list does not say rdrand is turned off"
compare "-x rdrand" -c /dev/null -x rdrand
printf '[source rdrand]\nenable = no\n' >"$tmp/off.conf"
compare "enable = no" -c "$tmp/off.conf"
compare "-n rdrand" -c /dev/null -n rdrand
compare "-x virtio" -c /dev/null -x virtio
compare "-O rdrand:credit=1" -c /dev/null -n rdrand -O rdrand:credit=1
compare "--wait-for-source -n tpm" -c /dev/null --wait-for-source -n rdrand -n tpm \
	-O tpm:device=/nonexistent/tpm
if [ -c /dev/hwrng ] && [ "$(stat -c %u /dev/hwrng)" = 0 ] &&
	[ "$(stat -c %a /dev/hwrng)" = 600 ]; then
	# The daemon opens its sources before it drops to -D's user...
	compare "-D nobody (run by root)" -c /dev/null -D nobody
	grep -qE '^virtio +available .* yes ' "$tmp/list" ||
		fail "-D nobody run by root: virtio should be used (opened before the drop)"
	# ...and nobody itself cannot open /dev/hwrng.
	if [ "$(head -c4 "$RNGFEED" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		cp "$RNGFEED" "$tmp/rngfeed"
		chmod 0755 "$tmp/rngfeed"
		BIN=$tmp/rngfeed RUNAS="setpriv --reuid=nobody --regid=nogroup --clear-groups" \
			compare "run by nobody" -c /dev/null
		grep -qE '^virtio +unavailable .*cannot open /dev/hwrng' "$tmp/list" ||
			fail "run by nobody: --list does not say /dev/hwrng cannot be opened: $(grep '^virtio' "$tmp/list")"
	else
		echo "SKIP: run by nobody: $RNGFEED is not the binary itself (a wrapper)"
	fi
else
	echo "SKIP: -D nobody cases: no root-only /dev/hwrng here"
fi

# Issue 19: with the metrics file a running rngfeed writes, --list shows a
# source's on-line estimate and the credit in use, as the file says.
"$RNGFEED" -t -q -c /dev/null -n rdrand --metrics "$tmp/m.prom" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
	grep -q '^rngfeed_source_min_entropy_estimate{source="rdrand"} [0-9]' "$tmp/m.prom" \
		2>/dev/null && break
	sleep 0.1
done
kill -INT "$pid" 2>/dev/null
wait "$pid"
h=$(sed -n 's/^rngfeed_source_min_entropy_estimate{source="rdrand"} //p' "$tmp/m.prom")
c=$(sed -n 's/^rngfeed_source_effective_credit{source="rdrand"} //p' "$tmp/m.prom")
if [ -z "$h" ] || [ -z "$c" ]; then
	fail "-t --metrics wrote no estimate for rdrand: $(head -c 300 "$tmp/m.prom" 2>/dev/null)"
else
	want=$(awk -v h="$h" -v c="$c" 'BEGIN { if (h < 0) printf "no estimate yet, credit %.0f/1024", c;
		else printf "estimate %.2f bits/sample, credit %.0f/1024", h, c }')
	# Issue 25: which estimate is in force and its age, then the full
	# assessment when there is one, as the file says.
	f=$(sed -n 's/^rngfeed_source_estimate_in_force{source="rdrand"} //p' "$tmp/m.prom")
	a=$(sed -n 's/^rngfeed_source_estimate_age_seconds{source="rdrand"} //p' "$tmp/m.prom")
	fh=$(sed -n 's/^rngfeed_source_full_assessment{source="rdrand"} //p' "$tmp/m.prom")
	fn=$(sed -n 's/^rngfeed_source_full_assessment_samples{source="rdrand"} //p' "$tmp/m.prom")
	want+=$(awk -v f="$f" -v a="$a" -v fh="$fh" -v fn="$fn" 'BEGIN {
		split("none quick/4 quick full", w, " ");
		if (f != "") { printf ", in force: %s", w[f + 1]; if (a != "") printf " (%.0f s old)", a }
		if (fh != "" && fh >= 0) printf ", full assessment %.2f bits/sample over %.0f samples", fh, fn }')
	line=$("$RNGFEED" --list -c /dev/null -n rdrand --metrics "$tmp/m.prom" | grep '^rdrand ')
	case $line in
	*"; its metrics ($tmp/m.prom, written "*" s ago): $want") echo "ok: --list --metrics: $want" ;;
	*) fail "--list --metrics: '$line' does not end with the file's '$want'" ;;
	esac
	line=$("$RNGFEED" --list -c /dev/null -n rdrand | grep '^rdrand ')
	case $line in *"its metrics"*) fail "--list without --metrics: $line" ;; esac
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
exit 0
