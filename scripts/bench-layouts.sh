#!/usr/bin/env bash
# bench-layouts.sh: time from nvmem device registration to layout cells in
# sysfs for the 2 KiB ONIE TLV EEPROM on riscv64-virt, our 6.1 against the
# 6.12 reference, in the same run (guest/payloads/layout-bench), and the
# ratio of the medians. The figure for a device without layout shows the
# bind and polling overhead both kernels share.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
declare -A med base
for k in ours ref; do
	"$TOP/scripts/build-board.sh" riscv64-virt "$k"
	out=$("$TOP/scripts/boot.sh" run riscv64-virt "$k" layout-bench)
	echo "$out" | grep '^layout-bench' | sed "s/^/[$k] /"
	med[$k]=$(echo "$out" | sed -n 's/^layout-bench 9f008000.eeprom .* median \([0-9.]*\) us$/\1/p')
	base[$k]=$(echo "$out" | sed -n 's/^layout-bench 9f001000.eeprom .* median \([0-9.]*\) us$/\1/p')
	[ -n "${med[$k]}" ] && [ -n "${base[$k]}" ] || die "no figures from the $k kernel"
done
awk -v o="${med[ours]}" -v r="${med[ref]}" -v bo="${base[ours]}" -v br="${base[ref]}" 'BEGIN {
	printf "[bench] 2 KiB ONIE TLV, registration to cells (median): ours %.1f us, ref %.1f us, ours/ref %.2f\n", o, r, o / r
	printf "[bench] without layout (bind + poll baseline): ours %.1f us, ref %.1f us\n", bo, br
	printf "[bench] layout share above the baseline: ours %.1f us, ref %.1f us\n", o - bo, r - br
}'
