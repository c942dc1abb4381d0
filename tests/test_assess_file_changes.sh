#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rngfeed --assess maps a regular file rather than copying it (no memory
# touched for the first time for the samples), so the file is read where
# it lies while the estimators run.  Shown here, on 2 MB of uniform bytes
# (tests/helper_estimate_gen, about a second of estimators):
#  - left alone, the report is the one the same bytes give through a pipe
#    (read and copied), the same SHA-256 first;
#  - cut short while it is assessed (truncate, once its mapping shows in
#    /proc/PID/maps): one line, "was cut short" (or "was written", had the
#    estimators finished first), exit 2, never a signal;
#  - written in place while it is assessed (dd conv=notrunc): one line,
#    "was written while it was assessed", exit 2, no report.
# Exit 0 pass, 1 fail, 77 skip (a tool missing).
set -u
cd "$(dirname "$0")/.." || exit 1
RNGFEED=${RNGFEED:-./rngfeed}
GEN=tests/helper_estimate_gen

[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built"; exit 1; }
[ -x "$GEN" ] || { echo "SKIP: $GEN is not built (make $GEN)"; exit 77; }
command -v truncate >/dev/null || { echo "SKIP: no truncate"; exit 77; }

tmp=$(mktemp -d /tmp/test_assess_file.XXXXXX) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$GEN" uniform 5 2000000 >"$tmp/orig.bin" || { echo "FAIL: generator failed"; exit 1; }

rc=0
"$RNGFEED" --assess "$tmp/orig.bin" >"$tmp/file.txt" 2>"$tmp/file.err" || rc=$?
[ "$rc" -eq 0 ] || fail "left alone: exit $rc: $(head -c 300 "$tmp/file.err")"
rc=0
"$RNGFEED" --assess <"$tmp/orig.bin" >"$tmp/pipe.txt" 2>"$tmp/pipe.err" || rc=$?
[ "$rc" -eq 0 ] || fail "through stdin: exit $rc: $(head -c 300 "$tmp/pipe.err")"
if ! diff <(tail -n +2 "$tmp/file.txt") <(tail -n +2 "$tmp/pipe.txt") >/dev/null ||
   [ "$(head -1 "$tmp/file.txt" | sed 's/.*hash //')" != "$(head -1 "$tmp/pipe.txt" | sed 's/.*hash //')" ]; then
	fail "the mapped file's report differs from the one through stdin"
else
	echo "ok: a mapped file gives the report its bytes give through stdin"
fi

# change HOW WANT: start an assessment of a copy, wait for its mapping,
# change the copy (HOW: cut or write), check the outcome.
change() {
	local how=$1 want=$2 pid rc=0 i
	cp "$tmp/orig.bin" "$tmp/t.bin"
	"$RNGFEED" --assess "$tmp/t.bin" >"$tmp/t.out" 2>"$tmp/t.err" &
	pid=$!
	for ((i = 0; i < 5000; i++)); do
		grep -qF "$tmp/t.bin" "/proc/$pid/maps" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.001
	done
	case $how in
	cut) truncate -s 1000 "$tmp/t.bin" ;;
	write) printf 'rewritten' | dd of="$tmp/t.bin" bs=1 seek=1000000 conv=notrunc status=none ;;
	esac
	wait "$pid" || rc=$?
	if [ "$rc" -ne 2 ]; then
		fail "$how while assessed: exit $rc (want 2): $(head -c 300 "$tmp/t.err")"
	elif [ "$(wc -l <"$tmp/t.err")" -ne 1 ] || ! grep -Eq "^rngfeed: $tmp/t.bin was ($want) while it was assessed$" "$tmp/t.err"; then
		fail "$how while assessed: $(head -c 300 "$tmp/t.err")"
	elif grep -q '^Assessed min entropy' "$tmp/t.out"; then
		fail "$how while assessed: a report was printed"
	else
		echo "ok: $how while assessed: $(cat "$tmp/t.err"), exit 2"
	fi
}
change cut 'cut short|written'
change write 'written'

if [ "$failures" -gt 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "PASS"
exit 0
