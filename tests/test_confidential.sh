#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# Trust in a confidential guest (docs/credit.md): what the host provides
# earns 0.  QEMU under TCG cannot run an SEV or TDX guest, so the guest is
# forced (--confidential-guest=yes) and the hw_random directory is a
# fixture (-O hwrng:sysfs=DIR: rng_current, rng_available, rng_quality as
# files), so the machine's rng_quality is never touched; the daemon reads
# the real /dev/hwrng.
#   list    --list --confidential-guest=yes: every host-provided source
#           (hwrng on a host-backed device, virtio, egd, tpm) at credit 0
#           with the reason, a credit= given for it too; the CPU sources
#           and file as with =no; the same from the config file; what
#           auto says on this machine (and that it changes nothing here
#           when it says no); guest-owned=yes takes tpm and egd back;
#           guest-owned on virtio and a bad value are refused (exit 2).
#   held    the daemon (-n hwrng, under bench/shim.so): credit 0 said and
#           used, the fixture's rng_quality 0 while it runs, also after
#           the device changes (another registers, the kernel sets a
#           quality again); SIGTERM: exit 0, rng_quality stays 0, the log
#           says why and the echo that hands it back, the record says
#           state=host; the kernel was fed (data mixed in) and credited 0
#           bits, counted from outside the process.
#   restart the same again: the record adopted, held, not raised.
#   second  two instances on the fixture: the second waits, takes over at
#           0 when the first stops, and does not raise it at its stop.
#   sources virtio and egd (credit=500 given, a real rngfeed EGD server):
#           credit 0 said, blocks passed, credited 0 bits (shim).
#   no      a restart told --confidential-guest=no hands it back at its
#           stop; a fresh run with =no hands over and back (the control).
# Run from the top of the tree as root: RNGFEED=./rngfeed bash tests/test_confidential.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
need_built "$RNGFEED"
measure_temp test_confidential
HOST_SOURCES="hwrng virtio egd tpm serial"
pid=

# ---- list ---------------------------------------------------------------------

# "SOURCE CREDIT" per line of a --list run, and the detail of each.
list() { # OUT ARGS...
	local out=$1
	shift
	"$RNGFEED" "$@" --list >"$out" 2>"$out.err"
}
credit() { awk -v s="$2" '$1 == s { print $3 }' "$1"; }
line() { awk -v s="$2" '$1 == s' "$1"; }

egd=(-O "egd:device=unix:$tmp/no-server" -O egd:credit=500)
list "$tmp/no" -c /dev/null --confidential-guest=no "${egd[@]}" ||
	fail "--list --confidential-guest=no exited $?: $(cat "$tmp/no.err")"
list "$tmp/yes" -c /dev/null --confidential-guest=yes "${egd[@]}" ||
	fail "--list --confidential-guest=yes exited $?: $(cat "$tmp/yes.err")"
# hwrng: the current hw_random device decides; only the CPU's own
# (s390-trng) is the guest's.
cur=$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)
host=$HOST_SOURCES
[ "${cur#s390-trng}" != "$cur" ] && host="virtio egd tpm serial"
bad=0
n=$(awk '$1 !~ /^(SOURCE|confidential|hw_random)$/ { n++ } END { print n + 0 }' "$tmp/yes")
for src in $host rdrand; do
	[ -n "$(line "$tmp/yes" "$src")" ] || { fail "list: =yes does not list $src"; bad=1; }
done
while read -r src _; do
	case $src in SOURCE | confidential | hw_random) continue ;; esac
	c_no=$(credit "$tmp/no" "$src") c_yes=$(credit "$tmp/yes" "$src")
	if [[ " $host " == *" $src "* ]]; then
		if [ "$c_yes" != 0 ] ||
			! line "$tmp/yes" "$src" | grep -q "credit 0: host-provided, not trusted in a confidential guest"; then
			fail "list: $src is host-provided, but --confidential-guest=yes shows: $(line "$tmp/yes" "$src")"
			bad=1
		fi
	elif [ "$c_yes" != "$c_no" ] || line "$tmp/yes" "$src" | grep -q "host-provided"; then
		fail "list: $src is the guest's own: credit $c_no with =no, $c_yes with =yes"
		bad=1
	fi
