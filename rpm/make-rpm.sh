#!/bin/bash
# make rpm: the source and binary RPMs of rpm/rngfeed.spec, built from the
# working tree with rpmbuild in a private _topdir, then rpmlint on the
# spec and every package with rpm/rpmlint.toml (Fedora's policy; what it
# filters beyond that, each with its reason): any report fails.
#
#   rpm/make-rpm.sh TOPDIR [RPMBUILD-OPTION]...
#
# The tarball holds what git tracks plus new files it does not ignore (the
# tree as its developer sees it, built products left out); outside a git
# checkout, the tree without build/, .git and .cache, cleaned.  It carries
# the spec, so "rpmbuild -ta" builds it too.  On a machine whose rpm
# database does not hold the build dependencies (Debian: dpkg installed
# them, under other names) rpmbuild runs with --nodeps.  Prints each
# package's path; exit 0 only if rpmbuild and rpmlint both passed.
set -euo pipefail
cd "$(dirname "$0")/.."

topdir=${1:?usage: rpm/make-rpm.sh TOPDIR [RPMBUILD-OPTION]...}
shift
case "$topdir" in /*) ;; *) topdir=$PWD/$topdir ;; esac
for tool in rpmbuild rpmlint; do
	command -v "$tool" >/dev/null || {
		echo "make rpm: $tool is missing (Debian: apt-get install rpm rpmlint)" >&2
		exit 1
	}
done

spec=rpm/rngfeed.spec
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
spec_version=$(sed -n 's/^Version: *//p' "$spec")
[ "$version" = "$spec_version" ] || {
	echo "make rpm: the Makefile says version $version, $spec says $spec_version" >&2
	exit 1
}
name=rngfeed-$version

rm -rf "$topdir"
mkdir -p "$topdir"/{SOURCES,SPECS,BUILD,BUILDROOT,RPMS,SRPMS,stage}
stage=$topdir/stage/$name
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mkdir -p "$stage"
	git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -c --null -T - | tar -x -C "$stage"
else
	mkdir -p "$stage"
	tar -c --exclude=./build --exclude=./.git --exclude=./.cache . | tar -x -C "$stage"
	make -s -C "$stage" clean
fi
tar -C "$topdir/stage" -czf "$topdir/SOURCES/$name.tar.gz" "$name"
rm -rf "$topdir/stage"
cp "$spec" "$topdir/SPECS/"

nodeps=()
if ! rpm -q --quiet rpm 2>/dev/null; then
	nodeps=(--nodeps)
	echo "make rpm: this machine's rpm database does not hold the build dependencies: rpmbuild --nodeps"
fi
# The spec's flags and make variables only: none of the caller's
# (make check's SYSTEMD=no, make sanitize's CFLAGS reach here through the
# environment and MAKEFLAGS).  brp-compress (which gzips the man pages)
# needs bash: Debian's runs it with dash, where its "read -d" fails and
# nothing is compressed.
env -i PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 ${TMPDIR:+TMPDIR="$TMPDIR"} \
	rpmbuild -ba "${nodeps[@]}" --define "_topdir $topdir" \
	--define "__brp_compress /bin/bash %{_rpmconfigdir}/brp-compress %{?_prefix}" \
	"$@" "$topdir/SPECS/rngfeed.spec"

mapfile -t packages < <(find "$topdir/SRPMS" "$topdir/RPMS" -name '*.rpm' | sort)
[ ${#packages[@]} -ge 2 ] || { echo "make rpm: rpmbuild made no packages" >&2; exit 1; }
echo "make rpm: rpmlint"
out=$(rpmlint -c rpm/rpmlint.toml "$spec" "${packages[@]}" 2>&1) || rc=$?
echo "$out"
# Warnings too: every one left is filtered, with its reason, or fixed.
if [ "${rc:-0}" -ne 0 ] || grep -qE ': [EW]: ' <<<"$out"; then
	echo "make rpm: rpmlint reported the above" >&2
	exit 1
fi
printf 'make rpm: %s\n' "${packages[@]}"
