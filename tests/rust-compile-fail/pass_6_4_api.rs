// SPDX-License-Identifier: GPL-2.0
//! What 6.4 code writes and the series must accept: string literals in
//! module! (and an alias array), names from the 6.4 prelude, Arc::pin_init
//! giving an Arc, an Init-only initialiser used where a PinInit is wanted,
//! stack_pin_init!(let x = x), stack_try_pin_init! typed with the value's
//! type, Opaque-based types that are Unpin, CStr used as bytes.
use kernel::{
    init::{self, PinInit},
    new_mutex, stack_pin_init, stack_try_pin_init,
    sync::{Arc, LockClassKey, Mutex, UniqueArc},
    task::Task,
    types::{ARef, Opaque},
};
use kernel::prelude::*;

module! {
    type: M,
    name: "pass_6_4_api",
    author: "nvmem-lab",
    description: "6.4 API use",
    license: "GPL",
    alias: ["nvlab-a", "nvlab-b"],
}

#[pin_data]
struct Counter {
    #[pin]
    n: Mutex<u32>,
}

fn unpin<T: Unpin>() {}

fn takes_pin_init<T>(_: impl PinInit<T>) {}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let c: Arc<Counter> = Arc::pin_init(pin_init!(Counter { n <- new_mutex!(1) }))?;
        let zero: Arc<u64> = Arc::init(init::zeroed())?;
        takes_pin_init::<u64>(init::zeroed());
        let m = new_mutex!(3u32);
        stack_pin_init!(let m = m);
        stack_try_pin_init!(let t: Counter = try_pin_init!(Counter { n <- new_mutex!(2) }? Error));
        let t = t?;
        unpin::<Opaque<u64>>();
        unpin::<Arc<u64>>();
        unpin::<ARef<Task>>();
        unpin::<Task>();
        unpin::<UniqueArc<u64>>();
        unpin::<LockClassKey>();
        let name = kernel::c_str!("pass");
        if !name.starts_with(b"pa") || *c.n.lock() + *m.lock() + *t.n.lock() + *zero as u32 != 6 {
            return Err(EINVAL);
        }
        pr_notice!("{}\n", fmt!("{}", name));
        Ok(M)
    }
}
