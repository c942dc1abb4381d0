#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# udev/60-rngfeed.rules, the rule shipped for the USB serial sticks:
#  1. it parses as udev rules do: every line a comma-separated list of
#     KEY[{ATTR}]OP"VALUE" with a key udev knows, a match operator (==, !=)
#     on a match key and an assignment (=, +=) on an assignment key; every
#     GOTO has its LABEL;
#  2. it runs nothing and sets no tty up or permissions (no RUN, PROGRAM,
#     IMPORT, MODE, OWNER, GROUP): rngfeed opens the stick itself;
#  3. it keeps ModemManager away (ID_MM_DEVICE_IGNORE) and names each
#     stick /dev/rngfeed/PROFILE;
#  4. its USB ids are exactly those of src/serial_profile.c's models, each
#     with the profile whose table holds it.
# A syntax check, not udev's own parser: the test machine may have no
# udevadm, and Debian 12's (systemd 252) has no "udevadm verify"; "udevadm
# test" reads only the machine's own rules directories.
# Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib_measure.sh
RULE=udev/60-rngfeed.rules
[ -r "$RULE" ] || { echo "FAIL: no $RULE"; exit 1; }
measure_temp test_udev_rule

# 1. the syntax, and the keys the rule uses.
awk -v out="$tmp/keys" '
	function bad(why) { printf "line %d: %s: %s\n", NR, why, $0; errors++ }
	/^[ \t]*(#|$)/ { next }
	{
		line = $0
		while (line != "") {
			if (!match(line, /^[A-Z_]+(\{[A-Za-z0-9_]+\})?(==|!=|\+=|-=|:=|=)"[^"]*"/)) {
				bad("not KEY[{ATTR}]OP\"VALUE\"")
				next
			}
			tok = substr(line, 1, RLENGTH)
			line = substr(line, RLENGTH + 1)
			sub(/^, */, "", line)
			key = tok; sub(/[{=!+:-].*/, "", key)
			op = tok; sub(/^[A-Z_]+(\{[A-Za-z0-9_]+\})?/, "", op); sub(/".*/, "", op)
			val = tok; sub(/^[^"]*"/, "", val); sub(/"$/, "", val)
			print key, op, val >>out
			if (key ~ /^(ACTION|SUBSYSTEM|SUBSYSTEMS|ATTRS|KERNEL)$/ && op !~ /^(==|!=)$/)
				bad("a match key with " op)
			else if (key ~ /^(SYMLINK|TAG|GOTO|LABEL)$/ && op !~ /^(=|\+=)$/)
				bad("an assignment key with " op)
			else if (key !~ /^(ACTION|SUBSYSTEM|SUBSYSTEMS|ATTRS|KERNEL|ENV|SYMLINK|TAG|GOTO|LABEL|RUN|PROGRAM|IMPORT|MODE|OWNER|GROUP)$/)
				bad("unknown key " key)
			if (key == "GOTO") gotos[val] = NR
			if (key == "LABEL") { if (val in labels) bad("LABEL " val " twice"); labels[val] = NR }
		}
	}
	END {
		for (g in gotos) if (!(g in labels)) { printf "GOTO %s has no LABEL\n", g; errors++ }
		exit errors > 0
	}' "$RULE" >"$tmp/syntax" 2>&1
if [ -s "$tmp/syntax" ]; then
	fail "$RULE does not parse:"
	sed 's/^/    /' "$tmp/syntax"
else
	ok "$RULE parses: $(grep -cvE '^[[:space:]]*(#|$)' "$RULE") rule lines, $(wc -l <"$tmp/keys") keys, every GOTO has its LABEL"
fi

# 2. no shell glue, no tty set-up, no permissions.
if grep -qE '^(RUN|PROGRAM|IMPORT|MODE|OWNER|GROUP) ' "$tmp/keys"; then
	fail "$RULE runs a program or changes permissions: $(grep -E '^(RUN|PROGRAM|IMPORT|MODE|OWNER|GROUP) ' "$tmp/keys" | tr '\n' ' ')"
else
	ok "$RULE runs nothing and changes no permission"
fi

# 3. ModemManager kept away, the names.
grep -qE '^ENV\{ID_MM_DEVICE_IGNORE\}="1"$' "$RULE" &&
	ok "ModemManager keeps away (ID_MM_DEVICE_IGNORE=1)" || fail "no ID_MM_DEVICE_IGNORE=1"
grep -q '^SYMLINK += rngfeed/\$env{RNGFEED_PROFILE}$' "$tmp/keys" &&
	ok "each stick is /dev/rngfeed/PROFILE" || fail "no SYMLINK+=\"rngfeed/\$env{RNGFEED_PROFILE}\""
grep -qE '^SUBSYSTEM != tty$' "$tmp/keys" && grep -qE '^ACTION == remove$' "$tmp/keys" ||
	fail "the rule is not limited to ttys being added"

# 4. the ids: the rule's and the profiles' tables.
sed -nE 's/.*ATTRS\{idVendor\}=="([0-9a-f]{4})", ATTRS\{idProduct\}=="([0-9a-f]{4})", ENV\{RNGFEED_PROFILE\}="([a-z]+)".*/\1:\2 \3/p' \
	"$RULE" | sort >"$tmp/rule.ids"
awk '/static const struct serial_model [a-z]+_models\[\]/ {
		p = $0; sub(/.*serial_model /, "", p); sub(/_models.*/, "", p); next }
	p != "" && /^};/ { p = ""; next }
	p != "" && match($0, /\{ 0x[0-9a-f]+, 0x[0-9a-f]+,/) {
		s = substr($0, RSTART, RLENGTH); gsub(/[{},]/, "", s); split(s, v, " ")
		printf "%s:%s %s\n", substr(v[1], 3), substr(v[2], 3), p }' \
	src/serial_profile.c | sort >"$tmp/code.ids"
if [ ! -s "$tmp/code.ids" ]; then
	fail "no models found in src/serial_profile.c"
elif cmp -s "$tmp/rule.ids" "$tmp/code.ids"; then
	ok "the rule's ids are the profiles' models: $(tr '\n' ' ' <"$tmp/code.ids")"
else
	fail "the rule's ids and src/serial_profile.c's differ:"
	diff "$tmp/rule.ids" "$tmp/code.ids" | sed 's/^/    /'
fi

[ "$failures" -eq 0 ] || exit 1
exit 0
