#![no_main]
//! U-Boot environment decoder (single, redundant, two copies) and the
//! u-boot,env layout's cell prediction.
use libfuzzer_sys::fuzz_target;
use nvmem_image::{cells, uboot};

fuzz_target!(|data: &[u8]| {
    if let Ok(img) = uboot::decode(data, None) {
        for c in &img.copies {
            for v in &c.vars {
                assert!(v.value_offset + v.value_len <= data.len());
            }
        }
        let _ = img.check();
    }
    for kind in [uboot::Kind::Single, uboot::Kind::Redundant] {
        let _ = cells::predict(cells::Layout::UbootEnv(kind), data, &[], Some(2));
    }
});
