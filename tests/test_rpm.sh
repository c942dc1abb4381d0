#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The RPM (rpm/rngfeed.spec): built from the tree by rpm/make-rpm.sh into a
# temporary _topdir without its %check (make check runs the unit tests
# itself), where rpmlint must report nothing (rpm/rpmlint.toml), or the
# packages "make rpm" just built (RPM_TOPDIR).  Then:
#   files     the binary package holds exactly the expected files: the
#             daemon, both man pages (gzipped), the unit with its FIPS
#             drop-in, the preset, /etc/rngfeed.conf and
#             /etc/sysconfig/rngfeed as %config(noreplace), the licence,
#             the dracut module; no initramfs-tools (Debian's) files
#   scripts   %post applies the preset (never "systemctl enable"), %preun
#             stops and disables on removal only, %postun restarts on
#             upgrade only
#   source    the source package holds the spec and the tarball; the
#             tarball holds the spec (rpmbuild -ta) and no built files
#   install   (root) rpm -i into a throwaway root: the files land, the
#             binary runs, the unit reads /etc/sysconfig/rngfeed and passes
#             $RNGFEED_OPTIONS, systemd-analyze verify accepts unit and
#             drop-in, the preset enables it (systemctl --root preset), the
#             dracut module reads /etc/sysconfig/rngfeed; an edited
#             /etc/sysconfig/rngfeed survives a reinstall and is kept as
#             .rpmsave on removal
# Needs rpmbuild, rpm and rpmlint (Debian: apt-get install rpm rpmlint).
# Run from the top of the tree: bash tests/test_rpm.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
cd "$(dirname "$0")/.." || exit 2
failures=0
say() { printf '%s\n' "$*"; }
ok() { say "ok: $*"; }
fail() { say "FAIL: $*"; failures=$((failures + 1)); }

for tool in rpmbuild rpm rpmlint; do
	command -v "$tool" >/dev/null ||
		{ say "SKIP: no $tool (Debian: apt-get install rpm rpmlint)"; exit 77; }
done
# Under make sanitize the tree is a sanitized copy; the RPM is built from
# source with the spec's own flags, the same as under make check.
[ -z "${RNGFEED_SANITIZED:-}" ] ||
	{ say "SKIP: make sanitize: the RPM builds with the spec's own flags, as under make check"; exit 77; }

tmp=$(mktemp -d) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
version=$(sed -n 's/^VERSION *:= *//p' Makefile)

topdir=${RPM_TOPDIR:-}
if [ -z "$topdir" ]; then
	topdir=$tmp/rpm
	if rpm/make-rpm.sh "$topdir" --without check >"$tmp/build.log" 2>&1; then
		ok "build: rpm/make-rpm.sh --without check, rpmlint: $(grep -E '[0-9]+ errors, [0-9]+ warnings' "$tmp/build.log")"
	else
		say "FAIL: rpm/make-rpm.sh failed:"
		tail -n 30 "$tmp/build.log" | sed 's/^/    /'
		exit 1
	fi
fi
bin=$(find "$topdir/RPMS" -name "rngfeed-$version-*.rpm" ! -name '*debug*' | head -n 1)
src=$(find "$topdir/SRPMS" -name "rngfeed-$version-*.src.rpm" | head -n 1)
[ -f "$bin" ] && [ -f "$src" ] || { say "FAIL: no packages in $topdir"; exit 1; }
say "packages: ${bin##*/} ${src##*/}"

# --- files ----------------------------------------------------------------------
unitdir=/usr/lib/systemd/system
dracut=/usr/lib/dracut/modules.d/90rngfeed
expected=$(sort <<EOF
/etc/rngfeed.conf
/etc/sysconfig/rngfeed
/usr/lib/dracut
/usr/lib/dracut/modules.d
$dracut
$dracut/initramfs-start
$dracut/initramfs-stop
$dracut/module-setup.sh
$dracut/rngfeed-initrd.service
$dracut/rngfeed-start.sh
$dracut/rngfeed-stop.sh
/usr/lib/systemd/system-preset/80-rngfeed.preset
/usr/lib/udev/rules.d/60-rngfeed.rules
$unitdir/rngfeed.service
$unitdir/rngfeed.service.d
$unitdir/rngfeed.service.d/fips.conf
/usr/sbin/rngfeed
/usr/share/doc/rngfeed-$version
/usr/share/doc/rngfeed-$version/README.md
/usr/share/doc/rngfeed-$version/packaging.md
/usr/share/licenses/rngfeed-$version
/usr/share/licenses/rngfeed-$version/LICENSE
/usr/share/man/man5/rngfeed.conf.5.gz
/usr/share/man/man8/rngfeed.8.gz
EOF
)
# Build-id links (/usr/lib/.build-id) are rpmbuild's, not the spec's.
have=$(rpm -qpl "$bin" | grep -v '^/usr/lib/\.build-id' | sort)
if [ "$have" = "$expected" ]; then
	ok "files: the $(wc -l <<<"$have") expected paths, nothing else"
