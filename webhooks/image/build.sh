#!/usr/bin/env bash
# `make image`: the stockade image without a daemon or a registry, as an OCI archive.
#
#   1. stockade's wheel and its dependencies' wheels, from PyPI (pip wheel);
#   2. a Debian 12 root filesystem from Debian's packages (debootstrap --variant=minbase, python3);
#   3. a virtual environment at /opt/stockade with those wheels (no network inside the chroot);
#   4. everything the webhook and the audit do not need is removed: shells, apt, dpkg, perl, docs;
#   5. buildah commits the tree FROM scratch: user 65532:65532, entrypoint stockade, to
#      $OUT/stockade.oci.tar (load it with `podman load` / `skopeo copy oci-archive:... docker://...`).
#
# Root is needed (debootstrap, chroot). OUT (default dist/image) keeps the Debian tree between runs
# (rebuilt when this script changes); the virtual environment and the image are made anew each time.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/dist/image}
PY=${PY:-$ROOT/.venv/bin/python}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
VERSION=$("$PY" -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["project"]["version"])' "$ROOT/pyproject.toml")
TAG=${TAG:-ghcr.io/stockade-dev/stockade:$VERSION}

for tool in debootstrap buildah chroot; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is not installed (apt-get install debootstrap buildah)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "build.sh: debootstrap and chroot need root" >&2; exit 2; }

mkdir -p "$OUT"
BASE=$OUT/debian-$SUITE
STAMP=$(sha256sum "$0" | cut -c1-16)
if [ ! -f "$BASE/.stockade-$STAMP" ]; then
  rm -rf "$BASE"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates "$SUITE" "$BASE" "$MIRROR" >"$OUT/debootstrap.log"
  touch "$BASE/.stockade-$STAMP"
fi

rm -rf "$OUT/wheels" "$OUT/rootfs"
"$PY" -m pip wheel --quiet --wheel-dir "$OUT/wheels" "$ROOT"
cp -a "$BASE" "$OUT/rootfs"
R=$OUT/rootfs
rm -f "$R"/.stockade-*
mkdir -p "$R/wheels" && cp "$OUT"/wheels/*.whl "$R/wheels/"
chroot "$R" /usr/bin/python3 -m venv /opt/stockade
PIP_FIND_LINKS= chroot "$R" /opt/stockade/bin/pip install --quiet --no-index --find-links /wheels --no-compile stockade
chroot "$R" /opt/stockade/bin/pip uninstall --quiet -y pip
rm -rf "$R/wheels"

# What the image does not need: every program but the interpreter (no shell, no coreutils, no apt or
# dpkg: nothing in it runs one, and an attacker gets none), documentation, package state.
find "$R/usr/bin" "$R/usr/sbin" -mindepth 1 -maxdepth 1 ! -name python3 ! -name python3.11 -exec rm -rf {} +
rm -rf "$R"/usr/share/doc "$R"/usr/share/man "$R"/usr/share/info "$R"/usr/share/locale "$R"/usr/share/perl* \
       "$R"/usr/lib/x86_64-linux-gnu/perl* "$R"/usr/lib/aarch64-linux-gnu/perl* "$R"/var/cache/* \
       "$R"/var/lib/apt "$R"/var/lib/dpkg "$R"/var/log/* "$R"/usr/lib/python3/dist-packages/pip \
       "$R"/usr/lib/python3.11/ensurepip
find "$R/opt/stockade" -name '__pycache__' -prune -exec rm -rf {} +
# The policy library compiled once here, into the package's own cache (policies/runtimes/program_cache.py):
# read-only at run time, so every pod starts without compiling it.
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}' >"$R/tmp/warm.json"
chroot "$R" /opt/stockade/bin/stockade scan /tmp/warm.json >/dev/null 2>&1 || true
rm -f "$R/tmp/warm.json"
ls "$R"/opt/stockade/lib/python3*/site-packages/stockade/policies/.compiled/*.bin >/dev/null
mkdir -p "$R/tmp" && chmod 1777 "$R/tmp"

export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
ctr=$(buildah from --quiet scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah copy --quiet "$ctr" "$R" / >/dev/null
buildah config \
  --user 65532:65532 \
  --env PATH=/opt/stockade/bin:/usr/bin:/bin --env HOME=/tmp \
  --env PYTHONDONTWRITEBYTECODE=1 --env PYTHONUNBUFFERED=1 \
  --entrypoint '["/opt/stockade/bin/stockade"]' --cmd '["--help"]' \
  --label org.opencontainers.image.title=stockade \
  --label org.opencontainers.image.version="$VERSION" \
  --label org.opencontainers.image.source=https://github.com/stockade-dev/stockade \
  "$ctr"
rm -f "$OUT/stockade.oci.tar"
buildah commit --quiet --rm "$ctr" "oci-archive:$OUT/stockade.oci.tar:$TAG" >/dev/null
trap - EXIT
echo "image $TAG: $OUT/stockade.oci.tar ($(du -m "$OUT/stockade.oci.tar" | cut -f1) MiB; root filesystem $OUT/rootfs)"
