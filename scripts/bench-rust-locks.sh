#!/usr/bin/env bash
# bench-rust-locks.sh: uncontended lock+unlock of the Rust Mutex and SpinLock
# against C mutex_lock/spin_lock on riscv64-virt (our 6.1 with Rust), in the
# same kernel and run (tests/guest/rust-lock-bench, guest/payloads/
# rust-lock-bench). Prints ns per pair, the Rust/C ratio (goal <= 1.05) and
# what one extra call to an empty C function costs, from C and from Rust.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$TOP/scripts/build-board.sh" riscv64-virt ours
out=$("$TOP/scripts/boot.sh" run riscv64-virt ours rust-lock-bench)
lines=$(echo "$out" | grep '^rust-lock-bench ' || true)
[ "$(echo "$lines" | grep -c .)" = 3 ] || die "no figures from the guest:
$out"
echo "$lines" | awk '{
	c = $4 / 1000; r = $6 / 1000
	if ($2 == "call")
		printf "[bench] one call to an empty C function: from C %.1f ns, from Rust %.1f ns (%d x %d)\n", c, r, $8, $10
	else
		printf "[bench] %-8s lock+unlock, uncontended: C %.1f ns, Rust %.1f ns per pair, Rust/C %.3f (median of %d rounds x %d)\n", $2, c, r, r / c, $10, $8
}'
echo "[bench] riscv64-virt under TCG, kernel with lockdep (PROVE_LOCKING), DEBUG_SPINLOCK and KASAN: absolute figures are those of that debug kernel"
