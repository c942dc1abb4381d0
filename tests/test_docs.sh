#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The documents against the binary (issue 18 item 3): one source of truth.
#  1. options: every long option in --help is in rngfeed(8)'s OPTIONS and
#     in the README's option table, and neither names one --help lacks;
#     the configuration keys the binary accepts are the keys rngfeed.conf(5)
#     documents, and the shipped systemd/rngfeed.conf uses only those;
#  2. metrics: the names the binary writes (a short -t run with --metrics)
#     are the names in rngfeed(8)'s METRICS and in the README's table;
#  3. sources: the README's source table names every source --list shows,
#     with its default credit;
#  4. details the issue found wrong: --check=FILE as --help writes it,
#     --interval takes whole seconds (and the README says so), the README's
#     layout names every file in src/, no document or comment cites the
#     team's notes (DESIGN.md, MEASURED.md), which are not in the tree.
# The README's Performance section (written from bench/ and bench/results.md)
# included: its reference figures are labelled by what they are.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_docs.sh
# Exit 0 pass, 1 fail.
set -u

RNGFEED=${RNGFEED:-./rngfeed}
failures=0
tmp=$(mktemp -d /tmp/test_docs.XXXXXX) || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built"; exit 1; }
for f in README.md man/rngfeed.8 man/rngfeed.conf.5 systemd/rngfeed.conf; do
	[ -r "$f" ] || { echo "FAIL: no $f (run from the top of the tree)"; exit 1; }
done

# Two sorted lists, one per line: say what is only in either.
same() { # WHAT NAME_A FILE_A NAME_B FILE_B
	local a b
	a=$(comm -23 "$3" "$5" | tr '\n' ' ')
	b=$(comm -13 "$3" "$5" | tr '\n' ' ')
	if [ -n "$a$b" ]; then
		[ -n "$a" ] && fail "$1: in $2, not in $4: $a"
		[ -n "$b" ] && fail "$1: in $4, not in $2: $b"
		return 1
	fi
	return 0
}

# Text between a line matching START and the next matching END.
section() { # FILE START END
	awk -v s="$2" -v e="$3" '$0 ~ s { on = 1; next } on && $0 ~ e { exit } on' "$1"
}

# ---- 1. options ---------------------------------------------------------------

"$RNGFEED" --help >"$tmp/help" || fail "--help exited $?"
# Option lines start with blanks and a dash; the first long name on each.
grep -E '^ +-' "$tmp/help" | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$tmp/help.opts"
[ "$(wc -l <"$tmp/help.opts")" -ge 30 ] || fail "--help lists only $(wc -l <"$tmp/help.opts") long options"
# rngfeed(8): the tags of OPTIONS' .TP entries.
section man/rngfeed.8 '^\.SH OPTIONS' '^\.SH ' |
	awk 'prev == ".TP" { print } { prev = $0 }' |
	sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$tmp/man.opts"
# README: the first column of the option table.
section README.md '^\| option \| what it does \|' '^$' |
	awk -F'|' 'NR > 1 { print $2 }' | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$tmp/readme.opts"
same "options" "--help" "$tmp/help.opts" "rngfeed(8) OPTIONS" "$tmp/man.opts" &&
	ok "$(wc -l <"$tmp/help.opts") long options: --help = rngfeed(8)"
same "options" "--help" "$tmp/help.opts" "README's option table" "$tmp/readme.opts" &&
	ok "$(wc -l <"$tmp/help.opts") long options: --help = README"

