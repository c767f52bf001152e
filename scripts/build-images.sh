#!/usr/bin/env bash
# build-images.sh: every description in eeprom-images/*.toml,
# eeprom-images/hostile/*.toml and eeprom-images/hostile-fru/*.toml ->
# build/images/<name>.bin with the nvmem-image tool (U-Boot environments
# through mkenvimage). IPMI FRU images from another project's generator:
# eeprom-images/frutool/<name>.toml (frutool's own format; frutool from the
# venv) -> build/images/frutool-<name>.bin, and nvmem-image's description
# of those bytes (dump) -> build/images/frutool-<name>.toml, attached and
# tested like ours.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need mkenvimage u-boot-tools
host_cargo_ok || die "no Rust >= $(host_rust_min) with clippy and rustfmt for the host tools: run 'make setup'"
(cd "$TOP" && host_cargo build -q --release -p nvmem-image)
tool=$TOP/target/release/nvmem-image
mkdir -p "$BUILD/images"
n=0
# one name, one image: a hostile description may not share a name
descs=("$TOP"/eeprom-images/*.toml "$TOP"/eeprom-images/hostile/*.toml "$TOP"/eeprom-images/hostile-fru/*.toml)
dups=$(for d in "${descs[@]}"; do basename "$d"; done | sort | uniq -d)
[ -z "$dups" ] || die "[images] descriptions with the same name in eeprom-images/, hostile/ and hostile-fru/: $dups"
for d in "${descs[@]}"; do
	out=$BUILD/images/$(basename "$d" .toml).bin
	# flash images include other descriptions: rebuild when any changed
	if [ -e "$out" ] && [ -z "$(find "$TOP/eeprom-images" "$tool" -newer "$out" -type f -name '*.toml' -o -newer "$out" -path "$tool")" ]; then
		continue
	fi
	"$tool" build "$d" -o "$out"
	n=$((n + 1))
done
for f in "$TOP"/eeprom-images/frutool/*.toml; do
	name=frutool-$(basename "$f" .toml)
	bin=$BUILD/images/$name.bin desc=$BUILD/images/$name.toml log=$BUILD/images/$name.log
	# the description is written last: it stands for both files
	[ -e "$desc" ] && [ "$desc" -nt "$f" ] && [ "$desc" -nt "$tool" ] && continue
	rm -f "$desc"
	"$VENV/bin/frutool" generate --force "$f" "$bin" >"$log" 2>&1 ||
		failed_with_log images "$log" frutool generate "$f"
	# the dump, with what a test description says besides: the layout
	# whose cells it expects
	{
		echo "# nvmem-image dump of frutool's image of eeprom-images/frutool/${name#frutool-}.toml"
		echo 'expect = "cells"'
		"$tool" dump "$bin" 2>>"$log" || failed_with_log images "$log" nvmem-image dump "$bin"
		printf '\n[layout]\ncompatible = "nvmem-lab,ipmi-fru"\n'
	} >"$desc.tmp"
	mv "$desc.tmp" "$desc"
	n=$((n + 1))
done
stage images "$n image(s) rebuilt in $BUILD/images"
