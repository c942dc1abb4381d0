#!/bin/bash
# make liveness-regressions: make liveness catches what it says it does.
#
# Each tests/liveness/regressions/NAME.patch is a regression that a part of
# make liveness must catch; its "# liveness:" line names that part (the
# LIVENESS_* settings of tests/liveness/run.sh).  For each patch:
#   1. that part, on this tree's ./rngfeed, must pass (else the patch
#      proves nothing);
#   2. the patch is applied to a copy of the tree without build/ and .git
#      (build/liveness-regressions/NAME, as make sanitize copies it), whose
#      rngfeed is built there;
#   3. the same part, on that rngfeed (this tree's harness), must fail.
# Ends with "liveness-regressions: N caught, N missed"; exit 1 when a
# regression is missed, its patch no longer applies (make it again against
# the code it breaks), or its part fails on this tree already.  Not in CI:
# a build per patch.
#
# Environment: RNGFEED (./rngfeed), LIVENESS_REGRESSIONS (the patches),
# LIVENESS_JOBS, as make liveness.
set -u
RNGFEED=${RNGFEED:-./rngfeed}
PATCHES=${LIVENESS_REGRESSIONS:-$(ls tests/liveness/regressions/*.patch 2>/dev/null)}
say() { printf '%s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || { say "SKIP: needs root, as make liveness"; exit 77; }
[ -n "$PATCHES" ] || { say "FAIL: no regression in tests/liveness/regressions/"; exit 1; }
command -v patch >/dev/null || { say "FAIL: needs patch(1)"; exit 1; }
RNGFEED=$(realpath "$RNGFEED")
out=build/liveness-regressions
mkdir -p "$out"

# part PATCH RNGFEED LOG: that patch's part of make liveness; its status.
part() {
	local settings
	settings=$(sed -n 's/^# liveness: //p' "$1")
	(
		eval "export $settings"
		RNGFEED=$2 tests/liveness/run.sh
	) >"$3" 2>&1
}

caught=0 missed=0
for p in $PATCHES; do
	name=$(basename "$p" .patch)
	tree=$out/$name
	say "== $name: $(sed -n 's/^# liveness: //p' "$p")"
	if ! part "$p" "$RNGFEED" "$out/$name.clean.log"; then
		say "FAIL: $name: its part of make liveness fails on this tree already (the patch proves nothing):"
		grep -E '^(FAIL|liveness:)' "$out/$name.clean.log" | sed 's/^/    | /'
		missed=$((missed + 1))
		continue
	fi
	rm -rf "$tree" && mkdir -p "$tree"
	tar -c --exclude=./build --exclude=./.git . | tar -x -C "$tree"
	if ! patch -s -p1 -d "$tree" <"$p"; then
		say "FAIL: $name: the patch no longer applies (make it again against the code it breaks)"
		missed=$((missed + 1))
		continue
	fi
	if ! make -s -j2 -C "$tree" rngfeed >"$out/$name.build.log" 2>&1; then
		say "FAIL: $name: the patched tree does not build ($out/$name.build.log)"
		missed=$((missed + 1))
		continue
	fi
	if part "$p" "$(realpath "$tree/rngfeed")" "$out/$name.patched.log"; then
		say "MISSED: $name: make liveness passes with it:"
		grep -E '^liveness:' "$out/$name.patched.log" | sed 's/^/    | /'
		missed=$((missed + 1))
	else
		say "caught: $name:"
		grep -E '^(FAIL|liveness:)' "$out/$name.patched.log" | sed 's/^/    | /'
		caught=$((caught + 1))
	fi
done
say "liveness-regressions: $caught caught, $missed missed"
[ "$missed" -eq 0 ]
