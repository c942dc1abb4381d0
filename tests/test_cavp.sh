#!/bin/bash
# Runs every NIST CAVP CTR_DRBG AES-256 file through tests/cavp-ctr-drbg and
# checks that the tool catches a wrong answer and a malformed file.
# Run from the top of the tree.  Exit 0 pass, 1 fail, 77 skip.
set -eu

tool=tests/cavp-ctr-drbg
data=tests/data/ctr_drbg
per_file=480 # 240 use df + 240 no df in each NIST file

if [ ! -x "$tool" ]; then
	echo "SKIP: $tool is not built (make check builds it)"
	exit 77
fi
shopt -s nullglob
files=("$data"/*.rsp)
if [ ${#files[@]} -eq 0 ]; then
	echo "FAIL: no .rsp files in $data"
	exit 1
fi

tmp=$(mktemp -d)
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
fail=0

# expect NAME WANT_RC WANT_PATTERN FILE: run the tool, check exit status and
# that its output (stdout and stderr) matches an extended regex.
expect() {
	local name=$1 want_rc=$2 pattern=$3 file=$4 rc=0
	"$tool" "$file" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" -ne "$want_rc" ] || ! grep -Eq -- "$pattern" "$tmp/out"; then
		echo "FAIL: $name: exit $rc (want $want_rc), output:"
		tail -n 5 "$tmp/out" | sed 's/^/    /'
		fail=1
	else
		echo "ok: $name: $(tail -n 1 "$tmp/out")"
	fi
}

for f in "${files[@]}"; do
	expect "$f" 0 "^$per_file passed, 0 failed\$" "$f"
done

f=${files[0]}

# The same file with CRLF line ends (as NIST ships them).
sed 's/$/\r/' "$f" >"$tmp/crlf.rsp"
expect "CRLF copy" 0 "^$per_file passed, 0 failed\$" "$tmp/crlf.rsp"

# One hex digit of the first ReturnedBits flipped: exactly one failure.
awk '!done && /^ReturnedBits = / {
	c = substr($3, 1, 1); $3 = (c == "0" ? "1" : "0") substr($3, 2); done = 1
} { print }' "$f" >"$tmp/corrupt.rsp"
if cmp -s "$f" "$tmp/corrupt.rsp"; then
	echo "FAIL: could not corrupt $f"
	fail=1
fi
expect "one ReturnedBits digit flipped" 1 "^$((per_file - 1)) passed, 1 failed\$" "$tmp/corrupt.rsp"

# A malformed line: exit 2 and FILE:LINE names it.
line=$(grep -n -m1 '^EntropyInput = ' "$f" | cut -d: -f1)
sed "${line}s/= ../= 0g/" "$f" >"$tmp/malformed.rsp"
expect "bad hex at line $line" 2 "^$tmp/malformed.rsp:$line: " "$tmp/malformed.rsp"

# A case cut short (no ReturnedBits): exit 2, pointing at its COUNT line.
count=$(grep -n -m1 '^COUNT = ' "$f" | cut -d: -f1)
head -n $((count + 3)) "$f" >"$tmp/truncated.rsp"
expect "truncated case" 2 "^$tmp/truncated.rsp:$count: .*no ReturnedBits" "$tmp/truncated.rsp"

# An empty file is not a pass.
: >"$tmp/empty.rsp"
expect "empty file" 2 "^$tmp/empty.rsp:1: no test cases" "$tmp/empty.rsp"

# Other mechanisms are skipped with their cases, not failed.
{ sed 's/^\[AES-256 /[AES-128 /' "$f"; cat "$f"; } >"$tmp/mixed.rsp"
expect "AES-128 sections skipped" 0 "^$per_file passed, 0 failed, $per_file skipped\$" "$tmp/mixed.rsp"

exit $fail
