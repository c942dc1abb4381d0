#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# Credit measured from outside the process (issue 14): every case runs the
# real daemon under bench/shim.so (LD_PRELOAD), which counts each
# RNDADDENTROPY the kernel accepted, its bytes and its credited bits, and
# writes them to a file when the daemon exits.  Every case asserts the
# global bound
#     credited bits (shim) <= sum over sources of
#                             blocks_passed x 20000 x credit / 1024
# with blocks_passed from the daemon's metrics file and credit the one the
# daemon says it uses ("SRC: using it, credit N/1024"), and exit 0 within
# 2 s of SIGTERM.  The cases (rows of the README's fault catalogue):
#   zero_*      a credit-0 source (rdrand credit=0, hwrng credit=0, a FIFO
#               at the file source's default 0) must not spin: in a 20-s
#               window after 3 s of start-up, at most 20 ms of CPU (0.1 %)
#               and 20 wake-ups, and at most 100 kB (40 blocks) read from
#               it in the run (the fixed code: 3 blocks); data is
#               fed (shim bytes > 0) and nothing credited.  The window ends
#               2 s before the first top-up (--interval 25) could come.
#   idle_mix    the same window with a mix: a FIFO at credit 0 beside
#               rdrand at its default credit 2 (credit within the bound).
#   zero_cadence  rdrand credit=0 with --interval 2 for 11 s: fed at the
#               top-up cadence (3-8 RNDADDENTROPY calls), credited 0.
#   reuse_*     a regular file of N blocks: read once (one "opened" line,
#               one "finished" line, at most N blocks passed); in
#               --bench-fill 8 (the issue's command, N = 10) credited at
#               most N x 20000 x credit/1024; as a daemon (N = 4, next to
#               rdrand) not re-opened 1 s after its end (--retry-delay 1).
#   hwrng_*     hwrng's default credit is at most 1024 x H / 8 (H its
#               health tests' min-entropy); a credit above that is refused
#               (exit 2, one line).
#   pty_*       hwrng on a character device that is not the kernel's
#               hw_random (10:183), a pseudo-terminal fed by
#               tests/helper_pattern: default credit 0 (shim credits 0);
#               with credit=512 credited at most that.
#   rdseed_*    where CPUID hides RDSEED (the kernel cleared the bit):
#               -n rdseed is refused ("no usable source", credits nothing);
#               rdseed:force=yes runs, with a warning saying why.
#
# How CPU and wake-ups are measured, and why the limits hold on a loaded
# 2-core machine.  The target is < 0.1 % of a core: 20 ms in 20 s.  CPU is
# read two ways, and both must stay within it:
#   - utime + stime of /proc/PID/stat, which counts every thread that ever
#     ran, in ticks of 10 ms (CLK_TCK 100).  The kernel scales the two to
#     the exact run time but each is cut to whole ticks on its own, so the
#     difference of two readings can be up to 2 ticks above the truth
#     (measured: 2 ticks for 4 ms of CPU): the limit is 2 ticks + 2 for
#     that rounding, 4;
#   - the exact run time, in ns, summed over the threads
#     (/proc/PID/task/*/schedstat): at most 20 ms.
# The idle daemon used 3-4 ms in the 20 s here (a metrics write every 5 s;
# make bench: 0.2 ms a minute without metrics); a spinning one 2,000 ticks
# (the old code: 870-1,290).  Load on the machine adds wall time, not CPU
# time, so it cannot move either reading towards the limit.  Wake-ups
# are the sum over the daemon's threads of voluntary context switches
# (/proc/PID/task/*/status: each time a thread waits and is woken); the
# target is <= 1 a second.  An idle daemon between top-ups has a few (the
# metrics file every 5 s).  Involuntary switches (preempted while running)
# are the machine's load, not the daemon's waking: counted too, they put
# an idle daemon at 24 and 51 in 20 s at load 34 (CI, beside a failed
# run's cross-checks).
#
# Cases that read /dev/hwrng run one after another (the daemon hands the
# kernel's credit for the device over while it runs and puts back what it
# found: two at once could put back each other's 0); the others run in
# parallel with them, the pty cases too (a pty is not the hw_random device:
# no hand-over, src/sources/hwrng.c's is_hw_random()).  About 45 s.  /sys/class/misc/hw_random/rng_quality
# is checked to be as found at the end.
# Beside another rngfeed that owns the machine's hw_random hand-over (a
# running service; tests/lib_handover.sh), the hwrng cases' daemons wait
# for it and credit the device 0 (their bound is then 0): zero_hwrng's
# daemon looks once a second whether the owner stopped (sourceset_tick()),
# which its wake-ups limit then allows for ("SKIP:" the 1 a second), and
# hwrng_default reads the default credit and H from --list -n hwrng, which
# says what a run without an owner beside it uses (test_list.sh).
# Run from the top of the tree as root:
#   RNGFEED=./rngfeed bash tests/test_credit_bound.sh   (ONLY=REGEX, KEEP=1)
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
. tests/lib_measure.sh
. tests/lib_handover.sh
PATTERN=${PATTERN:-tests/helper_pattern}
BLOCK_BITS=20000
QUALITY=/sys/class/misc/hw_random/rng_quality

