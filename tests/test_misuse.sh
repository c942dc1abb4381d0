#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# Misuse (issue 15, defects 3 and 6): bad input is refused with one clear
# line and exit 2, never a hang, a crash or a daemon that runs feeding
# nothing; a failed start leaves another instance's PID file alone.
#
# Every case runs under `timeout 5` (times TEST_TIME_SCALE; rc 124: it hung or ran as a daemon;
# rc >= 128: killed by a signal, a crash) with -f -c /dev/null and asserts
# its exit code, that stderr holds exactly one line, and for the output
# FIFO that the refusal came within 2 s.  The cases run in parallel (a
# few seconds in all; on code that hangs, 5 s).
#   - `-o FIFO`: open() on a FIFO with no reader blocks for ever;
#   - `-O rdrand:min-entropy=0.001` and `min-entropy = 1e-300` in a config
#     file: below 0.1171875 the health tests can never fail;
#   - `-O rdrand:tries=abc --list`, `-O virtio:select=maybe`: driver option
#     values are checked when read;
#   - a PID file that is not ours: `-p other.pid -o /nonexistent` exits
#     non-zero and other.pid is still there with its content, both for a
#     plain file and for one a running instance holds (that instance is
#     left running);
#   - bad flags: unknown options and sources, missing values, numbers out
#     of range or not numbers, malformed -O;
#   - `-p LINK`: a PID file path that is a symbolic link is refused as bad
#     usage (it exited 1, "Too many levels of symbolic links"), the link
#     left alone;
#   - `--metrics FIFO`, with the daemon and with --list: refused within
#     2 s, the FIFO left a FIFO (the daemon replaced it with a regular
#     file; --list blocked reading it until killed).
# Run from the top of the tree (root: the running instance feeds the
# kernel): RNGFEED=./rngfeed bash tests/test_misuse.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
# Under qemu-user (make cross-check sets 4) a start takes seconds: the
# time bounds below scale, the exit codes and lines do not.
SCALE=${TEST_TIME_SCALE:-1}
need_built "$RNGFEED"
need_feeder "needs root (the running instance feeds the kernel)"
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available' ||
	{ say "SKIP: no RDRAND here (the running instance uses it)"; exit 77; }

measure_temp test_misuse
mkdir "$tmp/bin" && cp "$RNGFEED" "$tmp/bin/rngfeed" || exit 1
RNGFEED=$tmp/bin/rngfeed

mkfifo "$tmp/fifo"
printf '[source rdrand]\nmin-entropy = 1e-300\n' >"$tmp/tiny-h.conf"
mkdir "$tmp/plain" "$tmp/held" "$tmp/link"
echo 12345 >"$tmp/plain/other.pid"
ln -s target.pid "$tmp/link/rngfeed.pid"
mkfifo "$tmp/mfifo"

