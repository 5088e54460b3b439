#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-layers: every #include "..." in src/ points down the layers of docs/design.md.
# A header is named without its folder (every folder is on the include path), so it is found by
# its name: header names are unique across src/. A *.skel.h is the kernel layer's (the BPF
# objects); include/ holds what BPF and userspace share, open to every layer.
# Prints file:line of each include that points up (or at nothing known), and fails.
#
# Usage: tools/check-layers.sh [SRC_DIR]   (default: src, run from the top of the tree)
set -u

SRC=${1:-src}

# The layer of each folder of src/ and what it may include besides itself, top to bottom.
# main.c (the top, ".") may include anything.
declare -A MAY=(
	[commands]="serve live options kernel output output/rules capture model lib"
	[serve]="live options kernel output output/rules capture model lib"
	[live]="options kernel model lib"
	[options]="kernel output output/rules model lib"
	[kernel]="model lib"
	[output]="output/rules capture model lib"
	[output/rules]="model lib"
	[capture]="model lib"
	[model]="lib"
	[lib]=""
)

declare -A HOME_OF		# header name -> the folder that holds it
bad=0

say() {
	echo "check-layers: $*" >&2
	bad=1
}

while IFS= read -r h; do
	name=${h##*/}
	dir=${h%/*}
	dir=${dir#"$SRC"}
	dir=${dir#/}
	[ -n "$dir" ] || dir=.
	if [ -n "${HOME_OF[$name]:-}" ]; then
		say "$h: a second $name (${HOME_OF[$name]}/ has one): header names are unique in $SRC/"
		continue
	fi
	HOME_OF[$name]=$dir
done < <(find "$SRC" -name '*.h' | sort)

while IFS= read -r f; do
	dir=${f%/*}
	dir=${dir#"$SRC"}
	dir=${dir#/}
	[ -n "$dir" ] || dir=.
	if [ "$dir" != . ] && [ -z "${MAY[$dir]+set}" ]; then
		say "$f: folder $dir/ has no layer: add it to tools/check-layers.sh and docs/design.md"
		continue
	fi
	while IFS=: read -r line inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		case $inc in
		*.skel.h) to=kernel ;;
		*/*) say "$f:$line: #include \"$inc\": name the header alone (folders are on the path)"
			continue ;;
		*)
			if [ -e "include/$inc" ]; then
				continue
			fi
			to=${HOME_OF[$inc]:-}
			if [ -z "$to" ]; then
				say "$f:$line: #include \"$inc\": no such header in $SRC/ or include/"
				continue
			fi
			;;
		esac
		[ "$dir" = . ] || [ "$to" = "$dir" ] && continue
		case " ${MAY[$dir]} " in
		*" $to "*) ;;
		*) say "$f:$line: #include \"$inc\" points up: $dir/ may include" \
			"${MAY[$dir]:-nothing but itself}, not $to/" ;;
		esac
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done < <(find "$SRC" -name '*.[ch]' | sort)

exit $bad
