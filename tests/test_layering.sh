#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No two .c files of src/ call each other (issue 28): each pair of modules
# depends one way, through a small interface, so either can be read,
# tested and replaced with the other in mind only.  Read from the objects
# make built (build/src/*.o, build/src/sources/*.o): a global symbol one
# object uses and another defines is an edge; an edge both ways fails.
# And no source or header file is over 750 lines: a file that grows past
# that holds more than one job, and is split where the jobs part.
# Run from the top of the tree after make (make check builds them).
# Exit 0 pass, 1 fail, 77 skip.
set -u
shopt -s nullglob
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ echo "SKIP: make sanitize: the modules' calls between them and the files' lengths are the same in both builds (make check runs this test)"; exit 77; }
MAX_LINES=750
failures=0
for f in src/*.c src/*.h src/sources/*.c src/sources/*.h include/rngfeed/*.h; do
	n=$(wc -l <"$f")
	if [ "$n" -gt $MAX_LINES ]; then
		echo "FAIL: $f has $n lines, more than $MAX_LINES: split it into modules with one job each"
		failures=$((failures + 1))
	fi
done
command -v nm >/dev/null || {
	[ $failures -eq 0 ] || exit 1
	echo "SKIP: no nm (binutils)"
	exit 77
}
objs=(build/src/*.o build/src/sources/*.o)
[ ${#objs[@]} -gt 0 ] || { echo "FAIL: no objects in build/src (make rngfeed)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT

# OBJECT SYMBOL for what each defines, and for what each uses.
for o in "${objs[@]}"; do
	nm --defined-only -g "$o" | awk -v o="$o" 'NF == 3 { print $3, o }'
done | sort -k1,1 >"$tmp/defs"
for o in "${objs[@]}"; do
	nm -u "$o" | awk -v o="$o" '{ print $NF, o }'
done | sort -k1,1 >"$tmp/uses"
# Edges USER DEFINER SYMBOL, one object to another.
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u >"$tmp/edges"
[ -s "$tmp/edges" ] || { echo "FAIL: no calls between objects found (nm output not understood)"; exit 1; }

while read -r a b; do
	[[ "$a" < "$b" ]] || continue # each pair once
	back=$(awk -v a="$a" -v b="$b" '$1 == b && $2 == a { print $3 }' "$tmp/edges" | head -n 3 | tr '\n' ' ')
	[ -n "$back" ] || continue
	there=$(awk -v a="$a" -v b="$b" '$1 == a && $2 == b { print $3 }' "$tmp/edges" | head -n 3 | tr '\n' ' ')
	echo "FAIL: ${a#build/} uses ${there% } of ${b#build/}, which uses ${back% } of it"
	failures=$((failures + 1))
done < <(cut -d' ' -f1,2 "$tmp/edges" | sort -u)
n=$(cut -d' ' -f1,2 "$tmp/edges" | sort -u | wc -l)
[ $failures -eq 0 ] || exit 1
echo "${#objs[@]} objects, $n one-way dependencies between them, none both ways; no file over $MAX_LINES lines"
exit 0
