#!/bin/bash
# Refreshes the NIST oracle fixtures in tests/data/estimate/: for every data
# set listed in tests/data/estimate/SETS (name, seed, samples), regenerates it
# with tests/helper_estimate_gen and runs NIST's ea_non_iid -v on it; for
# every raw capture tests/data/estimate/*.bin, runs it on that file.  The
# tool's printed output is stored verbatim under a short header
# (tests/data/estimate/NAME.txt), which tests/test_assess.sh compares
# `rngfeed --assess` against.
#
# ea_non_iid comes from usnistgov/SP800-90B_EntropyAssessment (cpp/), built
# outside this repository (its Makefile links libbz2, libdivsufsort,
# libjsoncpp, libssl); point EA_NON_IID at it, default
# /work/oracle/sp80090b/cpp/ea_non_iid.  Without it this script says so and
# changes nothing.
#
# CAPTURE=1 also captures new raw samples before running the oracle: 64 KiB
# each of rdrand and hwrng (`rngfeed --raw`) and 128 KiB of real clock
# deltas (bench/assess_data clock: bits that repeat in long blocks, whose
# t-tuple and LRS take estimate_6_3_5_6_bits_merge.c's way).
set -euo pipefail
cd "$(dirname "$0")/.."
EA=${EA_NON_IID:-/work/oracle/sp80090b/cpp/ea_non_iid}
DIR=tests/data/estimate
GEN=tests/helper_estimate_gen

if [ ! -x "$EA" ]; then
	echo "estimate-refresh: no ea_non_iid at $EA (set EA_NON_IID); fixtures unchanged" >&2
	exit 77
fi
make -s "$GEN" rngfeed bench/assess_data
tmp=$(mktemp -d)
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
ea_version="ea_non_iid $("$EA" --version 2>&1 | head -n 1)"
ea_commit=$(git -C "$(dirname "$EA")" rev-parse --short HEAD 2>/dev/null || true)
[ -n "$ea_commit" ] && ea_version="$ea_version (SP800-90B_EntropyAssessment $ea_commit)"

if [ "${CAPTURE:-}" = 1 ]; then
	for src in rdrand hwrng; do
		./rngfeed --raw -n "$src" --bytes 65536 >"$tmp/$src.bin"
		mv "$tmp/$src.bin" "$DIR/$src.bin"
	done
	bench/assess_data clock 131072 >"$tmp/clock.bin"
	mv "$tmp/clock.bin" "$DIR/clock.bin"
fi

# oracle NAME FILE BITS HEADER...: ea_non_iid -v FILE BITS into NAME.txt.
oracle() {
	local name=$1 file=$2 bits=$3
	shift 3
	{
		printf '# %s\n' "$@"
		printf '# oracle: %s: ea_non_iid -v FILE %s\n' "$ea_version" "$bits"
		(cd "$(dirname "$file")" && nice "$EA" -v "$(basename "$file")" "$bits")
	} >"$tmp/$name.txt"
	mv "$tmp/$name.txt" "$DIR/$name.txt"
	echo "estimate-refresh: $DIR/$name.txt"
}

while read -r name seed samples; do
	case $name in '#'* | '') continue ;; esac
	line=$("$GEN" list | awk -v n="$name" '$1 == n')
	bits=$(awk '{ print $2 }' <<<"$line")
	trueh=$(awk '{ print $3 }' <<<"$line")
	"$GEN" "$name" "$seed" "$samples" >"$tmp/$name.bin"
	oracle "$name" "$tmp/$name.bin" "$bits" \
		"set $name seed $seed samples $samples bits $bits true-min-entropy $trueh" \
		"generator: tests/helper_estimate_gen $name $seed $samples"
done <"$DIR/SETS"

for f in "$DIR"/*.bin; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .bin)
	case $name in
	clock) how="bench/assess_data clock (low bytes of real clock deltas)" ;;
	*) how="rngfeed --raw -n $name" ;;
	esac
	oracle "$name" "$PWD/$f" 8 \
		"capture $name.bin: $(stat -c %s "$f") bytes of $how" \
		"true-min-entropy unknown"
done