else
	fail "files: differ from the expected list (< expected, > in the package):"
	diff <(echo "$expected") <(echo "$have") | grep '^[<>]' | sed 's/^/    /'
fi
flags=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$bin")
for f in /etc/rngfeed.conf /etc/sysconfig/rngfeed; do
	grep -qx "cn $f" <<<"$flags" || fail "files: $f is not %config(noreplace): $(grep " $f\$" <<<"$flags")"
done
grep -qx "l /usr/share/licenses/rngfeed-$version/LICENSE" <<<"$flags" || fail "files: LICENSE is not %license"
grep -q "^[^ ]*c[^ ]* /usr/\|^[^ ]*c[^ ]* /var/" <<<"$flags" && fail "files: %config outside /etc: $(grep '^[^ ]*c' <<<"$flags")"
grep -q libsystemd < <(rpm -qpR "$bin") || fail "files: the package does not require libsystemd (the spec builds with it)"
[ $failures -eq 0 ] && ok "files: both configuration files %config(noreplace), LICENSE %license"

# --- scripts --------------------------------------------------------------------
scripts=$(rpm -qp --scripts "$bin")
section() { # NAME: that scriptlet's body
	awk -v s="$1 scriptlet" 'index($0, s) == 1 { on = 1; next } / scriptlet / { on = 0 } on' <<<"$scripts"
}
post=$(section postinstall) preun=$(section preuninstall) postun=$(section postuninstall)
# The fallback macros (a build host without systemd-rpm-macros) say
# systemctl; Fedora's own call systemd-update-helper.
grep -qE 'preset rngfeed\.service|install-system-units rngfeed\.service' <<<"$post" &&
	grep -qE '\$1 -eq 1' <<<"$post" ||
	fail "scripts: %post does not apply the preset on first install: $post"
grep -qE 'systemctl( --[a-z-]+)* enable' <<<"$scripts" &&
	fail "scripts: a scriptlet enables the unit itself: $scripts"
grep -qE 'disable --now rngfeed\.service|remove-system-units rngfeed\.service' <<<"$preun" &&
	grep -qE '\$1 -eq 0' <<<"$preun" ||
	fail "scripts: %preun does not stop and disable on removal only: $preun"
grep -qE 'try-restart rngfeed\.service|mark-restart-system-units rngfeed\.service' <<<"$postun" &&
	grep -qE '\$1 -ge 1' <<<"$postun" ||
	fail "scripts: %postun does not restart on upgrade only: $postun"
[ $failures -eq 0 ] && ok "scripts: preset on install, disable --now on removal, try-restart on upgrade"

# --- source ---------------------------------------------------------------------
have=$(rpm -qpl "$src" | sort)
[ "$have" = "$(printf '%s\n' "rngfeed-$version.tar.gz" rngfeed.spec)" ] ||
	fail "source: the source package holds: $(echo $have)"
mkdir "$tmp/src" && (cd "$tmp/src" && rpm2cpio "$src" | cpio -id --quiet) || fail "source: cannot unpack"
tarlist=$(tar -tzf "$tmp/src/rngfeed-$version.tar.gz" 2>/dev/null)
grep -qx "rngfeed-$version/rpm/rngfeed.spec" <<<"$tarlist" || fail "source: the tarball has no rpm/rngfeed.spec"
grep -qx "rngfeed-$version/src/main.c" <<<"$tarlist" || fail "source: the tarball has no src/main.c"
built=$(grep -E "^rngfeed-$version/(build/|rngfeed$|tests/check_[a-z_]+$|.*\.o$|\.git/)" <<<"$tarlist" | head -3)
[ -z "$built" ] || fail "source: built or VCS files in the tarball: $built"
[ $failures -eq 0 ] && ok "source: spec and tarball ($(wc -l <<<"$tarlist") entries, the spec inside, no built files)"

