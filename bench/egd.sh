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
trap 'stop_pid srv; rm -rf "$W"' EXIT
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

# clients K: one helper run of K clients for T seconds against the server.
clients() {
	local out
	if ! out=$("$CLIENT" "unix:$W/egd.sock" many "$1" "$T" 512 2>"$W/err"); then
		note "egd: $1 clients failed: $(cat "$W/err")"
		failed=1
		return
	fi
	# "clients K bytes B rate R min M max X"
	awk '{ printf "x bytes_per_s=%s spread=%.2f\n", $6, ($8 > 0 ? $10 / $8 : 0) }' <<<"$out" >>"$W/c$1"
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
	for k in 1 8 64; do clients "$k"; done
	stop_pid srv
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
	case $k in
	1)
		one=$v
		what="EGD server (--egd-only, unix socket), 1 client keeping 512 requests of 0x02 255 in flight"
		target="≥ 0.5× --stdout | cat: $(awk -v a="$v" -v b="$pipe" 'BEGIN { print (b > 0 && a >= 0.5 * b ? "met" : "MISSED") }')"
		row 8 "$what" "$(rate "$v")" "$ref" "$(xratio "$v" "$pipe")" "$target"
		;;
	*)
		what="EGD server, $k clients together (the most served / the least: ${spread}×)"
		target="≥ 1 client's, clients within 2×: $(awk -v a="$v" -v b="$one" -v s="$spread" 'BEGIN { print (a >= b && s <= 2 ? "met" : "MISSED") }')"
		row 8 "$what" "$(rate "$v")" "1 client: $(rate "${one:-0}"); $ref" "$(xratio "$v" "$one")" "$target"
		;;
	esac
done
exit $failed
