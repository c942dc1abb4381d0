#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Credit from measurement (issue 19), measured from outside the process:
# synthetic streams of known min-entropy (tests/helper_streams, fixed seed)
# are fed through the file source at the highest credit it may be given
# (min-entropy=8, credit=1024: 8 bits a byte), the daemon runs
# --bench-fill (feeding the kernel as fast as tested input allows) under
# bench/shim.so, which counts every RNDADDENTROPY the kernel accepted.
# Every row asserts:
#   - the kernel was credited (shim) at most what the tested input truly
#     carried: blocks passed x 2,500 bytes x H_true bits;
#   - the source's effective credit at the end (metrics) is at most
#     1024 x H_true / 8, with its estimate in the metrics;
#   - a stream that fails the health tests is credited nothing.
# The streams (true H per byte): IID bits with P(1) = 0.55 (6.90: fails
# FIPS monobit, every block), 128 of the 256 values (7), every byte twice
# (4), every fourth byte a copy of the third (6: uniform bytes, so only the
# lag predictor sees it), a Markov chain repeating the previous byte with
# probability 1/16 (3.92).  200 blocks each (500,000 bytes).
# Run from the top of the tree as root:
#   RNGFEED=./rngfeed bash tests/test_estimate_credit.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
STREAMS=${STREAMS:-tests/helper_streams}
BLOCK=2500
BLOCKS=200
RUN_S=${RUN_S:-4}

need_feeder "needs root (--bench-fill feeds the kernel)"
measure_need_shim "$RNGFEED"
need_built "$RNGFEED" "$STREAMS"
measure_temp test_estimate_credit
# Credited regular files are read through the file ledger: a private one.
export STATE_DIRECTORY="$tmp/state"
pids=()

label() {
	case $1 in
	biased) echo "IID bits, P(1) = 0.55" ;;
	half) echo "128 of the 256 byte values" ;;
	pairs) echo "every byte twice" ;;
	fourth) echo "every fourth byte repeats the third" ;;
	markov) echo "Markov: the previous byte again w.p. 1/16" ;;
	esac
}

KINDS=(biased half pairs fourth markov)
for k in "${KINDS[@]}"; do
	"$STREAMS" "$k" $((BLOCKS * BLOCK)) >"$tmp/$k.raw" || { say "FAIL: helper_streams $k"; exit 1; }
	LD_PRELOAD=$SHIM RNGFEED_SHIM_OUT="$tmp/$k.shim" "$RNGFEED" -f -v -c /dev/null -n file \
		-O "file:device=$tmp/$k.raw" -O file:min-entropy=8 -O file:credit=1024 \
		--metrics "$tmp/$k.prom" --bench-fill "$RUN_S" >"$tmp/$k.out" 2>"$tmp/$k.err" </dev/null &
	pids+=($!)
done

failures=0
# Rows in the README fault catalogue's columns: fault | detected by |
# credited bits (source under test) | credited to the kernel (shim) <= bound
# (the bound here: what the passed blocks truly carried) | source state |
# daemon state | result.
i=0
for k in "${KINDS[@]}"; do
	wait "${pids[$i]}"
	rc=$?
	i=$((i + 1))
	h=$("$STREAMS" -h "$k")
	problems=
	problem() { problems+="${problems:+; }$*"; }
	[ $rc -eq 0 ] || problem "exit $rc: $(tail -n 3 "$tmp/$k.err")"
	passed=$(metric "$tmp/$k.prom" rngfeed_source_blocks_passed_total file)
	eff=$(metric "$tmp/$k.prom" rngfeed_source_effective_credit file)
	est=$(metric "$tmp/$k.prom" rngfeed_source_min_entropy_estimate file)
	shim=$(sed -n 's/.* credited_bits=\([0-9]*\).*/\1/p' "$tmp/$k.shim" 2>/dev/null | tail -n 1)
	ledger=$(metric "$tmp/$k.prom" rngfeed_source_credit_bits_total file)
	if [ -z "$passed" ] || [ -z "$eff" ]; then problem "no metrics"; fi
	[ -n "$shim" ] || problem "no shim record"
	passed=${passed:-0} eff=${eff:-9999} shim=${shim:-999999999}
	true_credit=$(awk -v h="$h" 'BEGIN { printf "%d", 1024 * h / 8 }')
	bound=$(awk -v p="$passed" -v h="$h" -v b=$BLOCK 'BEGIN { printf "%d", p * b * h }')
	if [ "$passed" -gt 0 ]; then
		[ "$eff" -le "$true_credit" ] || problem "effective credit $eff > $true_credit"
		[ -n "$est" ] || problem "no estimate in the metrics"
	else
		# Never passed the health tests: nothing to credit.
		detected=$(grep -m1 -oE 'block failed [^;]*' "$tmp/$k.err" | sed 's/^block failed //')
		[ -n "$detected" ] || problem "no block passed and no failure logged"
	fi
	[ "$shim" -le "$bound" ] || problem "kernel credited $shim > $bound"
	if [ "$passed" -gt 0 ]; then
		detcell="estimate $(printf '%.2f' "${est:-0}") bits/byte: credit $eff/1024 <= $true_credit (true)"
	else
		detcell="never passed: $(sed -e 's/SP 800-90B repetition count/RCT/g' \
			-e 's/SP 800-90B adaptive proportion/APT/g' -e 's/, FIPS /\//g' \
			-e 's/ during the start-up test/ (start-up)/' <<<"$detected")"
	fi
	if [ -z "$problems" ]; then res=PASS; else res="FAIL: $problems"; failures=$((failures + 1)); fi
	say "| Estimate: $(label "$k"), true H $(printf '%.2f' "$h") | $detcell | ${ledger:-?} | $shim <= $bound | $passed of $BLOCKS blocks passed | exit $rc after --bench-fill $RUN_S | $res |"
done
[ $failures -eq 0 ] || exit 1
exit 0
