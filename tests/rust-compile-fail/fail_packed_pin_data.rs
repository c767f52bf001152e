// SPDX-License-Identifier: GPL-2.0
//! #[pin_data] on a packed struct would put the Mutex at an unaligned address.
// expect: error: #[pin_data] cannot be used on a #[repr(packed)] struct
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_packed_pin_data", license: b"GPL", }

#[pin_data]
#[repr(C, packed)]
struct Packed {
    a: u8,
    #[pin]
    m: Mutex<u32>,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _p = Box::pin_init(pin_init!(Packed { a: 1, m <- new_mutex!(1) }))?;
        Ok(M)
    }
}
