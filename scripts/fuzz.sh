#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET…]: run the nvmem-image cargo-fuzz targets, each
# for SECONDS (default 600), seeded with the committed images, two at a time.
# Needs cargo-fuzz (cargo install cargo-fuzz); the fuzz build uses
# RUSTC_BOOTSTRAP=1 on the stable toolchain. Prints executions and crashes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onie_tlv sl28_vpd uboot_env description)
command -v cargo-fuzz >/dev/null || die "cargo-fuzz not found: cargo install cargo-fuzz"
"$TOP/scripts/build-images.sh" >/dev/null
crate=$TOP/eeprom-images/nvmem-image
out=$BUILD/fuzz
mkdir -p "$out"
(cd "$crate" && RUSTC_BOOTSTRAP=1 host_cargo fuzz build -O >"$out/build.log" 2>&1) ||
	{ tail -n 20 "$out/build.log"; die "fuzz build failed"; }
run_one() {
	local t=$1 corpus=$out/corpus/$1
	mkdir -p "$corpus" "$out/artifacts/$t"
	if [ "$t" = description ]; then
		cp "$TOP"/eeprom-images/*.toml "$corpus"/
	else
		cp "$BUILD"/images/*.bin "$corpus"/ 2>/dev/null || true
		find "$corpus" -size +2M -delete
	fi
	(cd "$crate" && RUSTC_BOOTSTRAP=1 host_cargo fuzz run -O "$t" "$corpus" -- \
		-max_total_time="$secs" -max_len=4096 -artifact_prefix="$out/artifacts/$t/" \
		-print_final_stats=1 >"$out/$t.log" 2>&1) || true
	local execs crashes
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -n1)
	crashes=$(find "$out/artifacts/$t" -type f | wc -l)
	echo "[fuzz $t] ${secs}s: ${execs:-?} executions, $crashes crash(es) (log: $out/$t.log)"
}
i=0
for t in "${targets[@]}"; do
	run_one "$t" &
	i=$((i + 1))
	[ $((i % 2)) -eq 0 ] && wait
done
wait
if find "$out/artifacts" -type f | grep -q .; then
	die "crashes found: $(find "$out/artifacts" -type f | tr '\n' ' ')"
fi
