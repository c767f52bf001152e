#!/usr/bin/env bash
# build-kernel.sh BOARD KERNEL: configure (base config + the board's
# fragments) and build the kernel, its modules and, where the board takes its
# device tree from the kernel, that dtb. Incremental: O= directory per board
# and kernel, ccache for the compilers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board "$1" "$2"
tag="kernel $BOARD $KERNEL${VARIANT:+ ($VARIANT)}"
log=$OUT/kernel.log
need ccache ccache
"$TOP/scripts/prepare-tree.sh" "$KERNEL"

frags=("$BOARD_DIR/config.fragment")
[ -f "$BOARD_DIR/config-$KERNEL.fragment" ] && frags+=("$BOARD_DIR/config-$KERNEL.fragment")
[ -z "$VARIANT" ] || frags+=("$BOARD_DIR/config-$VARIANT.fragment")
mkdir -p "$KOUT"
: >"$log"
t0=$(date +%s)

# check_fragments WHEN: every option a fragment asks for is in the final
# .config (a later fragment line wins, as in merge_config.sh); else forget
# the configuration and fail. Run on every build, incremental ones too: a
# .config edited by hand or by the build's syncconfig (a toolchain that
# no longer offers an option) would otherwise go unnoticed, and the boot
# tests expect the suites the fragments ask for. One awk pass: fast.
check_fragments() {
	local bad
	[ -s "$KOUT/.config" ] || die "[$tag] no $KOUT/.config $1"
	bad=$(awk '
		FILENAME == ARGV[1] {
			if (match($0, /^CONFIG_[A-Za-z0-9_]+=/))
				have[substr($0, 1, RLENGTH - 1)] = substr($0, RLENGTH + 1)
			else if ($0 ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/)
				have[$2] = "n"
			next
		}
		match($0, /^CONFIG_[A-Za-z0-9_]+=/) { o = substr($0, 1, RLENGTH - 1); v = substr($0, RLENGTH + 1) }
		$0 ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/ { o = $2; v = "n" }
		o != "" { if (!(o in want)) order[n++] = o; want[o] = v; o = "" }
		END {
			for (i = 0; i < n; i++) {
				o = order[i]
				got = (o in have) ? have[o] : "n"
				if (got != want[o])
					printf "  %s=%s (got: %s)\n", o, want[o], (o in have) ? o "=" have[o] : "unset"
			}
		}' "$KOUT/.config" "${frags[@]}") || die "[$tag] cannot check the config fragments"
	if [ -n "$bad" ]; then
		rm -f "$KOUT/.nvlab-config"
		die "[$tag] config fragment options not in the final .config $1 (missing dependency or unknown option):
$bad"
	fi
}

cfg_hash=$( (echo "$BASE_CONFIG $KMAKE_TC"; cat "${frags[@]}") | sha256sum | cut -d' ' -f1)
if [ ! -e "$KOUT/.config" ] || [ "$(cat "$KOUT/.nvlab-config" 2>/dev/null)" != "$cfg_hash" ]; then
	stage "$tag" "configuring ($BASE_CONFIG + ${frags[*]##*/}, log: $log)"
	run_logged "$tag" "$log" kmake "$BASE_CONFIG"
	run_logged "$tag" "$log" "$SRC/scripts/kconfig/merge_config.sh" -m -O "$KOUT" "$KOUT/.config" "${frags[@]}"
	run_logged "$tag" "$log" kmake olddefconfig
	echo "$cfg_hash" >"$KOUT/.nvlab-config"
fi
check_fragments "before the build"

targets=("${KERNEL_IMAGE##*/}")
if [ "$BASE_DTB" != qemu ]; then
	dtb_var=BASE_DTB_${KERNEL^^}
	targets+=("${!dtb_var}")
fi
grep -q '^CONFIG_MODULES=y' "$KOUT/.config" && targets+=(modules)
stage "$tag" "building ${targets[*]} (log: $log)"
run_progress "$tag" "$log" kmake "${targets[@]}"
# the build may have rewritten .config (syncconfig): check what it built with
check_fragments "after the build"

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
	run_logged "$tag" "$log" python3 "$TOP/scripts/rust-doctests.py" "$SRC" "$dt" "$TOP/tests/rust-6.4/examples.txt"
	run_logged "$tag" "$log" kmake M="$dt" rust_allowed_features=core_ffi_c,allocator_api modules
	run_logged "$tag" "$log" kmake M="$dt" INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
	# a module written in Linux 6.4 style (tests/rust-6.4/sample), unchanged
	s64=$OUT/rust-sample-64
	rm -rf "$s64" && cp -r "$TOP/tests/rust-6.4/sample" "$s64"
	run_logged "$tag" "$log" kmake M="$s64" modules
	run_logged "$tag" "$log" kmake M="$s64" INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
	# the lock benchmark (scripts/bench-rust-locks.sh), built out of tree
	bm=$OUT/rust-lock-bench
	rm -rf "$bm" && cp -r "$TOP/tests/guest/rust-lock-bench" "$bm"
	run_logged "$tag" "$log" kmake M="$bm" modules
	run_logged "$tag" "$log" kmake M="$bm" INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
fi
# every kernel with modules: the cell-holding consumer of the layout tests
if grep -q '^CONFIG_MODULES=y' "$KOUT/.config"; then
	ch=$OUT/nvmem-cell-holder
	rm -rf "$ch" && cp -r "$TOP/tests/guest/modules/nvmem-cell-holder" "$ch"
	run_logged "$tag" "$log" kmake M="$ch" modules
	run_logged "$tag" "$log" kmake M="$ch" INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
fi
cp "$KOUT/$KERNEL_IMAGE" "$OUT/${KERNEL_IMAGE##*/}"
stage "$tag" "done in $(elapsed "$t0"), log: $log"
