#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The EGD socket QEMU can reach: the documented layout (README, rngfeed(8),
# systemd/rngfeed.socket, tests/vm/egd-libvirt.xml) puts the socket in a
# directory of its own, mode 0750, whose group is QEMU's, and the socket
# 0660 in that group (--egd-owner :GROUP).  Checked by connecting as a
# non-root member of that group (setpriv: uid nobody, the group as its only
# supplementary group), as QEMU's libvirt-qemu is a member of kvm:
#   member, directory 0750 GROUP     connects and is answered (0x04: the PID)
#   not a member                     EACCES (so the check can fail)
#   member, directory 0700 root      EACCES: the old layout, the socket in
#                                    the daemon's own /run/rngfeed
# and that the documents all name the same path.  A temporary group is
# made and removed; everything else lives in a mktemp directory.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_egd_access.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
CLIENT=${CLIENT:-tests/helper_egd_client}
SCALE=${TEST_TIME_SCALE:-1}
DOC_PATH=/run/rngfeed-egd/egd.sock
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
skip() { echo "SKIP: $*"; exit 77; }

# The documents first: they need nothing but the tree.
for f in README.md man/rngfeed.8 systemd/rngfeed.socket tests/vm/egd-libvirt.xml docs/early-boot.md; do
	if ! sed 's/\\-/-/g' "$f" 2>/dev/null | grep -qF "$DOC_PATH"; then
		fail "$f does not name $DOC_PATH"
	fi
	# The old, unreachable places: inside the daemon's 0700 directory, or
	# a socket straight in /run that nothing groups.
	if sed 's/\\-/-/g' "$f" 2>/dev/null | grep -nE '/run/rngfeed/egd\.sock|/run/rngfeed-egd\.sock' >/dev/null; then
		fail "$f still names an EGD socket path QEMU cannot reach: $(sed 's/\\-/-/g' "$f" | grep -nE '/run/rngfeed/egd\.sock|/run/rngfeed-egd\.sock' | head -n 3 | tr '\n' ' ')"
	fi
done
grep -qE '^ExecStartPre=.*install -d -m 0750 .*-g kvm /run/rngfeed-egd$' systemd/rngfeed.socket ||
	fail "systemd/rngfeed.socket does not create /run/rngfeed-egd 0750 in group kvm"
[ "$failures" -eq 0 ] && ok "README, rngfeed(8), rngfeed.socket, the libvirt XML and docs name $DOC_PATH"

[ "$(id -u)" -eq 0 ] || { [ "$failures" -eq 0 ] && skip "the connection checks need root (a group, setpriv)"; exit 1; }
for t in setpriv groupadd groupdel; do
	command -v "$t" >/dev/null || skip "no $t here"
done
[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built"; exit 1; }
[ -x "$CLIENT" ] || { echo "FAIL: $CLIENT is not built"; exit 1; }
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available' ||
	skip "no rdrand here to feed the server"

tmp=$(mktemp -d /tmp/test_egd_access.XXXXXX) || exit 1
. tests/lib_pids.sh
group=rfegd$$
pid=
cleanup() {
	kill_ours "$pid"
	wait 2>/dev/null
	getent group "$group" >/dev/null && groupdel "$group"
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
groupadd "$group" || skip "groupadd $group failed"
gid=$(getent group "$group" | cut -d: -f3)
# nobody must reach the client program and the mktemp directory: a copy
# of the client in it (the tree may sit under a directory only root can
# enter, as a mktemp -d checkout does).
chmod 0755 "$tmp"
cp "$CLIENT" "$tmp/client" && chmod 0755 "$tmp/client" || exit 1
client=$tmp/client

# As QEMU would: uid nobody, the socket's group as its only group (or none).
as_client() { # GROUPS ADDR
	if [ "$1" = none ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups -- \
			timeout $((5 * SCALE)) "$client" "$2" pid
	else
		setpriv --reuid=65534 --regid=65534 --groups="$1" -- \
			timeout $((5 * SCALE)) "$client" "$2" pid
	fi
}

# serve DIR MODE GROUP: a server with its socket in DIR (made MODE, group
# GROUP), the socket in group $group; waits for the socket.
serve() {
	local dir=$1 i
	install -d -m "$2" -g "$3" "$dir"
	"$RNGFEED" -c /dev/null --egd-only --egd-server "unix:$dir/egd.sock" \
		--egd-owner ":$group" -n rdrand >/dev/null 2>"$tmp/server.err" &
	pid=$!
	for ((i = 0; i < 100 * SCALE; i++)); do
		[ -S "$dir/egd.sock" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "no socket in $dir: $(tail -n 3 "$tmp/server.err")"
	return 1
}
stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}

# 1. The documented layout.
if serve "$tmp/rngfeed-egd" 0750 "$group"; then
	perms=$(stat -c '%a %G' "$tmp/rngfeed-egd/egd.sock")
	[ "$perms" = "660 $group" ] || fail "the socket is '$perms', not '660 $group'"
	out=$(as_client "$gid" "unix:$tmp/rngfeed-egd/egd.sock" 2>&1)
	if [ "$out" = "$pid" ]; then
		ok "a non-root member of the socket's group connects through the 0750 directory (PID $out)"
	else
		fail "a non-root member of $group could not use the socket: '$out'"
	fi
	out=$(as_client none "unix:$tmp/rngfeed-egd/egd.sock" 2>&1)
	if [ "$out" != "$pid" ] && grep -qi 'permission denied' <<<"$out"; then
		ok "a non-member is refused: $out"
	else
		fail "a non-member of $group got: '$out'"
	fi
	stop
fi

# 2. The old layout: the socket in a 0700 directory of root's.
if serve "$tmp/rngfeed" 0700 root; then
	out=$(as_client "$gid" "unix:$tmp/rngfeed/egd.sock" 2>&1)
	if [ "$out" != "$pid" ] && grep -qi 'permission denied' <<<"$out"; then
		ok "in a 0700 directory even a member is refused (why the socket has its own directory): $out"
	else
		fail "a member reached a socket in a 0700 directory: '$out'"
	fi
	stop
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS: the EGD socket's directory lets its group, and only it, connect"
exit 0