# Configuration keys: the long options the binary accepts in a file (a
# value that is wrong for the key is a different error from an unknown key).
: >"$tmp/bin.keys"
while read -r opt; do
	key=${opt#--}
	printf '%s = 1\n' "$key" >"$tmp/k.conf"
	"$RNGFEED" -c "$tmp/k.conf" --list >/dev/null 2>"$tmp/k.err"
	grep -qiE "unknown key|cannot be set in a config file" "$tmp/k.err" ||
		echo "$key" >>"$tmp/bin.keys"
done <"$tmp/help.opts"
sort -u -o "$tmp/bin.keys" "$tmp/bin.keys"
# rngfeed.conf(5): ".BI "key = " value" entries before the source sections.
sed 's/\\-/-/g' man/rngfeed.conf.5 |
	sed -nE 's/^\.BI? "?([a-z][a-z-]*) = .*/\1/p' | sort -u >"$tmp/conf5.all"
# Source keys (credit, device, ...) are documented there too: only the
# daemon settings are compared, the keys --help also has as options.
src_keys="credit device enable min-entropy sysfs force tries timeout-ms select"
comm -12 "$tmp/conf5.all" <(sed 's/^--//' "$tmp/help.opts") |
	grep -vxF -f <(tr ' ' '\n' <<<"$src_keys") >"$tmp/conf5.keys"
if [ "$(wc -l <"$tmp/bin.keys")" -lt 10 ]; then
	fail "the binary accepts only $(wc -l <"$tmp/bin.keys") keys in a config file: $(tr '\n' ' ' <"$tmp/bin.keys")"
else
	same "config keys" "the binary" "$tmp/bin.keys" "rngfeed.conf(5)" "$tmp/conf5.keys" &&
		ok "$(wc -l <"$tmp/bin.keys") config keys: the binary = rngfeed.conf(5)"
fi
# The shipped configuration: its keys (commented or not) are real keys, and
# it parses.
sed -nE 's/^#? *([a-z][a-z-]*) *=.*/\1/p' systemd/rngfeed.conf | sort -u >"$tmp/shipped.keys"
bad=$(comm -23 "$tmp/shipped.keys" <(sort -u "$tmp/bin.keys" <(tr ' ' '\n' <<<"$src_keys")) | tr '\n' ' ')
[ -z "$bad" ] || fail "systemd/rngfeed.conf uses keys the binary does not know: $bad"
"$RNGFEED" -c systemd/rngfeed.conf --list >/dev/null 2>"$tmp/shipped.err" ||
	fail "systemd/rngfeed.conf does not parse: $(cat "$tmp/shipped.err")"

# ---- 2. metrics ------------------------------------------------------------------

if "$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available'; then
	metrics_src=(-n rdrand)
else
	head -c 5000 /dev/urandom >"$tmp/data.bin"
	metrics_src=(-n file -O "file:device=$tmp/data.bin")
fi
# -t writes the metrics at exit; it needs no privileges.
"$RNGFEED" -c /dev/null -t "${metrics_src[@]}" --stats-interval 60 \
	--metrics "$tmp/m.prom" >/dev/null 2>"$tmp/m.err" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
pid=
# The EGD server's metrics (issue 17): --egd-only with one client still
# connected at exit (its per-client lines), through bash's /dev/tcp.
port=$((20000 + RANDOM % 20000))
"$RNGFEED" -c /dev/null --egd-only --egd-server "tcp:127.0.0.1:$port" \
	"${metrics_src[@]}" --metrics "$tmp/e.prom" >/dev/null 2>"$tmp/e.err" &
pid=$!
sleep 0.5
if exec 3<>"/dev/tcp/127.0.0.1/$port"; then
	printf '\x04' >&3
	sleep 0.3
fi 2>/dev/null
kill -TERM "$pid"
wait "$pid"
pid=
exec 3>&-
[ -s "$tmp/e.prom" ] || fail "no metrics file from an --egd-only run: $(tail -3 "$tmp/e.err")"
if [ ! -s "$tmp/m.prom" ]; then
	fail "no metrics file from a -t run: $(tail -3 "$tmp/m.err")"
else
	grep -ohE '^rngfeed_[a-z_]+' "$tmp/m.prom" "$tmp/e.prom" | sort -u >"$tmp/bin.metrics"
	section man/rngfeed.8 '^\.SH METRICS' '^\.SH ' |
		grep -oE '^\.B rngfeed_[a-z_]+' | sed 's/^\.B //' | sort -u >"$tmp/man.metrics"
	grep -oE '^\| `rngfeed_[a-z_]+`' README.md | sed 's/^| `//; s/`$//' | sort -u >"$tmp/readme.metrics"
	same "metrics" "the metrics file" "$tmp/bin.metrics" "rngfeed(8) METRICS" "$tmp/man.metrics" &&
		ok "$(wc -l <"$tmp/bin.metrics") metric names: binary = rngfeed(8)"
	same "metrics" "the metrics file" "$tmp/bin.metrics" "README's metrics table" "$tmp/readme.metrics" &&
		ok "$(wc -l <"$tmp/bin.metrics") metric names: binary = README"
fi

# ---- 3. sources -------------------------------------------------------------------

"$RNGFEED" -c /dev/null --list >"$tmp/list" 2>/dev/null || fail "--list exited $?"
awk '$2 == "available" || $2 == "unavailable" { print $1 }' "$tmp/list" | sort >"$tmp/list.src"
section README.md '^\| name \| what \| default credit' '^$' |
	awk -F'|' 'NR > 1 { gsub(/[ `]/, "", $2); print $2 }' | sort >"$tmp/readme.src"
same "sources" "--list" "$tmp/list.src" "README's source table" "$tmp/readme.src" &&
	ok "$(wc -l <"$tmp/list.src") sources: --list = README"
quality=$(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null)
while read -r name; do
	want=$(section README.md '^\| name \| what \| default credit' '^$' |
		awk -F'|' -v n="$name" '{ s = $2; gsub(/[ `]/, "", s) } s == n { print $4 }' |
		grep -oE '[0-9]+' | head -n1)
	got=$(awk -v n="$name" '$1 == n { print $3 }' "$tmp/list")
	case "$name" in
	hwrng | virtio)
		# Their default follows the device's rng_quality.
		[ "$quality" = 1024 ] || continue
		grep -qE "^$name +available" "$tmp/list" || continue
		;;
	esac
	[ "$want" = "$got" ] || fail "$name: README's default credit ${want:-none}, --list $got"
