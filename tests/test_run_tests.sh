#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run-tests.sh counts what was skipped (issue 18 item 6): a script
# that exits 77 is skipped, and a part that a passing script skipped
# ("SKIP: reason") is counted as skipped too, as under "make valgrind",
# where test_sources.sh skipped RDSEED and the summary said "0 skipped".
# Fails on the old run-tests.sh: "tests: 2 passed, 0 failed, 1 skipped".
# Exit 0 pass, 1 fail.
set -u
tmp=$(mktemp -d /tmp/test_run_tests.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'echo ok: fine\nexit 0\n' >"$tmp/a_pass.sh"
printf 'echo "SKIP: no such device here"\nexit 77\n' >"$tmp/b_skip.sh"
printf 'echo ok: one part\necho "SKIP: part two: no RDSEED"\necho "SKIP: part three"\nexit 0\n' >"$tmp/c_part.sh"
out=$(bash tests/run-tests.sh "$tmp/a_pass.sh" "$tmp/b_skip.sh" "$tmp/c_part.sh" 2>&1)
rc=$?
want="tests: 2 passed, 0 failed, 3 skipped"
if [ $rc -ne 0 ] || [ "$(tail -n1 <<<"$out")" != "$want" ]; then
	echo "FAIL: run-tests.sh exited $rc; want '$want' as the last line:"
	sed 's/^/    | /' <<<"$out"
	exit 1
fi
grep -q 'c_part.sh *PASS (2 part(s) skipped)' <<<"$out" ||
	{ echo "FAIL: the partly skipped script's line does not say so:"; sed 's/^/    | /' <<<"$out"; exit 1; }
echo "ok: $want"
