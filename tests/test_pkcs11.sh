#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The pkcs11 source against SoftHSM2 (a token this script makes in its temp
# directory: SOFTHSM2_CONF points there) and tests/fakep11.so (a module told
# to fail by files in $FAKEP11_DIR):
#   softhsm_raw     --raw 100,000 bytes (module by p11-kit name, with a PIN
#                   login; and by path, no login): exactly that many, rngtest
#   list            --list: available with the token, unavailable with a
#                   wrong module path (the reason said)
#   bad_config      a label not found, a wrong module path, an unknown
#                   p11-kit name, a missing pin file, a pin file others may
#                   read, a wrong PIN: one clear line each, no data
#   no_rng          a token without CKF_RNG: refused with the reason by
#                   --raw and by the daemon (nothing passes, retried)
#   session_lost    the token removed while the daemon reads (-t), then
#                   back: CKR_DEVICE_REMOVED said, retried while away,
#                   blocks pass again; the module is never called from the
#                   daemon's main thread
#   hang            C_GenerateRandom never returns: SIGTERM ends the daemon
#                   (exit 0) before a 2-s watchdog
#   credit_default  the daemon feeding the kernel from SoftHSM under
#                   bench/shim.so: "credit 0/1024", bytes fed, 0 bits
#                   credited; with pkcs11:credit=64 the kernel's credit
#                   stays within the passed blocks' (root only)
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_pkcs11.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
FAKEP11=${FAKEP11:-tests/fakep11.so}
. tests/lib_measure.sh
need_built "$RNGFEED"
[ -r "$FAKEP11" ] || { say "FAIL: $FAKEP11 is not built (make $FAKEP11)"; exit 1; }
case $FAKEP11 in /*) ;; *) FAKEP11=$PWD/$FAKEP11 ;; esac
need_tools "Debian packages softhsm2 and rng-tools5" softhsm2-util rngtest
"$RNGFEED" --list 2>/dev/null | grep -q '^pkcs11 ' ||
	skip "$RNGFEED has no pkcs11 source"

measure_temp test_pkcs11
export RUNTIME_DIRECTORY=$tmp/run STATE_DIRECTORY=$tmp/state
mkdir -p "$RUNTIME_DIRECTORY" "$STATE_DIRECTORY" "$tmp/tokens" "$tmp/p11" || exit 1
export SOFTHSM2_CONF=$tmp/softhsm2.conf FAKEP11_DIR=$tmp/p11
cat >"$SOFTHSM2_CONF" <<EOF
directories.tokendir = $tmp/tokens
objectstore.backend = file
log.level = ERROR
slots.removable = false
EOF
LABEL=rngfeed-test
softhsm2-util --init-token --free --label "$LABEL" --pin 123456 --so-pin 654321 \
	>"$tmp/init.log" 2>&1 || { say "FAIL: softhsm2-util --init-token: $(cat "$tmp/init.log")"; exit 1; }
SOFTHSM=$(sed -n 's/^module:[[:space:]]*//p' /usr/share/p11-kit/modules/softhsm2.module 2>/dev/null)
[ -n "$SOFTHSM" ] && [ -r "$SOFTHSM" ] || SOFTHSM=$(ls /usr/lib/*/softhsm/libsofthsm2.so 2>/dev/null | head -n1)
[ -r "$SOFTHSM" ] || skip "libsofthsm2.so not found"
umask 077
printf '123456\n' >"$tmp/pin"
printf '000000\n' >"$tmp/wrongpin"
SH=(-n pkcs11 -O "pkcs11:module=$SOFTHSM" -O "pkcs11:token=$LABEL")
FAKE=(-n pkcs11 -O "pkcs11:module=$FAKEP11" -O pkcs11:token=fake)

# wait_for SECONDS CMD...: until CMD succeeds (1 if it never does).  The
# bound only stops a broken run; a loaded machine takes what it takes.
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}
in_log() { grep -qE "$2" "$1" 2>/dev/null; }
count() { grep -cE "$2" "$1" 2>/dev/null; }

# ---- softhsm_raw -----------------------------------------------------------------
raw_check() { # NAME ARGS...
	local name=$1 out=$tmp/$1.raw f rc
	shift
	timeout 60 "$RNGFEED" -c /dev/null --raw --bytes 100000 "$@" 2>"$tmp/$name.err" |
		head -c 100001 >"$out"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] && [ ! -s "$tmp/$name.err" ] ||
		{ fail "$name: --raw exited $rc: $(cat "$tmp/$name.err")"; return; }
	[ "$(stat -c %s "$out")" -eq 100000 ] ||
		{ fail "$name: --raw gave $(stat -c %s "$out") bytes, not 100000"; return; }
	f=$(rngtest <"$out" 2>&1 | sed -n 's/^rngtest: FIPS 140-2 failures: //p')
	# At most 2 of 39 blocks (tests/test_sources.sh says why).
	if [ -z "$f" ] || [ "$f" -gt 2 ]; then
		fail "$name: rngtest: ${f:-no verdict} of 39 FIPS blocks failed"
	else
		ok "$name: 100000 bytes, $f FIPS blocks failed"
	fi
}
raw_check softhsm_name -n pkcs11 -O pkcs11:module=softhsm2 -O "pkcs11:token=$LABEL" \
	-O "pkcs11:pin-file=$tmp/pin"
raw_check softhsm_path "${SH[@]}"

# ---- list -------------------------------------------------------------------------
line=$("$RNGFEED" -c /dev/null --list "${SH[@]}" 2>&1 | grep '^pkcs11 ')
[[ $line =~ ^pkcs11\ +available\ +0\ .*token\ \'$LABEL\' ]] &&
	ok "--list: $line" || fail "--list with the token: '$line'"
line=$("$RNGFEED" -c /dev/null --list -n pkcs11 -O "pkcs11:module=$tmp/none.so" \
	-O "pkcs11:token=$LABEL" 2>&1 | grep '^pkcs11 ')
[[ $line =~ ^pkcs11\ +unavailable.*none.so:\ No\ such\ file ]] &&
	ok "--list, wrong module: unavailable, says why" || fail "--list with a wrong module: '$line'"

# ---- bad_config ---------------------------------------------------------------------
# refused NAME EXIT REGEX ARGS...: one line on stderr matching REGEX, exit
# EXIT, nothing on stdout.
refused() {
	local name=$1 want=$2 re=$3 rc
	shift 3
	timeout 30 "$RNGFEED" -c /dev/null "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ] || ! grep -qE "$re" "$tmp/$name.err" || [ -s "$tmp/$name.out" ]; then
		fail "$name: exit $rc (want $want), stderr '$(head -c 300 "$tmp/$name.err")', $(stat -c %s "$tmp/$name.out") bytes out"
	else
		ok "$name: $(grep -m1 -E "$re" "$tmp/$name.err")"
	fi
}
refused label_not_found 1 "pkcs11: read failed: no token labelled 'nope' in $SOFTHSM" \
	--raw --bytes 10 -n pkcs11 -O "pkcs11:module=$SOFTHSM" -O pkcs11:token=nope
refused wrong_module 1 "pkcs11: unavailable: module $tmp/none.so: No such file or directory" \
	-f -n pkcs11 -O "pkcs11:module=$tmp/none.so" -O "pkcs11:token=$LABEL"
refused not_a_module 1 "pkcs11: read failed: $tmp/pin is not a PKCS#11 module|cannot load module" \
	--raw --bytes 10 -n pkcs11 -O "pkcs11:module=$tmp/pin" -O "pkcs11:token=$LABEL"
refused unknown_name 1 "pkcs11: unavailable: module nope-p11: no nope-p11.module" \
	-f -n pkcs11 -O pkcs11:module=nope-p11 -O "pkcs11:token=$LABEL"
refused no_token_option 1 "pkcs11: unavailable: no token: give -O pkcs11:token=LABEL" \
	-f -n pkcs11 -O "pkcs11:module=$SOFTHSM"
refused pin_missing 1 "pkcs11: unavailable: pin-file $tmp/nopin: No such file or directory" \
	-f "${SH[@]}" -O "pkcs11:pin-file=$tmp/nopin"
refused pin_relative 2 "pin-file must be an absolute path" \
	-f "${SH[@]}" -O pkcs11:pin-file=pin
cp "$tmp/pin" "$tmp/pin644" && chmod 644 "$tmp/pin644"
refused pin_readable 1 "pkcs11: unavailable: pin-file $tmp/pin644: others may read or change it; chmod 600 it" \
	-f "${SH[@]}" -O "pkcs11:pin-file=$tmp/pin644"
refused pin_readable_raw 1 "pkcs11: read failed: pin-file $tmp/pin644: mode 0644 lets others read" \
	--raw --bytes 10 "${SH[@]}" -O "pkcs11:pin-file=$tmp/pin644"
refused wrong_pin 1 "pkcs11: read failed: C_Login: CKR_PIN_INCORRECT" \
	--raw --bytes 10 "${SH[@]}" -O "pkcs11:pin-file=$tmp/wrongpin"

# ---- daemons on the fake module ---------------------------------------------------------
# fake_daemon NAME FLAGS ARGS...: the daemon in test mode (-t: the
# pipeline, nothing fed) on fakep11 with the flag files FLAGS (comma list)
# in its own FAKEP11_DIR.
fake_daemon() {
	local d=$tmp/$1 flags=$2 f
	shift 2
	mkdir -p "$d/p11"
	for f in ${flags//,/ }; do : >"$d/p11/$f"; done
	FAKEP11_DIR=$d/p11 "$RNGFEED" -t -f -v -c /dev/null --metrics "$d/metrics" \
		--retry-delay 0.2 --retry-max 1 "${FAKE[@]}" "$@" >/dev/null 2>"$d/log" </dev/null &
	pid=$!
	echo "$pid" >>"$tmp/pids"
}
stop_daemon() { # NAME: SIGTERM, "exit RC S" or "hung" in NAME/stop
	# A daemon that ended by itself is a failure of its own (sigterm_wait
	# is for one still running).
	if kill -0 "$pid" 2>/dev/null; then
		sigterm_wait "$pid" >"$tmp/$1/stop"
	else
		wait "$pid"
		echo "ended by itself with status $?" >"$tmp/$1/stop"
	fi
	pid=
}
main_thread_calls() { # NAME
	local n
	n=$(count "$tmp/$1/p11/log" 'main-thread')
	[ "${n:-0}" -eq 0 ] || fail "$1: $n module calls from the daemon's main thread"
}

# no_rng: --raw, then the daemon.
: >"$FAKEP11_DIR/norng"
refused no_rng_raw 1 "pkcs11: read failed: token 'fake' \(fakep11, serial 0001\) has no random number generator \(its CKF_RNG flag is not set\)" \
	--raw --bytes 10 "${FAKE[@]}"
rm -f "$FAKEP11_DIR/norng"

fake_daemon no_rng norng
d=$tmp/no_rng
if wait_for 60 eval '[ "$(count "$d/log" "CKF_RNG flag is not set.*retrying in")" -ge 2 ]'; then
	stop_daemon no_rng
	passed=$(sed -nE 's/^rngfeed:   pkcs11: [0-9]+ raw bytes, ([0-9]+) blocks? passed.*/\1/p' "$d/log")
	[ "$passed" = 0 ] && [[ $(cat "$d/stop") == "exit 0 "* ]] &&
		ok "no_rng: the daemon refuses it and says why, retried: $(grep -m1 'CKF_RNG' "$d/log" | cut -c1-140)" ||
		fail "no_rng: passed '$passed', stop '$(cat "$d/stop")'"
else
	fail "no_rng: no two refusals: $(tail -n 3 "$d/log")"
	stop_daemon no_rng
fi
main_thread_calls no_rng

# session_lost: blocks pass, the token goes, comes back.
fake_daemon session_lost ""
d=$tmp/session_lost
if wait_for 60 eval '[ "$(count "$d/p11/log" "^C_GenerateRandom")" -ge 3 ]'; then
	: >"$d/p11/removed"
	before=$(count "$d/p11/log" "^C_GenerateRandom")
	wait_for 60 in_log "$d/log" "pkcs11: read failed: C_GenerateRandom: CKR_DEVICE_REMOVED" ||
		fail "session_lost: no CKR_DEVICE_REMOVED line"
	# Looked for again while away (with back-off), not found.
	wait_for 60 in_log "$d/log" "pkcs11: read failed: no token labelled 'fake'.*retrying in" ||
		fail "session_lost: not looked for again while away"
	inits=$(count "$d/p11/log" "^C_Initialize")
	rm -f "$d/p11/removed"
	# Back: a new C_Initialize and three more blocks read from it.
	wait_for 60 eval '[ "$(sed -n "/^C_Initialize/h; /^C_Initialize/!H; \${x;p}" "$d/p11/log" | grep -c "^C_GenerateRandom")" -ge 3 ]' ||
		fail "session_lost: nothing read after it came back"
	stop_daemon session_lost
	passed=$(sed -nE 's/^rngfeed:   pkcs11: [0-9]+ raw bytes, ([0-9]+) blocks? passed.*/\1/p' "$d/log")
	if [ "${passed:-0}" -gt "$before" ] && [[ $(cat "$d/stop") == "exit 0 "* ]]; then
		ok "session_lost: $before blocks read before, $passed passed in all; $inits C_Initialize while away, reopened"
	else
		fail "session_lost: ${passed:-?} blocks passed (more than $before wanted), stop '$(cat "$d/stop")'"
		tail -n 8 "$d/log"
	fi
else
	fail "session_lost: the daemon read nothing: $(tail -n 3 "$d/log")"
	stop_daemon session_lost
fi
main_thread_calls session_lost

# hang: C_GenerateRandom never returns.
fake_daemon hang hang
d=$tmp/hang
if wait_for 60 in_log "$d/p11/log" '^hanging'; then
	stop_daemon hang
	if [[ $(cat "$d/stop") == "exit 0 "* ]]; then
		ok "hang: SIGTERM while C_GenerateRandom hangs: $(cat "$d/stop") s"
	else
		fail "hang: SIGTERM while C_GenerateRandom hangs: $(cat "$d/stop")"
	fi
	in_log "$d/log" "pkcs11: its reader thread did not stop" ||
		fail "hang: the reader was not left behind (did the call hang?)"
else
	fail "hang: the module was never called: $(tail -n 3 "$d/log")"
	stop_daemon hang
fi
main_thread_calls hang

# ---- credit_default: the kernel's credit from outside -------------------------------------
if [ "$(id -u)" -ne 0 ] ||
	! (( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )); then
	say "SKIP: credit_default: needs root with CAP_SYS_ADMIN (RNDADDENTROPY)"
elif ldd "$RNGFEED" 2>/dev/null | grep -q libasan; then
	say "SKIP: credit_default: $RNGFEED is built with ASan, which hides RNDADDENTROPY from the shim"
else
	measure_need_shim "$RNGFEED"
	feed() { # NAME ARGS...: feeding the kernel under the shim until 4 blocks passed
		local d=$tmp/$1
		shift
		mkdir -p "$d"
		"${SHIM_ENV[@]}" RNGFEED_SHIM_OUT="$d/shim" "$RNGFEED" -f -v -c /dev/null \
			--metrics "$d/metrics" --interval 1 "${SH[@]}" "$@" 2>"$d/log" </dev/null &
		pid=$!
		echo "$pid" >>"$tmp/pids"
		wait_for 120 eval '[ "$(metric "$d/metrics" rngfeed_source_blocks_passed_total pkcs11)" -ge 4 ] 2>/dev/null' ||
			fail "$(basename "$d"): fewer than 4 blocks passed: $(tail -n 2 "$d/log")"
		stop_daemon "$(basename "$d")"
	}
	feed credit_default
	d=$tmp/credit_default
	c=$(credit_of "$d" pkcs11) cred=$(shim "$d" credited_bits) bytes=$(shim "$d" bytes)
	if [ "$c" = 0 ] && [ "${cred:-x}" = 0 ] && [ "${bytes:-0}" -gt 0 ] &&
		[[ $(cat "$d/stop") == "exit 0 "* ]]; then
		ok "credit_default: credit 0/1024; the kernel was fed $bytes B, credited $cred bits (shim)"
	else
		fail "credit_default: credit '$c', shim credited '${cred:-?}' bits of '${bytes:-?}' B, stop '$(cat "$d/stop")'"
	fi
	# The control: a configured credit is credited, within its blocks'.
	feed credit_64 -O pkcs11:credit=64
	d=$tmp/credit_64
	passed=$(metric "$d/metrics" rngfeed_source_blocks_passed_total pkcs11)
	cred=$(shim "$d" credited_bits)
	bound=$(( ${passed:-0} * 20000 * 64 / 1024 ))
	if [ "$(credit_of "$d" pkcs11)" = 64 ] && [ -n "$cred" ] && [ "$cred" -le "$bound" ]; then
		ok "credit_64: credited $cred bits <= $bound ($passed blocks at 64/1024)"
	else
		fail "credit_64: credit '$(credit_of "$d" pkcs11)', credited '${cred:-?}' > bound $bound"
	fi
fi

[ "$failures" -eq 0 ] || { say "FAIL: $failures check(s)"; exit 1; }
say "PASS: pkcs11"
