//! build -> inspect gives back the described fields; our environment
//! encoder agrees with mkenvimage; property tests over random inputs.

use nvmem_image::desc::{self, Description};
use nvmem_image::inspect::{inspect, Format, Inspection};
use nvmem_image::{cells, mac, onie, sl28, uboot};
use proptest::prelude::*;
use std::path::PathBuf;

fn repo_desc(name: &str) -> Description {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(format!("{name}.toml"));
    Description::load(&p).unwrap()
}

#[test]
fn onie_description_round_trip() {
    let d = repo_desc("onie-switch");
    let img = d.build().unwrap();
    assert_eq!(img.len(), 4096);
    let Inspection::OnieTlv(i) = inspect(&img, Format::Auto).unwrap() else {
        panic!("not ONIE")
    };
    assert!(i.crc_valid);
    let desc::Spec::OnieTlv { tlvs, .. } = &d.spec else {
        panic!()
    };
    assert_eq!(i.tlvs.len(), tlvs.len() + 1);
    for (got, (code, value)) in i.tlvs.iter().zip(tlvs) {
        assert_eq!(got.code, *code);
        assert_eq!(
            &img[got.value_offset..got.value_offset + got.len],
            value.as_slice()
        );
    }
    let mac = i.tlvs.iter().find(|t| t.code == 0x24).unwrap();
    assert_eq!(mac.text.as_deref(), Some("02:11:22:33:44:50"));
}

#[test]
fn sl28_description_round_trip() {
    let img = repo_desc("sl28-vpd").build().unwrap();
    let Inspection::Sl28Vpd(i) = inspect(&img, Format::Auto).unwrap() else {
        panic!("not sl28")
    };
    assert!(i.crc_valid);
    assert_eq!(i.serial.as_deref(), Some("SL28-0000042"));
    assert_eq!(i.base_mac, "02:11:22:33:44:80");
}

#[test]
fn env_description_round_trip_and_mkenvimage_agreement() {
    let d = repo_desc("uboot-env-small");
    let img = d.build().unwrap();
    let desc::Spec::UbootEnv {
        size, pad, copies, ..
    } = &d.spec
    else {
        panic!()
    };
    // mkenvimage and our encoder give the same bytes
    assert_eq!(
        img,
        uboot::encode(&copies[0].vars, *size, uboot::Kind::Single, 0, *pad).unwrap()
    );
    let Inspection::UbootEnv(i) = inspect(&img, Format::Auto).unwrap() else {
        panic!("not env")
    };
    let got: Vec<_> = i.copies[0]
        .vars
        .iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect();
    assert_eq!(&got, &copies[0].vars);
}

#[test]
fn redundant_env_matches_mkenvimage() {
    let vars = vec![
        ("bootcmd".to_string(), "boot".to_string()),
        ("x".to_string(), "y z".to_string()),
    ];
    let ours = uboot::encode(&vars, 0x1000, uboot::Kind::Redundant, 1, 0x00).unwrap();
    let theirs = uboot::mkenvimage(&vars, 0x1000, true, 0x00).unwrap();
    assert_eq!(ours, theirs);
}

fn two_copies(flag_a: u8, flag_b: u8, break_a: bool) -> Vec<u8> {
    let a = vec![("v".to_string(), "old".to_string())];
    let b = vec![("v".to_string(), "new".to_string())];
    let mut img = uboot::encode(&a, 64, uboot::Kind::Redundant, flag_a, 0xff).unwrap();
    if break_a {
        img[10] ^= 0x55;
    }
    img.extend(uboot::encode(&b, 64, uboot::Kind::Redundant, flag_b, 0xff).unwrap());
    img
}

#[test]
fn redundant_copy_selection_follows_uboot() {
    let active = |img: &[u8]| uboot::decode(img, None).unwrap().active;
    assert_eq!(active(&two_copies(1, 0, false)), Some(0)); // boolean: active beats obsolete
    assert_eq!(active(&two_copies(0, 1, false)), Some(1));
    assert_eq!(active(&two_copies(7, 8, false)), Some(1)); // counter: newer wins
    assert_eq!(active(&two_copies(255, 0, false)), Some(1)); // counter wraps
    assert_eq!(active(&two_copies(0, 255, false)), Some(0));
    assert_eq!(active(&two_copies(9, 2, true)), Some(1)); // only valid copy
    assert_eq!(active(&two_copies(3, 3, false)), Some(0)); // tie: first
}

