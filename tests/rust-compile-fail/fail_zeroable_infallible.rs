// SPDX-License-Identifier: GPL-2.0
//! Infallible has no values, so no all-zero value either.
// expect: error[E0277]: the trait bound `Infallible: Zeroable` is not satisfied
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_zeroable_infallible", license: b"GPL", }

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _z: Box<core::convert::Infallible> = Box::init(kernel::init::zeroed())?;
        Ok(M)
    }
}
