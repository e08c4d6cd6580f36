#!/usr/bin/env bash
# Build dist/ctxlens_<version>_<arch>.deb from the PyInstaller bundle in dist/ctxlens.
#
#   packaging/build_deb.sh [BUNDLE_DIR] [OUT_DIR]      (make package runs it)
#
# Layout: /opt/ctxlens (the bundle), /usr/bin/ctxlens (relative symlink into it), the desktop
# entry, the MIME types and the icons under /usr/share. No maintainer scripts: Debian's
# shared-mime-info, desktop-file-utils and hicolor icon cache update through dpkg triggers
# on those folders. Depends/Recommends are computed from the bundle's ELF files
# (packaging/bundle_deps.py + packaging/deb/sonames.txt).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
BUNDLE="${1:-$ROOT/dist/ctxlens}"
OUT="${2:-$ROOT/dist}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$BUNDLE/ctxlens" ] || { echo "error: no bundle at $BUNDLE (run make bundle)" >&2; exit 1; }

VERSION="$("$PY" -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["project"]["version"])' "$ROOT/pyproject.toml")"
ARCH="$(dpkg --print-architecture)"
# The bundle's libpython and extension modules were linked on this host: its glibc is the floor.
LIBC="$(dpkg-query -W -f='${Version}' libc6 | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')"

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/ctxlens-deb.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
chmod 755 "$STAGE"
install -d "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" \
  "$STAGE/usr/share/applications" "$STAGE/usr/share/mime/packages" \
  "$STAGE/usr/share/icons/hicolor/scalable/apps" "$STAGE/usr/share/doc/ctxlens"
cp -a "$BUNDLE" "$STAGE/opt/ctxlens"
ln -s ../../opt/ctxlens/ctxlens "$STAGE/usr/bin/ctxlens"
install -m 644 "$HERE/deb/ctxlens.desktop" "$STAGE/usr/share/applications/ctxlens.desktop"
install -m 644 "$HERE/deb/ctxlens-mime.xml" "$STAGE/usr/share/mime/packages/ctxlens.xml"
install -m 644 "$ROOT/resources/icons/ctxlens.svg" "$STAGE/usr/share/icons/hicolor/scalable/apps/ctxlens.svg"
for size in 48 128 256; do
  install -d "$STAGE/usr/share/icons/hicolor/${size}x${size}/apps"
  install -m 644 "$ROOT/resources/icons/ctxlens-$size.png" "$STAGE/usr/share/icons/hicolor/${size}x${size}/apps/ctxlens.png"
done
install -m 644 "$HERE/deb/copyright" "$STAGE/usr/share/doc/ctxlens/copyright"

RELATIONS="$("$PY" "$HERE/bundle_deps.py" depends "$BUNDLE" "$LIBC")"
DEPENDS="$(sed -n 's/^Depends: //p' <<<"$RELATIONS")"
RECOMMENDS="$(sed -n 's/^Recommends: //p' <<<"$RELATIONS")"
RECOMMENDS="${RECOMMENDS:+$RECOMMENDS, }shared-mime-info, desktop-file-utils, hicolor-icon-theme"
RECOMMENDS="$RECOMMENDS, fonts-noto-color-emoji"  # emoji in traces as emoji (ui/fonts.py)
SIZE_KB="$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)"
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@INSTALLED_SIZE@/$SIZE_KB/" \
    -e "s/@DEPENDS@/$DEPENDS/" -e "s/@RECOMMENDS@/$RECOMMENDS/" \
    "$HERE/deb/control.in" > "$STAGE/DEBIAN/control"
# md5sums lets debsums/dpkg --verify check an installation.
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z \
  | xargs -0 md5sum > DEBIAN/md5sums)

mkdir -p "$OUT"
DEB="$OUT/ctxlens_${VERSION}_${ARCH}.deb"
# gzip: fast on 2 cores, and every dpkg since forever reads it (xz would save ~25% for ~4x time).
dpkg-deb --root-owner-group -Zgzip --build "$STAGE" "$DEB" >/dev/null
echo "$DEB"
