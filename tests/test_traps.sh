#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The suite's clean-up traps and the children it kills.  A child that bash
# forked for a background command and that is signalled before its exec
# still has the script's traps and runs them: sigterm_wait's watchdog
# (`sleep 2 &`, killed once the daemon had ended, which on a loaded
# machine can be before the watchdog's exec) ran the script's EXIT trap
# and removed $tmp under test_pkcs11.sh in CI.
#   sigterm_wait  lib_measure.sh's measure_temp, then sigterm_wait 30
#                 times on a process that ends at once: $tmp and its
#                 file are still there, each stop said "exit ..."
#   every_trap    every trap in tests/, bench/ and .ci/run whose action is
#                 more than "exit N" compares $BASHPID with the PID of
#                 the shell that armed it before it cleans (bash runs the first command
#                 of a trap in such a child unreliably, so this guard
#                 stops nearly all such runs, not every one: the fix is
#                 not to signal a child before its exec)
# Run from the top of the tree: bash tests/test_traps.sh
# Exit 0 pass, 1 fail.
set -u
. tests/lib_measure.sh

# ---- sigterm_wait ---------------------------------------------------------------
# In a script of its own, as a test runs; its output says whether its $tmp
# outlived the stops.
measure_temp test_traps
probe=$tmp/probe.sh
cat >"$probe" <<'EOF'
. tests/lib_measure.sh
measure_temp test_traps_probe
echo kept >"$tmp/file"
stops=0
for i in $(seq 30); do
	sleep 30 &
	p=$!
	# Its own exec done first: only the watchdog's is in question.
	until read -r c <"/proc/$p/comm" && [ "$c" = sleep ] || ! kill -0 "$p"; do :; done 2>/dev/null
	sigterm_wait "$p" >"$tmp/stop"
	case $(cat "$tmp/stop" 2>/dev/null) in "exit "*) stops=$((stops + 1)) ;; esac
done
[ "$(cat "$tmp/file" 2>/dev/null)" = kept ] && echo "kept, $stops stops said exit" || echo "removed"
EOF
out=$(bash "$probe" 2>&1)
if [ "$out" = "kept, 30 stops said exit" ]; then
	ok "sigterm_wait: \$tmp kept through 30 stops, each said exit"
else
	fail "sigterm_wait: $(tr '\n' ' ' <<<"$out" | head -c 300)"
fi

# ---- every_trap ---------------------------------------------------------------
bad=$(grep -nE "^[[:space:]]*(\[.*\] \|\| )?trap " tests/*.sh tests/*/*.sh bench/*.sh .ci/run |
	grep -vE "trap (-|''|'exit [0-9]+') " | grep -vF '[ "$BASHPID" != ')
[ -z "$bad" ] && ok "every_trap: each clean-up trap compares \$BASHPID before it cleans" ||
	fail "every_trap: not guarded: $bad"

[ "$failures" -eq 0 ] || { say "FAIL: $failures check(s)"; exit 1; }
say "PASS: traps"
