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

# The layer of each folder of src/ and what it may include besides itself: tools/layers.mk, the
# list the Makefile compiles each folder with. main.c (the top, ".") may include anything.
declare -A MAY=()
while IFS= read -r l; do
	d=${l%%:=*}
	d=${d#LAYER_}
	d=${d%% *}
	v=${l#*:=}
	v=${v# }
	MAY[$d]=$v
done < <(grep '^LAYER_' "$(dirname "$0")/layers.mk")

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

# Every include line of src/ in one pass: "..." and <...> alike (a <name.h> that is no header of
# src/ or include/ is the system's).
declare -A FOLDER_BAD=()
while IFS=: read -r f line inc; do
	dir=${f%/*}
	dir=${dir#"$SRC"}
	dir=${dir#/}
	[ -n "$dir" ] || dir=.
	if [ "$dir" != . ] && [ -z "${MAY[$dir]+set}" ]; then
		[ -n "${FOLDER_BAD[$dir]:-}" ] ||
			say "$f: folder $dir/ has no layer: add it to tools/layers.mk and docs/design.md"
		FOLDER_BAD[$dir]=1
		continue
	fi
	sys=0
	case $inc in
	*\"*) inc=${inc#*\"}; inc=${inc%%\"*} ;;
	*) inc=${inc#*<}; inc=${inc%%>*}; sys=1 ;;
	esac
	case $inc in
	*.skel.h) to=kernel ;;
	*/*) [ $sys = 1 ] && continue
		say "$f:$line: #include \"$inc\": name the header alone (folders are on the path)"
		continue ;;
	*)
		if [ -e "include/$inc" ]; then
			continue
		fi
		to=${HOME_OF[$inc]:-}
		if [ -z "$to" ]; then
			[ $sys = 1 ] ||
				say "$f:$line: #include \"$inc\": no such header in $SRC/ or include/"
			continue
		fi
		;;
	esac
	[ "$dir" = . ] || [ "$to" = "$dir" ] && continue
	case " ${MAY[$dir]} " in
	*" $to "*) ;;
	*) say "$f:$line: #include $inc points up: $dir/ may include" \
		"${MAY[$dir]:-nothing but itself}, not $to/" ;;
	esac
done < <(find "$SRC" -name '*.[ch]' | sort |
	 xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]')

exit $bad
