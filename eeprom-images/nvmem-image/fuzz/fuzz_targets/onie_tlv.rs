#![no_main]
//! ONIE TLV decoder, the layout's cell prediction and auto-detection.
use libfuzzer_sys::fuzz_target;
use nvmem_image::{cells, inspect, onie};

fuzz_target!(|data: &[u8]| {
    if let Ok(img) = onie::decode(data) {
        // every TLV the decoder reports lies inside the input
        for t in &img.tlvs {
            assert!(t.value_offset + t.len <= data.len());
        }
        let _ = img.check();
    }
    let _ = cells::predict(
        cells::Layout::OnieTlv,
        data,
        &[],
        Some(3),
        Default::default(),
    );
    let _ = inspect::inspect(data, inspect::Format::Auto).map(|i| i.to_string());
});
