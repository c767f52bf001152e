// SPDX-License-Identifier: GPL-2.0
//! Uncontended lock+unlock cost: Rust `Mutex`/`SpinLock` against the C
//! calls they wrap. Many short rounds, C and Rust back to back in each
//! (the order alternating), so that a slow patch of the emulated machine
//! hits both sides of a round alike; every round is printed and the host
//! (scripts/bench-rust-locks.sh) takes the per-round ratios apart.

use kernel::{new_mutex, new_spinlock, prelude::*, sync::{Mutex, SpinLock}};

module! {
    type: Bench,
    name: "rust_lock_bench",
    license: "GPL",
}

extern "C" {
    fn bench_now() -> u64;
    fn bench_c_mutex(iters: u32) -> u64;
    fn bench_c_spin(iters: u32) -> u64;
    fn bench_c_calls(iters: u32) -> u64;
    fn bench_nop();
}

const ITERS: u32 = 2_000;
const ROUNDS: usize = 101;

fn rust_mutex(m: &Mutex<u64>) -> u64 {
    // SAFETY: plain C function.
    let t0 = unsafe { bench_now() };
    for _ in 0..ITERS {
        drop(m.lock());
    }
    // SAFETY: plain C function.
    unsafe { bench_now() - t0 }
}

fn rust_spin(s: &SpinLock<u64>) -> u64 {
    // SAFETY: plain C function.
    let t0 = unsafe { bench_now() };
    for _ in 0..ITERS {
        drop(s.lock());
    }
    // SAFETY: plain C function.
    unsafe { bench_now() - t0 }
}

fn rust_calls() -> u64 {
    // SAFETY: plain C function.
    let t0 = unsafe { bench_now() };
    for _ in 0..ITERS {
        // SAFETY: an empty C function.
        unsafe { bench_nop() };
    }
    // SAFETY: plain C function.
    unsafe { bench_now() - t0 }
}

struct Bench;

impl kernel::Module for Bench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let m = Box::pin_init(new_mutex!(0u64, "rust_lock_bench_m"))?;
        let s = Box::pin_init(new_spinlock!(0u64, "rust_lock_bench_s"))?;
        let (mut cm, mut rm, mut cs, mut rs, mut cc, mut rc) =
            ([0; ROUNDS], [0; ROUNDS], [0; ROUNDS], [0; ROUNDS], [0; ROUNDS], [0; ROUNDS]);
        for i in 0..ROUNDS {
            // Alternate the order so drifts hit both sides alike.
            // SAFETY: plain C functions.
            unsafe {
                if i % 2 == 0 {
                    cm[i] = bench_c_mutex(ITERS);
                    rm[i] = rust_mutex(&m);
                    cs[i] = bench_c_spin(ITERS);
                    rs[i] = rust_spin(&s);
                    cc[i] = bench_c_calls(ITERS);
                    rc[i] = rust_calls();
                } else {
                    rm[i] = rust_mutex(&m);
                    cm[i] = bench_c_mutex(ITERS);
                    rs[i] = rust_spin(&s);
                    cs[i] = bench_c_spin(ITERS);
                    rc[i] = rust_calls();
                    cc[i] = bench_c_calls(ITERS);
                }
            }
        }
        for (what, c, r) in [("mutex", &cm, &rm), ("spinlock", &cs, &rs), ("call", &cc, &rc)] {
            for i in 0..ROUNDS {
                pr_info!(
                    "rust-lock-bench {} round {} c_ns {} rust_ns {} iters {}\n",
                    what,
                    i,
                    c[i],
                    r[i],
                    ITERS
                );
            }
        }
        Ok(Bench)
    }
}
