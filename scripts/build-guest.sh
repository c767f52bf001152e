#!/usr/bin/env bash
# build-guest.sh BOARD KERNEL: the board's guest programs, static, against
# the UAPI headers of the kernel under test (make headers_install):
#   tests/guest/common/*.c and tests/guest/<arch>/*.c -> $OUT/guest-bin/<name>
#   the kernel's own kselftests listed in KSELFTESTS (board.conf)
#                                     -> $OUT/guest-bin/kselftest-<dir-with-dashes>-<prog>
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board "$1" "$2"
tag="guest $BOARD $KERNEL"
log=$OUT/guest.log
: >"$log"
[ -n "${GUEST_CC:-}" ] || exit 0
need "$GUEST_CC" "gcc-${GUEST_CC%-gcc} (cross compiler)"

stage "$tag" "UAPI headers (log: $log)"
run_logged "$tag" "$log" kmake -s headers_install INSTALL_HDR_PATH="$OUT/uapi"

rm -rf "$OUT/guest-bin" && mkdir -p "$OUT/guest-bin"
srcs=()
for f in "$TOP"/tests/guest/common/*.c "$TOP/tests/guest/$BOARD_ARCH"/*.c; do
	[ -e "$f" ] && srcs+=("$f")
done
for f in "${srcs[@]}"; do
	n=$(basename "$f" .c)
	run_logged "$tag" "$log" "$GUEST_CC" -static -O2 -Wall -Wextra -Werror \
		-isystem "$OUT/uapi/include" -o "$OUT/guest-bin/$n" "$f"
done

for t in ${KSELFTESTS:-}; do
	d=$SRC/tools/testing/selftests/$t
	[ -d "$d" ] || continue # not in this kernel (e.g. before the series)
	stage "$tag" "kselftest $t"
	rm -rf "$OUT/kselftest/$t" && mkdir -p "$OUT/kselftest/$t"
	run_logged "$tag" "$log" make -C "$d" ARCH="$BOARD_ARCH" CC="$GUEST_CC" \
		OUTPUT="$OUT/kselftest/$t" KHDR_INCLUDES="-isystem $OUT/uapi/include" \
		USERCFLAGS="-isystem $OUT/uapi/include" \
		LDFLAGS=-static
	for p in "$OUT/kselftest/$t"/*; do
		[ -f "$p" ] && [ -x "$p" ] && cp "$p" "$OUT/guest-bin/kselftest-${t//\//-}-${p##*/}"
	done
done
stage "$tag" "$(find "$OUT/guest-bin" -type f | wc -l) programs in $OUT/guest-bin"
