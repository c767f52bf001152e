// SPDX-License-Identifier: GPL-2.0
//! Moving a pinned lock: swapping two stack-pinned mutexes.
// expect: error[E0596]: cannot borrow data in dereference of `Pin<&mut Lock<u32, MutexBackend>>` as mutable
use kernel::{new_mutex, prelude::*, stack_pin_init};

module! { type: M, name: b"fail_move_pinned_lock", license: b"GPL", }

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        stack_pin_init!(let a = new_mutex!(0u32));
        stack_pin_init!(let b = new_mutex!(1u32));
        core::mem::swap(&mut *a, &mut *b);
        Ok(M)
    }
}
