#![no_main]
//! Kontron sl28 VPD decoder and cell prediction.
use libfuzzer_sys::fuzz_target;
use nvmem_image::{cells, sl28};

fuzz_target!(|data: &[u8]| {
    if let Ok(img) = sl28::decode(data) {
        let _ = img.check();
    }
    let _ = cells::predict(
        cells::Layout::Sl28Vpd,
        data,
        &[],
        Some(1),
        Default::default(),
    );
});
