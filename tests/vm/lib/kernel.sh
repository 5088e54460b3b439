# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/vm/bed.sh: finds, downloads and caches a Debian kernel for a bed, and the
# modules a bed loads, without ever installing the package.
#
# In:  CACHE, KSERIES (6.1 | 6.12), KARCH (amd64 | arm64), VMEXIT_BED_KVER, VMEXIT_BED_OFFLINE,
#      BED_MODULES (target modules, e.g. "kvm_intel"; may be empty), say/skip/die.
# Out: KVER, KDIR ($CACHE/$KVER: the .deb, vmlinuz, vmlinux when extractable, config) and
#      MODDIR (a directory with the modules and "order", their load order; empty for none).

# apt-cache regex of the kernel packages of a series (no meta packages, no cloud/rt flavours).
kernel_pkg_regex() {
	case $KSERIES in
	6.1) echo "^linux-image-6\\.1\\.0-[0-9]+-$KARCH\$" ;;
	6.12) echo "^linux-image-6\\.12\\.[0-9]+\\+deb12-$KARCH\$" ;;
	*) die "unknown kernel series $KSERIES (6.1 or 6.12)" ;;
	esac
}

# The newest kernel of the series in apt's lists (a local query; no network).
newest_in_apt() {
	apt-cache search --names-only "$(kernel_pkg_regex)" 2>/dev/null |
		awk '{print $1}' | sed 's/^linux-image-//' | sort -V | tail -n 1
}

