#!/bin/bash
# rngfeed --check must print the same FIPS 140-2 counters as rngtest (Debian
# rng-tools5) on the same input, and agree with it on pass/fail.
# Run from the top of the tree; RNGFEED names the binary (default ./rngfeed).
# Exit 0 pass, 1 fail, 77 skip.
set -u
RNGFEED=${RNGFEED:-./rngfeed}

. tests/lib_measure.sh
need_tools "Debian package rng-tools5" rngtest
if ! command -v perl >/dev/null 2>&1; then
	echo "SKIP: perl is needed to build the data sets"
	exit 77
fi
need_built "$RNGFEED"
measure_temp test_check_vs_rngtest

BLOCK=2500
N=200                       # blocks per data set
LEN=$((4 + BLOCK * N))      # rngtest's 4 seed bytes, then whole blocks

# perl -e helpers: all data sets are built from /dev/urandom or constants.
rnd() { head -c "$1" /dev/urandom; }
const() { perl -e 'print chr(hex($ARGV[0])) x $ARGV[1]' "$1" "$2"; }

rnd "$LEN" >"$tmp/random"
# A trailing partial block is read but not tested, by both.
rnd $((LEN + 1234)) >"$tmp/random-partial"
const ff "$LEN" >"$tmp/all-ones"
const 00 "$LEN" >"$tmp/all-zeros"
const aa "$LEN" >"$tmp/0xaa"
# Each bit is the AND of two random bits: 25 % ones.
rnd $((2 * LEN)) | perl -e 'local $/; my $d = <STDIN>; my $n = length($d) / 2;
	print substr($d, 0, $n) & substr($d, $n)' >"$tmp/bias25"
# One random block, over and over: FIPS cannot see it (both must pass).
{ rnd 4; b=$(rnd $BLOCK | od -An -v -tx1 | tr -d ' \n'); for ((i = 0; i < N; i++)); do
	echo -n "$b"; done | perl -ne 'print pack("H*", $_)'; } >"$tmp/block-repeated"
# Bit 0 of every byte stuck at 1.
rnd "$LEN" | perl -e 'local $/; my $d = <STDIN>; print $d | ("\x01" x length($d))' \
	>"$tmp/stuck-bit"
# An 8-bit counter 0, 1, …, 255, 0, …: FIPS passes most of its blocks; the
# difference RCT (developer-defined) fails every one.
perl -e 'print map { chr($_ % 256) } 0 .. $ARGV[0] - 1' "$LEN" >"$tmp/counter8"
# plant FILE OFFSET HEXBYTES: overwrite bytes in place.
plant() { perl -e 'open(my $f, "+<", $ARGV[0]) or die; binmode $f; seek($f, $ARGV[1], 0);
	print $f pack("H*", $ARGV[2]); close($f)' "$@"; }
# A single long run: 32 zero bits (>= 26) inside block 10, framed by ones.
cp "$tmp/random" "$tmp/long-run"
plant "$tmp/long-run" $((4 + 10 * BLOCK + 1000)) ff00000000ff
# A run of 40 ones across the boundary of blocks 20 and 21: 20 bits on each
# side, so no block holds a run of 26 (runs do not span blocks).
cp "$tmp/random" "$tmp/run-across"
plant "$tmp/run-across" $((4 + 21 * BLOCK - 3)) 00fffff00fffff00
# A repeated 32-bit word inside block 30, and one across blocks 40/41.
cp "$tmp/random" "$tmp/repeated-word"
plant "$tmp/repeated-word" $((4 + 30 * BLOCK + 400)) deadbeefdeadbeef
plant "$tmp/repeated-word" $((4 + 41 * BLOCK - 4)) 0123456701234567

counters() { grep -E 'bits received from input|FIPS 140-2' | sed -E 's/^(rngtest|rngfeed): //'; }

fail=0
for f in random random-partial all-ones all-zeros 0xaa bias25 block-repeated stuck-bit \
	long-run run-across repeated-word counter8; do
	peer=$(rngtest <"$tmp/$f" 2>&1 >/dev/null)
	peer_rc=$?
	ours=$("$RNGFEED" --check "$tmp/$f" 2>&1)
	ours_rc=$?
	if [ "$ours_rc" -gt 1 ]; then
		echo "FAIL $f: rngfeed --check exited $ours_rc"; echo "$ours"; fail=1; continue
	fi
	if ! diff <(counters <<<"$peer") <(counters <<<"$ours") >"$tmp/diff"; then
		echo "FAIL $f: counters differ (< rngtest, > rngfeed)"; cat "$tmp/diff"; fail=1
		continue
	fi
	if [ $((peer_rc == 0)) -ne $((ours_rc == 0)) ]; then
		echo "FAIL $f: rngtest exit $peer_rc, rngfeed exit $ours_rc"; echo "$ours"; fail=1
		continue
	fi
	echo "ok   $f: $(counters <<<"$ours" | sed -n 's/FIPS 140-2 failures: //p') of $N blocks" \
		"failed FIPS, exit $ours_rc; $(grep -E 'repetition count.*failures|adaptive proportion failures' <<<"$ours" | sed -E 's/rngfeed: SP 800-90B //; s/ \(developer-defined, [^)]*\)//' | tr '\n' ' ')"
done

# The counter is caught in every block by the difference RCT, so never usable.
if ! "$RNGFEED" --check "$tmp/counter8" | grep -Eq "difference repetition count .* failures: $N\$"; then
	echo "FAIL counter8: not every block failed the difference repetition count test"; fail=1
fi

# stdin works the same as a file.
if ! diff <("$RNGFEED" --check <"$tmp/bias25" | counters) \
	<("$RNGFEED" --check "$tmp/bias25" | counters) >/dev/null; then
	echo "FAIL: --check from stdin differs from --check FILE"; fail=1
fi
exit $fail
