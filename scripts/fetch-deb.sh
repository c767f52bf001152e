#!/usr/bin/env bash
# Download one Debian package for a given suite and architecture with a
# private apt state, using the Debian mirror this machine is already
# configured with (never a hard-coded one).
#   fetch-deb.sh SUITE ARCH PACKAGE OUTDIR   -> prints the path of the .deb
set -euo pipefail
. "$(dirname "$0")/lib.sh"
suite=$1 arch=$2 pkg=$3 out=$4
# architecture-independent packages come through the host's architecture
list_arch=$arch
[ "$arch" = all ] && list_arch=$(dpkg --print-architecture)
state="$BUILD/apt/$suite-$list_arch"

uri=$(mirror_uri)
[ -n "$uri" ] || { echo "fetch-deb: no Debian mirror configured in /etc/apt" >&2; exit 1; }
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$out"
: > "$state/status"
echo "deb [arch=$list_arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" \
	> "$state/sources.list"
apt_opts=(-o "Dir::State=$state" -o "Dir::State::Lists=$state/lists"
	-o "Dir::State::status=$state/status" -o "Dir::Cache=$state/cache"
	-o "Dir::Etc::SourceList=$state/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
	-o "APT::Architectures::=$list_arch" -o "Debug::NoLocking=1" -q)
stamp="$state/updated"
if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440)" ]; then
	apt-get "${apt_opts[@]}" update >"$state/update.log" 2>&1 ||
		{ tail -n 20 "$state/update.log" >&2; exit 1; }
	touch "$stamp"
fi
spec=$pkg
[ "$arch" = all ] || spec="$pkg:$arch"
(cd "$out" && apt-get "${apt_opts[@]}" download "$spec" >"$state/download.log" 2>&1) ||
	{ tail -n 20 "$state/download.log" >&2; exit 1; }
ls -t "$out/${pkg}_"*"_$arch.deb" | head -n1
