// SPDX-License-Identifier: GPL-2.0
//! An ioctl type wider than its 8 bits, in a constant: the build stops
//! (at run time the same call panics rather than encode another command).
// expect: ioctl type out of range
use kernel::prelude::*;

module! { type: M, name: "fail_ioctl_out_of_range", license: "GPL", }

const BAD: u32 = kernel::ioctl::_IO(0x100, 1);

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        pr_info!("{}\n", BAD);
        Ok(M)
    }
}
