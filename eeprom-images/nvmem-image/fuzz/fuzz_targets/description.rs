#![no_main]
//! Description parser (with its defects, expected outcome and layout node)
//! and the in-memory builders (everything but mkenvimage and flash images,
//! which read other files), defects applied, for every format.
use libfuzzer_sys::fuzz_target;
use nvmem_image::desc::{self, Description, Spec};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((spec, extras)) = desc::parse_full(text) {
        if small(text, &spec) {
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

/// Whether to build: not U-Boot environments (mkenvimage) nor flash
/// images (their partitions' files), and only images of at most 1 MiB by
/// the description's `size` (every format's key; absent: natural size).
/// Read from the text, so formats behind the ImageFormat trait, whose
/// data the target cannot see, are built too.
fn small(text: &str, spec: &Spec) -> bool {
    if matches!(spec, Spec::UbootEnv { .. } | Spec::Flash { .. }) {
        return false;
    }
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    match table.get("size") {
        None => true,
        Some(v) => v.as_integer().is_some_and(|n| (0..=1 << 20).contains(&n)),
    }
}
