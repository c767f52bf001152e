// SPDX-License-Identifier: GPL-2.0
//! An early Ok(__InitOk) in a field of try_init! would leave the struct half built.
// expect: expected struct `<M as Module>::init::__InitOk`, found struct
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_early_return_try_init", license: b"GPL", }

struct Pair {
    a: u32,
    b: u32,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _p = Box::init(try_init!(Pair { a: 1, b: { return Ok(__InitOk); } }? Error))?;
        Ok(M)
    }
}
