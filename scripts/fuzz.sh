#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET…]: run the nvmem-image cargo-fuzz targets, each
# for SECONDS (default 600), seeded with the committed images, two at a time.
# Uses the cargo-fuzz in PATH, or installs it once from crates.io into
# build/tools/cargo-fuzz with the host tools' cargo; the fuzz build uses
# RUSTC_BOOTSTRAP=1 on the stable toolchain. Prints executions, coverage
# and crashes.
# A target with a saved corpus (eeprom-images/nvmem-image/fuzz/corpus/TARGET/,
# replayed by cargo test: tests/ipmi_fru_fuzz_corpus.rs) is also fed it, the
# run's new inputs are merged into it, and its crash inputs are kept in
# fuzz/regressions/TARGET/ (replayed by the same test).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onie_tlv sl28_vpd uboot_env description ipmi_fru_parse)
fuzz_root=$BUILD/tools/cargo-fuzz
if ! command -v cargo-fuzz >/dev/null && [ ! -x "$fuzz_root/bin/cargo-fuzz" ]; then
	stage fuzz "installing cargo-fuzz into $fuzz_root (log: $BUILD/fuzz/install.log)"
	run_logged fuzz "$BUILD/fuzz/install.log" host_cargo install --locked --root "$fuzz_root" cargo-fuzz
fi
export PATH="$fuzz_root/bin:$PATH"
"$TOP/scripts/build-images.sh" >/dev/null
crate=$TOP/eeprom-images/nvmem-image
out=$BUILD/fuzz
mkdir -p "$out"
(cd "$crate" && RUSTC_BOOTSTRAP=1 host_cargo fuzz build -O >"$out/build.log" 2>&1) ||
	{ tail -n 20 "$out/build.log"; die "fuzz build failed"; }
run_one() {
	local t=$1 corpus=$out/corpus/$1 saved=$crate/fuzz/corpus/$1
	local dirs=("$corpus")
	mkdir -p "$corpus" "$out/artifacts/$t"
	case $t in
	description) cp "$TOP"/eeprom-images/*.toml "$corpus"/ ;;
	ipmi_fru_parse)
		# the FRU images, well-formed and hostile
		for d in "$TOP"/eeprom-images/ipmi-fru-*.toml "$TOP"/eeprom-images/hostile-fru/*.toml; do
			"$TOP/target/release/nvmem-image" build "$d" -o "$corpus/$(basename "$d" .toml).bin"
		done
		;;
	*)
		cp "$BUILD"/images/*.bin "$corpus"/ 2>/dev/null || true
		find "$corpus" -size +2M -delete
		;;
	esac
	[ -d "$saved" ] && dirs+=("$saved")
	(cd "$crate" && RUSTC_BOOTSTRAP=1 host_cargo fuzz run -O "$t" "${dirs[@]}" -- \
		-max_total_time="$secs" -max_len=4096 -artifact_prefix="$out/artifacts/$t/" \
		-print_final_stats=1 >"$out/$t.log" 2>&1) || true
	local execs cov crashes
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$out/$t.log" | tail -n1 | awk '{print $2 " edges, " $4 " features"}')
	crashes=$(find "$out/artifacts/$t" -type f | wc -l)
	if [ -d "$saved" ]; then
		# the new inputs that add coverage, into the saved corpus
		(cd "$crate" && RUSTC_BOOTSTRAP=1 host_cargo fuzz run -O "$t" "$saved" "$corpus" -- \
			-merge=1 -max_len=4096 >"$out/$t.merge.log" 2>&1) ||
			echo "[fuzz $t] merging into $saved failed (log: $out/$t.merge.log)"
		if [ "$crashes" -gt 0 ]; then
			mkdir -p "$crate/fuzz/regressions/$t"
			cp "$out/artifacts/$t"/* "$crate/fuzz/regressions/$t/"
		fi
	fi
	echo "[fuzz $t] ${secs}s: ${execs:-?} executions, coverage ${cov:-?}, $crashes crash(es) (log: $out/$t.log)"
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
