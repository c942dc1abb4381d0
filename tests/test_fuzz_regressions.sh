#!/bin/bash
# Replays every saved fuzz input (tests/fuzz/corpus/NAME: the seed corpus
# and each input that once crashed a harness or broke an invariant, named
# regress-*) through the harness built without libFuzzer
# (build/fuzz/replay/fuzz_NAME, made by "make check").  The harness
# asserts the parsers' invariants, so an input that used to fail fails
# again if the bug comes back.  Run from the top of the tree.  Exit 0
# pass, 1 fail, 77 skip.
set -u

corpus=tests/fuzz/corpus
shopt -s nullglob
dirs=("$corpus"/*/)
if [ ${#dirs[@]} -eq 0 ]; then
	echo "FAIL: no corpus directories in $corpus"
	exit 1
fi

fail=0 ran=0
for d in "${dirs[@]}"; do
	name=$(basename "$d")
	bin=build/fuzz/replay/fuzz_$name
	if [ ! -x "$bin" ]; then
		echo "FAIL: $bin is not built (make check builds it)"
		fail=1
		continue
	fi
	if ! "$bin" "$d"; then
		echo "FAIL: fuzz_$name: an input in $d breaks an invariant (above)"
		fail=1
	fi
	ran=$((ran + 1))
	n=$(find "$d" -maxdepth 1 -name 'regress-*' | wc -l)
	echo "fuzz_$name: $n regression inputs among them"
done
[ $ran -gt 0 ] || { echo "SKIP: no replay harness built"; exit 77; }
exit $fail
