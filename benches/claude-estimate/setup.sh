#!/usr/bin/env bash
# Prepares the reconstruction run.mjs measures against: ctok (PyPI, pure Python) on a CPython it
# accepts (>= 3.12; Debian 12 has 3.11). The interpreter comes from Debian 13's packages: fetched
# with `apt-get download` under a private apt configuration (the system's sources and package
# state are not touched), unpacked with dpkg-deb and started through their own dynamic loader, so
# Debian 12's older C library is not involved. ctok's wheel is unpacked beside it.
#
#   bash benches/claude-estimate/setup.sh [DIR]      (DIR: target/claude-estimate)
#
# Writes DIR/python, a wrapper to pass to run.mjs as --python. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

CTOK_VERSION=1.3.0
dir=$(mkdir -p "${1:-target/claude-estimate}" && cd "${1:-target/claude-estimate}" && pwd)
root="$dir/root"
py="$dir/python"

if [ -x "$py" ] && "$py" -c 'import ctok, regex' 2>/dev/null; then
  echo "$py"
  exit 0
fi

apt_dir="$dir/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o "Dir::Cache::Archives=$apt_dir/archives"
  -o APT::Architecture=amd64 -o APT::Sandbox::User=root)
apt-get -q "${apt_opts[@]}" update >&2
# The interpreter, its standard library and the C libraries they load; regex, which ctok needs.
(cd "$apt_dir/debs" && apt-get -q "${apt_opts[@]}" download \
  python3.13-minimal libpython3.13-minimal libpython3.13-stdlib python3-regex \
  libc6 zlib1g libexpat1 libffi8 libbz2-1.0 liblzma5 libmpdec4 libzstd1 >&2)
rm -rf "$root"
mkdir -p "$root"
for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done

# ctok, from PyPI: a pure-Python wheel, unpacked (pip would refuse it on this machine's 3.11).
site="$dir/site"
rm -rf "$site" && mkdir -p "$site"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.13 -d "$dir/wheels" "ctok==$CTOK_VERSION" >&2
python3 -m zipfile -e "$dir/wheels/ctok-$CTOK_VERSION-py3-none-any.whl" "$site"

cat >"$py" <<EOF
#!/bin/sh
# CPython 3.13 from Debian 13 packages with ctok $CTOK_VERSION (benches/claude-estimate/setup.sh).
PYTHONPATH="$site" exec "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" "$root/usr/bin/python3.13" "\$@"
EOF
chmod +x "$py"
"$py" -c 'import sys, ctok; assert ctok.token_count("hello, world") == 10, "ctok README example"; print(sys.version.split()[0], file=sys.stderr)'
echo "$py"
