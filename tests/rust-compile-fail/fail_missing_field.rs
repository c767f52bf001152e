// SPDX-License-Identifier: GPL-2.0
//! pin_init! without one of the fields.
// expect: error[E0063]: missing field `n`
use kernel::{new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_missing_field", license: b"GPL", }

#[pin_data]
struct Foo {
    #[pin]
    m: Mutex<u32>,
    n: u32,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _f = Box::pin_init(pin_init!(Foo { m <- new_mutex!(1) }))?;
        Ok(M)
    }
}
