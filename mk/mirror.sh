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
# a link at dest/REL to src/REL, never one made inside a real folder there (an earlier mirror's
# program folder, when this run names other programs): through it, the build would move its
# programs into the source tree
link_one() {
	[ -L "$dest/$1" ] && return 0
	if [ -d "$dest/$1" ]; then
		echo "mirror.sh: $dest/$1 is a folder of an earlier mirror made for other programs; remove $dest" >&2
		exit 1
	fi
	ln -sfnT "$src/$1" "$dest/$1"
}
link_dir() { # mirror src/$1 into dest/$1 (a real folder), entries as symlinks
	local rel=$1 e name
	# a folder an earlier mirror linked whole becomes a real one: through the link, the build
	# would put its programs into the source tree
	[ -L "$dest/$rel" ] && rm "$dest/$rel"
	mkdir -p "$dest/$rel"
	for e in "$src/$rel"/* "$src/$rel"/.[!.]*; do
		[ -e "$e" ] || continue
		name=${e##*/}
		if is_prog "$rel/$name"; then continue; fi
		# a folder on the way to a program folder is mirrored too
		if [ -d "$e" ] && grep -q "^$rel/$name\(/\|$\)" <<<"$progdirs"; then
			link_dir "$rel/$name"
		else
			link_one "$rel/$name"
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
		link_one "$name"
	fi
done
# an entry whose source is gone (a file moved or removed since the last mirror) goes too: a
# dangling link would still look like the old file to make's rules and to the tests
find "$dest" -xtype l -lname "$src/*" -delete