done <"$tmp/yes"
[ "$(credit "$tmp/no" egd)" = 500 ] || fail "list: egd's credit=500 shows $(credit "$tmp/no" egd) with =no"
grep -q '^confidential guest: yes (confidential-guest = yes; detected: ' "$tmp/yes" ||
	fail "list: no 'confidential guest: yes' line: $(grep confidential "$tmp/yes")"
[ $bad = 0 ] && ok "list: with =yes $host credit 0 with the reason (egd's credit=500 too); $n sources, the others unchanged"

printf 'confidential-guest = yes\n' >"$tmp/yes.conf"
list "$tmp/file" -c "$tmp/yes.conf" "${egd[@]}" ||
	fail "--list with confidential-guest = yes in a file exited $?: $(cat "$tmp/file.err")"
if [ -s "$tmp/yes" ] && diff -q "$tmp/yes" "$tmp/file" >/dev/null; then
	ok "list: confidential-guest = yes in the config file lists the same"
else
	fail "list: the config file's yes differs from the option's: $(diff "$tmp/yes" "$tmp/file")"
fi

list "$tmp/auto" -c /dev/null "${egd[@]}" || fail "--list (auto) exited $?"
said=$(sed -n 's/^confidential guest: //p' "$tmp/auto")
echo "auto on this machine: $said"
case $said in
no\ \(auto:*) other=no ;;
yes:*) other=yes ;;
*) fail "list: auto says '$said'"; other=no ;;
esac
if diff <(grep -v '^confidential guest' "$tmp/auto") <(grep -v '^confidential guest' "$tmp/$other") >/dev/null; then
	ok "list: auto ($other here) lists what --confidential-guest=$other lists"
else
	fail "list: auto differs from =$other: $(diff "$tmp/auto" "$tmp/$other")"
fi

list "$tmp/own" -c /dev/null --confidential-guest=yes "${egd[@]}" \
	-O egd:guest-owned=yes -O tpm:guest-owned=yes || fail "--list with guest-owned exited $?"
if [ "$(credit "$tmp/own" egd)" = 500 ] && [ "$(credit "$tmp/own" tpm)" = "$(credit "$tmp/no" tpm)" ] &&
	[ "$(credit "$tmp/own" virtio)" = 0 ]; then
	ok "list: guest-owned=yes gives egd (500) and tpm ($(credit "$tmp/no" tpm)) their credit back; virtio stays 0"
else
	fail "list: guest-owned=yes: egd $(credit "$tmp/own" egd), tpm $(credit "$tmp/own" tpm), virtio $(credit "$tmp/own" virtio)"
fi

# Bad input: exit 2 and one line.
refused() { # WHAT REGEX ARGS...
	local what=$1 re=$2 rc
	shift 2
	"$RNGFEED" "$@" --list >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qE "$re" "$tmp/err"; then
		ok "refused: $what: $(cat "$tmp/err")"
	else
		fail "$what: exit $rc, said: $(cat "$tmp/err")"
	fi
}
refused "--confidential-guest=maybe" "confidential-guest must be auto, yes or no, not 'maybe'" \
	-c /dev/null --confidential-guest=maybe
printf 'confidential-guest = sometimes\n' >"$tmp/bad.conf"
refused "confidential-guest = sometimes in a file" "bad.conf:1: .*confidential-guest must be auto, yes or no" \
	-c "$tmp/bad.conf"
refused "virtio:guest-owned=yes" "virtio: guest-owned: it reads the host's virtio-rng device" \
	-c /dev/null -O virtio:guest-owned=yes

