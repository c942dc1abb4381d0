#!/bin/bash
# Section 8, the EGD server (issue 17): bytes/s that "rngfeed --egd-only
# --egd-server unix:SOCK -n rdrand" serves to 1, 8 and 64 local clients
# (tests/helper_egd_client: each keeps 512 requests of 0x02 255 in flight,
# as QEMU queues its requests), against --stdout's rate from the same
# DRBG and source, measured in the same run, interleaved with them:
#   - "--stdout | cat": the DRBG's output through a pipe to a reading
#     process, the like-for-like reference (the server's output crosses a
#     socket to a client too); target: one client within 2x of it;
#   - "--stdout >/dev/null": the DRBG alone, for scale;
#   - 8 and 64 clients: the aggregate no worse than one client's, and the
#     clients served within 2x of each other.
# No per-client rate or budget (--egd-rate 0 --egd-budget 0): the server's
# ceiling, not its limits.
#
# Honest on a shared, loaded machine:
#   - one client process for every K (epoll over its K sockets, one recv
#     of up to 256 KiB per ready socket), so 1, 8 and 64 are measured
#     with the same client;
#   - the order of 1, 8 and 64 turns round from run to run (1 8 64, 8 64
#     1, 64 1 8, ...): with a fixed order, load that rises or falls during
#     the runs is charged to whichever K comes last (the 22:47 run, 1 8 64
#     every time at load average 15 to 26, had 8 and 64 at 0.81x and
#     0.82x of one client, while the server spent the same CPU per byte
#     with 1, 8 and 64 and the client then, poll(2) over all its
#     sockets, 15 % more with 64: on one core here that is 0.97x, not
#     0.82x);
#   - 8 and 64 are compared with the 1-client figure of the same run (the
#     median of those per-run ratios, and their range), not across runs;
#   - each row also gives the CPU each side spent per byte served (the
#     server from /proc/PID/stat, the client from its getrusage): those
#     do not depend on how much of the machine others took, and say which
#     side a difference comes from.
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CLIENT=$BENCH_DIR/../tests/helper_egd_client
[ -x "$CLIENT" ] || make -s -C "$BENCH_DIR/.." tests/helper_egd_client >&2 || {
	note "egd: tests/helper_egd_client missing and make failed"
	exit 1
}
[ -x "$RNGFEED" ] || { note "egd: $RNGFEED missing (make rngfeed)"; exit 1; }

if [ -n "${BENCH_SMOKE:-}" ]; then
	N_STDOUT=$((64 << 20)) T=0.5
else
	N_STDOUT=$((2 << 30)) T=3
fi

W=$(mktemp -d "$BENCH_WORK/egd.XXXXXX") || exit 1
srv=
trap '[ "$BASHPID" != $$ ] || { stop_pid srv; rm -rf "$W"; }' EXIT
failed=0

# stdout_rate KEY REDIRECT: one --stdout run of N_STDOUT bytes.
stdout_rate() {
	local t0 t1 rc
	t0=$EPOCHREALTIME
	if [ "$2" = pipe ]; then
		"$RNGFEED" --stdout -n rdrand --bytes "$N_STDOUT" -q 2>"$W/err" | cat >/dev/null
	else
		"$RNGFEED" --stdout -n rdrand --bytes "$N_STDOUT" -q >/dev/null 2>"$W/err"
	fi
	rc=$?
	t1=$EPOCHREALTIME
	if [ $rc != 0 ]; then
		note "egd: rngfeed --stdout failed (exit $rc): $(tail -n 3 "$W/err")"
		failed=1
		return
	fi
	awk -v b="$N_STDOUT" -v a="$t0" -v z="$t1" 'BEGIN { printf "x bytes_per_s=%.0f\n", b / (z - a) }' >>"$W/$1"
}

# clients K: one helper run of K clients for T seconds against the server;
# its rate into RUN[K], the line (without the ratio to one client) into
# LINE[K].
declare -A RUN LINE
clients() {
	local out c0 c1
	c0=$(pid_cpu_seconds "$srv")
	if ! out=$("$CLIENT" "unix:$W/egd.sock" many "$1" "$T" 512 cpu 2>"$W/err"); then
		note "egd: $1 clients failed: $(cat "$W/err")"
		failed=1
		return
	fi
	c1=$(pid_cpu_seconds "$srv")
	# "clients K bytes B rate R min M max X cpu_s C"
	RUN[$1]=$(awk '{ print $6 }' <<<"$out")
	LINE[$1]=$(awk -v s="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" '{
		printf "x bytes_per_s=%s spread=%.2f srv_ns=%.3f cli_ns=%.3f", $6,
			($8 > 0 ? $10 / $8 : 0), ($4 > 0 ? s / $4 * 1e9 : 0), ($4 > 0 ? $12 / $4 * 1e9 : 0) }' <<<"$out")
}

