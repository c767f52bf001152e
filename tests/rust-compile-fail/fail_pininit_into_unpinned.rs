// SPDX-License-Identifier: GPL-2.0
//! A PinInit (a mutex) into a field that is not #[pin].
// expect: MutexBackend>>: Init<Lock<u32, MutexBackend>, _>` is not satisfied
use kernel::{new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: b"fail_pininit_into_unpinned", license: b"GPL", }

#[pin_data]
struct Foo {
    m: Mutex<u32>,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let _f = Box::pin_init(pin_init!(Foo { m <- new_mutex!(1) }))?;
        Ok(M)
    }
}
