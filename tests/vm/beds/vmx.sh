# SPDX-License-Identifier: GPL-2.0
# Bed "vmx", sourced by tests/vm/bed.sh: the Bochs emulator with an Intel Skylake-X CPU, whose VMX
# (EPT, VPID, unrestricted guest; no APICv) kvm_intel accepts. Real kvm_exit / kvm_entry with VMX
# reasons (isa 1). Bochs interprets every instruction on one host core: the boot takes ~65 s
# (most of it the kernel's xz decompression) and each guest exit ~50 us.
# VMEXIT_BOCHS=PATH runs another Bochs, with the BIOS and VGA BIOS it installed (PREFIX/share/bochs
# for PREFIX/bin/bochs) and its headless "nogui" display: Bochs 2.8 and later process posted
# interrupts, which kvm_intel's APICv needs (tests/vm/README.md). Debian's stays the default.
KARCH=amd64
BED_MODULES=kvm_intel
BED_CPUFLAG=vmx
# The initrd is read through the BIOS from an emulated CD: gzip keeps it small, and level 1
# keeps the in-bed decompression short.
BED_COMPRESS="gzip -1"
DEF_TIMEOUT=1800 DEF_MEM=512 DEF_SMP=1 DEF_CPU=corei7_skylake_x

BOCHS=${VMEXIT_BOCHS:-}
bed_prereqs() {
	local c share
	if [ -n "$BOCHS" ]; then
		[ -f "$BOCHS" ] && [ -x "$BOCHS" ] ||
			die "VMEXIT_BOCHS=$BOCHS is not an executable file (a Bochs binary, or unset it for Debian's)"
		share=$(cd "$(dirname "$BOCHS")/.." && pwd)/share/bochs
		ROM=$share/BIOS-bochs-latest VGAROM=$share/VGABIOS-lgpl-latest.bin
		for c in "$ROM" "$VGAROM"; do
			[ -f "$c" ] || die "VMEXIT_BOCHS=$BOCHS: $c missing (make install that Bochs)"
		done
		# Its debugger, if built in, stops at a prompt: -rc as for Debian's (bed_boot).
		BOCHS_RC=
		"$BOCHS" --help 2>&1 | grep -q -- '-rc filename' && BOCHS_RC=1
		need_file /usr/lib/ISOLINUX/isolinux.bin isolinux
		need_file /usr/lib/syslinux/modules/bios/ldlinux.c32 syslinux-common
		need_cmd xorriso xorriso
		need_cmd script bsdutils
		return 0
	fi
	ROM=/usr/share/bochs/BIOS-bochs-latest VGAROM=/usr/share/vgabios/vgabios.bin BOCHS_RC=1
	need_cmd bochs bochs
	need_file /usr/share/bochs/BIOS-bochs-latest bochsbios
	need_file /usr/share/vgabios/vgabios.bin vgabios
	ls /usr/lib/x86_64-linux-gnu/bochs/plugins/libbx_term_gui.so* >/dev/null 2>&1 ||
		die "bochs-term not installed (apt-get install bochs-term; tools/install-deps.sh)"
	need_file /usr/lib/ISOLINUX/isolinux.bin isolinux
	need_file /usr/lib/syslinux/modules/bios/ldlinux.c32 syslinux-common
	need_cmd xorriso xorriso
	need_cmd script bsdutils
}

# With its debugger built in, Bochs keeps stdin for the debugger and draws the "term" display on
# a pty of its own ("Bochs connected to screen /dev/pts/N"), written from the master side. Nobody
# reads that screen here: once its buffer is full, Bochs blocks in the write and the machine
# stops (seen after a few minutes of VGA cursor updates). Read and drop it.
drain_display() {
	local i pts= p f
	# The screen's slave is the tty-index of the /dev/ptmx Bochs holds (bochs.term also says
	# it, but only once Bochs got that far, which can take long on a busy host).
	for i in $(seq 600); do
		for p in $(pgrep -f "bochs-bin .*$WORK/bochsrc" 2>/dev/null); do
			for f in /proc/$p/fd/*; do
				[ "$(readlink "$f" 2>/dev/null)" = /dev/ptmx ] || continue
				pts=/dev/pts/$(awk '/^tty-index:/{print $2}' "/proc/$p/fdinfo/${f##*/}" 2>/dev/null)
			done
		done
		[ -n "$pts" ] && [ -c "$pts" ] && break
		pts=
		sleep 0.2
	done
	[ -n "$pts" ] || { say "warning: no Bochs screen pty to drain: the machine may stall"; return 0; }
	stty -F "$pts" raw -echo 2>/dev/null || true
	exec cat "$pts" >/dev/null 2>&1
}

