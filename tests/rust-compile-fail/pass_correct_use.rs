// SPDX-License-Identifier: GPL-2.0
//! Control case: the same API used correctly builds.
use kernel::{new_condvar, new_mutex, prelude::*, stack_pin_init, sync::{CondVar, Mutex}};

module! { type: M, name: b"pass_correct_use", license: b"GPL", }

#[pin_data(PinnedDrop)]
struct Foo {
    #[pin]
    m: Mutex<u32>,
    #[pin]
    cv: CondVar,
    n: u32,
}

#[pinned_drop]
impl PinnedDrop for Foo {
    fn drop(self: Pin<&mut Self>) {}
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let f = Box::pin_init(pin_init!(Foo { m <- new_mutex!(1), cv <- new_condvar!(), n: 2 }))?;
        stack_pin_init!(let a = new_mutex!(0u32));
        stack_pin_init!(let b = new_mutex!(1u32));
        core::mem::swap(&mut *a.lock(), &mut *b.lock());
        let g = f.m.lock();
        drop(g);
        Ok(M)
    }
}
