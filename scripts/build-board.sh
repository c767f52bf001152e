#!/usr/bin/env bash
# build-board.sh BOARD KERNEL: everything one boot needs (images, kernel,
# initramfs, dtb).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board "$1" "$2"
"$TOP/scripts/build-images.sh"
"$TOP/scripts/build-kernel.sh" "$BOARD" "$KERNEL"
"$TOP/scripts/build-initramfs.sh" "$BOARD" "$KERNEL"
"$TOP/scripts/build-dtb.sh" "$BOARD" "$KERNEL"
