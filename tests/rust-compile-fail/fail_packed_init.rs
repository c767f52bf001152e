// SPDX-License-Identifier: GPL-2.0
//! init! on a packed struct would write a u64 field through an unaligned pointer.
// expect: reference to packed field is unaligned
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_packed_init", license: b"GPL", }

#[repr(packed)]
struct Packed {
    a: u8,
    b: u64,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _p = Box::init(init!(Packed { a: 1, b: 2 }))?;
        Ok(M)
    }
}
