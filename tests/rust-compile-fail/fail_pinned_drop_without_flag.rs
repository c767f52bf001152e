// SPDX-License-Identifier: GPL-2.0
//! #[pinned_drop] on a struct declared without #[pin_data(PinnedDrop)].
// expect: error[E0119]: conflicting implementations of trait `_::FooPinnedDrop_needs_pin_data_PinnedDrop` for type `Foo`
use kernel::prelude::*;

module! { type: M, name: b"fail_pinned_drop_without_flag", license: b"GPL", }

#[pin_data]
struct Foo {
    n: u32,
}

#[pinned_drop]
impl PinnedDrop for Foo {
    fn drop(self: Pin<&mut Self>) {}
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        Ok(M)
    }
}
