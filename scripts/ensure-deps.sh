#!/bin/sh
# Installs the Debian packages coverd's build, tests and demo need, if any is
# missing. Idempotent: with everything installed it only runs dpkg-query.
set -eu

packages="libcurl4-openssl-dev libsqlite3-dev libsystemd-dev zlib1g-dev libdeflate-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev libpixman-1-dev pkg-config libjpeg-turbo-progs webp netpbm imagemagick systemd python3 curl openssl ca-certificates strace nginx $*"
missing=""
for package in $packages; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $package"
    fi
done
[ -z "$missing" ] && exit 0

echo "coverd: installing missing Debian packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "coverd: please install as root: apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
