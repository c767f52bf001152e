#!/usr/bin/env bash
# build-dtb.sh BOARD KERNEL: base device tree (dumped from QEMU, or the
# kernel's dtb for the board) + the board's overlays from dts/ -> board.dtb
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board "$1" "$2"
tag="dtb $BOARD $KERNEL"
need dtc device-tree-compiler
need fdtoverlay device-tree-compiler
log=$OUT/dtb.log
: >"$log"
export LG_OUT=$OUT LG_IMAGES=$BUILD/images

if [ "$BASE_DTB" = qemu ]; then
	run_logged "$tag" "$log" "$VENV/bin/python" "$TOP/scripts/qemu.py" dumpdtb \
		"$TOP/tests/env/$BOARD.yaml" "$OUT/base.dtb"
else
	dtb_var=BASE_DTB_${KERNEL^^}
	src=$KOUT/arch/$BOARD_ARCH/boot/dts/${!dtb_var}
	[ -e "$src" ] || die "[$tag] $src missing: run 'make kernel BOARD=$BOARD KERNEL=$KERNEL'"
	cp "$src" "$OUT/base.dtb"
fi

# a variant adds the overlays of its own (OVERLAYS_<VARIANT> in board.conf)
overlays=$OVERLAYS
if [ -n "$VARIANT" ]; then
	extra=OVERLAYS_${VARIANT^^}
	overlays="$overlays ${!extra:-}"
fi
dtbos=()
for o in $overlays; do
	# an overlay may exist in a per-kernel variant (node paths differ)
	f=$TOP/dts/$o.dtso
	[ -e "$TOP/dts/$o-$KERNEL.dtso" ] && f=$TOP/dts/$o-$KERNEL.dtso
	[ -e "$f" ] || die "[$tag] overlay $o not found in dts/"
	run_logged "$tag" "$log" dtc -@ -I dts -O dtb -o "$OUT/$o.dtbo" "$f"
	dtbos+=("$OUT/$o.dtbo")
done
# the hostile images (eeprom-images/hostile/), where the board attaches
# them on this kernel (HOSTILE_RMEM[_<KERNEL>]: their first address); not
# in a variant, whose own EEPROMs would pass 6.1's 64 reserved regions
hostile=HOSTILE_RMEM_${KERNEL^^}
hostile=${!hostile:-${HOSTILE_RMEM:-}}
if [ -n "$hostile" ] && [ -z "$VARIANT" ]; then
	run_logged "$tag" "$log" "$VENV/bin/python" "$TOP/scripts/hostile.py" dtso "$hostile" "$OUT/hostile.dtso" \
		--base "$OUT/base.dtb" --board "$BOARD" --kernel "$KERNEL"
	run_logged "$tag" "$log" dtc -@ -I dts -O dtb -o "$OUT/hostile.dtbo" "$OUT/hostile.dtso"
	dtbos+=("$OUT/hostile.dtbo")
	overlays="$overlays hostile@$hostile"
fi
run_logged "$tag" "$log" fdtoverlay -i "$OUT/base.dtb" -o "$OUT/board.dtb" "${dtbos[@]}"
# How board.dtb was made, for tests that start the board with other QEMU
# options and need the same recipe on another base (tests/lab.py variant()):
# the base ("qemu" or "kernel"), then the overlays in order.
{
	[ "$BASE_DTB" = qemu ] && echo qemu || echo kernel
	printf '%s\n' "${dtbos[@]}"
} >"$OUT/board.dtb.recipe"
stage "$tag" "$OUT/board.dtb (base: $BASE_DTB, overlays:$(printf ' %s' $overlays))"