#[test]
fn redundant_description_with_two_copies() {
    let text = r#"
        format = "uboot-env"
        size = 0x100
        redundant = true
        [[copy]]
        flag = 4
        vars = { a = "1" }
        [[copy]]
        flag = 5
        vars = { a = "2" }
    "#;
    let dir = std::env::temp_dir().join(format!("nvmem-image-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("red.toml");
    std::fs::write(&p, text).unwrap();
    let img = Description::load(&p).unwrap().build().unwrap();
    assert_eq!(img.len(), 0x200);
    let i = uboot::decode(&img, None).unwrap();
    assert_eq!(i.copies.len(), 2);
    assert_eq!(i.active, Some(1));
    assert_eq!(i.copies[1].vars[0].value, "2");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn env_cells_follow_the_kernel() {
    let vars = vec![
        ("ethaddr".to_string(), "02:00:00:00:00:fe".to_string()),
        ("bad".to_string(), "x".to_string()),
    ];
    let img = uboot::encode(&vars, 128, uboot::Kind::Single, 0, 0xff).unwrap();
    let c = cells::predict(
        cells::Layout::UbootEnv(uboot::Kind::Single, true),
        &img,
        &[],
        Some(3),
        uboot::Geometry::default(),
    )
    .unwrap();
    assert_eq!(c[0].sysfs, "ethaddr@c,0");
    assert_eq!(c[0].size, 6);
    assert_eq!(c[0].content.as_deref(), Some("0200000000fe"));
    assert_eq!(c[0].indexed.as_deref(), Some("020000000101"));
    assert_eq!(c[1].sysfs, format!("bad@{:x},0", 4 + 26 + 4));
    // a malformed ethaddr cell exists but fails to read
    let img = uboot::encode(
        &[("ethaddr".into(), "02-00-00-00-00-fe".into())],
        64,
        uboot::Kind::Single,
        0,
        0,
    )
    .unwrap();
    let c = cells::predict(
        cells::Layout::UbootEnv(uboot::Kind::Single, true),
        &img,
        &[],
        None,
        uboot::Geometry::default(),
    )
    .unwrap();
    // an ethaddr that spells no address gets no cell (the layout says why)
    assert!(c.is_empty(), "{c:?}");
}

/// The choice between two redundant copies, the vectors of the kernel's
/// KUnit suite (u-boot-env-kunit.c): (flag a, flag b, a intact, b intact,
/// boolean pick, counter pick).
#[test]
fn redundant_choice_vectors() {
    type Vector = (u8, u8, bool, bool, Option<usize>, Option<usize>);
    let vectors: [Vector; 12] = [
        (1, 0, true, true, Some(0), Some(0)),
        (0, 1, true, true, Some(1), Some(1)),
        (1, 0, false, true, Some(1), Some(1)),
        (0, 1, true, false, Some(0), Some(0)),
        (1, 0, false, false, None, None),
        (1, 1, true, true, Some(0), Some(0)),
        (255, 0, true, true, Some(0), Some(1)),
        (0, 255, true, true, Some(1), Some(0)),
        (7, 8, true, true, Some(0), Some(1)),
        (0xff, 0xff, true, true, Some(0), Some(0)),
        (1, 0xff, true, true, Some(1), Some(1)),
        (0xff, 1, true, true, Some(0), Some(0)),
    ];
    let copy = |flag: u8, ok: bool| {
        let vars = [("v".to_string(), flag.to_string())];
        let mut img = uboot::encode(&vars, 64, uboot::Kind::Redundant, flag, 0).unwrap();
        if !ok {
            img[0] ^= 1;
        }
        uboot::decode_copy(&img, 0, img.len(), uboot::Kind::Redundant).unwrap()
    };
    for (fa, fb, oa, ob, pick_bool, pick_count) in vectors {
        let (a, b) = (copy(fa, oa), copy(fb, ob));
        assert_eq!(
            uboot::choose(&a, &b, false),
            pick_bool,
            "boolean {fa} {fb} {oa} {ob}"
        );
        assert_eq!(
            uboot::choose(&a, &b, true),
            pick_count,
            "counter {fa} {fb} {oa} {ob}"
        );
    }
}

/// Two copies in one image: the cells of the chosen one, at its offsets;
/// geometry errors as the layout reports them.
#[test]
fn redundant_cells_from_the_chosen_copy() {
    let one = [("which".to_string(), "first".to_string())];
    let two = [("which".to_string(), "second".to_string())];
    let mut img = uboot::encode(&one, 0x100, uboot::Kind::Redundant, 255, 0).unwrap();
    img.extend(uboot::encode(&two, 0x100, uboot::Kind::Redundant, 0, 0).unwrap());
    let geo = uboot::Geometry {
        env_size: None,
        redundant_offset: Some(0x100),
    };
    let count = cells::Layout::UbootEnv(uboot::Kind::Redundant, true);
    let c = cells::predict(count, &img, &[], None, geo).unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].sysfs, "which@10b,0");
    assert_eq!(c[0].text.as_deref(), Some("second"));
    let boolean = cells::Layout::UbootEnv(uboot::Kind::Redundant, false);
    let c = cells::predict(boolean, &img, &[], None, geo).unwrap();
    assert_eq!(c[0].text.as_deref(), Some("first"));
    // both damaged: no cells
    img[0] ^= 1;
    img[0x100] ^= 1;
    assert!(cells::predict(count, &img, &[], None, geo).is_err());
    // a device too small for two copies, a single format with a second copy
    let short = uboot::Geometry {
        env_size: Some(0x101),
        redundant_offset: Some(0x100),
    };
    assert!(cells::predict(count, &img, &[], None, short).is_err());
    let single = cells::Layout::UbootEnv(uboot::Kind::Single, true);
    assert!(cells::predict(single, &img, &[], None, geo).is_err());
}

#[test]
fn mac_base_encodings() {
    let want = [2, 0, 0, 0, 1, 0xfe];
    assert_eq!(mac::parse_base(&want), Some(want));
    assert_eq!(mac::parse_base(b"0200000001fe"), Some(want));
    assert_eq!(mac::parse_base(b"02:00:00:00:01:fe"), Some(want));
    assert_eq!(mac::parse_base(b"0200000g01fe"), None);
    assert_eq!(mac::parse_base(b"02-00-00-00-01-fe"), None);
    assert_eq!(mac::parse_base(b"0200"), None);
    assert_eq!(mac::add(want, -0xff), [2, 0, 0, 0, 0, 0xff]);
    assert_eq!(mac::add(want, -0x1ff), [1, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(mac::add(want, 2), [2, 0, 0, 0, 2, 0]);
}

#[test]
fn sl28_multicast_mac_cell_fails_to_read() {
    let img = sl28::encode(b"X", [1, 2, 3, 4, 5, 6]).unwrap();
    let c = cells::predict(cells::Layout::Sl28Vpd, &img, &[], None, Default::default()).unwrap();
    assert_eq!(c[1].sysfs, "base-mac-address@11,0");
    assert_eq!(c[1].read_error.as_deref(), Some("EINVAL"));
}

/// The cells a fixed layout makes of the blob a description text builds.
fn fixed_cells_of(text: &str) -> Vec<cells::Cell> {
    let d = Description::from_text(std::path::Path::new("x.toml"), text).unwrap();
    cells::predict(
        cells::Layout::Fixed,
        &d.build().unwrap(),
        &d.fixed_cells().unwrap(),
        None,
        uboot::Geometry::default(),
    )
    .unwrap()
}

#[test]
fn fixed_layout_cells_from_regions() {
    let text = r#"
        format = "blob"
        size = 64
        fill = 0
        [[region]]
        offset = 0x10
        ascii = "hello"
        cell = "greeting"
        [[region]]
        offset = 0x20
        hex = "01 02"
    "#;
    let c = fixed_cells_of(text);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].sysfs, "greeting@10,0");
    assert_eq!(c[0].text.as_deref(), Some("hello"));
}

/// A blob with one 4-byte region at 0x8 whose cell has `bits`.
fn bits_cell(stored: [u8; 4], bit_offset: u32, nbits: u32) -> Option<cells::Cell> {
    let text = format!(
        "format = \"blob\"\nsize = 16\n[[region]]\noffset = 8\nhex = \"{}\"\ncell = \"b\"\nbits = [{bit_offset}, {nbits}]\n",
        stored.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
    );
    let mut c = fixed_cells_of(&text);
    assert!(c.len() <= 1);
    c.pop()
}

#[test]
fn bits_cells_left_out_as_the_kernel_does() {
    for (off, n) in [
        (8, 4),
        (u32::MAX, 1),
        (0, 0),
        (4, 29),
        (1, u32::MAX),
        (7, 26),
    ] {
        assert!(
            bits_cell([1, 2, 3, 4], off, n).is_none(),
            "bits <{off} {n}>"
        );
    }
    let c = bits_cell([0xa5, 0xc3, 0, 0], 4, 8).unwrap();
    assert_eq!((c.sysfs.as_str(), c.size), ("b@8,4", 2));
    assert_eq!(c.content.as_deref(), Some("3a00"));
}

fn text_value() -> impl Strategy<Value = String> {
    "[ -~]{0,40}"
}

proptest! {
    /// a bits cell reads the stored little-endian value shifted right by
    /// the bit offset and cut to nbits, in the bytes the bits touch
    #[test]
    fn bits_cells_shift_and_mask(stored in proptest::array::uniform4(any::<u8>()), off in 0u32..8, n in 1u32..=32) {
        let c = bits_cell(stored, off, n);
        if off + n > 32 {
            prop_assert!(c.is_none());
        } else {
            let c = c.unwrap();
            let bytes = (off + n).div_ceil(8) as usize;
            let value = (u64::from(u32::from_le_bytes(stored)) >> off) & ((1u64 << n) - 1);
            prop_assert_eq!(c.size, bytes);
            prop_assert_eq!(c.content.unwrap(), hex_le(value, bytes));
            prop_assert_eq!(c.sysfs, format!("b@8,{off:x}"));
        }
    }

    #[test]
    fn onie_random_round_trip(fields in proptest::collection::vec((0x21u8..=0x2f, text_value()), 0..12)) {
        let tlvs: Vec<(u8, Vec<u8>)> = fields.into_iter().map(|(t, s)| (t, s.into_bytes())).collect();
        let img = onie::encode(&tlvs).unwrap();
        let d = onie::decode(&img).unwrap();
        prop_assert!(d.crc_valid);
        prop_assert_eq!(d.tlvs.len(), tlvs.len() + 1);
        for (got, (code, v)) in d.tlvs.iter().zip(&tlvs) {
            prop_assert_eq!(got.code, *code);
            prop_assert_eq!(&img[got.value_offset..got.value_offset + got.len], v.as_slice());
        }
    }

    #[test]
    fn sl28_random_round_trip(serial in "[A-Z0-9-]{0,15}", m in proptest::array::uniform6(any::<u8>())) {
        let img = sl28::encode(serial.as_bytes(), m).unwrap();
        let d = sl28::decode(&img).unwrap();
        prop_assert!(d.crc_valid);
        prop_assert_eq!(d.base_mac, mac::format(&m));
        let want = if serial.is_empty() { None } else { Some(serial) };
        prop_assert_eq!(d.serial, want);
    }

    #[test]
    fn env_random_round_trip(vars in proptest::collection::btree_map("[a-z_][a-z0-9_]{0,12}", "[ -~]{0,30}", 0..20),
                             redundant in any::<bool>()) {
        let vars: Vec<(String, String)> = vars.into_iter().collect();
        let kind = if redundant { uboot::Kind::Redundant } else { uboot::Kind::Single };
        let img = uboot::encode(&vars, 0x1000, kind, 1, 0xff).unwrap();
        let d = uboot::decode(&img, Some(kind)).unwrap();
        prop_assert_eq!(d.active, Some(0));
        let got: Vec<_> = d.copies[0].vars.iter().map(|v| (v.name.clone(), v.value.clone())).collect();
        prop_assert_eq!(got, vars);
    }

    #[test]
    fn decoders_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = onie::decode(&data);
        let _ = sl28::decode(&data);
        let _ = uboot::decode(&data, None);
        let _ = inspect(&data, Format::Auto);
        for l in ["onie,tlv-layout", "kontron,sl28-vpd", "u-boot,env", "u-boot,env-redundant-bool"] {
            let _ = cells::predict(l.parse().unwrap(), &data, &[], Some(1), Default::default());
        }
    }
}

