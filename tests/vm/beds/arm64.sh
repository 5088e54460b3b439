# SPDX-License-Identifier: GPL-2.0
# Bed "arm64", sourced by tests/vm/bed.sh: QEMU TCG emulating an arm64 machine that boots at EL2
# (-M virt,virtualization=on, GICv3, -cpu max). Debian's arm64 kernel builds KVM in, which comes
# up in VHE mode (bed "arm64-nvhe": kvm-arm.mode=nvhe). Real kvm_exit / kvm_entry with the arm64
# record (ret, esr_ec, vcpu_pc; isa arm64). Boot ~3 s. The busybox is Debian's busybox-static
# for arm64, downloaded once into the kernel cache like the kernel.
KARCH=arm64
BED_MODULES=
BED_CPUFLAG=
BED_COMPRESS=cat
BED_KAPPEND=${BED_KAPPEND:-}
# pauth-impdef: QEMU's own pointer-authentication hash instead of QARMA, much faster under TCG.
DEF_TIMEOUT=600 DEF_MEM=1024 DEF_SMP=2 DEF_CPU="max,pauth-impdef=on"

bed_prereqs() {
	need_cmd qemu-system-aarch64 qemu-system-arm
	dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64 ||
		die "dpkg has no arm64 architecture, so apt cannot fetch the arm64 kernel and busybox (tools/install-deps.sh adds it)"
}

# Sets BUSYBOX to a static arm64 busybox, from $CACHE/busybox-arm64 (filled once).
bed_busybox() {
	local dir=$CACHE/busybox-arm64 tmp deb
	BUSYBOX=$dir/busybox
	[ -x "$BUSYBOX" ] && return 0
	mkdir -p "$CACHE" 2>/dev/null || skip "cannot create kernel cache $CACHE (set VMEXIT_BED_CACHE)"
	exec 9>"$CACHE/.lock"
	flock 9
	if [ ! -x "$BUSYBOX" ]; then
		[ "${VMEXIT_BED_OFFLINE:-0}" = 1 ] && skip "no arm64 busybox cached in $dir (VMEXIT_BED_OFFLINE=1)"
		tmp=$(mktemp -d "$CACHE/.busybox.XXXXXX")
		say "downloading busybox-static:arm64 (once; cached in $dir)"
		if ! (cd "$tmp" && timeout 300 apt-get download -q -o APT::Sandbox::User=root \
				busybox-static:arm64 >"$tmp/apt.log" 2>&1); then
			rm -rf "$tmp"
			skip "cannot download busybox-static:arm64 (no network or apt source?)"
		fi
		deb=$(ls "$tmp"/busybox-static_*_arm64.deb 2>/dev/null | head -n 1)
		mkdir "$tmp/x"
		[ -n "$deb" ] && dpkg-deb -x "$deb" "$tmp/x" && [ -x "$tmp/x/bin/busybox" ] ||
			{ rm -rf "$tmp"; die "busybox-static:arm64: no bin/busybox in the package"; }
		mkdir -p "$dir"
		mv "$tmp/x/bin/busybox" "$BUSYBOX.tmp" && mv "$BUSYBOX.tmp" "$BUSYBOX"
		rm -rf "$tmp"
	fi
	exec 9>&-
}

# bed_boot INITRAMFS: prints the serial console on stdout until the machine powers off or
# TIMEOUT seconds pass (exit 124 then). virtualization=on starts the CPU at EL2, where the kernel
# stays to run KVM; Debian's arm64 vmlinuz is a plain Image that QEMU loads directly.
bed_boot() {
	say "booting $KVER under QEMU TCG (-M virt,virtualization=on -cpu $CPU_MODEL -smp $SMP -m $MEM${BED_KAPPEND:+, $BED_KAPPEND}), timeout ${TIMEOUT}s"
	timeout -k 5 "$TIMEOUT" qemu-system-aarch64 -accel tcg \
		-M virt,virtualization=on,gic-version=3 -cpu "$CPU_MODEL" -smp "$SMP" -m "$MEM" \
		-nodefaults -no-reboot -display none -monitor none -serial stdio \
		-kernel "$KDIR/vmlinuz" -initrd "$1" \
		-append "console=ttyAMA0 rdinit=/init quiet loglevel=3 panic=-1 $BED_KAPPEND" \
		</dev/null 2>&1
}
