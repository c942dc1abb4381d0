#!/bin/bash
# The man pages: both render without a single groff/man warning (the check
# lintian runs), have a NAME line that lexgrog (mandb) can parse, and are
# complete -- every long option "rngfeed --help" prints is an item of
# rngfeed.8's OPTIONS, every key the config file accepts is defined in
# rngfeed.conf.5, and every source "rngfeed --list" shows is in both.
#
# Which keys the config file accepts is asked of rngfeed itself: each
# candidate (long options, keys of the example systemd/rngfeed.conf, the
# drivers' option tables) goes through the real parser, and only the ones
# it does not reject as unknown count.
#
# Exit 0 pass, 1 fail, 77 skip (man-db or groff missing).
set -u
cd "$(dirname "$0")/.." || exit 2
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ echo "SKIP: make sanitize: the man pages are the same in both builds (make check runs this test)"; exit 77; }
RNGFEED=${RNGFEED:-./rngfeed}
PAGES="man/rngfeed.8 man/rngfeed.conf.5"

. tests/lib_measure.sh
need_tools "apt-get install man-db groff-base bsdextrautils" man groff lexgrog col
need_built "$RNGFEED"
measure_temp test_man

# 1. Rendering, exactly as lintian's manpage check does it: any output on
# stderr is a failure.
for page in $PAGES; do
	if [ ! -s "$page" ]; then
		fail "$page is missing or empty"
		continue
	fi
	LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$page" >/dev/null 2>"$tmp/err"
	if [ -s "$tmp/err" ]; then
		fail "$page: warnings from man/groff:"
		sed 's/^/    /' "$tmp/err"
	else
		echo "ok: $page renders without warnings"
	fi
	# mandb's whatis parser; lintian's bad-whatis-entry check uses it.
	if ! lexgrog "$page" >"$tmp/whatis" 2>&1 || ! grep -q ' - ' "$tmp/whatis"; then
		fail "$page: lexgrog cannot parse the NAME section: $(cat "$tmp/whatis")"
	fi
done
[ "$failures" -eq 0 ] || exit 1

# Plain text of each page, wide enough that nothing wraps inside a line
# that matters, overstrike removed.
text() {
	LC_ALL=C.UTF-8 MANWIDTH=250 man -E ascii -l "$1" 2>/dev/null | col -bx
}
text man/rngfeed.8 >"$tmp/rngfeed.8.txt"
text man/rngfeed.conf.5 >"$tmp/rngfeed.conf.5.txt"

# Only the given config file, never the machine's /etc/rngfeed.conf.
: >"$tmp/empty.conf"

# 2. Every long option of --help is an item in rngfeed.8: a tag line such
# as "-f, --foreground" or "--interval s" at the item indent.
"$RNGFEED" --help >"$tmp/help" || { fail "rngfeed --help failed"; exit 1; }
opts=$(grep -o -- '--[a-z][a-z0-9-]*' "$tmp/help" | sort -u)
[ -n "$opts" ] || { fail "no long options found in rngfeed --help"; exit 1; }
n=0
for o in $opts; do
	n=$((n + 1))
	if ! grep -Eq -- "^ {7}(-[A-Za-z], )?$o( |\$)" "$tmp/rngfeed.8.txt"; then
		fail "rngfeed.8 has no item for $o (rngfeed --help lists it)"
	fi
done
echo "ok: checked $n long options of rngfeed --help against rngfeed.8"

# 3. Daemon keys of the config file: every long option, and every key of
# the example config, that the parser does not reject as unknown.
# --check on empty input parses everything and probes no device: fast.
accepts_key() { # KEY: 0 if the config file accepts KEY outside a section
	printf '%s = 1\n' "$1" >"$tmp/probe.conf"
	"$RNGFEED" -c "$tmp/probe.conf" --check </dev/null >/dev/null 2>"$tmp/probe.err"
	! grep -Eq "unknown key|cannot be set in a config file" "$tmp/probe.err"
}
candidates=$( (
	sed 's/^--//' <<<"$opts"
	# Keys of the example, commented out or not, before its first section.
	sed -n '/^#\{0,1\}[[:space:]]*\[/q; s/^#\{0,1\}[[:space:]]*\([a-z][a-z0-9-]*\)[[:space:]]*=.*/\1/p' \
		systemd/rngfeed.conf
) | sort -u)
keys=""
for k in $candidates; do
	accepts_key "$k" && keys="$keys $k"
