#!/usr/bin/env bash
# build-initramfs.sh BOARD KERNEL: static busybox + guest/init + payloads +
# the kernel's modules, packed with the kernel's own gen_init_cpio (device
# nodes without root privileges).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board "$1" "$2"
tag="initramfs $BOARD $KERNEL"

bb=$BUILD/busybox/$BUSYBOX_ARCH/busybox
if [ ! -x "$bb" ]; then
	stage "$tag" "fetching static busybox ($BUSYBOX_SUITE/$BUSYBOX_ARCH)"
	deb=$("$TOP/scripts/fetch-deb.sh" "$BUSYBOX_SUITE" "$BUSYBOX_ARCH" busybox-static "$BUILD/debs")
	rm -rf "$BUILD/busybox/$BUSYBOX_ARCH.x" && mkdir -p "$BUILD/busybox/$BUSYBOX_ARCH.x"
	dpkg-deb -x "$deb" "$BUILD/busybox/$BUSYBOX_ARCH.x"
	# /bin/busybox in bookworm, /usr/bin/busybox in trixie
	for f in bin/busybox usr/bin/busybox; do
		[ -e "$BUILD/busybox/$BUSYBOX_ARCH.x/$f" ] && install -D -m755 "$BUILD/busybox/$BUSYBOX_ARCH.x/$f" "$bb"
	done
	[ -x "$bb" ] || die "no busybox binary in $deb"
	rm -rf "$BUILD/busybox/$BUSYBOX_ARCH.x"
fi

"$TOP/scripts/build-guest.sh" "$BOARD" "$KERNEL"

# gen_init_cpio of the tree being booted (each kernel's run needs only its
# own tree)
gic=$BUILD/tools/gen_init_cpio-$KERNEL
[ -e "$SRC/usr/gen_init_cpio.c" ] || die "[$tag] $SRC/usr/gen_init_cpio.c missing: run 'make kernel BOARD=$BOARD KERNEL=$KERNEL'"
if [ ! -x "$gic" ] || [ "$SRC/usr/gen_init_cpio.c" -nt "$gic" ]; then
	mkdir -p "$BUILD/tools"
	gcc -O2 -o "$gic" "$SRC/usr/gen_init_cpio.c"
fi

list=$OUT/initramfs.list
{
	for d in /bin /sbin /usr /usr/bin /usr/sbin /usr/lib /usr/lib/nvlab /dev /proc /sys /tmp /root /etc /lib /run; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /bin/busybox $bb 0755 0 0"
	echo "slink /bin/sh busybox 0777 0 0"
	echo "file /init $TOP/guest/init 0755 0 0"
	echo "file /etc/mdev.conf $TOP/guest/mdev.conf 0644 0 0"
	for p in "$TOP"/guest/payloads/*; do
		echo "file /usr/lib/nvlab/${p##*/} $p 0755 0 0"
	done
	# guest programs built for this board (scripts/build-guest.sh)
	if [ -d "$OUT/guest-bin" ]; then
		for p in "$OUT"/guest-bin/*; do
			[ -e "$p" ] && echo "file /usr/bin/${p##*/} $p 0755 0 0"
		done
	fi
	if [ -d "$OUT/modroot/lib/modules" ]; then
		(cd "$OUT/modroot" && find lib -mindepth 1 -type d | sort | sed 's,^,dir /,; s,$, 0755 0 0,')
		(cd "$OUT/modroot" && find lib -type f | sort | while read -r f; do
			echo "file /$f $OUT/modroot/$f 0644 0 0"
		done)
		(cd "$OUT/modroot" && find lib -type l | sort | while read -r f; do
			echo "slink /$f $(readlink "$f") 0777 0 0"
		done)
	fi
} >"$list"
"$gic" "$list" | gzip -9n >"$OUT/initramfs.cpio.gz.tmp"
mv "$OUT/initramfs.cpio.gz.tmp" "$OUT/initramfs.cpio.gz"
stage "$tag" "$(du -h "$OUT/initramfs.cpio.gz" | cut -f1) in $OUT/initramfs.cpio.gz"
