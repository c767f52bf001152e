// SPDX-License-Identifier: GPL-2.0
//! pin_init! on wide structs: 128 plain fields, and 64 fields built with
//! `<-` (the 6.4 macros handle both; ours once stopped at 32).
use kernel::{new_mutex, prelude::*, sync::Mutex};

module! { type: M, name: "pass_many_fields", license: "GPL", }

#[pin_data]
struct Wide {
    f0: u32,
    f1: u32,
    f2: u32,
    f3: u32,
    f4: u32,
    f5: u32,
    f6: u32,
    f7: u32,
    f8: u32,
    f9: u32,
    f10: u32,
    f11: u32,
    f12: u32,
    f13: u32,
    f14: u32,
    f15: u32,
    f16: u32,
    f17: u32,
    f18: u32,
    f19: u32,
    f20: u32,
    f21: u32,
    f22: u32,
    f23: u32,
    f24: u32,
    f25: u32,
    f26: u32,
    f27: u32,
    f28: u32,
    f29: u32,
    f30: u32,
    f31: u32,
    f32: u32,
    f33: u32,
    f34: u32,
    f35: u32,
    f36: u32,
    f37: u32,
    f38: u32,
    f39: u32,
    f40: u32,
    f41: u32,
    f42: u32,
    f43: u32,
    f44: u32,
    f45: u32,
    f46: u32,
    f47: u32,
    f48: u32,
    f49: u32,
    f50: u32,
    f51: u32,
    f52: u32,
    f53: u32,
    f54: u32,
    f55: u32,
    f56: u32,
    f57: u32,
    f58: u32,
    f59: u32,
    f60: u32,
    f61: u32,
    f62: u32,
    f63: u32,
    f64: u32,
    f65: u32,
    f66: u32,
    f67: u32,
    f68: u32,
    f69: u32,
    f70: u32,
    f71: u32,
    f72: u32,
    f73: u32,
    f74: u32,
    f75: u32,
    f76: u32,
    f77: u32,
    f78: u32,
    f79: u32,
    f80: u32,
    f81: u32,
    f82: u32,
    f83: u32,
    f84: u32,
    f85: u32,
    f86: u32,
    f87: u32,
    f88: u32,
    f89: u32,
    f90: u32,
    f91: u32,
    f92: u32,
    f93: u32,
    f94: u32,
    f95: u32,
    f96: u32,
    f97: u32,
    f98: u32,
    f99: u32,
    f100: u32,
    f101: u32,
    f102: u32,
    f103: u32,
    f104: u32,
    f105: u32,
    f106: u32,
    f107: u32,
    f108: u32,
    f109: u32,
    f110: u32,
    f111: u32,
    f112: u32,
    f113: u32,
    f114: u32,
    f115: u32,
    f116: u32,
    f117: u32,
    f118: u32,
    f119: u32,
    f120: u32,
    f121: u32,
    f122: u32,
    f123: u32,
    f124: u32,
    f125: u32,
    f126: u32,
    f127: u32,
}

#[pin_data]
struct Locks {
    #[pin]
    m0: Mutex<u32>,
    #[pin]
    m1: Mutex<u32>,
    #[pin]
    m2: Mutex<u32>,
    #[pin]
    m3: Mutex<u32>,
    #[pin]
    m4: Mutex<u32>,
    #[pin]
    m5: Mutex<u32>,
    #[pin]
    m6: Mutex<u32>,
    #[pin]
    m7: Mutex<u32>,
    #[pin]
    m8: Mutex<u32>,
    #[pin]
    m9: Mutex<u32>,
    #[pin]
    m10: Mutex<u32>,
    #[pin]
    m11: Mutex<u32>,
    #[pin]
    m12: Mutex<u32>,
    #[pin]
    m13: Mutex<u32>,
    #[pin]
    m14: Mutex<u32>,
    #[pin]
    m15: Mutex<u32>,
    #[pin]
    m16: Mutex<u32>,
    #[pin]
    m17: Mutex<u32>,
    #[pin]
    m18: Mutex<u32>,
    #[pin]
    m19: Mutex<u32>,
    #[pin]
    m20: Mutex<u32>,
    #[pin]
    m21: Mutex<u32>,
    #[pin]
    m22: Mutex<u32>,
    #[pin]
    m23: Mutex<u32>,
    #[pin]
    m24: Mutex<u32>,
    #[pin]
    m25: Mutex<u32>,
    #[pin]
    m26: Mutex<u32>,
    #[pin]
    m27: Mutex<u32>,
    #[pin]
    m28: Mutex<u32>,
    #[pin]
    m29: Mutex<u32>,
    #[pin]
    m30: Mutex<u32>,
    #[pin]
    m31: Mutex<u32>,
    #[pin]
    m32: Mutex<u32>,
    #[pin]
    m33: Mutex<u32>,
    #[pin]
    m34: Mutex<u32>,
    #[pin]
    m35: Mutex<u32>,
    #[pin]
    m36: Mutex<u32>,
    #[pin]
    m37: Mutex<u32>,
    #[pin]
    m38: Mutex<u32>,
    #[pin]
    m39: Mutex<u32>,
    #[pin]
    m40: Mutex<u32>,
    #[pin]
    m41: Mutex<u32>,
    #[pin]
    m42: Mutex<u32>,
    #[pin]
    m43: Mutex<u32>,
    #[pin]
    m44: Mutex<u32>,
    #[pin]
    m45: Mutex<u32>,
    #[pin]
    m46: Mutex<u32>,
    #[pin]
    m47: Mutex<u32>,
    #[pin]
    m48: Mutex<u32>,
    #[pin]
    m49: Mutex<u32>,
    #[pin]
    m50: Mutex<u32>,
    #[pin]
    m51: Mutex<u32>,
    #[pin]
    m52: Mutex<u32>,
    #[pin]
    m53: Mutex<u32>,
    #[pin]
    m54: Mutex<u32>,
    #[pin]
    m55: Mutex<u32>,
    #[pin]
    m56: Mutex<u32>,
    #[pin]
    m57: Mutex<u32>,
    #[pin]
    m58: Mutex<u32>,
    #[pin]
    m59: Mutex<u32>,
    #[pin]
    m60: Mutex<u32>,
    #[pin]
    m61: Mutex<u32>,
    #[pin]
    m62: Mutex<u32>,
    #[pin]
    m63: Mutex<u32>,
}