say() { printf '%s\n' "$*"; }
[ "$(id -u)" -eq 0 ] || { say "SKIP: needs root (RNDADDENTROPY)"; exit 77; }
# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
	{ echo "SKIP: root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"; exit 77; }
# Every row is measured through the LD_PRELOAD shim (not under ASan).
measure_need_shim "$RNGFEED"
for f in "$RNGFEED" "$PATTERN"; do
	[ -x "$f" ] || { say "FAIL: $f is not built (make $f)"; exit 1; }
done
list=$("$RNGFEED" -c /dev/null --list 2>/dev/null)
grep -qE '^rdrand +available' <<<"$list" ||
	{ say "SKIP: no RDRAND here (the credit-0 and cadence cases use it)"; exit 77; }
HAVE_HWRNG=false
[ -c /dev/hwrng ] && grep -qE '^hwrng +available' <<<"$list" && HAVE_HWRNG=true
quality0=$(cat "$QUALITY" 2>/dev/null)
others0=$(pgrep -x rngfeed)

measure_temp test_credit_bound
# Credited regular files are read through the file ledger: a private one.
export STATE_DIRECTORY="$tmp/state"
# A private copy: a rebuild in the tree while the cases run must not pull
# the binary from under them.
mkdir "$tmp/bin" && cp "$RNGFEED" "$tmp/bin/rngfeed" || exit 1
RNGFEED=$tmp/bin/rngfeed
# The hwrng cases' hand-over record stays here, never beside a running
# service's in /run/rngfeed.
export RUNTIME_DIRECTORY=$tmp/run
mkdir "$RUNTIME_DIRECTORY" || exit 1

TCK=$(getconf CLK_TCK)

# ---- measuring a running daemon -------------------------------------------------