# ---- the daemon on a fixture hw_random directory --------------------------------

# A binary that does not take the option fails every case below, slowly.
[ -s "$tmp/yes" ] || { say "FAIL: $failures checks failed; --confidential-guest=yes refused, the daemon cases not run"; exit 1; }

[ "$(id -u)" -eq 0 ] || { say "SKIP: the daemon cases read /dev/hwrng and feed the kernel: need root"; exit $((failures ? 1 : 77)); }
need_feeder "needs root"
measure_need_shim "$RNGFEED"
[ -c /dev/hwrng ] && head -c 16 /dev/hwrng >/dev/null 2>&1 || {
	say "SKIP: the daemon cases: /dev/hwrng cannot be read (no hw_random device)"
	exit $((failures ? 1 : 77))
}

fx=$tmp/sysfs
mkdir "$fx" "$tmp/run" "$tmp/run2"
kernel() { # CURRENT AVAILABLE [QUALITY]: the kernel, played
	[ $# -ge 3 ] && echo "$3" >"$fx/rng_quality"
	echo "$2" >"$fx/rng_available"
	echo "$1" >"$fx/rng_current"
}
echo 0 >"$fx/rng_selected"
q() { cat "$fx/rng_quality"; }
# Until $1 holds, for at most $2 s (scaled); 1 if it never does.
within() {
	local i
	for ((i = 0; i < $2 * 20 * SCALE; i++)); do
		eval "$1" && return 0
		sleep 0.05
	done
	return 1
}

# start NAME RUNDIR ARGS...: a daemon under the shim, its log NAME.log.
start() {
	local name=$1 run=$2
	shift 2
	RUNTIME_DIRECTORY=$run "${SHIM_ENV[@]}" RNGFEED_SHIM_OUT="$tmp/$name.shim" \
		"$RNGFEED" -f -v -c /dev/null -n hwrng -O "hwrng:sysfs=$fx" \
		--interval 1 "$@" 2>"$tmp/$name.log" &
	echo $! >>"$tmp/pids"
	eval "pid_$name=$!"
}
# stop NAME: SIGTERM within 2 s, exit 0.
stop() {
	local p r
	p=$(eval echo "\$pid_$1")
	# Not in $(...): only this shell can wait for its children.
	sigterm_wait "$p" >"$tmp/$1.stop"
	r=$(cat "$tmp/$1.stop")
	case $r in
	exit\ 0\ *) ;;
	*) fail "$1: SIGTERM: $r"; sed 's/^/    /' "$tmp/$1.log" ;;
	esac
}
has() { grep -qF -- "$2" "$tmp/$1.log"; }
# alive NAME: its daemon runs (not exited, nor a zombie not yet waited for).
alive() {
	local p
	p=$(eval echo "\${pid_$1:-}")
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && ! grep -q ') Z ' "/proc/$p/stat" 2>/dev/null
}
need_log() { # NAME TEXT WHAT: waits while the daemon runs
	log_name=$1 log_text=$2
	{ within 'has "$log_name" "$log_text" || ! alive "$log_name"' 10 && has "$1" "$2"; } ||
		{ fail "$3: the log lacks '$2'"; sed 's/^/    /' "$tmp/$1.log"; }
}

# held: the device held at 0 through changes, not raised at stop.
f0=$failures
kernel virtio_rng.0 "virtio_rng.0 none " 1000
start held "$tmp/run" --confidential-guest=yes --metrics "$tmp/held.prom"
need_log held "hwrng: credit 0: host-provided, not trusted in a confidential guest (virtio_rng.0)" held
need_log held "hwrng: using it, credit 0/1024" held
within '[ "$(q)" = 0 ]' 10 || fail "held: rng_quality reads $(q) after 10 s"
need_log held "is held at 0: host-provided, not trusted in a confidential guest" held
kernel virtio_rng.1 "virtio_rng.1 none " 900
within '[ "$(q)" = 0 ]' 10 || fail "held: another device registered; rng_quality reads $(q) after 10 s"
need_log held "virtio_rng.0 left" held
echo 900 >"$fx/rng_quality"
within '[ "$(q)" = 0 ]' 10 || fail "held: the kernel set the quality again; rng_quality reads $(q) after 10 s"
# Top-ups every second: fed (the metrics, written every 5 s), credited 0.
within '[ "$(metric "$tmp/held.prom" rngfeed_fed_bytes_total)" -gt 0 ] 2>/dev/null' 20 ||
	fail "held: nothing fed within 20 s"
