#!/bin/bash
# Issue 15 defect 5: a SIGTERM was once lost under heavy load, after a VM
# generation discard, with NOTIFY_SOCKET set (the daemon fed on for 10
# minutes).  Here a few hundred daemons each get one SIGTERM at a random
# moment of a case, under CPU load (two busy loops), all with NOTIFY_SOCKET
# pointing at a datagram socket in the test's temporary directory that reads
# what they send, as systemd would.  Every daemon must be gone within
# STOP_LIMIT (1 s) of its SIGTERM; the test fails naming each case that was
# slower, and prints the slowest stop.
#
# Cases (each: rdrand, and a regular file that is read once and finishes):
#   startup   SIGTERM 0-300 ms after the start (set-up, start-up tests);
#   feed      feeding the kernel, SIGTERM 0.2-0.7 s in;
#   fill      --bench-fill (as fast as the kernel takes it), SIGTERM 0.2-0.7 s in;
#   test      -t (the pipeline without feeding), SIGTERM 0.2-0.7 s in;
#   discard   SIGUSR2 (discard the DRBG state), SIGTERM 0-50 ms later;
#   vmgenid   a NEW_VMGENID uevent (the test runs in a network namespace of
#             its own, so no other rngfeed hears it), SIGTERM 0-50 ms later;
#   reload    SIGHUP (new readers), SIGTERM 0-50 ms later.
# A daemon that does not stop is killed after 10 s, so a hang fails the test
# instead of hanging it.  SIGTERM_ROUNDS (default 8) rounds of the 7 cases
# run in SIGTERM_WORKERS (default 4) parallel workers: 224 SIGTERMs, about
# 80 s.  TEST_TIME_SCALE stretches the limit (make tsan: 4).
# Exit 0 pass, 1 fail, 77 skip.
set -u

RNGFEED=${RNGFEED:-./rngfeed}
ROUNDS=${SIGTERM_ROUNDS:-8}
WORKERS=${SIGTERM_WORKERS:-4}
SCALE=${TEST_TIME_SCALE:-1}
# A sanitized build (make sanitize) is slower by design: 3 s there.
[ -n "${RNGFEED_SANITIZED:-}" ] && [ "$SCALE" = 1 ] && SCALE=3
STOP_LIMIT=$(awk -v s="$SCALE" 'BEGIN { print 1.0 * s }')
. tests/lib_measure.sh

if [ -z "${RNGFEED_OUTER_NETNS:-}" ]; then
	need_feeder "needs root (feeding the kernel needs CAP_SYS_ADMIN)"
	need_built "$RNGFEED"
	"$RNGFEED" --list 2>/dev/null | grep -q '^rdrand *available' ||
		skip "no RDRAND on this CPU"
	command -v perl >/dev/null || skip "needs perl (the notify socket)"
	unshare -n true 2>/dev/null || skip "cannot make a network namespace (unshare -n)"
	RNGFEED_OUTER_NETNS=$(stat -L -c %i /proc/self/ns/net) || exit 1
	export RNGFEED_OUTER_NETNS
	exec unshare -n bash "$0" "$@"
fi

# ---- inside a network namespace of its own ----
measure_temp test_sigterm
pids=()
trap 'exit 1' INT TERM HUP

# systemd's side of sd_notify: read and count every datagram.
perl -MSocket -e '
	my ($path, $out) = @ARGV;
	socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
	bind($s, pack_sockaddr_un($path)) or die "bind: $!";
	open(my $o, ">", $out) or die; select($o); $| = 1;
	print "listening\n";
	my $n = 0;
	while (defined recv($s, my $buf, 65536, 0)) { $n++; print "$n\n"; }
' "$tmp/notify" "$tmp/notify.log" &
pids+=($!)
for _ in $(seq 100); do
	[ -S "$tmp/notify" ] && grep -q listening "$tmp/notify.log" 2>/dev/null && break
	sleep 0.05
done
[ -S "$tmp/notify" ] || { say "FAIL: the notify socket did not appear"; exit 1; }
export NOTIFY_SOCKET=$tmp/notify

head -c 100000 /dev/urandom >"$tmp/data"

# Load: two busy loops, stopped at the end (cleanup).
for _ in 1 2; do
	( while :; do :; done ) &
	pids+=($!)
done

# rand_ms MIN MAX
rand_ms() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }
ms_sleep() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