# probe PID: "ticks ns wakeups" (CPU ticks, CPU ns, voluntary context
# switches).
probe() {
	local p=$1 t ns cs
	t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) || return 1
	ns=$(cat "/proc/$p"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }')
	cs=$(cat "/proc/$p"/task/*/status 2>/dev/null |
		awk '$1 == "voluntary_ctxt_switches:" { s += $2 } END { print s + 0 }')
	echo "$t $ns $cs"
}

# start DIR BINARY ARGS...: the daemon under the shim, in the background;
# its PID (env execs it, so $! is the daemon's) in DIR/pid.
start() {
	local dir=$1 bin=$2
	shift 2
	now >"$dir/start"
	printf '%s\n' "$@" >"$dir/args"
	"${SHIM_ENV[@]}" RNGFEED_SHIM_OUT="$dir/shim" "$bin" -f -v \
		-c /dev/null --metrics "$dir/metrics" "$@" 2>"$dir/log" </dev/null &
	echo $! >"$dir/pid"
	echo $! >>"$tmp/pids"
}

# stop DIR: SIGTERM; DIR/stop gets "exit RC SECONDS" or "hung"/"gone RC".
stop() {
	local dir=$1 pid
	pid=$(cat "$dir/pid")
	if ! kill -0 "$pid" 2>/dev/null || grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
		wait "$pid"
		echo "gone $?" >"$dir/stop"
		return
	fi
	sigterm_wait "$pid" >"$dir/stop"
}

# ---- the cases -------------------------------------------------------------------

# zero_case NAME ARGS...: a credit-0 daemon, the 20-s window, stopped at 29 s.
zero_case() {
	local dir=$tmp/$1
	shift
	start "$dir" "$RNGFEED" --interval 25 "$@"
	at "$dir" 3
	probe "$(cat "$dir/pid")" >"$dir/w0"
	at "$dir" 23
	probe "$(cat "$dir/pid")" >"$dir/w1"
	at "$dir" 29
	stop "$dir"
}

# zero_fifo_case NAME [ARGS...]: a FIFO at the file source's default 0.
zero_fifo_case() {
	local dir=$tmp/$1 name=$1 w
	shift
	mkfifo "$dir/fifo"
	"$PATTERN" "$dir/fifo" good &
	w=$!
	echo $w >>"$tmp/pids"
	zero_case "$name" -n file -O "file:device=$dir/fifo" "$@"
	kill "$w"
	wait "$w" 2>/dev/null
}

cadence_case() {
	local dir=$tmp/$1
	start "$dir" "$RNGFEED" -n rdrand -O rdrand:credit=0 --interval 2
	at "$dir" 11
	probe "$(cat "$dir/pid")" >"$dir/w1"
	stop "$dir"
}

# reuse_case NAME MODE BLOCKS: a regular file of exactly BLOCKS blocks.
reuse_case() {
	local dir=$tmp/$1
	head -c $(($3 * 2500)) /dev/urandom >"$dir/data"
	echo "$3" >"$dir/blocks"
	# 768: the most the file source may be given at its min-entropy 6
	# (1024 x 6 / 8); the issue's 1024 is refused now.
	if [ "$2" = bench ]; then
		start "$dir" "$RNGFEED" -n file -O "file:device=$dir/data" \
			-O file:credit=768 --retry-delay 1 --retry-max 1 --bench-fill 8
		at "$dir" 15 # --bench-fill 8 ends by itself
	else
		start "$dir" "$RNGFEED" -n file -n rdrand -O "file:device=$dir/data" \
			-O file:credit=768 --interval 1 --retry-delay 1 --retry-max 1
		at "$dir" 10 # 4 blocks: the end at 4-5 s, a re-open 1 s later
	fi
	stop "$dir"
}

# pty_case NAME ARGS...: hwrng on a pseudo-terminal fed good data.
pty_case() {
	local dir=$tmp/$1 w
	shift
	"$PATTERN" "pty:$dir/pty" good &
	w=$!
	echo $w >>"$tmp/pids"
	for _ in $(seq 50); do [ -s "$dir/pty" ] && break; sleep 0.05; done
	start "$dir" "$RNGFEED" -n hwrng -O "hwrng:device=$(cat "$dir/pty")" \
		--interval 1 "$@"
	at "$dir" 8
	stop "$dir"
	kill "$w"
	wait "$w" 2>/dev/null
}

hwrng_case() {
	local dir=$tmp/$1
	start "$dir" "$RNGFEED" -n hwrng --interval 1
	at "$dir" 9
	stop "$dir"
}

# refuse_case NAME ARGS...: must exit 2 within 5 s with one line.
refuse_case() {
	local dir=$tmp/$1
	shift
	now >"$dir/start"
	timeout -k 1 5 "${SHIM_ENV[@]}" RNGFEED_SHIM_OUT="$dir/shim" \
		"$RNGFEED" -f -c /dev/null "$@" </dev/null >"$dir/out" 2>"$dir/log"
	echo "exit $? $(awk -v a="$(cat "$dir/start")" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')" >"$dir/stop"
}

rdseed_force_case() {
	local dir=$tmp/$1
	start "$dir" "$RNGFEED" -n rdseed -O rdseed:force=yes --interval 1
	at "$dir" 5
	stop "$dir"
}

# NAME|fault|how it runs|group: "hwrng" cases run one after another.
CASES=(
	"zero_rdrand|Credit: rdrand at credit 0 (spun, fed nothing)|zero_case zero_rdrand -n rdrand -O rdrand:credit=0|par"
	"zero_fifo|Credit: FIFO at the file source's default credit 0|zero_fifo_case zero_fifo|par"
	"idle_mix|Credit: a FIFO at credit 0 beside rdrand at its default 2|zero_fifo_case idle_mix -n rdrand|par"
	"zero_cadence|Credit: credit 0 fed at the top-up cadence (--interval 2)|cadence_case zero_cadence|par"
	"reuse_bench|Credit: regular file of 10 blocks, --bench-fill 8 (re-read, re-credited)|reuse_case reuse_bench bench 10|par"
	"reuse_daemon|Credit: regular file of 4 blocks, daemon, --retry-delay 1|reuse_case reuse_daemon daemon 4|par"
	"rdseed_hidden|Credit: -n rdseed while CPUID hides RDSEED|refuse_case rdseed_hidden -n rdseed|par"
	"rdseed_force|Credit: rdseed:force=yes while CPUID hides RDSEED|rdseed_force_case rdseed_force|par"
	"zero_hwrng|Credit: hwrng at credit 0 (drained virtio-rng)|zero_case zero_hwrng -n hwrng -O hwrng:credit=0|hwrng"
	"hwrng_default|Credit: hwrng default credit within 1024 x H / 8|hwrng_case hwrng_default|hwrng"
	"hwrng_over|Credit: hwrng:credit=1024 above 1024 x H / 8|refuse_case hwrng_over -n hwrng -O hwrng:credit=1024|hwrng"
	"pty_default|Credit: hwrng on a pty (not 10:183), default credit|pty_case pty_default|par"
	"pty_credit|Credit: hwrng on a pty, credit=512|pty_case pty_credit -O hwrng:credit=512|par"
)

cpuid_rdseed=false
grep -qw rdseed /proc/cpuinfo && cpuid_rdseed=true
picked=()
for c in "${CASES[@]}"; do
	IFS='|' read -r name _ _ group <<<"$c"
	[ -z "${ONLY:-}" ] || [[ $name =~ ^($ONLY)$ ]] || continue
	# (The pty cases, run beside the others, skip with them as before.)
	if { [ "$group" = hwrng ] || [[ $name = pty_* ]]; } && ! $HAVE_HWRNG; then
		say "SKIP: $name: no usable /dev/hwrng"
		continue
	fi
	if [[ $name = rdseed_* ]] && $cpuid_rdseed; then
		say "SKIP: $name: CPUID advertises RDSEED here (nothing hides it)"
		continue
	fi
	picked+=("$c")
done
CASES=("${picked[@]}")
[ ${#CASES[@]} -gt 0 ] || { say "SKIP: no case selected"; exit 77; }

t_start=$(now)
case_pids=()
hw_cmds=()
for c in "${CASES[@]}"; do
	IFS='|' read -r name _ cmd group <<<"$c"
	mkdir "$tmp/$name"
	if [ "$group" = hwrng ]; then
		hw_cmds+=("$name|$cmd")
		continue
	fi
	# shellcheck disable=SC2086 # cmd is a word list on purpose
	( $cmd ) >"$tmp/$name/case.out" 2>&1 &
	case_pids+=($!)
	echo $! >>"$tmp/pids"
done
if [ ${#hw_cmds[@]} -gt 0 ]; then
	(
		for hc in "${hw_cmds[@]}"; do
			IFS='|' read -r name cmd <<<"$hc"
			# shellcheck disable=SC2086
			( $cmd ) >"$tmp/$name/case.out" 2>&1
		done
	) &
	case_pids+=($!)
	echo $! >>"$tmp/pids"
fi
wait "${case_pids[@]}"

# ---- checks ----------------------------------------------------------------------

h_of() {
	sed -nE "s/^rngfeed: $2: using it, .*health-test H ([0-9.]+).*/\\1/p" "$1/log" | tail -n1
}