stop held
[ "$(q)" = 0 ] || fail "held: after SIGTERM rng_quality reads $(q), not 0"
need_log held "virtio_rng.1: rng_quality stays 0 (it was 900): host-provided, not trusted in a confidential guest" held
need_log held "to hand it back by hand: echo 900 > $fx/rng_quality" held
grep -qx 'state=host' "$tmp/run/hwrng-quality" 2>/dev/null ||
	fail "held: the record does not say state=host: $(cat "$tmp/run/hwrng-quality" 2>&1)"
bytes=$(sed -n 's/.*\bbytes=\([0-9]*\).*/\1/p' "$tmp/held.shim" 2>/dev/null)
credited=$(sed -n 's/.*\bcredited_bits=\([0-9]*\).*/\1/p' "$tmp/held.shim" 2>/dev/null)
if [ -z "$credited" ]; then
	fail "held: no shim record"
elif [ "$credited" != 0 ] || [ "${bytes:-0}" -le 0 ]; then
	fail "held: the kernel was fed $bytes bytes crediting $credited bits (want > 0 bytes, 0 bits)"
elif [ "$failures" = "$f0" ]; then
	ok "held: 0 while it ran (device changed, quality set again), 0 after SIGTERM, record state=host; fed $bytes bytes, credited $credited bits (shim)"
fi

# restart: the record adopted, held, not raised.
start restart "$tmp/run" --confidential-guest=yes
need_log restart "kept from an earlier run that held it as host-provided, which set it to 0 (was 900)" restart
[ "$(q)" = 0 ] || fail "restart: rng_quality reads $(q)"
stop restart
[ "$(q)" = 0 ] && has restart "rng_quality stays 0 (it was 900)" &&
	ok "restart: the record adopted (was 900), held, 0 after SIGTERM" ||
	fail "restart: after SIGTERM rng_quality reads $(q)"

# second: two instances on the fixture's lock.
start first "$tmp/run" --confidential-guest=yes
need_log first "kept from an earlier run" second
start second "$tmp/run2" --confidential-guest=yes
need_log second "another rngfeed owns the hand-over of virtio_rng.1" second
stop first
need_log first "handed over to another rngfeed that waits for it" second
need_log second "the other rngfeed stopped" second
[ "$(q)" = 0 ] || fail "second: after the first stopped rng_quality reads $(q)"
stop second
[ "$(q)" = 0 ] && has second "rng_quality stays 0 (it was 900)" &&
	ok "second: waited, took over at 0 when the first stopped, 0 after its own SIGTERM" ||
	fail "second: after SIGTERM rng_quality reads $(q)"

# no: a restart told =no hands it back; a fresh run with =no is the
# control (the gate's ordinary hand-over and hand-back).
start no "$tmp/run" --confidential-guest=no
need_log no "the kernel's own credit for virtio_rng.1 (rng_quality 900) is handed over" no
stop no
[ "$(q)" = 900 ] && has no "virtio_rng.1 handed back to the kernel's own crediting at rng_quality 900" &&
	ok "no: a run with --confidential-guest=no adopted the record and handed it back (900)" ||
	fail "no: after SIGTERM rng_quality reads $(q), not 900"
