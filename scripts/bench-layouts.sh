#!/usr/bin/env bash
# bench-layouts.sh [ITERATIONS]: the cost of the nvmem layouts on
# riscv64-virt against the size of what they parse, our 6.1 against the
# 6.12 reference, in the same run, both kernels built alike (the board's
# "bench" variant: same compiler, no KASAN, lockdep, Rust or other debug
# option that only weighs on one of them, the function graph tracer on).
# The size sweep: ONIE TLV tables of 256 B, 512 B, 1 KiB and 2 KiB, U-Boot
# environments of 4 to 64 KiB (62 to 2 000 variables), and a device without
# layout as the baseline (dts/riscv64-virt-bench.dtso adds the sweep's
# EEPROMs to the variant; guest/payloads/layout-bench):
#   - kernel: nvmem_register() timed by the function graph tracer, the
#     layout's parse, its cells and their sysfs files included;
#   - sysfs: from the bind to the last cell in sysfs, polled from user space
#     (the bind and the polling weigh on both kernels alike).
# Medians over ITERATIONS (default 30) binds; ours/ref per point. Figures
# also in build/report-data/layouts.json (make report plots them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export NVLAB_VARIANT=bench
iters=${1:-30}
# label:layout:bytes parsed (table or environment size); "-" for the baseline
sweep=(bench-onie-256:onie,tlv-layout:256 bench-onie-512:onie,tlv-layout:512
	bench-onie-1k:onie,tlv-layout:1024 onie-2k:onie,tlv-layout:2048
	bench-env-4k:u-boot,env:4096 bench-env-8k:u-boot,env:8192
	bench-env-16k:u-boot,env:16384 bench-env-32k:u-boot,env:32768
	uboot-env-64k:u-boot,env:65536 calib-blob:-:0)
declare -A kt pt dev_of
for k in ours ref; do
	"$TOP/scripts/build-board.sh" riscv64-virt "$k"
	load_board riscv64-virt "$k"
	# each image's device (its rmem address, from the board's device tree)
	# and the cell to wait for: the last one nvmem-image predicts
	arg=
	for s in "${sweep[@]}"; do
		label=${s%%:*} rest=${s#*:}
		layout=${rest%%:*}
		addr=$("$VENV/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import qemu
for label, addr, _ in qemu.rmem_regions(sys.argv[2]):
    if label == sys.argv[3]:
        print(f"{addr:x}")' "$TOP/scripts" "$OUT/board.dtb" "$label")
		[ -n "$addr" ] || die "$label: not attached to the bench variant's device tree"
		cell=-
		if [ "$layout" != - ]; then
			cell=$("$TOP/target/release/nvmem-image" cells "$BUILD/images/$label.bin" --layout "$layout" --json |
				python3 -c 'import json, sys; c = json.load(sys.stdin); print(max(c, key=lambda x: x["offset"])["sysfs"])')
		fi
		dev_of[$label]=$addr.eeprom
		arg+="${arg:++}$addr.eeprom:$cell"
	done
	out=$(NVLAB_APPEND="nvlab.bench=$arg nvlab.bench_n=$iters" "$TOP/scripts/boot.sh" run riscv64-virt "$k" "layout-bench")
	echo "$out" | grep -E '^(layout-bench|kernel-time) ' | sed "s/^/[$k] /"
	for s in "${sweep[@]}"; do
		dev=${dev_of[${s%%:*}]}
		kt[$k,$dev]=$(echo "$out" | sed -n "s/^kernel-time $dev: .* median \([0-9.]*\) us$/\1/p")
		pt[$k,$dev]=$(echo "$out" | sed -n "s/^layout-bench $dev .* median \([0-9.]*\) us$/\1/p")
		[ -n "${kt[$k,$dev]}" ] && [ -n "${pt[$k,$dev]}" ] || die "no figures for $dev (${s%%:*}) from the $k kernel"
	done
done
json=$BUILD/report-data/layouts.json
mkdir -p "$(dirname "$json")"
{
	echo "["
	sep=
	for s in "${sweep[@]}"; do
		label=${s%%:*} rest=${s#*:}
		dev=${dev_of[$label]}
		printf '%s {"image": "%s", "layout": "%s", "bytes": %s, "device": "%s", "kernel_us": {"ours": %s, "ref": %s}, "sysfs_us": {"ours": %s, "ref": %s}}\n' \
			"$sep" "$label" "${rest%%:*}" "${rest#*:}" "$dev" "${kt[ours,$dev]}" "${kt[ref,$dev]}" "${pt[ours,$dev]}" "${pt[ref,$dev]}"
		sep=,
	done
	echo "]"
} >"$json"
for s in "${sweep[@]}"; do
	label=${s%%:*}
	dev=${dev_of[$label]}
	awk -v what="$label" -v ko="${kt[ours,$dev]}" -v kr="${kt[ref,$dev]}" \
		-v po="${pt[ours,$dev]}" -v pr="${pt[ref,$dev]}" 'BEGIN {
		printf "[bench] %-14s nvmem_register() ours %8.1f us, ref %8.1f us, ours/ref %.2f; bind to cells in sysfs ours %8.1f us, ref %8.1f us, ours/ref %.2f\n",
			what, ko, kr, ko / kr, po, pr, po / pr
	}'
done
echo "[bench] figures: $json (make report plots them)"
