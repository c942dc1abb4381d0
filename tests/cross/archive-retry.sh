#!/bin/bash
# Runs a command that fetches from the Debian archive (mmdebstrap, apt-get
# in a chroot), again with back-off while the archive is in flux:
#
#   tests/cross/archive-retry.sh WHO CMD...
#
# A mirror being synced answers "File has unexpected size ... Mirror sync
# in progress?" or "Hash Sum mismatch" for a while; a network may fail to
# connect or resolve for a while.  Such a failure is tried again after
# ARCHIVE_BACKOFF seconds (default 30), doubling, ARCHIVE_TRIES times in all
# (default 4: about 3.5 minutes of waiting).  Any other failure (a package
# that does not exist, a broken dependency) is the command's own: no retry.
#
# CMD's output is kept: a failed try prints its lines that are not
# mmdebstrap's "I:" progress (at most 20), a try that succeeds prints
# nothing of it.  WHO names the caller and the architecture in the lines.
# Exit 0 done; 77 the archive stayed unreachable: one line says so,
#   "WHO: SKIP: the Debian archive stayed unreachable after N tries in S s
#   (last: ...)";
# else CMD's exit status.
set -u
who=${1:?usage: $0 WHO CMD...}
shift
[ $# -gt 0 ] || { echo "usage: $0 WHO CMD..." >&2; exit 2; }
tries=${ARCHIVE_TRIES:-4}
delay=${ARCHIVE_BACKOFF:-30}
[[ $tries =~ ^[1-9][0-9]*$ ]] || { echo "$who: ARCHIVE_TRIES '$tries' is not a count" >&2; exit 2; }
[[ $delay =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "$who: ARCHIVE_BACKOFF '$delay' is not seconds" >&2; exit 2; }

# What apt and mmdebstrap say when the archive, not the request, is at
# fault: a mirror mid-sync, a proxy or server error, no route or name.
in_flux='File has unexpected size|Mirror sync in progress|Hash Sum mismatch|Hashes of expected file|Failed to fetch|Some index files failed to download|Could not connect|Could not resolve|Temporary failure resolving|Connection timed out|Connection failed|Unable to connect|Unable to fetch some archives|50[0-4] +[A-Z]'

log=$(mktemp) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -f "$log"' EXIT
start=$SECONDS
try=1
while :; do
	"$@" >"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && exit 0
	# The first line that names the archive's fault (apt's "E:" line
	# if there is one), for the one line.
	cause=$({ grep -E "$in_flux" "$log" | grep -m1 '^E: ' ||
		grep -m1 -E "$in_flux" "$log"; } | sed 's/^[[:space:]]*//' | cut -c1-200)
	grep -v '^I: ' "$log" | tail -n 20 | sed "s|^|$who: |"
	if [ -z "$cause" ]; then
		echo "$who: failed (exit $rc), not for the archive: no retry" >&2
		exit $rc
	fi
	if [ "$try" -ge "$tries" ]; then
		echo "$who: SKIP: the Debian archive stayed unreachable after $tries tries in $((SECONDS - start)) s (last: $cause)"
		exit 77
	fi
	echo "$who: the Debian archive failed (try $try of $tries: $cause); again in $delay s"
	sleep "$delay"
	delay=$(awk -v d="$delay" 'BEGIN { print d * 2 }')
	try=$((try + 1))
done
