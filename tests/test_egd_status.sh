#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --egd-only's STATUS= line (issue 17): it says the daemon serves EGD
# clients (it said "Writing stdout"), counts the connected clients and the
# bytes served, and says nothing of kernel credit, which that mode never
# gives.  STATUS= changes at most every 5 s, so the clients stay 7 s.
# systemd's side is tests/helper_notify; the socket lives in a
# mktemp directory.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_egd_status.sh
set -u
RNGFEED=${RNGFEED:-./rngfeed}
tmp=$(mktemp -d /tmp/test_egd_status.XXXXXX)
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for t in tests/helper_notify tests/helper_egd_client; do
	[ -x "$t" ] || { echo "SKIP: $t not built (make check builds it)"; exit 77; }
done
if ! "$RNGFEED" --list 2>/dev/null | grep -q '^rdrand *available'; then
	echo "SKIP: no RDRAND here (the server needs a source)"
	exit 77
fi

sock=unix:$tmp/egd.sock
timeout 60 tests/helper_notify 12 "$RNGFEED" -f -c /dev/null --egd-only \
	--egd-server "$sock" -n rdrand >"$tmp/notify" 2>"$tmp/err" &
daemon=$!
for _ in $(seq 100); do [ -S "$tmp/egd.sock" ] && break; sleep 0.1; done
[ -S "$tmp/egd.sock" ] || fail "no socket: $(cat "$tmp/err")"
tests/helper_egd_client "$sock" read 5000 >"$tmp/bytes" ||
	fail "read 5000 bytes: $(cat "$tmp/err")"
[ "$(stat -c %s "$tmp/bytes")" = 5000 ] || fail "served $(stat -c %s "$tmp/bytes") bytes, not 5000"
tests/helper_egd_client "$sock" hold 2 7 >"$tmp/held" || fail "hold: $(cat "$tmp/held")"
wait "$daemon" || fail "daemon under helper_notify: $(cat "$tmp/notify" "$tmp/err")"

grep -q '^notify: READY=1' "$tmp/notify" || fail "no READY=1: $(cat "$tmp/notify")"
status=$(grep '^notify: STATUS=Serving EGD clients from rdrand' "$tmp/notify") ||
	fail "STATUS does not say it serves EGD clients: $(grep STATUS "$tmp/notify")"
grep -q 'Writing stdout\|bits credited' <<<"$status" &&
	fail "STATUS speaks of stdout or kernel credit: $status"
grep -qE 'EGD: [0-9]+ clients, ([5-9][0-9]{3}|[0-9]{5,}) bytes served' <<<"$status" ||
	fail "STATUS never counted the 5000 bytes served: $status"
grep -q 'EGD: 2 clients' <<<"$status" ||
	fail "STATUS never counted the 2 held clients: $status"
echo "PASS: --egd-only's STATUS says what it serves ($(tail -1 <<<"$status" | sed 's/.*EGD: //'))"
