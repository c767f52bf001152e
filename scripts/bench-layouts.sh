#!/usr/bin/env bash
# bench-layouts.sh: the cost of the nvmem layouts on riscv64-virt, our 6.1
# against the 6.12 reference, in the same run, both kernels built alike
# (the board's "bench" variant: same compiler, no KASAN, lockdep, Rust or
# other debug option that only weighs on one of them, the function graph
# tracer on). For the 2 KiB ONIE TLV EEPROM, the 64 KiB U-Boot environment
# with 2 000 variables and a device without layout
# (guest/payloads/layout-bench):
#   - kernel: nvmem_register() timed by the function graph tracer, the
#     layout's parse, its cells and their sysfs files included;
#   - sysfs: from the bind to the cells in sysfs, polled from user space
#     (the bind and the polling weigh on both kernels alike).
# Medians over 50 iterations, and ours/ref.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export NVLAB_VARIANT=bench
declare -A kt pt
devs=("9f008000.eeprom:ONIE TLV 2 KiB" "9f010000.eeprom:U-Boot env 64 KiB, 2000 variables" "9f001000.eeprom:no layout (baseline)")
for k in ours ref; do
	"$TOP/scripts/build-board.sh" riscv64-virt "$k"
	out=$("$TOP/scripts/boot.sh" run riscv64-virt "$k" layout-bench)
	echo "$out" | grep -E '^(layout-bench|kernel-time) ' | sed "s/^/[$k] /"
	for d in "${devs[@]}"; do
		dev=${d%%:*}
		kt[$k,$dev]=$(echo "$out" | sed -n "s/^kernel-time $dev: .* median \([0-9.]*\) us$/\1/p")
		pt[$k,$dev]=$(echo "$out" | sed -n "s/^layout-bench $dev .* median \([0-9.]*\) us$/\1/p")
		[ -n "${kt[$k,$dev]}" ] && [ -n "${pt[$k,$dev]}" ] || die "no figures for $dev from the $k kernel"
	done
done
# for make report (scripts/report.py)
json=$BUILD/report-data/layouts.json
mkdir -p "$(dirname "$json")"
{
	echo "["
	sep=
	for d in "${devs[@]}"; do
		dev=${d%%:*}
		printf '%s {"device": "%s", "what": "%s", "kernel_us": {"ours": %s, "ref": %s}, "sysfs_us": {"ours": %s, "ref": %s}}\n' \
			"$sep" "$dev" "${d#*:}" "${kt[ours,$dev]}" "${kt[ref,$dev]}" "${pt[ours,$dev]}" "${pt[ref,$dev]}"
		sep=,
	done
	echo "]"
} >"$json"
for d in "${devs[@]}"; do
	dev=${d%%:*}
	awk -v what="${d#*:}" -v ko="${kt[ours,$dev]}" -v kr="${kt[ref,$dev]}" \
		-v po="${pt[ours,$dev]}" -v pr="${pt[ref,$dev]}" 'BEGIN {
		printf "[bench] %s: nvmem_register() ours %.1f us, ref %.1f us, ours/ref %.2f; bind to cells in sysfs ours %.1f us, ref %.1f us, ours/ref %.2f\n",
			what, ko, kr, ko / kr, po, pr, po / pr
	}'
done