newest_in_cache() {
	local d re
	re=$(kernel_pkg_regex); re="^${re#^linux-image-}"
	for d in "$CACHE"/*; do
		[ -f "$d/.complete" ] || continue
		basename "$d"
	done | grep -E "$re" | sort -V | tail -n 1
}

# Finds a module file by module name (kvm_amd == kvm-amd.ko) under $1.
find_module() {
	local tree=$1 want=${2//-/_} f b
	while IFS= read -r f; do
		b=$(basename "$f"); b=${b%%.ko*}
		[ "${b//-/_}" = "$want" ] && { echo "$f"; return 0; }
	done < <(find "$tree" -name '*.ko*')
	return 1
}

# Appends to ORDER the path (relative to $1) of module $2 after all of its dependencies.
ORDER=()
resolve_module() {
	local tree=$1 name=$2 f dep rel deps
	f=$(find_module "$tree" "$name") || return 1
	rel=${f#"$tree"/}
	for dep in "${ORDER[@]+"${ORDER[@]}"}"; do [ "$dep" = "$rel" ] && return 0; done
	deps=$(modinfo -F depends "$f" 2>/dev/null) || return 1
	for dep in ${deps//,/ }; do resolve_module "$tree" "$dep" || return 1; done
	ORDER+=("$rel")
}

# $1/vmlinux (ELF with .BTF; QEMU boots it through its PVH entry) from the payload of the
# bzImage $1/vmlinuz: xz in Debian's 6.1, zstd in its 6.12.
extract_vmlinux() {
	local dst=$1 off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$dst/vmlinuz" | head -n 1 | cut -d: -f1)
	if [ -n "$off" ]; then
		tail -c +$((off + 1)) "$dst/vmlinuz" | xz -dc 2>/dev/null >"$dst/vmlinux" || true
	else
		off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$dst/vmlinuz" | head -n 1 | cut -d: -f1)
		if [ -n "$off" ] && command -v zstd >/dev/null; then
			tail -c +$((off + 1)) "$dst/vmlinuz" | zstd -qdc 2>/dev/null >"$dst/vmlinux" || true
		fi
	fi
	if [ "$(head -c 4 "$dst/vmlinux" 2>/dev/null | od -An -tx1 | tr -d ' ')" != 7f454c46 ]; then
		say "warning: could not extract vmlinux from vmlinuz (the bzImage boots instead, slower)"
		rm -f "$dst/vmlinux"
	fi
}

# Downloads linux-image-$1 and fills $CACHE/$1 with the kernel. Non-zero (with a message) on failure.
fetch_kernel() {
	local kver=$1 dst=$CACHE/$1 tmp deb
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	say "downloading linux-image-$kver (once; cached in $dst)"
	if ! (cd "$tmp" && timeout 600 apt-get download -q -o APT::Sandbox::User=root \
			"linux-image-$kver" >"$tmp/apt.log" 2>&1); then
		say "apt-get download linux-image-$kver failed: $(grep -E '^(E|Err):' "$tmp/apt.log" | head -n 2 | tr '\n' ' ')"
		rm -rf "$tmp"; return 1
	fi
	deb=$(ls "$tmp"/linux-image-"$kver"_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || { say "apt-get download produced no .deb"; rm -rf "$tmp"; return 1; }
	mkdir "$tmp/x"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" --wildcards './boot/vmlinuz-*' './boot/config-*' ||
		{ say "cannot unpack $deb"; rm -rf "$tmp"; return 1; }
	rm -rf "$dst"; mkdir -p "$dst"
	mv "$deb" "$dst/"
	cp "$tmp/x/boot/vmlinuz-$kver" "$dst/vmlinuz"
	cp "$tmp/x/boot/config-$kver" "$dst/config"
	# Only a bzImage ("HdrS" at 0x202) has a payload to extract: arm64's vmlinuz is a plain Image.
	if [ "$(dd if="$dst/vmlinuz" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ]; then
		extract_vmlinux "$dst"
	fi
	rm -rf "$tmp"
	touch "$dst/.complete"
}

# Unpacks the bed's modules with their dependencies (modinfo; the .deb has no modules.dep) into
# $KDIR/modules-<targets>/, uncompressed, with "order" listing them in load order.
fetch_modules() {
	local dir=$KDIR/modules-${BED_MODULES// /+} tmp deb tree rel m t
	MODDIR=$dir
	[ -f "$dir/order" ] && return 0
	if [ -z "$BED_MODULES" ]; then		# KVM built in (arm64): nothing to unpack
		mkdir -p "$dir" && : >"$dir/order"
		return 0
	fi
	deb=$(ls "$KDIR"/linux-image-"$KVER"_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || die "no .deb in $KDIR to take the modules from (remove $KDIR to refetch)"
	tmp=$(mktemp -d "$CACHE/.mods.XXXXXX")
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" './lib/modules' ||
		{ rm -rf "$tmp"; die "cannot unpack the modules of $deb"; }
	tree=$tmp/lib/modules/$KVER/kernel
	ORDER=()
	for t in $BED_MODULES; do
		resolve_module "$tree" "$t" || { rm -rf "$tmp"; die "module $t or a dependency missing in $deb"; }
	done
	rm -rf "$dir"; mkdir -p "$dir"
	: >"$dir/order.tmp"
	for rel in "${ORDER[@]+"${ORDER[@]}"}"; do
		m=$(basename "$rel")
		case $m in
		*.ko.xz) xz -dc "$tree/$rel" >"$dir/${m%.xz}"; m=${m%.xz} ;;
		*.ko.zst) zstd -qdc "$tree/$rel" >"$dir/${m%.zst}"; m=${m%.zst} ;;
		*.ko) cp "$tree/$rel" "$dir/$m" ;;
		*) rm -rf "$tmp" "$dir"; die "unsupported module compression: $rel" ;;
		esac
		echo "$m" >>"$dir/order.tmp"
	done
	mv "$dir/order.tmp" "$dir/order"
	rm -rf "$tmp"
}

get_kernel() {
	mkdir -p "$CACHE" 2>/dev/null || skip "cannot create kernel cache $CACHE (set VMEXIT_BED_CACHE)"
	exec 9>"$CACHE/.lock"
	flock 9
	local want=${VMEXIT_BED_KVER:-}
	if [ -z "$want" ] && [ "${VMEXIT_BED_OFFLINE:-0}" != 1 ]; then
		want=$(newest_in_apt)
		if [ -z "$want" ]; then
			say "no $(kernel_pkg_regex) in apt's lists; running apt-get update"
			timeout 300 apt-get update -q >/dev/null 2>&1 || true
			want=$(newest_in_apt)
		fi
	fi
	if [ -n "$want" ] && [ -f "$CACHE/$want/.complete" ]; then
		KVER=$want
	elif [ -n "$want" ] && [ "${VMEXIT_BED_OFFLINE:-0}" != 1 ] && fetch_kernel "$want"; then
		KVER=$want
	else
		KVER=$(newest_in_cache)
		[ -n "$KVER" ] || skip "no kernel: cannot download linux-image-${want:-$KSERIES-$KARCH} (no network or apt source?) and nothing cached in $CACHE"
		[ -n "$want" ] && [ "$want" != "$KVER" ] && say "warning: using cached $KVER, linux-image-$want unavailable"
	fi
	KDIR=$CACHE/$KVER
	fetch_modules
	exec 9>&-
}
