// SPDX-License-Identifier: GPL-2.0
//! Moving a lock out of its pinned box.
// expect: error[E0277]: `PhantomPinned` cannot be unpinned
use kernel::{new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_move_out_of_pinned_box", license: b"GPL", }

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let b: Pin<Box<Mutex<u32>>> = Box::pin_init(new_mutex!(0))?;
        let _moved: Mutex<u32> = *Pin::into_inner(b);
        Ok(M)
    }
}
