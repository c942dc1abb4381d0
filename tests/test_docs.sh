#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# The documents against the binary: one source of truth.  The README is
# the short form (at most 250 lines); the full tables live in docs/usage.md,
# the rest of the long text in docs/ (one topic a file).
#  1. options: every long option in --help is in rngfeed(8)'s OPTIONS and
#     in docs/usage.md's option table, and neither names one --help lacks;
#     the configuration keys the binary accepts are the keys rngfeed.conf(5)
#     documents, and the shipped systemd/rngfeed.conf uses only those;
#  2. metrics: the names the binary writes (a short -t run with --metrics)
#     are the names in rngfeed(8)'s METRICS and in docs/usage.md's table;
#  3. sources: docs/usage.md's source table names every source --list
#     shows, with its default credit, and the README's short table too;
#  4. details: --check=FILE as --help writes it, --interval takes whole
#     seconds (and docs/usage.md says so), docs/layout.md names every file
#     in src/, no document or comment cites the team's notes (DESIGN.md,
#     MEASURED.md), which are not in the tree;
#  5. the layout: README <= 250 lines and rngfeed(8) <= 900, every docs/
#     file the README links to exists and is linked, no issue numbers or
#     dates in the user documents, the measured documents say on what
#     machine; the README's statements that were wrong once: the unit's
#     bounding set, the hand-over record under $RUNTIME_DIRECTORY (as
#     --help says), no ./rngfeed example reading /etc/rngfeed.conf before
#     anything installed it; rngfeed(8) on -D: sources opened before the
#     switch, as the code does.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_docs.sh
# Exit 0 pass, 1 fail.
set -u
. tests/lib_measure.sh
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ echo "SKIP: make sanitize: the documents and the binary's texts are the same in both builds (make check runs this test)"; exit 77; }

RNGFEED=${RNGFEED:-./rngfeed}
measure_temp test_docs
pid=
need_built "$RNGFEED"
USAGE=docs/usage.md
for f in README.md $USAGE docs/layout.md man/rngfeed.8 man/rngfeed.conf.5 systemd/rngfeed.conf; do
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
# docs/usage.md: the first column of the option table.
section $USAGE '^\| option \| what it does \|' '^$' |
	awk -F'|' 'NR > 1 { print $2 }' | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$tmp/readme.opts"
same "options" "--help" "$tmp/help.opts" "rngfeed(8) OPTIONS" "$tmp/man.opts" &&
	ok "$(wc -l <"$tmp/help.opts") long options: --help = rngfeed(8)"
same "options" "--help" "$tmp/help.opts" "docs/usage.md's option table" "$tmp/readme.opts" &&
	ok "$(wc -l <"$tmp/help.opts") long options: --help = docs/usage.md"

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
	grep -oE '^\| `rngfeed_[a-z_]+`' $USAGE | sed 's/^| `//; s/`$//' | sort -u >"$tmp/readme.metrics"
	same "metrics" "the metrics file" "$tmp/bin.metrics" "rngfeed(8) METRICS" "$tmp/man.metrics" &&
		ok "$(wc -l <"$tmp/bin.metrics") metric names: binary = rngfeed(8)"
	same "metrics" "the metrics file" "$tmp/bin.metrics" "docs/usage.md's metrics table" "$tmp/readme.metrics" &&
		ok "$(wc -l <"$tmp/bin.metrics") metric names: binary = docs/usage.md"
fi

# ---- 3. sources -------------------------------------------------------------------

"$RNGFEED" -c /dev/null --list >"$tmp/list" 2>/dev/null || fail "--list exited $?"
awk '$2 == "available" || $2 == "unavailable" { print $1 }' "$tmp/list" | sort >"$tmp/list.src"
section $USAGE '^\| name \| what \| default credit' '^$' |
	awk -F'|' 'NR > 1 { gsub(/[ `]/, "", $2); print $2 }' | sort >"$tmp/readme.src"
same "sources" "--list" "$tmp/list.src" "docs/usage.md's source table" "$tmp/readme.src" &&
	ok "$(wc -l <"$tmp/list.src") sources: --list = docs/usage.md"
# The README's short table: its first column may name two sources a row.
section README.md '^\| source \| what \| default credit' '^$' |
	awk -F'|' 'NR > 1 { print $2 }' | grep -oE '`[a-z0-9-]+`' | tr -d '`' | sort >"$tmp/short.src"
