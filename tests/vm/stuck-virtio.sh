#!/bin/bash
# tests/vm/stuck-virtio.sh — the kernel alone with a virtio-rng device that gives only
# zeros (issue 14, item 4): per kernel and per kernel option, does the kernel's hw_random
# core credit the stuck device, when first, and does it keep crediting it; when is the
# CRNG ready. Not in CI (about 40 s of host time per boot under TCG).
#
#   tests/vm/stuck-virtio.sh            (make vm-test-stuck)
#
# Each boot: busybox initramfs (mkinitrd.sh, case virtio-stuck of init.sh), QEMU -accel tcg
# -cpu max with `-object rng-random,filename=/dev/zero -device virtio-rng-pci`, kernel
# options random.trust_cpu=off (so nothing else seeds the CRNG) and
# `trace_clock=global kprobe_event=p:hwr,add_hwgenerator_randomness,len=%si:u32,ent=%dx:u32`: every call of
# the hw_random core's kthread into random.c is recorded with the bits it credits (the
# third argument), so credits after `crng init done` are seen too (entropy_avail stops
# counting once the CRNG is ready). The guest loads virtio_pci and virtio_rng (the
# "start"), the waiter polls getrandom(GRND_NONBLOCK) until ready or vmtest.timeout,
# then the guest watches vmtest.observe more seconds and prints the trace.
#
# Environment: VM_KERNELS (default "bookworm trixie": Debian 12's 6.1 from fetch.sh,
# Debian 13's 6.12 from fetch-kernel.sh), VM_OPTIONS (";"-separated kernel option sets,
# "-" for none; default below), VM_ROUNDS (default 2), VM_TIMEOUT (guest seconds for the
# CRNG, default 15), VM_OBSERVE (default 20), VM_CASE (virtio-stuck, or
# virtio-stuck-rngfeed: rngfeed -n hwrng started right after the driver, RNGFEED binary),
# RNGFEED (default ./rngfeed; it goes into the initramfs either way), VM_WORK.
# Writes $VM_WORK/stuck/results.md (a table) and the serial logs beside it.
set -u

here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
WORK=${VM_WORK:-$here/work}/stuck
KERNELS=${VM_KERNELS:-bookworm trixie}
OPTIONS=${VM_OPTIONS:-"-;rng_core.default_quality=0;rng_core.current_quality=0;module_blacklist=virtio_rng"}
ROUNDS=${VM_ROUNDS:-2}
TIMEOUT=${VM_TIMEOUT:-15}
OBSERVE=${VM_OBSERVE:-20}
CASE=${VM_CASE:-virtio-stuck}
KPROBE='trace_clock=global kprobe_event=p:hwr,add_hwgenerator_randomness,len=%si:u32,ent=%dx:u32'

skip() { echo "SKIP: stuck-virtio: $*"; exit 0; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built (make rngfeed)"; exit 1; }
base=$("$here/fetch.sh") || skip "fetch.sh could not fetch the 6.1 kernel and busybox"
eval "$base"
mkdir -p "$WORK"
rm -f "$WORK"/*.log
runs=$WORK/runs.txt
: >"$runs"

# One boot's log to one line: kernel option round start crng first_credit(s,bits)
# credits credits_after_ready last_credit zero_credit_calls quality
parse() {
	awk -v k="$1" -v o="$2" -v r="$3" '
	function stamp(s) { sub(/^[^[]*\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	/VMTEST kmsg .*vmtest: start/ { ks = stamp($0) }
	/VMTEST kmsg .*crng init done/ { kc = stamp($0) }
	/VMTEST sysfs rng_quality=/ { q = $0; sub(/.*=/, "", q) }
	/VMTEST trace .* hwr: / {
		t = $0; sub(/: hwr: .*/, "", t); n = split(t, a, " ")
		e = $0; sub(/.* ent=/, "", e); nt++; tt[nt] = a[n] + 0; te[nt] = e + 0
	}
	END {
		if (ks == "") { print k, o, r, "noboot"; exit }
		# the trace lines come before the kernel messages in the log
		for (i = 1; i <= nt; i++) {
			t = tt[i]; e = te[i]
			if (e > 0) {
				credits++; last = t
				if (first == "") { first = t; firstbits = e }
				if (kc != "" && t > kc) after++
			} else zero++
		}
		printf "%s %s %s %.3f %s %s %d %d %s %d %s\n", k, o, r, ks,
			kc == "" ? "none" : sprintf("%.3f", kc - ks),
			first == "" ? "none" : sprintf("%.3f/%d", first - ks, firstbits),
			credits, after, last == "" ? "-" : sprintf("%.1f", last - ks), zero,
			q == "" ? "-" : q
	}' "$4"
}

