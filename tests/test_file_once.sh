#!/bin/bash
# Issue 14 defect 2: a regular file is read once.  At its end the file
# source is finished (said once) and never reopened, so its bytes are
# credited at most once: credited bits <= whole blocks in the file x 20,000
# x credit / 1024.  The old code reopened the file after every back-off and
# credited a 25,000-byte file 798,720 bits in 8 s.
#   1. 25,000 bytes (10 whole blocks);
#   2. 26,234 bytes (10 whole blocks and a part-block, never used);
#   3. (issue 14, --wait-for-source) a file that appears 1 s after the
#      reader found it missing is opened within a few seconds, not at the
#      10 s back-off: a source that is not there yet is looked for every
#      second.
# Measured by --bench-fill, which feeds the kernel (root) and prints the
# bits it credited on exit.  Exit 0 pass, 1 fail, 77 skip.
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
need_feeder "needs root (--bench-fill feeds the kernel)"
need_built "$RNGFEED"
measure_temp test_file_once
# Credited regular files are read through the file ledger: a private one.
export STATE_DIRECTORY="$tmp/state"
pids=()

BLOCK=2500  # MONITOR_BLOCK_BYTES: 20,000 bits
CREDIT=768 # at most 1024 x H / 8 with the file source's H = 6
SECONDS_RUN=6 # six back-off periods of 1 s: the old code reopened each time

start_case() { # name size
	head -c "$2" /dev/urandom >"$tmp/$1"
	timeout 60 "$RNGFEED" -f -v -c /dev/null -n file -O "file:device=$tmp/$1" \
		-O "file:credit=$CREDIT" --retry-delay 1 --retry-max 1 \
		--bench-fill "$SECONDS_RUN" >"$tmp/$1.out" 2>"$tmp/$1.err" </dev/null &
	pids+=($!)
}

check_case() { # name size pid
	local name=$1 size=$2 rc line credited blocks bound n
	wait "$3"
	rc=$?
	[ $rc -eq 0 ] || { fail "$name: exit $rc: $(tail -n 5 "$tmp/$name.err")"; return; }
	line=$(grep '^bench-fill: ' "$tmp/$name.out" "$tmp/$name.err" -h | tail -n 1)
	credited=$(sed -n 's/.* credited_bits=\([0-9]*\).*/\1/p' <<<"$line")
	[ -n "$credited" ] || { fail "$name: no bench-fill line: $(tail -n 5 "$tmp/$name.err")"; return; }
	blocks=$((size / BLOCK))
	bound=$((blocks * 20000 * CREDIT / 1024))
	if [ "$credited" -le "$bound" ]; then
		ok "$name: $size bytes ($blocks blocks) credited $credited bits <= $bound"
	else
		fail "$name: $size bytes ($blocks blocks) credited $credited bits > $bound (re-read?)"
	fi
	n=$(grep -c "file: finished: end of $tmp/$name after $size bytes.*; not read again" "$tmp/$name.err")
	if [ "$n" -eq 1 ]; then
		ok "$name: finished said once"
	else
		fail "$name: finished line $n times: $(grep -i 'finished\|end of' "$tmp/$name.err")"
	fi
	n=$(grep -c "file: opened " "$tmp/$name.err")
	if [ "$n" -eq 1 ]; then ok "$name: opened once"; else fail "$name: opened $n times"; fi
	if [ $((size % BLOCK)) -ne 0 ]; then
		if grep -q "finished: .*part-block unused" "$tmp/$name.err"; then
			ok "$name: the part-block is not used"
		else
			fail "$name: the finished line does not say the part-block is unused"
		fi
	fi
}

start_case whole 25000
start_case part 26234
check_case whole 25000 "${pids[0]}"
check_case part 26234 "${pids[1]}"
pids=()

# 3.
"$RNGFEED" -f -v -t -c /dev/null -n file -O "file:device=$tmp/later" --wait-for-source \
	--retry-delay 10 --retry-max 10 >/dev/null 2>"$tmp/later.err" </dev/null &
pids+=($!)
# Created once the reader has found it missing (not before: a slow start
# would find it there at the first look).
for _ in $(seq 200); do
	grep -Eq "file: cannot open $tmp/later: .*; (looking|retrying)" "$tmp/later.err" && break
	sleep 0.1
done
sleep 1
head -c 30000 /dev/urandom >"$tmp/later.tmp" && mv "$tmp/later.tmp" "$tmp/later"
for _ in $(seq 60); do
	grep -q "file: opened $tmp/later" "$tmp/later.err" && break
	sleep 0.1
done
if grep -q "file: opened $tmp/later" "$tmp/later.err"; then
	ok "3: a file that appeared 1 s after it was missed was opened within 6 s (back-off 10 s)"
else
	fail "3: a file that appeared 1 s after it was missed was not opened within 6 s: $(tail -n 5 "$tmp/later.err")"
fi
n=$(grep -c "looking for it every" "$tmp/later.err")
if [ "$n" -eq 1 ]; then ok "3: its absence said once"; else fail "3: its absence said $n times"; fi
kill -TERM "${pids[0]}"
wait "${pids[0]}"
pids=()

# 4. A SIGHUP reload restarts the readers: a file read to its end is not
# read, nor credited, again (before the fix the credit doubled).
head -c 25000 /dev/urandom >"$tmp/hup"
timeout 60 "$RNGFEED" -f -v -c /dev/null -n file -O "file:device=$tmp/hup" \
	-O "file:credit=$CREDIT" --bench-fill 5 >"$tmp/hup.out" 2>"$tmp/hup.err" </dev/null &
pids+=($!)
for _ in $(seq 100); do
	grep -q "file: finished: end of $tmp/hup" "$tmp/hup.err" && break
	sleep 0.1
done
kill -HUP "${pids[0]}"
wait "${pids[0]}"
pids=()
credited=$(sed -n 's/^bench-fill: .* credited_bits=\([0-9]*\).*/\1/p' "$tmp/hup.err" "$tmp/hup.out")
bound=$((25000 / BLOCK * 20000 * CREDIT / 1024))
if [ -n "$credited" ] && [ "$credited" -le "$bound" ] &&
	[ "$(grep -c "file: opened " "$tmp/hup.err")" -eq 1 ] &&
	grep -q "was read to its end already; not read again" "$tmp/hup.err"; then
	ok "4: after SIGHUP the finished file was not read again (credited $credited <= $bound)"
else
	fail "4: after SIGHUP: credited '${credited}' (bound $bound), opened $(grep -c "file: opened " "$tmp/hup.err") times: $(grep -i 'sighup\|finished\|opened' "$tmp/hup.err")"
fi

if [ $failures -ne 0 ]; then
	say "$failures failure(s)"
	exit 1
fi
exit 0
