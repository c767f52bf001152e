//! `dump`: every image, ours, mkenvimage's, damaged or random, gives a
//! description that builds the same bytes; well-formed images are described
//! in their format's terms, not as a blob.

use nvmem_image::desc::{self, Description};
use nvmem_image::dump::dump;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build_text(text: &str) -> Vec<u8> {
    Description::from_text(Path::new("<test>"), text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .build()
        .unwrap()
}

fn descriptions() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 20, "descriptions in {}", dir.display());
    v
}

/// Each committed description's image dumps to a description that rebuilds
/// it; the ones whose format a description can say come back in it.
#[test]
fn every_committed_image_round_trips() {
    for p in descriptions() {
        let d = Description::load(&p).unwrap();
        let img = d.build().unwrap();
        let out = dump(&img).unwrap();
        assert_eq!(build_text(&out.toml), img, "{}:\n{}", p.display(), out.toml);
        let want = match &d.spec {
            desc::Spec::OnieTlv { .. } => "onie-tlv",
            desc::Spec::Sl28Vpd { .. } => "sl28-vpd",
            desc::Spec::UbootEnv {
                copies, truncate, ..
            } if truncate.is_none()
                && copies.iter().all(|c| c.lines.is_empty() && !c.unterminated) =>
            {
                "uboot-env"
            }
            // formats behind the ImageFormat trait: theirs
            desc::Spec::Format(f) => f.format().name(),
            // damaged on purpose beyond what a description of the format
            // can say, a flash image or a blob
            _ => out.format,
        };
        assert_eq!(out.format, want, "{}:\n{}", p.display(), out.toml);
    }
}

/// The dump of a committed description's image: in its format, with each
/// of `lines` as a line.
fn assert_dump_has_lines(description: &str, lines: &[&str]) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(description);
    let out = dump(&Description::load(&p).unwrap().build().unwrap()).unwrap();
    assert!(out.fallback.is_none(), "{description}: {:?}", out.fallback);
    for line in lines {
        assert!(
            out.toml.lines().any(|l| l == *line),
            "{line} in\n{}",
            out.toml
        );
    }
}

#[test]
fn onie_dump_reads_as_a_description() {
    assert_dump_has_lines(
        "onie-switch.toml",
        &[
            "product-name = \"NVL-48X\"",
            "mac-address = \"02:11:22:33:44:50\"",
            "manufacture-date = \"11/30/2026 14:05:00\"",
            "num-macs = 64",
            "vendor-extension = \"00 00 a6 7c 01 02 03\"",
            "size = 0x1000",
        ],
    );
}

#[test]
fn fru_dump_reads_as_a_description() {
    assert_dump_has_lines(
        "ipmi-fru-server.toml",
        &[
            "type = 0x17",
            "mfg-date = \"2024-03-01 12:34\"",
            "serial-number = { six-bit = \"BD26000042AB\" }",
            "version = { bcd-plus = \"1.20-3\" }",
            "custom = [\"rev A\", { binary = \"de ad be ef\" }]",
            "custom = [\"ECO 1234\", \"\"]",
            "size = 0x800",
        ],
    );
}

#[test]
fn fru_with_a_multirecord_area_falls_back_to_a_blob_and_says_why() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ipmi-fru-minimal.toml");
    let mut img = Description::load(&p).unwrap().build().unwrap();
    // a multirecord offset at 0xf8, the header checksum mended
    img[5] = 0x1f;
    img[7] = img[7].wrapping_sub(0x1f);
    let out = dump(&img).unwrap();
    assert_eq!(out.format, "blob");
    let why = out.fallback.unwrap();
    assert!(why.contains("a multirecord area (at 0xf8)"), "{why}");
    assert_eq!(build_text(&out.toml), img);
}

#[test]
fn damaged_checksum_falls_back_to_a_blob_and_says_why() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../onie-switch.toml");
    let mut img = Description::load(&p).unwrap().build().unwrap();
    img[20] ^= 1;
    let out = dump(&img).unwrap();
    assert_eq!(out.format, "blob");
    assert!(
        out.fallback.as_deref().unwrap().contains("CRC-32"),
        "{out:?}"
    );
    assert!(out.toml.starts_with("# recognised as onie-tlv"));
    assert_eq!(build_text(&out.toml), img);
}

/// An environment written by mkenvimage itself (not through our builder),
/// with a value holding characters TOML must escape.
#[test]
fn mkenvimage_image_dumps_to_uboot_env() {
    let dir = std::env::temp_dir().join(format!("nvmem-image-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let txt = dir.join("env.txt");
    std::fs::write(
        &txt,
        "bootargs=console=ttyS0 \"quoted\" \\back\tslash\nbootcmd=run x; echo done\nethaddr=02:00:00:00:00:01\n",
    )
    .unwrap();
    let bin = dir.join("env.bin");
    let st = Command::new("mkenvimage")
        .args(["-s", "0x2000", "-r", "-p", "0x00", "-o"])
        .arg(&bin)
        .arg(&txt)
        .status()
        .expect("mkenvimage (u-boot-tools)");
    assert!(st.success());
    let img = std::fs::read(&bin).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let out = dump(&img).unwrap();
    assert_eq!(out.format, "uboot-env", "{:?}\n{}", out.fallback, out.toml);
    assert!(out.toml.contains("redundant = true"));
    assert_eq!(build_text(&out.toml), img);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// random bytes, mostly fill with runs of data: always rebuilt exactly
    #[test]
    fn random_images_round_trip(
        fill in prop_oneof![Just(0u8), Just(0xffu8)],
        size in 1usize..3000,
        runs in proptest::collection::vec((0usize..3000, proptest::collection::vec(any::<u8>(), 1..40)), 0..12),
    ) {
        let mut img = vec![fill; size];
        for (at, data) in runs {
            for (i, b) in data.into_iter().enumerate() {
                if let Some(x) = img.get_mut(at + i) {
                    *x = b;
                }
            }
        }
        let out = dump(&img).unwrap();
        prop_assert_eq!(build_text(&out.toml), img);
    }

    /// a real image with a few bytes changed: whatever the dump decides,
    /// it rebuilds the bytes
    #[test]
    fn damaged_images_round_trip(
        which in 0usize..4,
        flips in proptest::collection::vec((0usize..200, any::<u8>()), 1..4),
    ) {
        let name = ["onie-switch", "sl28-vpd", "uboot-env-small", "uboot-env-redund-first"][which];
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../{name}.toml"));
        let mut img = Description::load(&p).unwrap().build().unwrap();
        for (at, b) in flips {
            img[at] = b;
        }
        let out = dump(&img).unwrap();
        prop_assert_eq!(build_text(&out.toml), img);
    }
}
