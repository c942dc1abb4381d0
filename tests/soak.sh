#!/bin/bash
# Soak test (make soak; not part of make check or CI): run the whole
# pipeline on every usable source for SOAK_SECONDS (default 1800) with
# SIGUSR1 and SIGHUP every few seconds, and check that memory (RSS) and
# the descriptor count stay flat and that healthy sources fail FIPS blocks
# no more often than random data does.
set -u
RNGFEED=${RNGFEED:-./rngfeed}
SOAK_SECONDS=${SOAK_SECONDS:-1800}
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }

tmp=$(mktemp -d) || exit 1
pid=
trap '[ "$BASHPID" != $$ ] || { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }' EXIT

"$RNGFEED" -t --stats-interval 60 --metrics "$tmp/m" 2>"$tmp/log" &
pid=$!
sleep 10
rss0=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$pid/status)
fd0=$(ls /proc/$pid/fd | wc -l)
echo "start: RSS ${rss0} kB, ${fd0} descriptors; running ${SOAK_SECONDS} s"
end=$((SECONDS + SOAK_SECONDS))
i=0
max_rss=$rss0
while [ $SECONDS -lt $end ]; do
	sleep 3
	kill -0 "$pid" 2>/dev/null || fail "the daemon died: $(tail -5 "$tmp/log")"
	i=$((i + 1))
	if [ $((i % 2)) -eq 0 ]; then kill -USR1 "$pid"; else kill -HUP "$pid"; fi
	rss=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$pid/status)
	fd=$(ls /proc/$pid/fd | wc -l)
	[ "$rss" -gt "$max_rss" ] && max_rss=$rss
	[ "$fd" -le $((fd0 + 2)) ] || fail "descriptors grew from $fd0 to $fd"
done
kill -TERM "$pid"
wait "$pid" || fail "exit status $? on SIGTERM"
pid=
# Flat: after the first 10 s (threads, buffers, libgcrypt pools in place)
# the resident set may move by page-cache noise, not grow with time.
[ "$max_rss" -le $((rss0 + 1024)) ] || fail "RSS grew from $rss0 kB to $max_rss kB"

# FIPS failures on healthy sources: about 1 block in 1,250 for random data
# (rngtest's own figure, 0.08 %); allow the Poisson mean + 5 sigma + 3.
awk -F'[{}" ]+' '
	/^rngfeed_source_blocks_passed_total/ { p[$3] = $NF }
	/^rngfeed_source_blocks_failed_total/ { f[$3] = $NF }
	END {
		bad = 0
		for (s in p) {
			n = p[s] + f[s]; mean = n / 1250
			limit = mean + 5 * sqrt(mean) + 3
			printf "%s: %d blocks, %d failed (limit %.0f)\n", s, n, f[s], limit
			if (f[s] > limit) bad = 1
		}
		exit bad
	}' "$tmp/m" || fail "a healthy source failed more blocks than random data does"
echo "soak: ${SOAK_SECONDS} s, $i signals, RSS $rss0 → max $max_rss kB, descriptors flat at $fd0"
exit 0