for k in $KERNELS; do
	if [ "$k" = bookworm ]; then
		eval "$base"
	else
		kv=$("$here/fetch-kernel.sh" "$k") || { echo "FAIL: no $k kernel"; continue; }
		eval "$kv"
	fi
	initrd=$WORK/initrd-$k.cpio
	RNGFEED=$RNGFEED "$here/mkinitrd.sh" "$initrd" || { echo "FAIL: initramfs for $k"; exit 1; }
	echo "stuck-virtio: $k = $VM_KVER"
	for r in $(seq "$ROUNDS"); do
		IFS=';' read -r -a opts <<<"$OPTIONS"
		for o in "${opts[@]}"; do
			extra=$o
			[ "$o" = - ] && extra=''
			tag=$(echo "${o}" | tr -c 'a-zA-Z0-9_.=\n' '_')
			log=$WORK/$k-$tag-$r.log
			timeout -k 5 $((TIMEOUT + OBSERVE + 90)) qemu-system-x86_64 -accel tcg -cpu max -m 512 \
				-nographic -no-reboot -nic none \
				-object rng-random,id=rng0,filename=/dev/zero -device virtio-rng-pci,rng=rng0 \
				-kernel "$VM_VMLINUZ" -initrd "$initrd" \
				-append "console=ttyS0 random.trust_cpu=off random.trust_bootloader=off quiet $KPROBE $extra vmtest.case=$CASE vmtest.timeout=$TIMEOUT vmtest.observe=$OBSERVE" \
				</dev/null >"$log" 2>&1
			line=$(parse "$VM_KVER" "$o" "$r" "$log")
			echo "$line" >>"$runs"
			echo "  $line"
		done
	done
done

# The table: medians over rounds for the times, all rounds' counts.
{
	echo "# stuck virtio-rng (zeros), $(date -u +%Y-%m-%d), case $CASE, $ROUNDS round(s), TCG, trust_cpu=off"
	echo
	echo "Times are guest seconds from loading virtio_rng; a credit is a call of add_hwgenerator_randomness with bits > 0 (value: bits credited); after-ready: such calls after 'crng init done' within $OBSERVE s more."
	echo
	echo "| kernel | option | first kernel credit from the stuck device (s / bits) | CRNG ready at (s) | credits in all | credits after ready | last credit at (s) | rng_quality after |"
	echo "|---|---|---|---|---|---|---|---|"
	awk '$4 != "noboot" { print }' "$runs" | sort -s -k1,2 | awk '
	{ key = $1 " | " $2; n[key]++; f[key] = f[key] (f[key] ? ", " : "") $6; c[key] = c[key] (c[key] ? ", " : "") $5
	  cr[key] = cr[key] (cr[key] ? ", " : "") $7; af[key] = af[key] (af[key] ? ", " : "") $8
	  la[key] = la[key] (la[key] ? ", " : "") $9; q[key] = $11; if (!(key in ord)) { ord[key] = ++m; keys[m] = key } }
	END { for (i = 1; i <= m; i++) { k = keys[i]
		printf "| %s | %s | %s | %s | %s | %s | %s |\n", k, f[k], c[k], cr[k], af[k], la[k], q[k] } }'
} >"$WORK/results.md"
cat "$WORK/results.md"
