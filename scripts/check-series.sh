#!/usr/bin/env bash
# check-series.sh [--build]: the kernel-patches/ series as upstream would
# receive it.
#   - every patch: scripts/checkpatch.pl --strict without any error, warning
#     or check. checkpatch's "does MAINTAINERS need updating?" reminder for
#     new files is accepted only when scripts/get_maintainer.pl finds a
#     maintained entry covering every new file;
#   - every patch has a Signed-off-by matching its author;
#   - with --build: every patch, applied in order, builds the riscv64-virt
#     kernel (LLVM, Rust on once a patch allows it) and the ast2600-evb
#     kernel (arm, GCC, Rust off), with their modules (bisectability), in a
#     separate worktree and build directories. A step that built is not
#     built again while its tree, the board's config fragments, the
#     compiler and this script stay the same (the verdict is kept under the
#     hash of all of them, series_build_key): an interrupted run goes on
#     where it stopped (a full run takes hours on 2 cores).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$TOP/scripts/prepare-tree.sh" ours
src=$BUILD/src/linux-6.1
tmp=$BUILD/series-check
rm -rf "$tmp" && mkdir -p "$tmp"
# A patch that passed is not checked again while neither it nor the tree's
# checking scripts and MAINTAINERS change: the verdict is kept under the hash
# of all of them (the patch without its "From <commit>" line).
passed=$BUILD/series-check-passed
mkdir -p "$passed"
tools_sum=$(cd "$src" && cat scripts/checkpatch.pl scripts/get_maintainer.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch MAINTAINERS "$TOP/scripts/check-series.sh" | sha256sum | cut -d' ' -f1)
fail=0
n=0
# check_patch FILE: checkpatch, maintainers of new files, sign-off; prints
# the problems and returns non-zero if any
check_patch() {
	local f=$1 p out author nf key fail=0
	p=$(basename "$f")
	key=$({ echo "$tools_sum"; sed 1d "$f"; } | sha256sum | cut -d' ' -f1)
	[ -e "$passed/$key" ] && return 0
	out=$tmp/${p%.patch}.checkpatch
	(cd "$src" && ./scripts/checkpatch.pl --strict --no-tree --ignore FILE_PATH_CHANGES --show-types "$f") >"$out" 2>&1 || true
	if ! grep -q '^total: 0 errors, 0 warnings, 0 checks' "$out"; then
		echo "[series] $p: checkpatch --strict:" >&2
		grep -E '^(ERROR|WARNING|CHECK)|^#[0-9]+: FILE' "$out" | head -n 20 >&2
		fail=1
	fi
	# new files must be covered by a MAINTAINERS entry
	for nf in $(sed -n 's/^+++ b\///p' <(awk '/^--- \/dev\/null/{getline; print}' "$f")); do
		if ! (cd "$src" && ./scripts/get_maintainer.pl --no-git --no-rolestats -f "$nf" 2>/dev/null | grep -q '@'); then
			echo "[series] $p: new file $nf has no maintainer in MAINTAINERS" >&2
			fail=1
		fi
	done
	author=$(sed -n 's/^From: //p' "$f" | head -n1)
	if ! grep -qF "Signed-off-by: $author" "$f"; then
		echo "[series] $p: no Signed-off-by of its author ($author)" >&2
		fail=1
	fi
	[ "$fail" = 0 ] && touch "$passed/$key"
	return "$fail"
}

# the series as the prepared tree has it: the patches and the layouts/
# groups (kernel-patches/series), each exported as upstream would get it
git -C "$src" format-patch -q --no-signature -o "$tmp/series" nvlab-base..HEAD
patches=("$tmp"/series/*.patch)
n=${#patches[@]}
# one checkpatch per core
export -f check_patch
export src tmp passed tools_sum
printf '%s\0' "${patches[@]}" | xargs -0 -n1 -P "$(nproc)" bash -c 'check_patch "$1"' _ || fail=1
[ "$fail" = 0 ] || die "series check failed (checkpatch output in $tmp)"
stage series "$n patch(es): checkpatch --strict clean, new files maintained, signed off"

[ "${1:-}" = --build ] || exit 0
# Bisectability: build each step in a worktree of the prepared tree, for
# riscv64-virt (LLVM, Rust on from the patch that allows it) and for
# ast2600-evb (arm, GCC, Rust off).
built=$BUILD/series-build-passed
mkdir -p "$built"
# series_build_key COMMIT: what a build step of the loaded board depends on
series_build_key() {
	{
		echo "$BOARD $KMAKE_TC"
		git -C "$src" rev-parse "$1^{tree}"
		cat "${frags[@]}" "$TOP/scripts/check-series.sh"
		case $KMAKE_TC in
		llvm) clang --version | head -n1 ;;
		gcc:*) "${KMAKE_TC#gcc:}gcc" --version | head -n1 ;;
		esac
	} | sha256sum | cut -d' ' -f1
}
wt=$BUILD/src/linux-6.1-bisect
log=$BUILD/logs/series-build.log
: >"$log"
git -C "$src" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$src" worktree prune
git -C "$src" worktree add -q --detach "$wt" nvlab-base
for board in riscv64-virt ast2600-evb; do
	load_board "$board" ours
	SRC=$wt KOUT=$BUILD/series-build/$board/kernel
	mkdir -p "$KOUT"
	targets=("${KERNEL_IMAGE##*/}")
	frags=("$BOARD_DIR/config.fragment")
	[ -f "$BOARD_DIR/config-ours.fragment" ] && frags+=("$BOARD_DIR/config-ours.fragment")
	i=0
	for c in $(git -C "$src" rev-list --reverse nvlab-base..HEAD); do
		i=$((i + 1))
		key=$(series_build_key "$c")
		if [ -e "$built/$key" ]; then
			stage series "$board build $i/$n: built before ($(git -C "$src" log -1 --format=%s "$c"))"
			continue
		fi
		git -C "$wt" checkout -q "$c"
		t0=$(date +%s)
		stage series "$board build $i/$n: $(git -C "$wt" log -1 --format=%s) (log: $log)"
		# the board's configuration at every step, so options a patch adds
		# (e.g. its KUnit test) are built from the patch that adds them
		run_logged "series build $i" "$log" kmake -s "$BASE_CONFIG"
		run_logged "series build $i" "$log" env -C "$SRC" scripts/kconfig/merge_config.sh -m -O "$KOUT" \
			"$KOUT/.config" "${frags[@]}"
		run_logged "series build $i" "$log" kmake olddefconfig
		# modules too where the board has them (the Rust self-test is one)
		mods=()
		grep -q '^CONFIG_MODULES=y' "$KOUT/.config" && mods=(modules)
		run_logged "series build $i" "$log" kmake "${targets[@]}" "${mods[@]}"
		run_logged "series build $i" "$log" kmake -s headers_install INSTALL_HDR_PATH="$KOUT/hdr"
		touch "$built/$key"
		stage series "$board build $i/$n: ok in $(elapsed "$t0")"
	done
done
git -C "$src" worktree remove --force "$wt"
stage series "all $n patches build one after the other on riscv64-virt and ast2600-evb"
