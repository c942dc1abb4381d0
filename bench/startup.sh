#!/bin/bash
# Section 6, start-up: the time from exec to the first RNDADDENTROPY that
# credits entropy, for rngfeed and rngd, per source, from cold (rngfeed:
# -c /dev/null, no saved state; rngd keeps none).
#
# How: both daemons run under bench/shim.so (see its header).  The harness
# reads bash's $EPOCHREALTIME (CLOCK_REALTIME, 1 µs) in the subshell that
# then execs the daemon, and hands it over as RNGFEED_SHIM_T0.  The shim
# records CLOCK_REALTIME and CLOCK_MONOTONIC in its constructor (after exec
# and the dynamic loader) and CLOCK_MONOTONIC at the first credited call:
#   start-up = (ctor_real - t0) + (first_credit_mono - ctor_mono)
# Realtime is used only across the exec, ~ms, where no clock step is
# expected.  The first term, exec to the constructor, is also a row: it is
# the loader's share, mostly the shared libraries each daemon links.
# The harness waits for the shim's record (sleeping in bash's read -t, no
# fork) and stops the daemon with SIGTERM by PID.
#
# Environment: BENCH_RUNS, BENCH_SMOKE (rngfeed only, rdseed and rdrand).
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

SHIM=$BENCH_DIR/shim.so
W=$BENCH_WORK/startup
SMOKE=${BENCH_SMOKE:-}
TIMEOUT_S=5 # longest wait for a first credit (hwrng needs a 2,500-byte block)

if [ "$(id -u)" != 0 ]; then note "startup: needs root (RNDADDENTROPY)"; exit 1; fi
if [ ! -r "$SHIM" ]; then note "startup: $SHIM missing (make bench/shim.so)"; exit 1; fi
rm -rf "$W"
mkdir -p "$W"

child='' tpm_pid=''
# shellcheck disable=SC2317 # called from the traps
cleanup() {
	stop_pid child
	stop_pid tpm_pid
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap '[ "$BASHPID" != $$ ] || cleanup; exit 1' INT TERM

# A sleep without a fork (a fork would compete with the daemon being timed
# on this 2-CPU machine): read -t on a FIFO nobody writes.
mkfifo "$W/sleep.fifo"
exec {SLEEP_FD}<>"$W/sleep.fifo"
nap() { read -r -t "$1" -u "$SLEEP_FD" _; }

# One run of NAME: the command after it, exec'd under the shim.  Appends
# "start-up-ms loader-ms page-faults" to $W/NAME.ms (page faults, minor +
# major, from exec to the first credit: getrusage in the shim's record).
run_one() {
	local name=$1 out=$W/$1.shim line='' i
	shift
	rm -f "$out" "$out.tmp"
	(
		export LD_PRELOAD=$SHIM RNGFEED_SHIM_OUT=$out
		RNGFEED_SHIM_T0=$EPOCHREALTIME exec "$@"
	) 2>"$W/$name.err" &
	child=$!
	for ((i = 0; i < TIMEOUT_S * 200; i++)); do
		if [ -r "$out" ]; then
			read -r line <"$out"
			[[ $line == *first_credit_mono_ns=[1-9]* ]] && break
		fi
		kill -0 "$child" 2>/dev/null || break
		nap 0.005
	done
	stop_pid child
	if [[ $line != *first_credit_mono_ns=[1-9]* ]]; then
		note "startup: $name: no credited RNDADDENTROPY within $TIMEOUT_S s: $(tail -3 "$W/$name.err")"
		return 1
	fi
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		loader = v["ctor_real_ns"] / 1e6 - v["t0"] * 1e3
		after = (v["first_credit_mono_ns"] - v["ctor_mono_ns"]) / 1e6
		printf "%.3f %.3f %d\n", loader + after, loader, v["minflt"] + v["majflt"] }' <<<"$line" >>"$W/$name.ms"
	note "startup: $name: $(tail -1 "$W/$name.ms") (ms: exec to first credit, exec to constructor; page faults to first credit)"
}

med() { awk -v c="$2" '{ print $c }' "$W/$1.ms" | median; }
ms() { printf '%.2f ms' "$1"; }