/// The malformed environments of eeprom-images/: each description builds
/// what it says is wrong, and the layout's prediction names that problem.
#[test]
fn malformed_environment_descriptions() {
    let single = cells::Layout::UbootEnv(uboot::Kind::Single, false);
    let count = cells::Layout::UbootEnv(uboot::Kind::Redundant, true);
    let plain = uboot::Geometry {
        env_size: None,
        redundant_offset: None,
    };
    let cases: [(&str, cells::Layout, uboot::Geometry, usize, &str); 6] = [
        (
            "uboot-env-truncated",
            single,
            plain,
            3,
            "an environment of 3 bytes holds no variables",
        ),
        (
            "uboot-env-unterminated",
            single,
            plain,
            0x1000,
            "runs to the end of the environment without a NUL",
        ),
        ("uboot-env-no-equals", single, plain, 0x1000, "has no '='"),
        (
            "uboot-env-empty-name",
            single,
            plain,
            0x1000,
            "has an empty name",
        ),
        (
            "uboot-env-short-device",
            single,
            uboot::Geometry {
                env_size: Some(0x2000),
                redundant_offset: None,
            },
            0x1000,
            "device of 0x1000 bytes smaller than its environment (0x2000 bytes)",
        ),
        (
            "uboot-env-redund-short-device",
            count,
            uboot::Geometry {
                env_size: None,
                redundant_offset: Some(0x1000),
            },
            0x1800,
            "smaller than its environment (0x1000 bytes twice)",
        ),
    ];
    for (name, layout, geo, len, problem) in cases {
        let img = repo_desc(name).build().unwrap();
        assert_eq!(img.len(), len, "{name}");
        let err = cells::predict(layout, &img, &[], None, geo).unwrap_err();
        assert!(err.to_string().contains(problem), "{name}: {err}");
    }
    // unterminated: only the two NULs after the last variable changed, and
    // the CRC still matches (the problem is the strings, not the CRC)
    let img = repo_desc("uboot-env-unterminated").build().unwrap();
    let copy = uboot::decode_copy(&img, 0, img.len(), uboot::Kind::Single).unwrap();
    assert!(copy.crc_valid);
    assert!(!img[4..].windows(2).any(|w| w == [0, 0]));
    // a short ethaddr: every other variable is a cell, ethaddr is not
    let img = repo_desc("uboot-env-ethaddr-short").build().unwrap();
    let c = cells::predict(single, &img, &[], None, plain).unwrap();
    let names: Vec<_> = c
        .iter()
        .map(|c| c.sysfs.split('@').next().unwrap())
        .collect();
    assert_eq!(names, ["bootdelay", "serial"]);
}