# --- install --------------------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	say "SKIP: install: rpm -i into a throwaway root needs root (its files are root's)"
else
	root=$tmp/root
	rpmi() { rpm --root "$root" --dbpath /var/lib/rpm --nodeps --noscripts "$@"; }
	if ! out=$(rpmi -i "$bin" 2>&1); then
		fail "install: rpm -i: $out"
	else
		for f in /usr/sbin/rngfeed "$unitdir/rngfeed.service" /etc/sysconfig/rngfeed \
			"$dracut/module-setup.sh" /usr/share/man/man8/rngfeed.8.gz; do
			[ -e "$root$f" ] || fail "install: $f did not land"
		done
		v=$("$root/usr/sbin/rngfeed" --version 2>&1)
		[ "$v" = "rngfeed $version" ] || fail "install: rngfeed --version says '$v'"
		"$root/usr/sbin/rngfeed" --help 2>&1 | grep -q 'default /etc/rngfeed.conf' ||
			fail "install: the binary's configuration is not /etc/rngfeed.conf"
		unit=$root$unitdir/rngfeed.service
		grep -qx 'EnvironmentFile=-/etc/sysconfig/rngfeed' "$unit" &&
			grep -qx 'ExecStart=/usr/sbin/rngfeed -f $RNGFEED_OPTIONS' "$unit" ||
			fail "install: the unit does not read /etc/sysconfig/rngfeed into ExecStart=: $(grep -E '^(EnvironmentFile|ExecStart)=' "$unit")"
		grep -q '^#RNGFEED_OPTIONS=' "$root/etc/sysconfig/rngfeed" ||
			fail "install: /etc/sysconfig/rngfeed has no RNGFEED_OPTIONS"
		grep -qx 'ConditionKernelCommandLine=!fips=1' "$root$unitdir/rngfeed.service.d/fips.conf" ||
			fail "install: the FIPS drop-in has no ConditionKernelCommandLine=!fips=1"
		grep -q '^[[:space:]]*\[ -r /etc/sysconfig/rngfeed \] && \. /etc/sysconfig/rngfeed$' \
			"$root$dracut/module-setup.sh" && bash -n "$root$dracut/module-setup.sh" ||
			fail "install: the dracut module does not read /etc/sysconfig/rngfeed"
		if command -v systemd-analyze >/dev/null; then
			mkdir -p "$root/bin" && cp /bin/sh "$root/bin/sh"  # ExecReload='s shell
			out=$(systemd-analyze verify --man=no --root="$root" rngfeed.service 2>&1) &&
				[ -z "$out" ] || fail "install: systemd-analyze verify: $out"
		else
			say "SKIP: install: no systemd-analyze: the unit and its drop-in not verified"
		fi
		if command -v systemctl >/dev/null; then
			systemctl --root="$root" preset rngfeed.service >/dev/null 2>&1
			[ -L "$root/etc/systemd/system/sysinit.target.wants/rngfeed.service" ] ||
				fail "install: systemctl --root preset did not enable rngfeed.service"
		else
			say "SKIP: install: no systemctl: the preset not applied"
		fi
		echo 'RNGFEED_OPTIONS="-v"  # edited' >>"$root/etc/sysconfig/rngfeed"
		cp "$root/etc/sysconfig/rngfeed" "$tmp/edited"
		out=$(rpmi -U --replacepkgs "$bin" 2>&1) || fail "install: reinstall: $out"
		cmp -s "$tmp/edited" "$root/etc/sysconfig/rngfeed" ||
			fail "install: a reinstall replaced the edited /etc/sysconfig/rngfeed"
		out=$(rpmi -e rngfeed 2>&1) || fail "install: rpm -e: $out"
		[ ! -e "$root/usr/sbin/rngfeed" ] || fail "install: rpm -e left /usr/sbin/rngfeed"
		cmp -s "$tmp/edited" "$root/etc/sysconfig/rngfeed.rpmsave" ||
			fail "install: rpm -e did not keep the edited file as /etc/sysconfig/rngfeed.rpmsave"
		[ $failures -eq 0 ] && ok "install: files land, the unit reads /etc/sysconfig/rngfeed, verify and preset pass, an edited options file is kept"
	fi
fi

[ $failures -eq 0 ] || exit 1
say PASS