# run_case WORKER N CASE: one daemon, one SIGTERM; appends
# "CASE SECONDS STATUS" to the worker's results.
run_case() {
	local w=$1 n=$2 c=$3 pid killer t0 t1 rc args=()
	local log=$tmp/w$w.$n.$c.log
	case $c in
	fill) args=(--bench-fill 60) ;;
	test) args=(-t) ;;
	*) args=(--interval 1) ;;
	esac
	"$RNGFEED" -f -v -c /dev/null -n rdrand -n file -O "file:device=$tmp/data" \
		"${args[@]}" >"$log" 2>&1 </dev/null &
	pid=$!
	# Past the start-up case, the random moment counts from when the
	# readers run (their signals are blocked before they start): a
	# signal before the daemon handles signals kills it by default.
	if [ "$c" != startup ]; then
		for _ in $(seq $((200 * SCALE))); do
			grep -qs ': opened ' "$log" && break
			sleep 0.05
		done
		grep -qs ': opened ' "$log" ||
			echo "$c: no reader opened within $((10 * SCALE)) s" >>"$tmp/never.$w"
	fi
	case $c in
	startup) ms_sleep "$(rand_ms 0 300)" ;;
	feed | fill | test) ms_sleep "$(rand_ms 200 700)" ;;
	discard | vmgenid | reload)
		ms_sleep "$(rand_ms 200 500)"
		case $c in
		discard) kill -USR2 "$pid" 2>/dev/null ;;
		reload) kill -HUP "$pid" 2>/dev/null ;;
		vmgenid) tests/helper_uevent >/dev/null 2>&1 ;;
		esac
		ms_sleep "$(rand_ms 0 50)"
		;;
	esac
	# A daemon that hangs is killed, so the test ends either way.
	( sleep 10; kill -KILL "$pid" 2>/dev/null ) &
	killer=$!
	t0=$EPOCHREALTIME
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	t1=$EPOCHREALTIME
	kill "$killer" 2>/dev/null
	wait "$killer" 2>/dev/null
	echo "$c $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $rc $log" >>"$tmp/results.$w"
}

worker() {
	local w=$1 cases=(startup feed fill test discard vmgenid reload)
	for n in $(seq "$ROUNDS"); do
		# A different order in every round and worker.
		for c in $(printf '%s\n' "${cases[@]}" | shuf); do
			run_case "$w" "$n" "$c"
		done
	done
}

start=$EPOCHREALTIME
wpids=()
for w in $(seq "$WORKERS"); do
	worker "$w" &
	wpids+=($!)
done
for p in "${wpids[@]}"; do wait "$p"; done
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

cat "$tmp"/results.* >"$tmp/results"
total=$(wc -l <"$tmp/results")
# One pass: the slow stops and bad exit statuses, by case, then per case
# the count, the median and the slowest stop.
awk -v l="$STOP_LIMIT" '
	$2 > l { printf "FAIL: %s: stopped %s s after its SIGTERM (limit %s s): %s\n", $1, $2, l, $4 }
	$3 != 0 && !($1 == "startup" && $3 == 143) { printf "FAIL: %s: exit status %s: %s\n", $1, $3, $4 }
	{ n[$1]++; t[$1, n[$1]] = $2; if ($2 > m[$1]) m[$1] = $2; if ($2 > all) all = $2 }
	END {
		for (c in n) {
			k = n[c]
			# insertion sort of this case times (a few dozen)
			for (i = 2; i <= k; i++) { v = t[c, i]; j = i - 1
				while (j >= 1 && t[c, j] > v) { t[c, j + 1] = t[c, j]; j-- }
				t[c, j + 1] = v }
			printf "  %-8s %4d SIGTERMs, median stop %.3f s, slowest %.3f s\n", c, k, t[c, int((k + 1) / 2)], m[c]
		}
		printf "  slowest stop overall: %.3f s\n", all
	}' "$tmp/results" >"$tmp/report"
grep '^FAIL' "$tmp/report" | sed 's/: \/tmp\/[^ ]*$//'
grep '^FAIL' "$tmp/report" | awk '{ print $NF }' | while read -r log; do
	say "--- $log"; tail -n 6 "$log" | sed 's/^/    | /'
done
grep -v '^FAIL' "$tmp/report" | sort
failures=$(grep -c '^FAIL' "$tmp/report")
if cat "$tmp"/never.* >"$tmp/never" 2>/dev/null && [ -s "$tmp/never" ]; then
	sed 's/^/FAIL: /' "$tmp/never"
	failures=$((failures + $(wc -l <"$tmp/never")))
fi
heard=$(grep -c "^[0-9]" "$tmp/notify.log")
say "$total SIGTERMs in $elapsed s under two busy loops; the notify socket got $heard messages"
[ "$total" -ge $((ROUNDS * WORKERS * 7)) ] ||
	{ say "FAIL: only $total of $((ROUNDS * WORKERS * 7)) cases ran"; failures=$((failures + 1)); }
if [ "$failures" -ne 0 ]; then
	say "$failures failure(s)"
	exit 1
fi
exit 0
