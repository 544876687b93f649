#!/usr/bin/env bash
# Builds the Debian package from a configured build directory whose prefix is
# /usr: meson install --destdir into a staging tree, the few files a Debian
# binary package adds (copyright, changelog, lintian overrides, DEBIAN/control
# with dpkg-shlibdeps' Depends, md5sums), dpkg-deb --build, then lintian.
# docs/install.md says why this and not dpkg-buildpackage.
#
# usage: packaging/build-deb.sh BUILD_DIR OUT_DIR
# Everything is made in a staging directory inside OUT_DIR and the .deb is
# renamed into OUT_DIR only once lintian has passed it: a failed build leaves
# nothing behind, and never a half-written package.
set -euo pipefail

die() { printf 'build-deb: error: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 2 ]] || die "usage: packaging/build-deb.sh BUILD_DIR OUT_DIR"
build=$(readlink -f "$1")
out=$(readlink -f "$2")
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

# The tools, each with the Debian package that has it: one error naming all missing.
missing=()
for pair in dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev lintian:lintian meson:meson strip:binutils gzip:gzip; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair%%:*} (package ${pair#*:})")
done
[[ ${#missing[@]} -eq 0 ]] || die "missing tools: ${missing[*]}"

version=$(meson introspect "$build" --projectinfo | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])') ||
  die "$build is not a configured meson build directory"
prefix=$(meson introspect "$build" --buildoptions |
  python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
[[ $prefix == /usr ]] || die "$build has prefix $prefix; a package installs into /usr (meson configure $build -Dprefix=/usr)"
changelog_version=$(sed -n '1s/^aasm (\([^)]*\)).*/\1/p' "$here/deb/changelog")
[[ $changelog_version == "$version" ]] ||
  die "packaging/deb/changelog's first entry is $changelog_version, meson.build's version is $version: add an entry"
arch=$(dpkg --print-architecture)
deb=aasm_${version}_${arch}.deb

mkdir -p "$out"
stage=$(mktemp -d "$out/.aasm-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
# Modes of the tree as a package wants them, whatever the caller's umask.
umask 022

meson install -C "$build" --no-rebuild --strip --quiet --destdir "$root"
# What dh_strip also removes: sections a running program never reads.
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/aasmc" "$root/usr/bin/aasm-launch"
# Man pages compressed, as Debian policy wants (gzip -n: no name or time, reproducible).
find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +
doc=$root/usr/share/doc/aasm
install -d "$doc" "$root/usr/share/lintian/overrides"
install -m 644 "$here/deb/copyright" "$doc/copyright"
gzip -9n -c "$here/deb/changelog" > "$doc/changelog.gz"
install -m 644 "$here/deb/lintian-overrides" "$root/usr/share/lintian/overrides/aasm"

# dpkg-shlibdeps reads debian/control for the package's name: a minimal one.
mkdir -p "$stage/debian"
printf 'Source: aasm\n\nPackage: aasm\nArchitecture: any\n' > "$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e root/usr/bin/aasmc -e root/usr/bin/aasm-launch 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || die "dpkg-shlibdeps found no dependencies of aasmc"

install -d "$root/DEBIAN"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
  > "$root/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
  "$here/deb/control.in" > "$root/DEBIAN/control"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

# --root-owner-group: every file root's in the package, without fakeroot.
dpkg-deb --root-owner-group -Zxz --build "$root" "$stage/$deb" >/dev/null
# Warnings fail the build as errors do; each accepted one is an override
# with its reason in packaging/deb/lintian-overrides.
lintian --fail-on error,warning --display-info "$stage/$deb" || die "lintian rejects $deb (above)"
mv "$stage/$deb" "$out/$deb"
printf 'build-deb: %s\n' "$out/$deb"