# ---- what runs ---------------------------------------------------------------
# set_cmd NAME: the command line of configuration NAME into cmd[].
set_cmd() {
	local rf=("$RNGFEED" -f -q -c /dev/null)
	case $1 in
	# force=yes: rngfeed follows CPUID, and this VM's kernel hides
	# RDSEED (AMD's RDSEED32 erratum); the path is timed all the same.
	rf-rdseed) cmd=("${rf[@]}" -n rdseed -O rdseed:force=yes) ;;
	rf-rdrand) cmd=("${rf[@]}" -n rdrand) ;;
	rf-hwrng) cmd=("${rf[@]}" -n hwrng) ;;
	# A unix: socket (swtpm) is credited 0 by default; 64, as a chip.
	rf-tpm) cmd=("${rf[@]}" -n tpm -O "tpm:device=unix:$W/tpm.sock" -O tpm:credit=64) ;;
	# rngd 5: -d 1 no DRNG, -n 1 no TPM; -r a path that does not exist
	# leaves it RDRAND only.
	rngd-rdrand) cmd=(rngd -f -p "$W/rngd.pid" -n 1 -r "$W/no-hwrng") ;;
	rngd-hwrng) cmd=(rngd -f -p "$W/rngd.pid" -d 1 -n 1 -r /dev/hwrng) ;;
	esac
}
NAMES=(rf-rdseed rf-rdrand)
if [ -z "$SMOKE" ]; then
	command -v rngd >/dev/null || { note "startup: rngd (rng-tools5) missing"; exit 1; }
	NAMES+=(rngd-rdrand rf-hwrng rngd-hwrng)
	# A software TPM on a socket, if swtpm is installed (rngfeed only:
	# rngd 5 talks to a TPM 1.2 at /dev/tpm0 and to nothing else).
	if command -v swtpm >/dev/null; then
		mkdir -p "$W/tpmstate"
		swtpm socket --tpm2 --server type=unixio,path="$W/tpm.sock" \
			--ctrl type=unixio,path="$W/tpm.ctrl" --tpmstate dir="$W/tpmstate" \
			--flags not-need-init,startup-clear 2>"$W/swtpm.err" &
		# shellcheck disable=SC2034 # stopped through stop_pid's nameref
		tpm_pid=$!
		for ((i = 0; i < 200; i++)); do [ -S "$W/tpm.sock" ] && break; nap 0.01; done
		if [ -S "$W/tpm.sock" ]; then
			NAMES+=(rf-tpm)
		else
			note "startup: swtpm did not start: $(tail -2 "$W/swtpm.err")"
		fi
	fi
fi

note "startup: ${#NAMES[@]} configurations x $BENCH_RUNS runs"
failed=0
for ((run = 0; run < BENCH_RUNS; run++)); do
	for n in "${NAMES[@]}"; do
		set_cmd "$n"
		run_one "$n" "${cmd[@]}" || failed=1
	done
done
[ $failed = 0 ] || exit 1

# ---- the rows ----------------------------------------------------------------
skip="skipped (smoke)"
o=$(med rf-rdseed 1)
row 6 "rdseed (-O rdseed:force=yes): exec → first credited RNDADDENTROPY (of which exec → constructor)" \
	"$(ms "$o") ($(ms "$(med rf-rdseed 2)"))" \
	"$([ -n "$SMOKE" ] && echo "$skip" || echo "n/a: rngd 5 uses RDSEED only when CPUID advertises it; this VM's CPUID hides it")" "" \
	"≤ 10 ms: $(awk -v o="$o" 'BEGIN { print (o <= 10 ? "met" : "MISSED") }')"
for src in rdrand hwrng; do
	[ -s "$W/rf-$src.ms" ] || continue
	o=$(med "rf-$src" 1)
	if [ -n "$SMOKE" ]; then
		row 6 "$src: exec → first credited RNDADDENTROPY" "$(ms "$o")" "$skip"
	else
		r=$(med "rngd-$src" 1)
		row 6 "$src: exec → first credited RNDADDENTROPY (ratio < 1: ours sooner)" \
			"$(ms "$o")" "$(ms "$r") (rngd)" "$(ratio "$o" "$r")"
	fi
done
if [ -s "$W/rf-tpm.ms" ]; then
	row 6 "tpm (swtpm on a unix socket): exec → first credited RNDADDENTROPY" \
		"$(ms "$(med rf-tpm 1)")" "n/a: rngd 5 reads only a TPM 1.2 at /dev/tpm0"
fi
# Page faults to the first credit: what loading and start-up touch (the
# shim's own few are in both daemons' counts).
for src in rdrand hwrng; do
	[ -s "$W/rf-$src.ms" ] || continue
	o=$(med "rf-$src" 3)
	if [ -n "$SMOKE" ]; then
		row 6 "$src: page faults, exec → first credited RNDADDENTROPY" "$o" "$skip"
	else
		r=$(med "rngd-$src" 3)
		row 6 "$src: page faults (minor + major), exec → first credited RNDADDENTROPY" \
			"$o" "$r (rngd)" "$(ratio "$o" "$r")" \
			"reported (exec → first credit lead kept: $(awk -v o="$(med "rf-$src" 1)" -v r="$(med "rngd-$src" 1)" 'BEGIN { print (o <= r ? "yes" : "no") }'))"
	fi
done
o=$(cat "$W"/rf-*.ms | awk '{ print $2 }' | median)
if [ -n "$SMOKE" ]; then
	row 6 "of which exec → shim constructor (loader, shared libraries)" "$(ms "$o")" "$skip"
else
	r=$(cat "$W"/rngd-*.ms | awk '{ print $2 }' | median)
	row 6 "of which exec → shim constructor (loader, shared libraries), every source" \
		"$(ms "$o")" "$(ms "$r") (rngd)" "$(ratio "$o" "$r")"
fi
exit 0
