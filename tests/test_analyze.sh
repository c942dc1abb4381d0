#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make analyze analyses the project's own files, all of them (issue 33
# item 12), in a tree of a few files with the project's Makefile:
#   clean       a tree without findings passes;
#   copies      a finding in tests/vm/work/ (the VM tests' copy of the
#               tree) or build/ is not the project's: still passes, and the
#               analysed copy of the tree leaves tests/vm/work/ out;
#   finding     the same finding in a test's own C file fails (cppcheck);
#   rejected    a file clang cannot compile fails, naming the file (the
#               old target: scan-build printed "1 error generated" and
#               exited 0, the file unanalysed).
# Needs cppcheck and scan-build (make test-deps).
# Run from the top of the tree: bash tests/test_analyze.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ echo "SKIP: make sanitize: it tests the analysis targets' wiring, no program of the build (make check runs this test)"; exit 77; }
. tests/lib_measure.sh

need_tools "make test-deps: cppcheck, clang-tools-14" cppcheck make
scan=$(command -v scan-build scan-build-14 2>/dev/null | head -n1)
[ -n "$scan" ] || skip "scan-build not installed (make test-deps: clang-tools-14)"
measure_temp test_analyze

# A tree of a few files: the Makefile, one header, the daemon's main, a
# library file and a test's C file (no unit tests, helpers or tools: their
# wildcards are empty).
fixture() { # DIR
	mkdir -p "$1/include/rngfeed" "$1/src" "$1/tests"
	cp Makefile "$1/"
	printf '#ifndef ONE_H\n#define ONE_H\nint one(void);\n#endif\n' >"$1/include/rngfeed/one.h"
	printf '#include "rngfeed/one.h"\n\nint one(void)\n{\n\treturn 1;\n}\n' >"$1/src/one.c"
	printf '#include "rngfeed/one.h"\n\nint main(void)\n{\n\treturn one() - 1;\n}\n' >"$1/src/main.c"
	printf 'int plain(void);\nint plain(void)\n{\n\treturn 0;\n}\n' >"$1/tests/plain.c"
}
# An index past the end of an array: cppcheck's arrayIndexOutOfBounds.
finding='int past_end(void);
int past_end(void)
{
	int a[2] = { 0, 1 };
	return a[5];
}'

# analyze NAME: make analyze in $tmp/NAME; its output in $tmp/NAME.out.
analyze() {
	# Not the outer make's flags (make sanitize's CFLAGS, its jobserver).
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL SCAN_BUILD="$scan" \
		make -C "$tmp/$1" analyze >"$tmp/$1.out" 2>&1
}
show() { sed 's/^/    | /' "$tmp/$1.out" | tail -n 25; }

fixture "$tmp/clean"
if analyze clean; then
	ok "clean: make analyze passes"
else
	fail "clean: make analyze failed on a tree without findings:"; show clean
fi

fixture "$tmp/copies"
mkdir -p "$tmp/copies/tests/vm/work/tree/src" "$tmp/copies/build/stale"
echo "$finding" >"$tmp/copies/tests/vm/work/tree/src/copy.c"
echo "$finding" >"$tmp/copies/build/stale/copy.c"
if ! analyze copies; then
	fail "copies: make analyze failed on files that are not the project's (tests/vm/work/, build/):"; show copies
elif [ -e "$tmp/copies/build/analyze/tree/tests/vm/work" ]; then
	fail "copies: the analysed copy of the tree holds tests/vm/work/"
else
	ok "copies: tests/vm/work/ and build/ are not analysed, nor copied"
fi

fixture "$tmp/finding"
echo "$finding" >"$tmp/finding/tests/own.c"
if analyze finding; then
	fail "finding: make analyze passed with an index past the end in tests/own.c:"; show finding
elif ! grep -q 'tests/own.c.*arrayIndexOutOfBounds\|tests/own.c.*out of bounds' "$tmp/finding.out"; then
	fail "finding: make analyze failed without naming tests/own.c's finding:"; show finding
else
	ok "finding: a test's own C file is analysed (cppcheck names tests/own.c)"
fi

fixture "$tmp/rejected"
printf '#include "rngfeed/one.h"\n\n#ifdef __clang__\n#error "a construct clang cannot compile"\n#endif\nint two(void);\nint two(void)\n{\n\treturn one() + 1;\n}\n' \
	>"$tmp/rejected/src/two.c"
if analyze rejected; then
	fail "rejected: make analyze passed, src/two.c unanalysed:"; show rejected
elif ! grep -q '^analyze: clang could not analyse src/two.c' "$tmp/rejected.out"; then
	fail "rejected: make analyze failed without saying clang could not analyse src/two.c:"; show rejected
else
	ok "rejected: $(grep -m1 '^analyze: clang could not analyse' "$tmp/rejected.out")"
fi

[ "$failures" -eq 0 ] || { say "$failures failure(s)"; exit 1; }
exit 0
