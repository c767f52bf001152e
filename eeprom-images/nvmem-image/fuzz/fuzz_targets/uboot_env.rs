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
        for counter in [false, true] {
            let _ = cells::predict(
                cells::Layout::UbootEnv(kind, counter),
                data,
                &[],
                Some(2),
                uboot::Geometry::default(),
            );
        }
    }
    // two redundant copies, as the layout reads them with env-redundant-offset
    if data.len() >= 12 {
        let geo = uboot::Geometry {
            env_size: None,
            redundant_offset: Some(data.len() / 2),
        };
        for counter in [false, true] {
            let _ = cells::predict(
                cells::Layout::UbootEnv(uboot::Kind::Redundant, counter),
                data,
                &[],
                Some(-1),
                geo,
            );
        }
    }
});
