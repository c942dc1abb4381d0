#!/bin/bash
# Issue 26 item 3: --wait-for-source waits only for sources that can appear
# on this CPU and configuration.  A CPU instruction of another architecture
# (rndrrs and rndr off arm64, darn off POWER, s390-trng off s390x) and a
# file or egd source with no path never appear: --list says "no" for them
# and the daemon does not keep retrying them; a device that may appear
# (a file path that does not exist yet) is still waited for.
# Fails on the code before (every unusable source said "wait").
set -u
RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}

fail() {
	echo "FAIL: $*"
	[ -s "${log:-}" ] && sed 's/^/    /' "$log"
	exit 1
}

tmp=$(mktemp -d) || exit 1
. tests/lib_pids.sh
pid=''
cleanup() {
	if [ -n "$pid" ]; then
		kill_ours -KILL "$pid"
		{ wait "$pid"; } 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT

case "$(uname -m)" in
aarch64) never="darn s390-trng" ;;
ppc64*) never="rndrrs rndr s390-trng" ;;
s390x) never="rndrrs rndr darn" ;;
*) never="rndrrs rndr darn s390-trng" ;;
esac

list=$("$RNGFEED" --list --wait-for-source -O "file:device=$tmp/later" 2>&1) ||
	fail "--list failed: $list"
for s in $never egd; do
	line=$(grep "^$s " <<<"$list")
	[ -n "$line" ] || fail "--list has no $s line"
	awk '{print $5}' <<<"$line" | grep -qx no ||
		fail "--list --wait-for-source would wait for $s, which cannot appear here: $line"
	grep -q "cannot appear here" <<<"$line" || fail "--list does not say why $s is not waited for: $line"
done
grep "^file " <<<"$list" | awk '{print $5}' | grep -qx wait ||
	fail "--list does not wait for a file that may appear: $(grep '^file ' <<<"$list")"
echo "ok: --list --wait-for-source: $never and egd with no server are not waited for; a file path is"

# The daemon: only the file is retried ("looking for it"), none of the others.
log=$tmp/log
names=()
for s in rdrand file $never egd; do names+=(-n "$s"); done
"$RNGFEED" -t -v --wait-for-source --interval 1 "${names[@]}" \
	-O "file:device=$tmp/later" 2>"$log" >/dev/null &
pid=$!
for _ in $(seq $((100 * SCALE))); do
	grep -q "file: .*looking for it" "$log" && break
	sleep 0.1
done
grep -q "file: .*looking for it" "$log" || fail "the daemon does not wait for the file"
for s in $never egd; do
	grep -q "^rngfeed: $s: .*looking for it\|^rngfeed: $s: using it" "$log" &&
		fail "the daemon keeps retrying $s"
done
kill -TERM "$pid"
{ wait "$pid"; } 2>/dev/null
pid=''
echo "ok: the daemon retries the file only"
echo "PASS: --wait-for-source waits only for sources that can appear here"