done
# The example config must only use keys the parser accepts.
for k in $(sed -n '/^#\{0,1\}[[:space:]]*\[/q; s/^#\{0,1\}[[:space:]]*\([a-z][a-z0-9-]*\)[[:space:]]*=.*/\1/p' systemd/rngfeed.conf); do
	accepts_key "$k" || fail "systemd/rngfeed.conf uses '$k', which rngfeed rejects"
done
[ -n "$keys" ] || { fail "found no config-file keys at all"; exit 1; }
# defined WHAT KEYS...: each key has its "KEY = " item in rngfeed.conf.5;
# n: how many were checked.
defined() {
	local what=$1 k
	shift
	n=0
	for k in "$@"; do
		n=$((n + 1))
		grep -Eq "(^|[^a-z-])$k = " "$tmp/rngfeed.conf.5.txt" ||
			fail "rngfeed.conf.5 does not define the ${what}key '$k' (as '$k = ...')"
	done
}
# shellcheck disable=SC2086 # a list of words
defined "" $keys
echo "ok: checked $n daemon keys against rngfeed.conf.5:$keys"

# 4. Sources and their keys.  Candidates: the keys every source takes, the
# keys in the example's [source] sections, and each driver's option table;
# -O NAME:KEY=1 tells which ones a source really accepts.
sources=$("$RNGFEED" -c "$tmp/empty.conf" --list | awk 'NR > 1 && ($2 == "available" || $2 == "unavailable") { print $1 }')
[ -n "$sources" ] || { fail "rngfeed --list shows no sources"; exit 1; }
src_candidates=$( (
	printf '%s\n' credit enable min-entropy device
	sed -n '/^#\{0,1\}[[:space:]]*\[source/,$ s/^#\{0,1\}[[:space:]]*\([a-z][a-z0-9-]*\)[[:space:]]*=.*/\1/p' \
		systemd/rngfeed.conf
	grep -ho '_keys\[\][[:space:]]*=[[:space:]]*{[^}]*}' src/sources/*.c 2>/dev/null |
		grep -o '"[^"]*"' | tr -d '"'
) | sort -u)
src_keys=""
for s in $sources; do
	# The sources' own section moved to rngfeed.conf.5 (SOURCES), where
	# their keys are set; rngfeed.8 stays options, signals, files, examples.
	grep -Eq "^ {7}$s( |\$)" "$tmp/rngfeed.conf.5.txt" ||
		fail "rngfeed.conf.5 has no item for the source '$s' in SOURCES"
	grep -qw -- "$s" "$tmp/rngfeed.conf.5.txt" ||
		fail "rngfeed.conf.5 does not mention the source '$s'"
	for k in $src_candidates; do
		"$RNGFEED" -c "$tmp/empty.conf" -O "$s:$k=1" --check </dev/null >/dev/null 2>"$tmp/probe.err"
		grep -Eq "unknown option|has no device option" "$tmp/probe.err" && continue
		case " $src_keys " in *" $k "*) ;; *) src_keys="$src_keys $k" ;; esac
		# The key is in rngfeed.conf.5's description of the source, too.
		grep -Eq -- "(^|[^a-z-])$k=" "$tmp/rngfeed.conf.5.txt" ||
			fail "rngfeed.conf.5 does not describe the key '$k' of source '$s' (as '$k=...')"
	done
done
# shellcheck disable=SC2086 # a list of words
defined "source " $src_keys
echo "ok: checked $(wc -w <<<"$sources") sources and $n source keys:$src_keys"

[ "$failures" -eq 0 ] || exit 1
echo "PASS: man pages render cleanly and are complete"
