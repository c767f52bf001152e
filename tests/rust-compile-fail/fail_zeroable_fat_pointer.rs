// SPDX-License-Identifier: GPL-2.0
//! A zeroed `*const dyn Trait` would have a null vtable pointer: only
//! pointers to sized types are `Zeroable`.
// expect: the trait `Sized` is not implemented for `dyn Sync`
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_zeroable_fat_pointer", license: b"GPL", }

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _z: Box<*const dyn Sync> = Box::init(kernel::init::zeroed())?;
        Ok(M)
    }
}
