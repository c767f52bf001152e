// SPDX-License-Identifier: GPL-2.0
//! A lock guard must stay on the thread that took the lock.
// expect: error[E0277]: `*mut ()` cannot be sent between threads safely
use kernel::{new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_guard_sent", license: b"GPL", }

fn needs_send<T: Send>(_: T) {}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let b: Pin<Box<Mutex<u32>>> = Box::pin_init(new_mutex!(0))?;
        needs_send(b.lock());
        Ok(M)
    }
}