# NAME|what|want exit|rngfeed arguments after -f (word-split; no blanks in them)
CASES=(
	"out_fifo|-o FIFO (no reader)|2|-c /dev/null -n rdrand -o $tmp/fifo"
	"h_cli|-O rdrand:min-entropy=0.001|2|-c /dev/null -n rdrand -O rdrand:min-entropy=0.001"
	"h_conf|min-entropy = 1e-300 in a config file|2|-c $tmp/tiny-h.conf -n rdrand"
	"tries|-O rdrand:tries=abc --list|2|-c /dev/null -O rdrand:tries=abc --list"
	"select|-O virtio:select=maybe|2|-c /dev/null -n virtio -O virtio:select=maybe"
	"select_list|-O virtio:select=maybe --list|2|-c /dev/null -O virtio:select=maybe --list"
	"pid_plain|-p other.pid (a plain file) -o /nonexistent|nz|-c /dev/null -n rdrand -p $tmp/plain/other.pid -o /nonexistent"
	"pid_held|-p other.pid (a running instance's) -o /nonexistent|nz|-c /dev/null -n rdrand -p $tmp/held/other.pid -o /nonexistent"
	"f_unknown|--bogus|2|-c /dev/null --bogus"
	"f_extra|an extra argument|2|-c /dev/null -n rdrand extra"
	"f_noval|--metrics without a value|2|-c /dev/null --metrics"
	"f_source|-n nosuch|2|-c /dev/null -n nosuch"
	"f_interval|--interval abc|2|-c /dev/null -n rdrand --interval abc"
	"f_interval0|--interval 0|2|-c /dev/null -n rdrand --interval 0"
	"f_step|-s 99999|2|-c /dev/null -n rdrand -s 99999"
	"f_retry|--retry-delay -1|2|-c /dev/null -n rdrand --retry-delay -1"
	"f_maxfail|--max-failures 0|2|-c /dev/null -n rdrand --max-failures 0"
	"f_ready|--ready-timeout x|2|-c /dev/null -n rdrand --ready-timeout x"
	"f_bytes|--stdout --bytes 1Q|2|-c /dev/null -n rdrand --stdout --bytes 1Q"
	"f_optform|-O rdrand (no KEY=VALUE)|2|-c /dev/null -O rdrand"
	"f_optkey|-O rdrand:nokey=1|2|-c /dev/null -n rdrand -O rdrand:nokey=1"
	"f_credit|-O rdrand:credit=2000|2|-c /dev/null -n rdrand -O rdrand:credit=2000"
	"f_config|-c /nonexistent.conf|2|-c /nonexistent.conf -n rdrand"
	"pid_link|-p LINK (a symbolic link)|2|-c /dev/null -n rdrand -p $tmp/link/rngfeed.pid"
	"metrics_fifo|--metrics FIFO|2|-c /dev/null -n rdrand --metrics $tmp/mfifo"
	"metrics_list|--metrics FIFO --list|2|-c /dev/null --list --metrics $tmp/mfifo"
)

# The running instance whose PID file pid_held must leave alone.
"$RNGFEED" -f -q -c /dev/null -n rdrand -p "$tmp/held/other.pid" 2>"$tmp/held/log" </dev/null &
held=$!
echo $held >>"$tmp/pids"
for _ in $(seq $((50 * SCALE))); do [ -s "$tmp/held/other.pid" ] && break; sleep 0.1; done
cp "$tmp/held/other.pid" "$tmp/held/before" 2>/dev/null

t_start=$(now)
pids=()
for c in "${CASES[@]}"; do
	IFS='|' read -r name _ _ args <<<"$c"
	mkdir "$tmp/$name"
	(
		t0=$(now)
		# shellcheck disable=SC2086 # args is a word list on purpose
		timeout -k 1 $((5 * SCALE)) "$RNGFEED" -f $args </dev/null >"$tmp/$name/out" 2>"$tmp/$name/err"
		echo "$? $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')" >"$tmp/$name/rc"
	) &
	pids+=($!)
	echo $! >>"$tmp/pids"
done
wait "${pids[@]}"

# A FIFO without a reader must be refused as fast as any other usage error
# (opening it for writing would block): the rows ran side by side, so they
# met the same load; the FIFO rows may take at most the slowest of the
# others refused before anything is opened, plus SCALE seconds.  (A fixed
# 2 x SCALE s failed under qemu at nice 19 on a busy machine: 8.00 s there,
# where the option errors beside it took 5.5-11 s.)
slowest=0
for c in "${CASES[@]}"; do
	IFS='|' read -r name _ _ _ <<<"$c"
	case $name in f_* | h_* | tries | select*) ;; *) continue ;; esac
	read -r _ took <"$tmp/$name/rc"
	slowest=$(awk -v a="$slowest" -v b="$took" 'BEGIN { print (b > a ? b : a) }')
done
fifo_limit=$(awk -v a="$slowest" -v s="$SCALE" 'BEGIN { print a + s }')