failures=0
row_fail=

# bound DIR: sum over the metrics' sources of passed x 20000 x credit/1024
# (the credit from the log; a source in the metrics without a "using it"
# line counts with the largest credit there is, 1024).  A daemon that
# waited for the hand-over (credit 0) and took it over when the other
# owner stopped credits the device as a run without one would: the credit
# --list gives with the case's arguments.
bound() {
	local dir=$1 s p c total=0 args
	for s in $(sed -nE 's/^rngfeed_source_blocks_passed_total\{source="([^"]+)"\}.*/\1/p' "$dir/metrics" 2>/dev/null); do
		p=$(metric "$dir/metrics" rngfeed_source_blocks_passed_total "$s")
		c=$(credit_of "$dir" "$s")
		if grep -q "^rngfeed: $s: another rngfeed owns the hand-over" "$dir/log" &&
			grep -q '^rngfeed: hwrng: the other rngfeed stopped' "$dir/log"; then
			mapfile -t args <"$dir/args"
			c=$("$RNGFEED" -c /dev/null "${args[@]}" --list 2>/dev/null |
				awk -v s="$s" '$1 == s { print $3 }')
		fi
		total=$((total + p * BLOCK_BITS * ${c:-1024} / 1024))
	done
	echo $total
}

check_case() {
	local name=$1 label=$2 dir=$tmp/$1 pid stopline credited calls bytes b
	local detected="" credcol="" state="" daemon="" tsrc="" srccol="-"
	row_fail=
	pid=$(cat "$dir/pid" 2>/dev/null)
	read -r stopline <"$dir/stop" 2>/dev/null
	credited=$(shim "$dir" credited_bits) calls=$(shim "$dir" calls)
	bytes=$(shim "$dir" bytes)
	if [ -z "$credited" ]; then
		problem "no shim record"
	elif [ -n "$pid" ] && [ "$(shim "$dir" pid)" != "$pid" ]; then
		problem "the shim record is not the daemon's (pid $(shim "$dir" pid), daemon $pid)"
	fi
	case $name in
	rdseed_hidden | hwrng_over) ;;
	*)
		case $stopline in
		"exit 0 "*) ;;
		"gone 0") [ "$name" = reuse_bench ] || problem "daemon ended before SIGTERM" ;;
		*) problem "daemon: $stopline after SIGTERM (want exit 0 within 2 s)" ;;
		esac
		b=$(bound "$dir")
		[ -s "$dir/metrics" ] || problem "no metrics"
		if [ -n "$credited" ] && [ "$credited" -gt "$b" ]; then
			problem "credited $credited bits > bound $b"
		fi
		credcol="$credited <= $b"
		daemon=$(sed -E 's/^exit ([0-9]+) (.*)/exit \1 in \2 s/; s/^gone 0$/ended by itself, exit 0/' <<<"${stopline:-?}")
		daemon+="; fed $bytes B in $calls calls" ;;
	esac

	case $name in
	zero_* | idle_mix)
		local src t0 n0 w0 t1 n1 w1 dt dns dw raw wl
		src=$(sed -nE 's/^rngfeed: ([a-z]+): using it.*/\1/p' "$dir/log" | head -n1)
		[ "$name" = idle_mix ] && src="file"
		tsrc=$src
		[ "$(credit_of "$dir" "$src")" = 0 ] || problem "$src credit is $(credit_of "$dir" "$src"), not 0"
		[ "$name" = idle_mix ] || [ "${credited:-1}" = 0 ] ||
			problem "$credited bits credited from a credit-0 source"
		[ "${bytes:-0}" -gt 0 ] || problem "nothing fed (credit 0 must still feed the data)"
		raw=$(metric "$dir/metrics" rngfeed_source_raw_bytes_total "$src")
		if [ "$name" = zero_cadence ]; then
			[ "${calls:-0}" -ge 3 ] && [ "${calls:-0}" -le 8 ] ||
				problem "$calls feeds in 11 s at --interval 2 (want 3-8)"
			read -r t1 n1 w1 <"$dir/w1"
			awk -v t="$t1" -v k="$TCK" 'BEGIN { exit !(t / k < 0.55) }' ||
				problem "CPU $t1 ticks in 11 s (spinning; want < 5 %)"
			detected="$calls feeds in 11 s"
			state="read ${raw:-?} B; CPU ${t1:-?} ticks, $((${n1:-0} / 1000000)) ms in 11 s"
		else
			read -r t0 n0 w0 <"$dir/w0"
			read -r t1 n1 w1 <"$dir/w1"
			if [ -z "${t0:-}" ] || [ -z "${t1:-}" ]; then
				problem "daemon gone before the window ended"
			else
				dt=$((t1 - t0)) dns=$(((n1 - n0) / 1000)) dw=$((w1 - w0))
				[ "$dt" -le 4 ] || problem "CPU $dt ticks in 20 s (limit 4: 0.1 % of a core, 2 ticks, + 2 of rounding)"
				[ "$dns" -le 20000 ] || problem "CPU $dns us in 20 s (limit 20000: 0.1 % of a core)"
				wl=20
				if [ "$name" = zero_hwrng ] && handover_waited "$dir/log"; then
					# Waiting for the hand-over: one look a second more.
					wl=40
					say "SKIP: zero_hwrng: at most 1 wake-up a second not checked (2 a second allowed: waiting for the hand-over, the daemon looks once a second whether the owner stopped): $HANDOVER_WHY"
				fi
				[ "$dw" -le "$wl" ] || problem "$dw wake-ups in 20 s (limit $wl: $((wl / 20)) a second)"
			fi
			[ -n "$raw" ] && [ "$raw" -le 100000 ] ||
				problem "read ${raw:-?} raw bytes from $src in 29 s (limit 100 kB, 40 blocks: a top-up needs one, the reader's queue holds a few)"
			detected="window 3-23 s: CPU ${dt:-?} ticks (${dns:-?} us), ${dw:-?} wake-ups"
			state="read ${raw:-?} B from $src in 29 s"
		fi ;;
	reuse_*)
		local opens fin passed c blocks
		blocks=$(cat "$dir/blocks")
		opens=$(grep -c "rngfeed: file: opened" "$dir/log")
		fin=$(grep -c "rngfeed: file: finished" "$dir/log")
		passed=$(metric "$dir/metrics" rngfeed_source_blocks_passed_total file)
		c=$(credit_of "$dir" file)
		[ "$opens" -eq 1 ] || problem "the file was opened $opens times (want once)"
		[ "$fin" -eq 1 ] || problem "$fin 'file: finished' lines (want one)"
		[ "${passed:-99}" -le "$blocks" ] || problem "$passed blocks passed from a file of $blocks"
		if [ -z "$c" ]; then
			problem "no 'file: using it, credit N/1024' line"
		elif [ -n "$credited" ] && [ "$name" = reuse_bench ] &&
			[ "$credited" -gt $((blocks * BLOCK_BITS * c / 1024)) ]; then
			problem "credited $credited bits from a file that holds $((blocks * BLOCK_BITS * c / 1024)) at credit $c"
		fi
		detected="opened $opens, finished $fin, credit ${c:-?}/1024"
		state="${passed:-?} blocks passed of $blocks"
		tsrc="file"
		[ "$name" = reuse_bench ] && credcol+="; the file holds $((blocks * BLOCK_BITS * ${c:-1024} / 1024))" ;;
	hwrng_default)
		local c h from=
		c=$(credit_of "$dir" hwrng) h=$(h_of "$dir" hwrng)
		if [ "$c" = 0 ] && handover_waited "$dir/log"; then
			# Credited 0 while the other owns the hand-over: the
			# default is the one --list gives (CREDIT, H).
			read -r _ _ c h _ < <("$RNGFEED" -c /dev/null -n hwrng --list 2>/dev/null | grep '^hwrng ')
			from=" (--list: this run waited for the hand-over, credit 0)"
		fi
		if [ -z "$c" ] || [ -z "$h" ]; then
			problem "no 'hwrng: using it' line"
		else
			awk -v c="$c" -v h="$h" 'BEGIN { exit !(c <= 1024 * h / 8) }' ||
				problem "default credit $c/1024 above 1024 x H / 8 = $(awk -v h="$h" 'BEGIN { print 1024 * h / 8 }') (H $h)"
		fi
		detected="credit ${c:-?}/1024 at H ${h:-?}$from"
		tsrc=hwrng
		state="$(metric "$dir/metrics" rngfeed_source_blocks_passed_total hwrng) blocks passed" ;;
	pty_*)
		local c want
		c=$(credit_of "$dir" hwrng)
		want=0
		[ "$name" = pty_credit ] && want=512
		if [ -z "$c" ]; then
			problem "no 'hwrng: using it' line"
		elif [ "$c" -gt "$want" ]; then
			problem "credit $c/1024 on a pty (want <= $want)"
		fi
		[ "$name" = pty_default ] && [ "${credited:-1}" != 0 ] &&
			problem "$credited bits credited from a pty at its default credit"
		grep -q "hwrng: opened .*pts" "$dir/log" || problem "the pty was never opened"
		detected="credit ${c:-?}/1024"
		tsrc=hwrng
		state="$(metric "$dir/metrics" rngfeed_source_blocks_passed_total hwrng) blocks passed" ;;
	hwrng_over | rdseed_hidden)
		local rc took lines
		read -r _ rc took <<<"$stopline"
		lines=$(wc -l <"$dir/log")
		if [ "$name" = hwrng_over ]; then
			[ "$rc" = 2 ] || problem "exit $rc (want 2: refused)"
			[ "$lines" -eq 1 ] || problem "$lines lines on stderr (want 1)"
		else
			[ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 137 ] ||
				problem "exit $rc (want a refusal: no usable source)"
			grep -qiE "no usable (entropy )?source" "$dir/log" || problem "no 'no usable source' line"
			grep -qE '^rdseed +unavailable' <<<"$list" || problem "--list does not say rdseed is unavailable"
		fi
		[ "${credited:-1}" = 0 ] || problem "$credited bits credited"
		credcol=$credited
		detected=$(head -n1 "$dir/log" | cut -c1-110)
		daemon="exit $rc in $took s, $lines line(s)" ;;
	rdseed_force)
		grep -qiE "rdseed: .*(cpuid|erratum|force)" "$dir/log" ||
			problem "no warning saying why rdseed is used though CPUID hides it"
		detected=$(grep -m1 -iE "rdseed: .*(cpuid|erratum|force)" "$dir/log" | cut -c1-110)
		state="$(metric "$dir/metrics" rngfeed_source_blocks_passed_total rdseed) blocks passed"
		tsrc=rdseed ;;
	esac
	[ -z "$tsrc" ] || srccol=$(metric "$dir/metrics" rngfeed_source_credit_bits_total "$tsrc")
	table_row "$name" "$dir/log" 8 "$label" "${detected:-?}" "${srccol:-?}" \
		"${credcol:-?}" "${state:-}" "${daemon:-}"
}

