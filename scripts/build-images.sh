#!/usr/bin/env bash
# build-images.sh: every description in eeprom-images/*.toml -> build/images/
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need mkenvimage u-boot-tools
mkdir -p "$BUILD/images"
n=0
for d in "$TOP"/eeprom-images/*.toml; do
	out=$BUILD/images/$(basename "$d" .toml).bin
	# flash images include other descriptions: rebuild when any changed
	if [ -e "$out" ] && [ -z "$(find "$TOP/eeprom-images" "$TOP/scripts/build-image.py" -newer "$out" -type f)" ]; then
		continue
	fi
	"$VENV/bin/python" "$TOP/scripts/build-image.py" "$d" "$out"
	n=$((n + 1))
done
stage images "$n image(s) rebuilt in $BUILD/images"