done <"$tmp/list.src"

# ---- 4. details --------------------------------------------------------------------

head -c 25000 /dev/urandom >"$tmp/check.bin"
"$RNGFEED" --check="$tmp/check.bin" >/dev/null 2>"$tmp/check.err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "--check=FILE (as --help writes it) exited $rc: $(cat "$tmp/check.err")"
grep -qF -- '--check[=FILE]' "$tmp/help" || fail "--help does not show --check[=FILE]"
timeout 10 "$RNGFEED" -c /dev/null -n rdrand -f --interval 1.5 >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--interval 1.5 exited $rc (want 2: whole seconds)"
grep -E '^\| `--interval' README.md | grep -q 'whole seconds' ||
	fail "README's --interval row does not say whole seconds"
section man/rngfeed.8 '^\.BI \\-\\-interval ' '^\.TP' | grep -qi 'fraction' &&
	fail "rngfeed(8) says --interval takes fractional seconds"
# The layout names every source file, and every file it names exists.
section README.md '^## Layout' '^## ' >"$tmp/layout"
for f in src/*.c; do
	grep -qF "\`$f\`" "$tmp/layout" || fail "README's layout does not name $f"
done
for f in src/sources/*.c; do
	b=${f##*/}
	grep -qE "\`(${b%.c}|$b)\`" "$tmp/layout" || fail "README's layout does not name $f"
done
grep -oE '`src/[a-z0-9_/]+\.c`' "$tmp/layout" | tr -d '`' | while read -r f; do
	[ -e "$f" ] || echo "FAIL: README's layout names $f, which does not exist"
done | grep . && failures=$((failures + 1))
# No citation of notes that are not in the tree.
cites=$(grep -rnE 'MEASURED\.md|DESIGN\.md' README.md bench/results.md man systemd include src .ci debian 2>/dev/null)
[ -z "$cites" ] || fail "citations of notes that are not in the repository:
$cites"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "PASS: --help, the man pages, the README and the binary agree"
exit 0