kernel virtio_rng.0 "virtio_rng.0 none " 1000
start control "$tmp/run" --confidential-guest=no
need_log control "hwrng: using it, credit 768/1024" control
within '[ "$(q)" = 0 ]' 10 || fail "control: rng_quality reads $(q) after 10 s"
stop control
[ "$(q)" = 1000 ] && ! has control "host-provided" &&
	ok "control: --confidential-guest=no: credit 768, handed over and back (1000)" ||
	fail "control: after SIGTERM rng_quality reads $(q), not 1000"
[ ! -e "$fx/rngfeed-hwrng.lock" ] || fail "the lock beside the fixture is still there"

# sources: virtio (on the fixture) and egd with credit=500 (a real
# rngfeed EGD server on a socket here): both tested and mixed in, nothing
# credited, counted from outside.
f0=$failures
kernel virtio_rng.0 "virtio_rng.0 none " 1000
"$RNGFEED" -c /dev/null -f --egd-only --egd-server "unix:$tmp/egd.sock" -n rdrand \
	2>"$tmp/egd.log" &
echo $! >>"$tmp/pids"
within '[ -S "$tmp/egd.sock" ]' 10 || fail "sources: the EGD server's socket did not appear"
RUNTIME_DIRECTORY=$tmp/run3 "${SHIM_ENV[@]}" RNGFEED_SHIM_OUT="$tmp/sources.shim" \
	"$RNGFEED" -f -v -c /dev/null -n virtio -n egd -O "virtio:sysfs=$fx" \
	-O "egd:device=unix:$tmp/egd.sock" -O egd:credit=500 --confidential-guest=yes \
	--interval 1 --metrics "$tmp/sources.prom" 2>"$tmp/sources.log" &
pid_sources=$!
echo $! >>"$tmp/pids"
need_log sources "virtio: credit 0: host-provided, not trusted in a confidential guest (virtio_rng.0)" sources
need_log sources "egd: credit 0: host-provided, not trusted in a confidential guest (an EGD server" sources
need_log sources "its credit=500 is not used (guest-owned=yes if it is the guest's own)" sources
within '[ "$(metric "$tmp/sources.prom" rngfeed_source_blocks_passed_total virtio)" -gt 0 ] &&
	[ "$(metric "$tmp/sources.prom" rngfeed_source_blocks_passed_total egd)" -gt 0 ] &&
	[ "$(metric "$tmp/sources.prom" rngfeed_fed_bytes_total)" -gt 0 ]' 30 2>/dev/null ||
	fail "sources: no block of both passed, or nothing fed, within 30 s"
stop sources
bytes=$(sed -n 's/.*\bbytes=\([0-9]*\).*/\1/p' "$tmp/sources.shim" 2>/dev/null)
credited=$(sed -n 's/.*\bcredited_bits=\([0-9]*\).*/\1/p' "$tmp/sources.shim" 2>/dev/null)
for src in virtio egd; do
	c=$(metric "$tmp/sources.prom" rngfeed_source_credit_bits_total $src)
	[ "$c" = 0 ] || fail "sources: $src carried $c bits of credit"
done
if [ -z "$credited" ]; then
	fail "sources: no shim record"
elif [ "$credited" != 0 ] || [ "${bytes:-0}" -le 0 ]; then
	fail "sources: the kernel was fed $bytes bytes crediting $credited bits (want > 0 bytes, 0 bits)"
elif [ "$failures" = "$f0" ]; then
	ok "sources: virtio ($(metric "$tmp/sources.prom" rngfeed_source_blocks_passed_total virtio) blocks passed) and egd at credit=500 ($(metric "$tmp/sources.prom" rngfeed_source_blocks_passed_total egd)) credited 0; fed $bytes bytes, credited $credited bits (shim)"
fi
[ "$(q)" = 0 ] || fail "sources: virtio_rng.0's rng_quality reads $(q) after the stop"


[ "$failures" -eq 0 ] || { echo "FAIL: $failures checks failed"; exit 1; }
exit 0
