#!/usr/bin/env bash
# host-rust.sh: Debian 12's current Rust toolchain (rustc-web, cargo-web,
# rust-web-clippy, rustfmt-web from bookworm-security) for the host tools,
# unpacked into build/host-rust. The packages conflict with Debian's
# rustc 1.63 that the 6.1 kernel's Rust needs, so they are not installed
# with dpkg; their run-time libraries are ordinary packages and are.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
log=$BUILD/setup-host-rust.log
mkdir -p "$BUILD"
: >"$log"
pkgs=(rustc-web cargo-web rust-web-clippy rustfmt-web libstd-rust-web-dev)
if ! apt-cache show rustc-web >/dev/null 2>&1; then
	$SUDO apt-get update -qq >>"$log" 2>&1 || true
fi
apt-cache show rustc-web >/dev/null 2>&1 ||
	die "no rustc-web package in the apt sources: enable bookworm-security, or install a Rust >= $(host_rust_min) with clippy and rustfmt (e.g. rustup)"
# awk reads to the end: leaving at the first match can end apt-cache, which
# writes line by line, with SIGPIPE, and pipefail then fails the assignment
libstd=$(apt-cache depends libstd-rust-web-dev | awk '$1 == "Depends:" && $2 ~ /^libstd-rust-web-[0-9]/ && !found { print $2; found = 1 }')
[ -n "$libstd" ] || die "cannot tell the run-time library package of libstd-rust-web-dev"
pkgs+=("$libstd")
stage setup "unpacking Debian's Rust toolchain for the host tools into $HOST_RUST (${pkgs[*]})"
# run-time dependencies that are not part of the toolchain itself
deps=$(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances "${pkgs[@]}" |
	awk '$1 == "Depends:" && $2 !~ /^</ { print $2 }' | sort -u |
	grep -vxF -f <(printf '%s\n' "${pkgs[@]}") || true)
if [ -n "$deps" ]; then
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $deps >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "installing the toolchain's libraries failed (log: $log)"; }
fi
dl=$BUILD/debs/host-rust
rm -rf "$dl" "$HOST_RUST.tmp" && mkdir -p "$dl" "$HOST_RUST.tmp"
(cd "$dl" && apt-get download "${pkgs[@]}") >>"$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; die "downloading ${pkgs[*]} failed (log: $log)"; }
for d in "$dl"/*.deb; do
	dpkg-deb -x "$d" "$HOST_RUST.tmp"
done
rm -rf "$HOST_RUST" && mv "$HOST_RUST.tmp" "$HOST_RUST"
host_cargo_ok || die "the unpacked toolchain in $HOST_RUST does not run (log: $log)"
stage setup "host Rust: $(host_cargo --version)"