struct M;
impl kernel::Module for M {
    fn init(_m: &'static ThisModule) -> Result<Self> {
        let w = Box::pin_init(pin_init!(Wide { f0: 0, f1: 1, f2: 2, f3: 3, f4: 4, f5: 5, f6: 6, f7: 7, f8: 8, f9: 9, f10: 10, f11: 11, f12: 12, f13: 13, f14: 14, f15: 15, f16: 16, f17: 17, f18: 18, f19: 19, f20: 20, f21: 21, f22: 22, f23: 23, f24: 24, f25: 25, f26: 26, f27: 27, f28: 28, f29: 29, f30: 30, f31: 31, f32: 32, f33: 33, f34: 34, f35: 35, f36: 36, f37: 37, f38: 38, f39: 39, f40: 40, f41: 41, f42: 42, f43: 43, f44: 44, f45: 45, f46: 46, f47: 47, f48: 48, f49: 49, f50: 50, f51: 51, f52: 52, f53: 53, f54: 54, f55: 55, f56: 56, f57: 57, f58: 58, f59: 59, f60: 60, f61: 61, f62: 62, f63: 63, f64: 64, f65: 65, f66: 66, f67: 67, f68: 68, f69: 69, f70: 70, f71: 71, f72: 72, f73: 73, f74: 74, f75: 75, f76: 76, f77: 77, f78: 78, f79: 79, f80: 80, f81: 81, f82: 82, f83: 83, f84: 84, f85: 85, f86: 86, f87: 87, f88: 88, f89: 89, f90: 90, f91: 91, f92: 92, f93: 93, f94: 94, f95: 95, f96: 96, f97: 97, f98: 98, f99: 99, f100: 100, f101: 101, f102: 102, f103: 103, f104: 104, f105: 105, f106: 106, f107: 107, f108: 108, f109: 109, f110: 110, f111: 111, f112: 112, f113: 113, f114: 114, f115: 115, f116: 116, f117: 117, f118: 118, f119: 119, f120: 120, f121: 121, f122: 122, f123: 123, f124: 124, f125: 125, f126: 126, f127: 127 }))?;
        let l = Box::pin_init(pin_init!(Locks { m0 <- new_mutex!(0), m1 <- new_mutex!(1), m2 <- new_mutex!(2), m3 <- new_mutex!(3), m4 <- new_mutex!(4), m5 <- new_mutex!(5), m6 <- new_mutex!(6), m7 <- new_mutex!(7), m8 <- new_mutex!(8), m9 <- new_mutex!(9), m10 <- new_mutex!(10), m11 <- new_mutex!(11), m12 <- new_mutex!(12), m13 <- new_mutex!(13), m14 <- new_mutex!(14), m15 <- new_mutex!(15), m16 <- new_mutex!(16), m17 <- new_mutex!(17), m18 <- new_mutex!(18), m19 <- new_mutex!(19), m20 <- new_mutex!(20), m21 <- new_mutex!(21), m22 <- new_mutex!(22), m23 <- new_mutex!(23), m24 <- new_mutex!(24), m25 <- new_mutex!(25), m26 <- new_mutex!(26), m27 <- new_mutex!(27), m28 <- new_mutex!(28), m29 <- new_mutex!(29), m30 <- new_mutex!(30), m31 <- new_mutex!(31), m32 <- new_mutex!(32), m33 <- new_mutex!(33), m34 <- new_mutex!(34), m35 <- new_mutex!(35), m36 <- new_mutex!(36), m37 <- new_mutex!(37), m38 <- new_mutex!(38), m39 <- new_mutex!(39), m40 <- new_mutex!(40), m41 <- new_mutex!(41), m42 <- new_mutex!(42), m43 <- new_mutex!(43), m44 <- new_mutex!(44), m45 <- new_mutex!(45), m46 <- new_mutex!(46), m47 <- new_mutex!(47), m48 <- new_mutex!(48), m49 <- new_mutex!(49), m50 <- new_mutex!(50), m51 <- new_mutex!(51), m52 <- new_mutex!(52), m53 <- new_mutex!(53), m54 <- new_mutex!(54), m55 <- new_mutex!(55), m56 <- new_mutex!(56), m57 <- new_mutex!(57), m58 <- new_mutex!(58), m59 <- new_mutex!(59), m60 <- new_mutex!(60), m61 <- new_mutex!(61), m62 <- new_mutex!(62), m63 <- new_mutex!(63) }))?;
        if w.f127 != 127 || *l.m63.lock() != 63 {
            return Err(EINVAL);
        }
        Ok(M)
    }
}