same "sources" "--list" "$tmp/list.src" "the README's source table" "$tmp/short.src" &&
	ok "$(wc -l <"$tmp/list.src") sources: --list = the README's short table"
quality=$(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null)
while read -r name; do
	want=$(section $USAGE '^\| name \| what \| default credit' '^$' |
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
	[ "$want" = "$got" ] || fail "$name: docs/usage.md's default credit ${want:-none}, --list $got"
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
grep -E '^\| `--interval' $USAGE | grep -q 'whole seconds' ||
	fail "docs/usage.md's --interval row does not say whole seconds"
section man/rngfeed.8 '^\.BI \\-\\-interval ' '^\.TP' | grep -qi 'fraction' &&
	fail "rngfeed(8) says --interval takes fractional seconds"
# The layout names every source file, and every file it names exists.
cp docs/layout.md "$tmp/layout"
for f in src/*.c; do
	grep -qF "\`$f\`" "$tmp/layout" || fail "docs/layout.md does not name $f"
done
for f in src/sources/*.c; do
	b=${f##*/}
	grep -qE "\`(${b%.c}|$b)\`" "$tmp/layout" || fail "docs/layout.md does not name $f"
done
grep -oE '`src/[a-z0-9_/]+\.c`' "$tmp/layout" | tr -d '`' | while read -r f; do
	[ -e "$f" ] || echo "FAIL: docs/layout.md names $f, which does not exist"
done | grep . && failures=$((failures + 1))
# No citation of notes that are not in the tree.
cites=$(grep -rnE 'MEASURED\.md|DESIGN\.md' README.md docs bench/results.md man systemd include src .ci debian 2>/dev/null)
[ -z "$cites" ] || fail "citations of notes that are not in the repository:
$cites"

# ---- 5. the layout of the documents ----------------------------------------------

n=$(wc -l <README.md)
[ "$n" -le 250 ] || fail "README.md has $n lines (at most 250: the rest goes to docs/)"
n=$(wc -l <man/rngfeed.8)
[ "$n" -le 900 ] || fail "man/rngfeed.8 has $n source lines (at most 900)"
for d in usage credit faults performance early-boot architectures layout daemon; do
	[ -s "docs/$d.md" ] || fail "no docs/$d.md"
	grep -qF "(docs/$d.md)" README.md || fail "the README does not link to docs/$d.md"
done
grep -oE '\]\((docs/)?[a-z-]+\.md(#[a-z0-9-]+)?\)' README.md docs/*.md | while IFS=: read -r from link; do
	target=${link#](}
	target=${target%)}
	target=${target%%#*}
	case "$from" in docs/*) target=docs/$target ;; esac
	[ -e "$target" ] || echo "FAIL: $from links to $target, which does not exist"
done | grep . && failures=$((failures + 1))
# User documents: no issue numbers, no dated notes.
notes=$(grep -nE '[Ii]ssues? [0-9]+|20[0-9]{2}-[01][0-9]-[0-3][0-9]' README.md docs/*.md man/rngfeed.8 man/rngfeed.conf.5 |
	grep -v 'change notice')  # FIPS 140-2's change notice is the standard's own date
[ -z "$notes" ] || fail "issue numbers or dates in user documents:
$notes"
# Measured figures say on what machine.
for d in performance faults early-boot architectures; do
	grep -qiE 'measured on|^Machine:' "docs/$d.md" || fail "docs/$d.md does not say on what machine its figures were measured"
done
# The unit's bounding set, every capability of it, where the README speaks of it.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' systemd/rngfeed.service)
if grep -qi 'bounding set' README.md; then
	for c in $caps; do
		grep -qF "$c" README.md || fail "the README's bounding set leaves out $c (the unit has: $caps)"
	done
fi
# The hand-over record: where --help says, $RUNTIME_DIRECTORY first.
grep -qF '$RUNTIME_DIRECTORY/hwrng-quality' "$tmp/help" || fail "--help does not name \$RUNTIME_DIRECTORY/hwrng-quality"
grep -qF '$RUNTIME_DIRECTORY/hwrng-quality' README.md || fail "the README does not name \$RUNTIME_DIRECTORY/hwrng-quality"
# No example that runs ./rngfeed (the tree's, not installed) on /etc/rngfeed.conf.
bad=$(grep -nE '^    ' README.md | sed 's/#.*//' | grep -E '\./rngfeed .*-c /etc/rngfeed\.conf')
[ -z "$bad" ] || fail "a README example reads /etc/rngfeed.conf before anything installed it: $bad"
# The README's configuration example parses.
section README.md '^## Configuration' '^## ' | sed -n 's/^    //p' >"$tmp/readme.conf"
if [ ! -s "$tmp/readme.conf" ]; then
	fail "the README's configuration section has no example"
