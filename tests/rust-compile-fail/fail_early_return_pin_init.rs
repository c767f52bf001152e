// SPDX-License-Identifier: GPL-2.0
//! An early Ok(__InitOk) in a field of pin_init! would skip the other fields.
// expect: expected struct `<M as Module>::init::__InitOk`, found struct
use kernel::{init::Zeroable, new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_early_return_pin_init", license: b"GPL", }

#[pin_data]
struct Foo {
    #[pin]
    m: Mutex<u32>,
    n: u32,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _f = Box::pin_init(pin_init!(Foo { n: { return Ok(__InitOk); }, m <- new_mutex!(1) }))?;
        Ok(M)
    }
}