# range KEY FIELD: "min–max" of FIELD over KEY's runs.
range() {
	awk -v f="$2" '{ for (i = 2; i <= NF; i++) if (index($i, f "=") == 1) {
		v = substr($i, length(f) + 2) + 0; if (n++ == 0 || v < lo) lo = v; if (v > hi) hi = v } }
		END { if (n) printf "%.17g %.17g\n", lo, hi }' "$W/$1"
}

if ! grep -qw rdrand /proc/cpuinfo; then
	row 8 "EGD server" "not measured: no RDRAND here" "—" "—" ""
	exit 0
fi
for ((r = 1; r <= BENCH_RUNS; r++)); do
	note "egd: run $r of $BENCH_RUNS"
	stdout_rate pipe pipe
	stdout_rate null null
	"$RNGFEED" --egd-only --egd-server "unix:$W/egd.sock" -n rdrand -q --egd-rate 0 \
		--egd-budget 0 --egd-max-clients 64 --egd-clients-per-peer 64 2>"$W/srv.err" &
	# shellcheck disable=SC2034 # stop_pid reads it by name
	srv=$!
	for _ in $(seq 100); do [ -S "$W/egd.sock" ] && break; sleep 0.05; done
	# The order turns round: run 1 takes 1 8 64, run 2 8 64 1, run 3
	# 64 1 8, ...
	order=(1 8 64)
	RUN=() LINE=()
	for i in 0 1 2; do clients "${order[(i + r - 1) % 3]}"; done
	stop_pid srv
	for k in 1 8 64; do
		[ -n "${LINE[$k]:-}" ] || continue
		echo "${LINE[$k]} vs1=$(awk -v a="${RUN[$k]}" -v b="${RUN[1]:-0}" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')" >>"$W/c$k"
	done
done

pipe=$(med pipe bytes_per_s) || pipe=
null=$(med null bytes_per_s) || null=
ref="rngfeed --stdout -n rdrand | cat: $(rate "${pipe:-0}") (same run; >/dev/null: $(rate "${null:-0}"))"
one=
for k in 1 8 64; do
	if ! load "c$k"; then
		row 8 "EGD server, $k local client(s)" "not measured" "$ref" "—" ""
		continue
	fi
	v=${M[bytes_per_s]} spread=$(printf "%.2f" "${M[spread]}")
	vs1=${M[vs1]:-0}
	read -r lo hi < <(range "c$k" bytes_per_s)
	cpu=$(printf "CPU per byte: server %.2f ns, client %.2f ns" "${M[srv_ns]}" "${M[cli_ns]}")
	ours="$(rate "$v") (runs: $(rate "$lo") to $(rate "$hi"))"
	case $k in
	1)
		one=$v
		what="EGD server (--egd-only, unix socket), 1 client keeping 512 requests of 0x02 255 in flight; $cpu"
		target="≥ 0.5× --stdout | cat: $(awk -v a="$v" -v b="$pipe" 'BEGIN { print (b > 0 && a >= 0.5 * b ? "met" : "MISSED") }')"
		row 8 "$what" "$ours" "$ref" "$(xratio "$v" "$pipe")" "$target"
		;;
	*)
		# Per-run ratios to the same run's one client: the median
		# at 1 or above is met; below 1 with a run at 1 or above
		# is within the noise of the runs (said so); else missed.
		read -r rlo rhi < <(range "c$k" vs1)
		what="EGD server, $k clients together (the most served / the least: ${spread}×); $cpu"
		verdict=$(awk -v a="$vs1" -v h="$rhi" -v s="$spread" 'BEGIN {
			if (s > 2) print "MISSED (spread)"; else if (a >= 1) print "met"
			else if (h >= 1) print "met within the noise of the runs"; else print "MISSED" }')
		target="≥ 1 client's, clients within 2×: $verdict"
		row 8 "$what" "$ours" "1 client: $(rate "${one:-0}"), same runs; $ref" \
			"$(printf "%.2f× (runs: %.2f× to %.2f×)" "$vs1" "$rlo" "$rhi")" "$target"
		;;
	esac
done
exit $failed