/// A defect changes only the bytes it names; with `reseal` the format's
/// checksum is recomputed, so that the defect is the one thing wrong.
#[test]
fn defects_change_what_they_say() {
    let base =
        "format = \"sl28-vpd\"\nserial-number = \"S1\"\nbase-mac-address = \"00:a0:a5:5c:00:01\"\n";
    let build = |extra: &str| {
        Description::from_text(std::path::Path::new("d.toml"), &format!("{base}{extra}"))
            .unwrap()
            .build()
            .unwrap()
    };
    let good = build("");
    let plain = build("[[defect]]\nwhat = \"v2\"\noffset = 1\nhex = \"02\"\n");
    let sealed = build("[[defect]]\nwhat = \"v2\"\noffset = 1\nhex = \"02\"\nreseal = true\n");
    let differ = |a: &[u8], b: &[u8]| {
        a.iter()
            .zip(b)
            .enumerate()
            .filter(|(_, (x, y))| x != y)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    assert_eq!(differ(&good, &plain), vec![1]);
    assert_eq!(
        differ(&good, &sealed),
        vec![1, nvmem_image::sl28::CRC_OFFSET]
    );
    assert_eq!(
        sealed[nvmem_image::sl28::CRC_OFFSET],
        nvmem_image::sl28::crc8(&sealed[..nvmem_image::sl28::CRC_OFFSET])
    );
    let cut = build("[[defect]]\nwhat = \"short\"\ntruncate = 10\n");
    assert_eq!(cut, good[..10]);
    // an environment's CRC-32 (little-endian, over the data) after a change
    let env = "format = \"uboot-env\"\nsize = 0x100\n[vars]\na = \"1\"\n";
    let d = Description::from_text(
        std::path::Path::new("e.toml"),
        &format!("{env}[[defect]]\nwhat = \"b\"\noffset = 4\nascii = \"b\"\nreseal = true\n"),
    )
    .unwrap();
    let img = d.build().unwrap();
    assert_eq!(&img[4..7], b"b=1");
    assert_eq!(
        u32::from_le_bytes(img[..4].try_into().unwrap()),
        nvmem_image::onie::crc32(&img[4..])
    );
}

fn hex_le(v: u64, bytes: usize) -> String {
    v.to_le_bytes()[..bytes]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
