// SPDX-License-Identifier: GPL-2.0
//! A plain Drop impl on a #[pin_data] struct.
// expect: error[E0119]: conflicting implementations of trait `_::FooMustNotImplDrop_use_PinnedDrop` for type `Foo`
use kernel::{prelude::*, sync::Mutex};

module! { type: M, name: b"fail_drop_on_pin_data", license: b"GPL", }

#[pin_data]
struct Foo {
    #[pin]
    m: Mutex<u32>,
}

impl Drop for Foo {
    fn drop(&mut self) {}
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        Ok(M)
    }
}
