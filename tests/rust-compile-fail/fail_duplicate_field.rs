// SPDX-License-Identifier: GPL-2.0
//! pin_init! naming a field twice.
// expect: error[E0062]: field `n` specified more than once
use kernel::{new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_duplicate_field", license: b"GPL", }

#[pin_data]
struct Foo {
    #[pin]
    m: Mutex<u32>,
    n: u32,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _f = Box::pin_init(pin_init!(Foo { m <- new_mutex!(1), n: 1, n: 2 }))?;
        Ok(M)
    }
}