check_cases

# The machine as found: the kernel's own credit for /dev/hwrng, which the
# hwrng cases' daemons hand over while they run.  Only read: another
# rngfeed on the machine (a service, a test) may hold the hand-over now or
# may have held it at the start, and writing here would undo its; when
# none was running at either end, a change is ours.  (tests/run-tests.sh
# only notes a change between tests, as the machine's; it writes nothing.)
if [ -n "$quality0" ]; then
	q=
	for _ in $(seq 30); do
		q=$(cat "$QUALITY" 2>/dev/null)
		[ "$q" = "$quality0" ] && break
		sleep 0.1
	done
	if [ "$q" != "$quality0" ]; then
		if [ -z "$others0" ] && ! pgrep -x rngfeed >/dev/null; then
			failures=$((failures + 1))
			say "FAIL: $QUALITY is $q after the test, was $quality0"
		else
			say "note: $QUALITY is $q after the test, was $quality0; another rngfeed ran meanwhile"
		fi
	fi
fi

echo
# The columns of tests/test_faults.sh's table (the README's catalogue).
print_table "credited bits (source under test)" "$tmp/table"
echo
awk -v s="$t_start" -v n="$(now)" -v c=${#CASES[@]} \
	'BEGIN { printf "%d cases in %.0f s\n", c, n - s }'
[ $failures -eq 0 ] || { say "FAIL: $failures of ${#CASES[@]} rows failed"; exit 1; }
exit 0
