#!/usr/bin/env bash
# rust-compile-fail.sh: the compile-fail suite of the kernel Rust API
# (tests/rust-compile-fail, see its README). Every case is built as an
# out-of-tree module against the riscv64-virt kernel (ours, Rust on):
# pass_* must build, fail_* must fail with the diagnostic on their
# "// expect:" line. Needs that kernel built (scripts/build-kernel.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
load_board riscv64-virt ours
[ -e "$KOUT/rust/libkernel.rmeta" ] ||
	die "no Rust kernel build in $KOUT: run 'make kernel BOARD=riscv64-virt' first"
# The riscv64 target specification follows the configuration: compressed
# instructions only with CONFIG_RISCV_ISA_C (the generator is fed a
# minimal auto.conf each way), and the board's own target.json agrees
# with its .config.
gen=$KOUT/scripts/generate_rust_target
[ -x "$gen" ] || die "no $gen in the Rust kernel build"
for isa_c in y n; do
	conf="CONFIG_RISCV=y
CONFIG_64BIT=y"
	want='"+m,+a"'
	if [ "$isa_c" = y ]; then
		conf="$conf
CONFIG_RISCV_ISA_C=y"
		want='"+m,+a,+c"'
	fi
	got=$(printf '%s\n' "$conf" | "$gen" | sed -n 's/^ *"features": *\(.*\),$/\1/p')
	[ "$got" = "$want" ] ||
		die "generate_rust_target with CONFIG_RISCV_ISA_C=$isa_c: features $got, want $want"
done
board_c=$(grep -q '^CONFIG_RISCV_ISA_C=y' "$KOUT/.config" && echo ',+c' || true)
grep -q "\"features\": \"+m,+a$board_c\"" "$KOUT/rust/target.json" ||
	die "$KOUT/rust/target.json does not follow CONFIG_RISCV_ISA_C of $KOUT/.config"
stage rust-compile-fail "riscv64 target features follow CONFIG_RISCV_ISA_C"
# CONFIG_RUST_SYNC_SELFTEST=y builds the self-test in, but never its two
# negative modules (a lockdep report, a panic): lib/Makefile's object
# lists evaluated for =y and =m.
mk=$(mktemp)
trap 'rm -f "$mk"' EXIT
printf 'include lib/Makefile\nshow:\n\t@echo "y: $(obj-y)"; echo "m: $(obj-m)"\n' >"$mk"
for v in y m; do
	lists=$(make -s -C "$SRC" -f "$mk" show CONFIG_RUST_SYNC_SELFTEST=$v srctree=. 2>/dev/null)
	builtin=$(echo "$lists" | sed -n 's/^y: //p')
	modules=$(echo "$lists" | sed -n 's/^m: //p')
	for neg in rust_sync_selftest_inversion.o rust_sync_selftest_wrong_owner.o; do
		case " $builtin " in *" $neg "*)
			die "CONFIG_RUST_SYNC_SELFTEST=$v builds $neg into the kernel" ;;
		esac
		case " $modules " in *" $neg "*) ;; *)
			die "CONFIG_RUST_SYNC_SELFTEST=$v does not build $neg as a module" ;;
		esac
	done
done
stage rust-compile-fail "the negative self-tests are modules only, also with CONFIG_RUST_SYNC_SELFTEST=y"
cases=$TOP/tests/rust-compile-fail
work=$BUILD/rust-compile-fail
rm -rf "$work" && mkdir -p "$work"
fail=0 n=0
for f in "$cases"/*.rs; do
	name=$(basename "$f" .rs)
	n=$((n + 1))
	d=$work/$name
	mkdir -p "$d"
	cp "$f" "$d/$name.rs"
	echo "obj-m := $name.o" >"$d/Kbuild"
	log=$d/build.log
	if kmake M="$d" modules >"$log" 2>&1; then built=1; else built=0; fi
	case "$name" in
	pass_*)
		if [ "$built" = 1 ]; then
			echo "[rust-compile-fail] $name: builds (as it must)"
		else
			echo "[rust-compile-fail] $name: FAILED to build (log: $log)" >&2
			grep -E '^error' -A6 "$log" | head -n 30 >&2
			fail=1
		fi
		;;
	fail_*)
		want=$(sed -n 's|^// expect: ||p' "$f")
		[ -n "$want" ] || die "$f has no '// expect:' line"
		if [ "$built" = 1 ]; then
			echo "[rust-compile-fail] $name: BUILT, but must not (log: $log)" >&2
			fail=1
		elif grep -qF -- "$want" "$log"; then
			echo "[rust-compile-fail] $name: refused: $want"
		else
			echo "[rust-compile-fail] $name: refused, but not with '$want' (log: $log)" >&2
			grep -E '^error' -A6 "$log" | head -n 30 >&2
			fail=1
		fi
		;;
	*) die "$f: a case is named pass_* or fail_*" ;;
	esac
done
[ "$fail" = 0 ] || die "compile-fail suite: failures above"
stage rust-compile-fail "$n case(s) as expected"
