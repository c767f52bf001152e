#!/usr/bin/env bash
# test.sh [all|ours|ref]: host checks, then build and boot-test every board
# of the matrix with pytest + labgrid.
#   ours: every board on our patched 6.1; ref: riscv64-virt on the 6.12
#   reference (tests marked "patched" are skipped there); all: both.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
which=${1:-all}
case "$which" in
ours) matrix="riscv64-virt:ours ast2600-evb:ours" ;;
ref) matrix="riscv64-virt:ref" ;;
all) matrix="riscv64-virt:ours ast2600-evb:ours riscv64-virt:ref" ;;
*) die "unknown KERNEL '$which'; choose one of: ours ref (or nothing for both)" ;;
esac
t_all=$(date +%s)
failed=()

stage test "host checks"
if [ -f "$TOP/Cargo.toml" ]; then
	(cd "$TOP" && host_cargo fmt --check && host_cargo clippy -q --all-targets -- -D warnings && host_cargo test -q) ||
		failed+=("host: cargo")
fi
"$VENV/bin/pytest" -c "$TOP/pytest.ini" --rootdir "$TOP" -q "$TOP/tests/host" || failed+=("host: pytest tests/host")
for s in "$TOP"/scripts/*.sh "$TOP"/guest/init "$TOP"/guest/payloads/*; do
	bash -n "$s" || failed+=("host: syntax of $s")
done
# the kernel series: checkpatch --strict, maintainers, sign-offs
# (make check-series also builds every step)
"$TOP/scripts/check-series.sh" || failed+=("host: kernel-patches series check")

# The reference run boots our riscv64 kernel too (tests/boot/test_hwprobe.py
# compares the answers of both on the same board options).
case " $matrix " in
*" riscv64-virt:ref "*)
	case " $matrix " in
	*" riscv64-virt:ours "*) ;;
	*) "$TOP/scripts/build-board.sh" riscv64-virt ours ;;
	esac
	;;
esac

dtbs=()
for entry in $matrix; do
	b=${entry%%:*} k=${entry#*:}
	"$TOP/scripts/build-board.sh" "$b" "$k"
	out=$BUILD/$b/$k
	dtbs+=("$out/board.dtb")
	logdir=$out/test-logs
	rm -rf "$logdir" && mkdir -p "$logdir"
	kver=$(source_version "$k")
	echo "Linux $kver" >"$logdir/kernel-version.txt"
	stage "test $b $k" "booting and testing Linux $kver (console: $logdir/console_main)"
	t0=$(date +%s)
	if LG_OUT=$out LG_IMAGES=$BUILD/images NVLAB_BOARD=$b NVLAB_KERNEL=$k NVLAB_KERNEL_VERSION=${kver%% *} \
		"$VENV/bin/pytest" -c "$TOP/pytest.ini" --rootdir "$TOP" "$TOP/tests/boot" \
		--lg-env "$TOP/tests/env/$b.yaml" --lg-log "$logdir" --nvlab-kernel "$k" \
		--junitxml "$logdir/junit.xml" -q --durations=5 2>&1 | tee "$logdir/pytest.log"; [ "${PIPESTATUS[0]}" = 0 ]; then
		stage "test $b $k" "passed (Linux $kver) in $(elapsed "$t0"), boot to shell $(cat "$logdir/boot-to-shell.txt" 2>/dev/null || echo ?) s"
	else
		stage "test $b $k" "FAILED in $(elapsed "$t0") (logs: $logdir)"
		failed+=("$b:$k")
	fi
done

# misuse of the kernel Rust API must not compile (against the riscv64-virt
# kernel of this run, which has Rust)
case " $matrix " in
*" riscv64-virt:ours "*) "$TOP/scripts/rust-compile-fail.sh" || failed+=("rust: compile-fail suite") ;;
esac

# the layout binding schemas (dtschema), their examples, and the device
# trees the boards booted with (dts/ overlays applied)
"$TOP/scripts/check-bindings.sh" "${dtbs[@]}" || failed+=("bindings: dtschema")

if [ ${#failed[@]} -gt 0 ]; then
	stage test "FAILED: ${failed[*]} (total $(elapsed "$t_all"))"
	exit 1
fi
stage test "all passed: $matrix (total $(elapsed "$t_all"))"