failures=0
: >"$tmp/table"
for c in "${CASES[@]}"; do
	IFS='|' read -r name what want _ <<<"$c"
	d=$tmp/$name
	fail=
	problem() { fail+="${fail:+; }$*"; }
	read -r rc took <"$d/rc"
	lines=$(grep -c '' "$d/err")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		problem "still running after 5 s (hung, or accepted and ran)"
	elif [ "$rc" -ge 128 ]; then
		problem "killed by signal $((rc - 128))"
	elif [ "$want" = nz ]; then
		[ "$rc" != 0 ] || problem "exit 0 (want a failure)"
	else
		[ "$rc" = "$want" ] || problem "exit $rc (want $want)"
	fi
	[ "$lines" -eq 1 ] || problem "$lines lines on stderr (want 1)"
	case $name in
	out_fifo)
		awk -v t="$took" -v l="$fifo_limit" 'BEGIN { exit !(t <= l) }' ||
			problem "took $took s (want <= $fifo_limit: the slowest option error beside it + $SCALE)" ;;
	metrics_fifo | metrics_list)
		awk -v t="$took" -v l="$fifo_limit" 'BEGIN { exit !(t <= l) }' ||
			problem "took $took s (want <= $fifo_limit: the slowest option error beside it + $SCALE)"
		[ -p "$tmp/mfifo" ] || problem "the FIFO is no longer a FIFO" ;;
	pid_link)
		[ -L "$tmp/link/rngfeed.pid" ] || problem "the link is gone"
		[ ! -e "$tmp/link/target.pid" ] || problem "its target was written" ;;
	pid_plain)
		[ "$(cat "$tmp/plain/other.pid" 2>/dev/null)" = 12345 ] ||
			problem "other.pid is $( [ -e "$tmp/plain/other.pid" ] && echo "now '$(cat "$tmp/plain/other.pid")'" || echo gone)" ;;
	pid_held)
		if grep -q 'RNDADDENTROPY.*Function not implemented' "$tmp/held/log"; then
			# qemu-user (make cross-check) does not emulate RNDADDENTROPY:
			# the instance may write its PID file, but it stops at its
			# first feed: there is no running instance to leave alone.
			say "SKIP: pid_held: no running instance here: $(head -n1 "$tmp/held/log")"
		else
			if [ ! -s "$tmp/held/before" ]; then
				problem "the running instance wrote no PID file: $(head -n2 "$tmp/held/log")"
			elif ! cmp -s "$tmp/held/before" "$tmp/held/other.pid"; then
				problem "the running instance's PID file is $( [ -e "$tmp/held/other.pid" ] && echo changed || echo gone)"
			fi
			kill -0 "$held" 2>/dev/null || problem "the running instance is gone"
		fi ;;
	esac
	printf '%s|%s|%s|%s\n' "$what" "$(head -n1 "$d/err" | cut -c1-120)" \
		"exit $rc in $took s, $lines line(s)" "${fail:-ok}" >>"$tmp/table"
	if [ -n "$fail" ]; then
		failures=$((failures + 1))
		say "FAIL: $name: $fail"
		sed 's/^/    err| /' "$d/err" | head -n 5
	fi
done
[ "$(wc -l <"$tmp/table")" -eq ${#CASES[@]} ] ||
	{ say "FAIL: only $(wc -l <"$tmp/table") of ${#CASES[@]} rows checked"; failures=$((failures + 1)); }

# The running instance still stops cleanly.
kill -TERM "$held"
for _ in $(seq 20); do kill -0 "$held" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$held" 2>/dev/null; then
	say "FAIL: the running instance did not stop within 2 s of SIGTERM"
	failures=$((failures + 1))
fi

echo
# The columns of tests/test_faults.sh's table (the README's catalogue);
# nothing runs long enough to credit, so those columns are "-".
print_rows Misuse "$tmp/table"
echo
awk -v s="$t_start" -v n="$(now)" -v c=${#CASES[@]} \
	'BEGIN { printf "%d cases in %.1f s\n", c, n - s }'
[ $failures -eq 0 ] || { say "FAIL: $failures rows failed"; exit 1; }
exit 0
