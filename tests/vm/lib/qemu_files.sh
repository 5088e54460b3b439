# SPDX-License-Identifier: GPL-2.0
# Sourced by a bed test whose tests start a real QEMU with KVM inside the bed (test_qmp_host):
# qemu_files appends to FILES this host's qemu-system-x86_64 (bed.sh brings its shared libraries)
# and the firmware a SeaBIOS boot of the default PC machine reads, at the paths the binary looks
# for them. Opt-in: the binary and its libraries are about 40 MB of initramfs, which every other
# boot would carry for nothing.
#
# QEMU finds its firmware relative to its own binary (`qemu-system-x86_64 -L help` on Debian:
# /usr/bin/../share/qemu, ../share/seabios, ../lib/ipxe/qemu), so the binary goes to /usr/bin and
# the files to the same directories. What a boot opens (strace -e openat of `-m 64 -display none
# -device virtio-rng-pci`): bios-256k.bin, vgabios-stdvga.bin (the default VGA), kvmvapic.bin
# (the TPR patching option ROM under KVM) and efi-e1000.rom (the default NIC); efi-virtio.rom
# too, for a test that adds virtio-net. The seabios directory is small (0.9 MB) and goes whole,
# for the other VGA models.
#
# In: FILES (array), fail (a function: prints why and exits). Out: FILES extended.
qemu_files() {
	local q f
	q=$(command -v qemu-system-x86_64) ||
		fail "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
	FILES+=("$q:/usr/bin/qemu-system-x86_64" "/usr/share/seabios:/usr/share/seabios")
	for f in /usr/share/qemu/kvmvapic.bin /usr/lib/ipxe/qemu/efi-e1000.rom \
		 /usr/lib/ipxe/qemu/efi-virtio.rom; do
		[ -f "$f" ] || fail "$f missing (apt-get install qemu-system-data ipxe-qemu)"
		FILES+=("$f:$f")
	done
	[ -f /usr/share/seabios/bios-256k.bin ] || fail "SeaBIOS missing (apt-get install seabios)"
}