bed_boot() {
	local iso=$WORK/iso rc=0 pid display=term cmd
	# Bochs has no direct kernel boot: isolinux on an El Torito CD loads the bzImage and initrd.
	mkdir -p "$iso/isolinux"
	cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$iso/isolinux/"
	cp "$KDIR/vmlinuz" "$iso/vmlinuz"
	cp "$1" "$iso/initrd"
	cat >"$iso/isolinux/isolinux.cfg" <<EOC
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL /vmlinuz
  INITRD /initrd
  APPEND console=ttyS0,115200 rdinit=/init quiet loglevel=3 panic=-1 mitigations=off tsc=reliable no_timer_check
EOC
	xorriso -as mkisofs -quiet -o "$WORK/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
		-no-emul-boot -boot-load-size 4 -boot-info-table "$iso" 2>/dev/null || die "cannot build the boot CD"
	rm -rf "$iso"
	# Another Bochs: nogui (its --with-nogui), which draws nothing, so no screen to drain.
	[ -n "$BOCHS" ] && display=nogui
	# ignore_bad_msrs: kvm_intel touches MSRs Bochs does not model; its log (one line per VM
	# entry about them) goes nowhere. Guest clocks are virtual (sync=none): time on the host.
	cat >"$WORK/bochsrc" <<EOC
megs: $MEM
cpu: model=$CPU_MODEL, count=$SMP, ips=200000000, reset_on_triple_fault=1, ignore_bad_msrs=1
romimage: file=$ROM
vgaromimage: file=$VGAROM
display_library: $display
ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
ata0-master: type=cdrom, path=$WORK/boot.iso, status=inserted
boot: cdrom
clock: sync=none, time0=local
com1: enabled=1, mode=file, dev=$WORK/com1
log: /dev/null
panic: action=fatal
error: action=ignore
info: action=ignore
debug: action=ignore
mouse: enabled=0
speaker: enabled=0
pci: enabled=1, chipset=i440fx
EOC
	say "booting $KVER (vmlinuz) under ${BOCHS:-bochs} (cpu $CPU_MODEL x$SMP, $MEM MiB), timeout ${TIMEOUT}s"
	: >"$WORK/com1"
	# Debian's bochs is built with its debugger, which stops at a prompt unless told to continue
	# (-rc), and ships no headless display: run the curses "term" one on a pty from script(1).
	echo c >"$WORK/dbg.rc"
	printf -v cmd '%q -q -f %q' "${BOCHS:-bochs}" "$WORK/bochsrc"
	[ -n "$BOCHS_RC" ] && cmd+=" -rc $(printf %q "$WORK/dbg.rc")"
	TERM=xterm timeout -k 5 "$TIMEOUT" script -qfec "$cmd" /dev/null >"$WORK/bochs.term" 2>&1 </dev/null &
	pid=$!
	[ $display = term ] && drain_display &
	tail -n +1 -s 0.2 -f --pid=$pid "$WORK/com1"
	wait $pid || rc=$?
	# Another Bochs says why it would not start (a bochsrc option it lacks, say) on its own
	# output, which no screen hides (and exits 1, as at a power-off): show its last lines.
	[ $display = nogui ] && [ ! -s "$WORK/com1" ] && tail -n 5 "$WORK/bochs.term" | sed "s/^/$PROG: bochs: /" >&2
	return $rc
}
