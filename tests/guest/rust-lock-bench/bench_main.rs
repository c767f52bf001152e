// SPDX-License-Identifier: GPL-2.0
//! Uncontended lock+unlock cost: Rust `Mutex`/`SpinLock` against the C
//! calls they wrap, measured alternately in rounds; medians per pair.

use kernel::{new_mutex, new_spinlock, prelude::*, sync::{Mutex, SpinLock}};

module! {
    type: Bench,
    name: b"rust_lock_bench",
    license: b"GPL",
}

extern "C" {
    fn bench_now() -> u64;
    fn bench_c_mutex(iters: u32) -> u64;
    fn bench_c_spin(iters: u32) -> u64;
    fn bench_c_calls(iters: u32) -> u64;
    fn bench_nop();
}

const ITERS: u32 = 20_000;
const ROUNDS: usize = 9;

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

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Picoseconds per iteration, printed as ns with three decimals.
fn ps(total_ns: u64) -> u64 {
    total_ns * 1000 / u64::from(ITERS)
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
        for (what, c, r) in [
            ("mutex", ps(median(&mut cm)), ps(median(&mut rm))),
            ("spinlock", ps(median(&mut cs)), ps(median(&mut rs))),
            ("call", ps(median(&mut cc)), ps(median(&mut rc))),
        ] {
            pr_info!(
                "rust-lock-bench {} c_ps {} rust_ps {} iters {} rounds {}\n",
                what,
                c,
                r,
                ITERS,
                ROUNDS
            );
        }
        Ok(Bench)
    }
}
