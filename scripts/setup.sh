#!/usr/bin/env bash
# setup.sh: everything nvmem-lab needs on a Debian 12 machine, idempotently:
# Debian packages, the reference kernel source (linux-source-6.12, from the
# next Debian release through a private apt state), the Python venv
# (labgrid, pytest, dtschema, matplotlib, selenium) and the static busybox
# binaries; chromium and its driver for the report's browser test.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(
	linux-source-6.1 build-essential bc bison flex libssl-dev libelf-dev cpio kmod rsync
	ccache clang lld llvm rustc rust-src bindgen libclang-rt-14-dev
	gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
	gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
	qemu-system-misc qemu-system-arm opensbi
	device-tree-compiler u-boot-tools libubootenv-tool freeipmi-tools
	python3-venv python3-dev swig
	chromium chromium-driver
)
# LAVA's dispatcher, to run the generated jobs (scripts/lava.py) with
# lava-run; without its recommends (a web server, a TFTP server, ser2net:
# a worker of a real lab, not what lava-run needs for QEMU)
LAVA_PKGS=(lava-dispatcher)
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
mkdir -p "$BUILD"

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	stage setup "installing ${#missing[@]} Debian package(s): ${missing[*]}"
	extra=()
	# A newer qemu-utils (backports) breaks the release's qemu-system-*:
	# take the release's one with them.
	v=$(dpkg-query -W -f='${Version}' qemu-utils 2>/dev/null || true)
	if [ -n "$v" ] && dpkg --compare-versions "$v" ge 1:8; then
		extra=(--allow-downgrades "qemu-utils/$codename")
	fi
	$SUDO apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${extra[@]}" "${missing[@]}" \
		>"$BUILD/setup-apt.log" 2>&1 || { tail -n 20 "$BUILD/setup-apt.log" >&2; die "apt-get install failed (log: $BUILD/setup-apt.log)"; }
fi
missing=()
for p in "${LAVA_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	stage setup "installing LAVA's dispatcher (${missing[*]}, no recommends)"
	$SUDO apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
		>"$BUILD/setup-apt.log" 2>&1 || { tail -n 20 "$BUILD/setup-apt.log" >&2; die "apt-get install failed (log: $BUILD/setup-apt.log)"; }
fi

if [ ! -e /usr/src/linux-source-6.12.tar.xz ]; then
	stage setup "fetching linux-source-6.12 (reference tree) from trixie"
	deb=$("$TOP/scripts/fetch-deb.sh" trixie all linux-source-6.12 "$BUILD/debs")
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$deb" >"$BUILD/setup-apt.log" 2>&1 ||
		{ tail -n 20 "$BUILD/setup-apt.log" >&2; die "installing $deb failed"; }
fi

# lava-server's device-type templates (qemu.jinja2, base-uboot.jinja2, ...):
# scripts/lava.py renders device dictionaries with them as a lava-server
# does. Only the templates, from the package of this release, not installed
# (lava-server is a web service with a database).
if [ ! -e "$BUILD/lava-server/device-types/qemu.jinja2" ]; then
	stage setup "unpacking lava-server's device-type templates ($BUILD/lava-server)"
	deb=$("$TOP/scripts/fetch-deb.sh" "$codename" all lava-server "$BUILD/debs")
	rm -rf "$BUILD/lava-server" && mkdir -p "$BUILD/lava-server/unpacked"
	dpkg-deb -x "$deb" "$BUILD/lava-server/unpacked"
	mv "$BUILD/lava-server/unpacked/usr/share/lava-server/device-types" "$BUILD/lava-server/device-types"
	rm -rf "$BUILD/lava-server/unpacked"
fi

if [ ! -x "$VENV/bin/pytest" ] || [ "$TOP/tests/requirements.txt" -nt "$VENV/.nvlab-stamp" ]; then
	stage setup "Python venv with labgrid, pytest, dtschema ($VENV)"
	# Debian's interpreter (python3-venv, python3-dev for pylibfdt), not
	# whatever python3 comes first in PATH
	rm -rf "$VENV"
	/usr/bin/python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q -r "$TOP/tests/requirements.txt" >"$BUILD/setup-pip.log" 2>&1 ||
		{ tail -n 20 "$BUILD/setup-pip.log" >&2; die "pip install failed"; }
	touch "$VENV/.nvlab-stamp"
fi

# The host tools need a newer Rust than Debian 12's rustc (the kernel's):
# a cargo of at least rust-version (eeprom-images/nvmem-image/Cargo.toml) in
# PATH is used as it is; otherwise Debian 12's current toolchain (the -web
# packages of bookworm-security) is unpacked into $HOST_RUST, beside the
# rustc the kernel build uses (the packages conflict with it in dpkg).
if ! host_cargo_ok; then
	"$TOP/scripts/host-rust.sh"
fi
stage setup "cargo build of the host tools ($(host_cargo --version))"
(cd "$TOP" && host_cargo build -q --release) >"$BUILD/setup-cargo.log" 2>&1 ||
	{ tail -n 20 "$BUILD/setup-cargo.log" >&2; die "cargo build failed (log: $BUILD/setup-cargo.log)"; }
stage setup "ready"
