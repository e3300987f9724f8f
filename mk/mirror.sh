#!/usr/bin/env bash
# mk/mirror.sh SRC DEST PROG...: DEST becomes a mirror of the source tree SRC made of symlinks,
# except that the folders holding programs (tools/, loaderd/, trainer/) are real folders whose
# entries are symlinks, so a sanitizer build can put its own programs there (make test-san).
# Tests run from DEST find the sanitized programs, and everything else, by the usual paths.
set -eu
src=$(cd "$1" && pwd)
dest=$2
shift 2
mkdir -p "$dest"
progdirs=$(for p in "$@"; do dirname "$p"; done | sort -u)
is_progdir() { grep -qx -- "$1" <<<"$progdirs"; }
PROGS_LIST="$*"
is_prog() { local x; for x in $PROGS_LIST; do [ "$x" = "$1" ] && return 0; done; return 1; }
link_dir() { # mirror src/$1 into dest/$1 (a real folder), entries as symlinks
	local rel=$1 e name
	mkdir -p "$dest/$rel"
	for e in "$src/$rel"/* "$src/$rel"/.[!.]*; do
		[ -e "$e" ] || continue
		name=${e##*/}
		if is_prog "$rel/$name"; then continue; fi
		# a folder on the way to a program folder is mirrored too
		if [ -d "$e" ] && grep -q "^$rel/$name\(/\|$\)" <<<"$progdirs"; then
			link_dir "$rel/$name"
		else
			[ -L "$dest/$rel/$name" ] || ln -sfn "$e" "$dest/$rel/$name"
		fi
	done
}
for e in "$src"/* "$src"/.[!.]*; do
	[ -e "$e" ] || continue
	name=${e##*/}
	case $name in build | .git) continue ;; esac
	if [ -d "$e" ] && grep -q "^$name\(/\|$\)" <<<"$progdirs"; then
		link_dir "$name"
	else
		[ -L "$dest/$name" ] || ln -sfn "$e" "$dest/$name"
	fi
done
# an entry whose source is gone (a file moved or removed since the last mirror) goes too: a
# dangling link would still look like the old file to make's rules and to the tests
find "$dest" -xtype l -lname "$src/*" -delete
