#!/usr/bin/env bash
# Smoke test of an aarch64 wheel on this x86-64 machine under qemu-user:
#
#     bash tools/aarch64_smoke.sh WHEEL [CACHE_DIR]
#
# Debian's arm64 CPython (python3.11-minimal and the libraries it and the
# NumPy wheel load) is unpacked from the distribution's own packages into a
# fresh root outside the source tree; the pinned NumPy and ml_dtypes aarch64
# wheels (requirements-dev.txt's versions) and WHEEL are unpacked into that
# root's site-packages; then tools/wheel_smoke.py (jit, grad, vmap, bfloat16,
# imported from site-packages, no Rust toolchain on PATH) runs on the arm64
# interpreter through `qemu-aarch64 -L ROOT`.
#
# Needs qemu-user and Debian's arm64 package lists: installed here with
# apt-get when running as root (`dpkg --add-architecture arm64`); otherwise
# the script says what is missing and exits 1.
set -euo pipefail

whl=$(realpath "${1:?usage: aarch64_smoke.sh WHEEL [CACHE_DIR]}")
src=$(cd "$(dirname "$0")/.." && pwd)
cache=$(realpath -m "${2:-$src/target/aarch64-smoke}")
py=${PYTHON:-python3}
mkdir -p "$cache/debs" "$cache/wheels"

need_apt() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "aarch64 smoke test: $1 (install it, or run as root with apt-get)" >&2
    exit 1
  fi
}

if ! command -v qemu-aarch64 >/dev/null 2>&1; then
  need_apt "qemu-user is not installed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user >/dev/null
fi

# The arm64 interpreter and the shared libraries CPython, NumPy's bundled
# OpenBLAS and the extension load.
debs=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 libexpat1 zlib1g
      libffi8 libgcc-s1 libstdc++6 libbz2-1.0 liblzma5 libssl3 libuuid1)
if ! ls "$cache"/debs/python3.11-minimal_*_arm64.deb >/dev/null 2>&1; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    need_apt "Debian's arm64 architecture is not enabled"
    dpkg --add-architecture arm64
  fi
  if ! apt-cache show python3.11-minimal:arm64 >/dev/null 2>&1; then
    need_apt "Debian's arm64 package lists are missing"
    apt-get update -q >/dev/null
  fi
  (cd "$cache/debs" && apt-get download -q "${debs[@]/%/:arm64}" >/dev/null 2>&1)
fi

pin() { sed -n "s/^$1==\([^ ]*\).*/\1/p" "$src/requirements-dev.txt"; }
# The runtime dependencies; when tests run, SciPy (their reference values) and
# pytest.
pkgs=(numpy ml_dtypes)
[ -z "${AARCH64_PYTEST:-}" ] || pkgs+=(scipy pytest pluggy iniconfig packaging Pygments)
for pkg in "${pkgs[@]}"; do
  if ! ls "$cache/wheels/$pkg"-"$(pin "$pkg")"-*.whl >/dev/null 2>&1; then
    "$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 --python-version 3.11 \
      "$pkg==$(pin "$pkg")" -d "$cache/wheels"
  fi
done

root=$(mktemp -d /tmp/aarch64-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
for d in "$cache"/debs/*_arm64.deb; do dpkg -x "$d" "$root"; done
interp="$root/usr/bin/python3.11"
site=$(qemu-aarch64 -L "$root" "$interp" -I -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site"
for w in "$cache"/wheels/*.whl "$whl"; do
  "$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$site"
done

echo "aarch64 smoke test: $(basename "$whl") on $(qemu-aarch64 -L "$root" "$interp" -I -c \
  'import platform, sys; print(platform.machine(), "CPython", sys.version.split()[0])') under qemu-user"
cd "$root"
run() { env -i PATH=/usr/bin:/bin HOME="$root" qemu-aarch64 -L "$root" "$interp" -I "$@"; }
run "$src/tools/wheel_smoke.py" "$src"
# AARCH64_PYTEST="tests/test_x.py ...": those test files too, on the
# installed wheel (the tests import microjax_rs from site-packages).
if [ -n "${AARCH64_PYTEST:-}" ]; then
  cd "$src"
  # shellcheck disable=SC2086
  run -m pytest -q -p no:cacheprovider $AARCH64_PYTEST
fi
