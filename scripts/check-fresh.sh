#!/usr/bin/env bash
# check-fresh.sh [setup|run|test]...: the README's commands on a pristine
# Debian 12, as a new user runs them. A minimal root (debootstrap minbase +
# git and make, from the mirror this machine's apt uses) gets what a new
# machine of ours has before any install of the project's: the machine's CA
# certificates, its Debian apt sources and /etc/pip.conf. The repository's
# committed HEAD is cloned into it and the stages run in a chroot with /proc,
# /sys and /dev mounted (unmounted again on any exit):
#   setup  make setup && make images (what CI runs every time)
#   run    make run                  (the README's first command)
#   test   make test                 (the README's second command)
# Default: run test. The root stays in build/fresh/root; the next check
# starts from a new copy of the cached debootstrap (build/fresh/base.tar,
# rebuilt when older than a week or with FRESH_BASE=1), or reuses the root
# as it was left with REUSE=1 (the commands' second, idempotent run).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(run test)
for s in "${stages[@]}"; do
	case "$s" in setup | run | test) ;; *) die "unknown stage '$s'; choose from: setup run test" ;; esac
done
[ "$(id -u)" = 0 ] || die "check-fresh needs root (debootstrap, chroot, mounts): run it with sudo"
t_all=$(date +%s)
fresh=$BUILD/fresh
root=$fresh/root
base=$fresh/base.tar
log=$fresh/check-fresh.log
suite=bookworm
mkdir -p "$fresh"
: >"$log"

if ! command -v debootstrap >/dev/null; then
	stage fresh "installing debootstrap"
	apt-get update -qq >>"$log" 2>&1 || true
	run_logged fresh "$log" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
fi

mounted=()
cleanup() {
	local m i
	# processes left in the root (a QEMU of an interrupted test) go first
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
	done
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -R "$m" 2>/dev/null || umount -lR "$m" 2>/dev/null || echo "check-fresh: could not unmount $m" >&2
	done
	mounted=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "${REUSE:-}" = 1 ] && [ -e "$root/.nvlab-fresh" ]; then
	stage fresh "reusing the root in $root (REUSE=1)"
else
	if [ "${FRESH_BASE:-}" = 1 ] || [ ! -e "$base" ] || [ -n "$(find "$base" -mtime +7)" ]; then
		mirror=$(mirror_uri)
		[ -n "$mirror" ] || die "no Debian mirror in this machine's apt sources"
		t0=$(date +%s)
		stage fresh "debootstrap $suite (minbase + git, make) from the machine's mirror (log: $log)"
		rm -rf "$fresh/base"
		run_logged fresh "$log" debootstrap --variant=minbase --include=git,make,ca-certificates \
			"$suite" "$fresh/base" "$mirror"
		rm -rf "$fresh/base/var/cache/apt/archives/"*.deb
		tar -C "$fresh/base" -cf "$base.tmp" . && mv "$base.tmp" "$base"
		rm -rf "$fresh/base"
		stage fresh "base root made in $(elapsed "$t0")"
	fi
	stage fresh "new root from $base"
	rm -rf "$root" && mkdir -p "$root"
	tar -C "$root" -xf "$base"

	# What a new machine of ours has before any install of the project's:
	# CA certificates (the registries are reached through them) ...
	if [ -d /usr/local/share/ca-certificates ]; then
		mkdir -p "$root/usr/local/share/ca-certificates"
		cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
	fi
	# ... the Debian apt sources (third-party repositories stay out) ...
	rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] || continue
		grep -q "$suite" "$f" && grep -qE 'debian' "$f" || continue
		mkdir -p "$root/etc/apt/sources.list.d"
		cp "$f" "$root${f}"
	done
	# ... pip's configuration, name resolution
	[ -e /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	touch "$root/.nvlab-fresh"
fi

for m in proc sys dev; do
	mkdir -p "$root/$m"
	case $m in
	proc) mount -t proc proc "$root/proc" ;;
	sys) mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" ;;
	dev) mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" ;;
	esac
	mounted+=("$root/$m")
done

# in_root CMD: a login-like shell in the root, with a clean environment
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		${CI:+CI=$CI} bash -c "$1"
}

if [ ! -e "$root/root/nvmem-lab/.git" ]; then
	run_logged fresh "$log" in_root "update-ca-certificates"
	git clone -q --no-hardlinks "$TOP" "$root/root/nvmem-lab"
	stage fresh "cloned $(git -C "$TOP" rev-parse --short HEAD) into $root/root/nvmem-lab"
else
	git -C "$root/root/nvmem-lab" pull -q --ff-only "$TOP" HEAD
	stage fresh "updated the clone in the root to $(git -C "$TOP" rev-parse --short HEAD)"
fi
# shared/ (specs, tools) beside the clone, as on a developer's machine
if [ -d "$TOP/../shared" ]; then
	rm -rf "$root/root/shared" && cp -a "$TOP/../shared" "$root/root/shared"
fi

times=()
for s in "${stages[@]}"; do
	case "$s" in
	setup) cmd="make setup && make images" ;;
	run) cmd="make run" ;;
	test) cmd="make test" ;;
	esac
	slog=$fresh/stage-$s.log
	t0=$(date +%s)
	stage fresh "[$s] $cmd in the root (log: $slog)"
	# the commands' own stage lines show progress; everything is in the log
	rc=0
	in_root "cd /root/nvmem-lab && $cmd" 2>&1 | tee "$slog" | sed -u 's/^/  | /' || rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ]; then
		die "check-fresh: '$cmd' failed (exit $rc) on a fresh Debian 12 after $(elapsed "$t0") (log: $slog)"
	fi
	times+=("$s $(elapsed "$t0")")
	stage fresh "[$s] passed in $(elapsed "$t0")"
done
stage fresh "passed on a fresh Debian 12: ${times[*]} (total $(elapsed "$t_all"); root kept in $root)"
