// SPDX-License-Identifier: GPL-2.0
//! An early Ok(__InitOk) in a field of init! would leave the struct half built.
// expect: expected struct `<M as Module>::init::__InitOk`, found struct
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_early_return_init", license: b"GPL", }

struct Pair {
    a: u32,
    b: u32,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _p = Box::init(init!(Pair { a: { return Ok(__InitOk); }, b: 2 }))?;
        Ok(M)
    }
}
