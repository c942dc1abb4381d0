# shellcheck shell=bash disable=SC2154  # vmdir and tmp come from the sourcing script
# tests/vm/sdvm.sh — sourced by tests/vm/bootcost.sh and tests/vm/systemd-cases.sh:
# build the systemd guest image once (tests/vm/systemd-boot.sh VM_IMAGE_ONLY=1) and boot
# it many times, each boot from the same pristine image (QEMU snapshot=on: the guest's
# writes go to a temporary overlay), with a fresh swtpm, and pick the guest's report
# ("@@ SECTION: line", tests/vm/systemd-guest.sh) out of the serial console.
# Needs: $vmdir (tests/vm), $tmp (a private temporary directory).

# sdvm_image OUTDIR: builds the image (environment passed on: VM_REV, VM_CONF,
# VM_EXTRA_DEBS, VM_DROPIN), copies disk.img and initrd.img to OUTDIR and sets
# SD_IMAGE, SD_INITRD, SD_VMLINUZ, SD_KVER. Returns 1 on failure (log: OUTDIR/build.log).
sdvm_image() {
	local out=$1 vars
	mkdir -p "$out"
	VM_IMAGE_ONLY=1 "$vmdir/systemd-boot.sh" >"$out/build.log" 2>&1 || return 1
	vars=$(grep -E '^VM_(IMAGE|INITRD|KVER|VMLINUZ)=' "$out/build.log")
	SD_IMAGE=$out/disk.img SD_INITRD=$out/initrd.img
	SD_KVER=$(sed -n 's/^VM_KVER=//p' <<<"$vars")
	SD_VMLINUZ=$(sed -n 's/^VM_VMLINUZ=//p' <<<"$vars")
	# sparse copies: the build directory is reused by the next build
	cp --sparse=always "$(sed -n 's/^VM_IMAGE=//p' <<<"$vars")" "$SD_IMAGE" || return 1
	cp "$(sed -n 's/^VM_INITRD=//p' <<<"$vars")" "$SD_INITRD" || return 1
	[ -n "$SD_KVER" ] && [ -n "$SD_VMLINUZ" ]
}

# sdvm_boot CONSOLE_LOG "KERNEL OPTIONS" [QEMU ARGS...]: one boot of $SD_IMAGE, at most
# ${VM_TIMEOUT:-300} s; VM_CLOCK=icount counts guest time in instructions (-icount
# shift=0) instead of following the host's clock; SD_NO_TPM=1 boots without the swtpm TPM
# (so that a virtio-rng is the only hw_random device). Writes CONSOLE_LOG and, beside it,
# the report (.report). Returns QEMU's exit status.
sdvm_boot() {
	local console=$1 append=$2 sock=$tmp/swtpm.sock rc swtpm_pid
	shift 2
	local -a clock=() tpm=()
	[ "${VM_CLOCK:-tcg}" = icount ] && clock=(-icount shift=0)
	swtpm_pid=''
	if [ "${SD_NO_TPM:-0}" != 1 ]; then
		rm -rf "$tmp/tpm" "$sock"
		mkdir -p "$tmp/tpm"
		swtpm socket --tpm2 --ctrl type=unixio,path="$sock" --tpmstate dir="$tmp/tpm" \
			--flags not-need-init,startup-clear --log file="$tmp/swtpm.log" &
		swtpm_pid=$!
		for _ in $(seq 50); do
			[ -S "$sock" ] && break
			sleep 0.1
		done
		# shellcheck disable=SC2054  # the commas are QEMU's
		tpm=(-chardev "socket,id=chrtpm,path=$sock" -tpmdev emulator,id=tpm0,chardev=chrtpm
		     -device tpm-tis,tpmdev=tpm0)
	fi
	timeout -k 10 "${VM_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 \
		"${clock[@]}" -display none -monitor none -serial "file:$console" -no-reboot -nic none \
		-kernel "$SD_VMLINUZ" -initrd "$SD_INITRD" \
		-drive "file=$SD_IMAGE,if=virtio,format=raw,snapshot=on" \
		"${tpm[@]}" "$@" \
		-append "root=/dev/vda rw console=ttyS0 panic=1 random.trust_cpu=off random.trust_bootloader=off systemd.unit=multi-user.target $append" \
		</dev/null >"$console.qemu" 2>&1
	rc=$?
	if [ -n "$swtpm_pid" ]; then
		kill "$swtpm_pid" 2>/dev/null
		wait "$swtpm_pid" 2>/dev/null
	fi
	tr -d '\r' <"$console" | sed -n 's/^@@ //p' >"${console%.log}.report"
	return $rc
}

# sdvm_sect REPORT SECTION / sdvm_prop REPORT SECTION PROPERTY
sdvm_sect() { sed -n "s/^$2: //p" "$1"; }
sdvm_prop() { sdvm_sect "$1" "$2" | sed -n "s/^$3=//p" | head -n 1; }
# "[    5.123456] ..." on stdin to microseconds (first line)
sdvm_usec() { sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{6\}\)\].*/\1\2/p' | head -n 1 | sed 's/^0*\(.\)/\1/'; }
# median of the numbers on stdin ("-" when none)
sdvm_median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