elif ! "$RNGFEED" -c "$tmp/readme.conf" --list >/dev/null 2>"$tmp/readme.conf.err"; then
	fail "the README's configuration example does not parse: $(cat "$tmp/readme.conf.err")"
fi
# The README's exposure figure is what systemd-analyze says of the unit, for
# the systemd version it names (another version scores differently).
claim=$(grep -oE 'systemd-analyze security[^`]*`[^:]*: [0-9.]+' README.md | head -n1)
claim_ver=$(sed -nE 's/.*systemd ([0-9]+): .*/\1/p' <<<"$claim")
claim_score=$(sed -nE 's/.*: ([0-9.]+)$/\1/p' <<<"$claim")
if [ -z "$claim_score" ]; then
	echo "SKIP: the README gives no systemd-analyze security figure"
elif ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: the README's exposure figure: no systemd-analyze here"
elif [ -n "$claim_ver" ] &&
	[ "$(systemd-analyze --version | sed -nE '1s/^systemd ([0-9]+).*/\1/p')" != "$claim_ver" ]; then
	echo "SKIP: the README's exposure figure is for systemd $claim_ver; this is $(systemd-analyze --version | head -n1)"
else
	score=$(systemd-analyze security --offline=yes systemd/rngfeed.service 2>&1 |
		sed -n 's/.*Overall exposure level for rngfeed.service: \([0-9.]*\).*/\1/p')
	[ "$score" = "$claim_score" ] ||
		fail "the README gives the unit $claim_score${claim_ver:+ for systemd $claim_ver}; $(systemd-analyze --version | head -n1 | cut -d' ' -f1-2) says ${score:-nothing}"
	[ -n "$claim_ver" ] ||
		fail "the README's systemd-analyze security figure names no systemd version (scores differ between versions)"
fi
# A unit in systemd/ that make install leaves out is never presented as if
# it were installed: each README paragraph naming it says so.
for u in systemd/*.service systemd/*.socket systemd/*.timer; do
	[ -e "$u" ] || continue
	grep -qF "$u" Makefile && continue
	awk -v u="$u" 'BEGIN { RS = "" } index($0, u) && !/not installed/' README.md docs/*.md | grep -q . &&
		fail "$u is not installed by make install, but a paragraph names it without saying so"
done
# A dracut command to copy names its kernels: a bare "dracut -f" builds for
# uname -r, which in a chroot or container is the host's (it fails there).
bare=$(grep -nE 'dracut -f( |`|$)' README.md docs/*.md initramfs/default |
	grep -vE -- '--regenerate-all|--kver|A bare `dracut -f`')
[ -z "$bare" ] || fail "a dracut -f without --kver or --regenerate-all: $bare"
# docs/performance.md: on a machine whose CPUID hides RDSEED, a row that
# measured rdseed says it was forced; times of day are no user document's.
if grep -qE '^Machine:.*no RDSEED' docs/performance.md; then
	bad=$(grep -nE '^\|.*rdseed' docs/performance.md | grep -vE 'not measured|force=yes')
	[ -z "$bad" ] || fail "docs/performance.md's machine has no RDSEED, yet these rows measured it without force=yes: $bad"
fi
tod=$(grep -nE '\b(at|of|to) [0-2][0-9]:[0-5][0-9]\b|\b[0-2][0-9]:[0-5][0-9] run\b' README.md docs/*.md)
[ -z "$tod" ] || fail "times of day in user documents:
$tod"
# -D: the code opens the sources before the switch (daemon.c's stage order).
sed 's/\\-/-/g' man/rngfeed.8 | tr '\n' ' ' | grep -qiE 'opened[^.]*after the switch|before any source is opened' &&
	fail "rngfeed(8) says sources are opened after the privilege drop; they are opened before"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "PASS: --help, the man pages, the README and the binary agree"
exit 0
