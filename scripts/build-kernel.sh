#!/usr/bin/env bash
# build-kernel.sh BOARD KERNEL: configure (base config + the board's
# fragments) and build the kernel, its modules and, where the board takes its
# device tree from the kernel, that dtb. Incremental: O= directory per board
# and kernel, ccache for the compilers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board "$1" "$2"
tag="kernel $BOARD $KERNEL"
log=$OUT/kernel.log
need ccache ccache
"$TOP/scripts/prepare-tree.sh" "$KERNEL"

frags=("$BOARD_DIR/config.fragment")
[ -f "$BOARD_DIR/config-$KERNEL.fragment" ] && frags+=("$BOARD_DIR/config-$KERNEL.fragment")
mkdir -p "$KOUT"
: >"$log"
t0=$(date +%s)

cfg_hash=$( (echo "$BASE_CONFIG $KMAKE_TC"; cat "${frags[@]}") | sha256sum | cut -d' ' -f1)
if [ ! -e "$KOUT/.config" ] || [ "$(cat "$KOUT/.nvlab-config" 2>/dev/null)" != "$cfg_hash" ]; then
	stage "$tag" "configuring ($BASE_CONFIG + ${frags[*]##*/}, log: $log)"
	run_logged "$tag" "$log" kmake "$BASE_CONFIG"
	run_logged "$tag" "$log" "$SRC/scripts/kconfig/merge_config.sh" -m -O "$KOUT" "$KOUT/.config" "${frags[@]}"
	run_logged "$tag" "$log" kmake olddefconfig
	# Every option a fragment asks for must have landed.
	bad=$(cat "${frags[@]}" | sed -n 's/^\(CONFIG_[A-Za-z0-9_]*=.*\)$/\1/p; s/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1=n/p' |
		while IFS= read -r want; do
			opt=${want%%=*} val=${want#*=}
			have=$(grep -E "^$opt=|^# $opt is not set" "$KOUT/.config" | sed "s/^# $opt is not set/$opt=n/")
			[ "${have:-$opt=n}" = "$opt=$val" ] || echo "  $want (got: ${have:-unset})"
		done)
	if [ -n "$bad" ]; then
		rm -f "$KOUT/.nvlab-config"
		die "[$tag] config fragment options not in the final .config (missing dependency or unknown option):
$bad"
	fi
	echo "$cfg_hash" >"$KOUT/.nvlab-config"
fi

targets=("${KERNEL_IMAGE##*/}")
if [ "$BASE_DTB" != qemu ]; then
	dtb_var=BASE_DTB_${KERNEL^^}
	targets+=("${!dtb_var}")
fi
grep -q '^CONFIG_MODULES=y' "$KOUT/.config" && targets+=(modules)
stage "$tag" "building ${targets[*]} (log: $log)"
run_logged "$tag" "$log" kmake "${targets[@]}"

# Modules for the initramfs
rm -rf "$OUT/modroot"
if grep -q '^CONFIG_MODULES=y' "$KOUT/.config"; then
	run_logged "$tag" "$log" kmake INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
fi
# With Rust on: the kernel crate's doc examples as a module that runs them
# (scripts/rust-doctests.py); they may use what the kernel crate itself
# uses, hence allocator_api next to the features modules get.
if [ "$KERNEL" = ours ] && grep -q '^CONFIG_RUST=y' "$KOUT/.config"; then
	dt=$OUT/rust-doctests
	stage "$tag" "building the Rust doc examples as rust_doctests.ko (log: $log)"
	run_logged "$tag" "$log" python3 "$TOP/scripts/rust-doctests.py" "$SRC" "$dt"
	run_logged "$tag" "$log" kmake M="$dt" rust_allowed_features=core_ffi_c,allocator_api modules
	run_logged "$tag" "$log" kmake M="$dt" INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
	# the lock benchmark (scripts/bench-rust-locks.sh), built out of tree
	bm=$OUT/rust-lock-bench
	rm -rf "$bm" && cp -r "$TOP/tests/guest/rust-lock-bench" "$bm"
	run_logged "$tag" "$log" kmake M="$bm" modules
	run_logged "$tag" "$log" kmake M="$bm" INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
fi
cp "$KOUT/$KERNEL_IMAGE" "$OUT/${KERNEL_IMAGE##*/}"
stage "$tag" "done in $(elapsed "$t0"), log: $log"
