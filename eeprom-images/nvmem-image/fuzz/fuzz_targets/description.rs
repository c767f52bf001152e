#![no_main]
//! Description parser (with its defects, expected outcome and layout node)
//! and the in-memory builders (everything but mkenvimage and flash images,
//! which read other files), defects applied.
use libfuzzer_sys::fuzz_target;
use nvmem_image::desc::{self, Description, Spec};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((spec, extras)) = desc::parse_full(text) {
        let small = match &spec {
            Spec::OnieTlv { size, .. } | Spec::Sl28Vpd { size, .. } => size.unwrap_or(0) <= 1 << 20,
            Spec::Blob { size, .. } => *size <= 1 << 20,
            _ => false,
        };
        if small {
            let d = Description {
                path: "fuzz.toml".into(),
                spec,
                extras,
            };
            let _ = d.build();
            let _ = d.fixed_cells();
        }
    }
});
