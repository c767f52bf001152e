//! Every bad description and image is rejected by the binary with a
//! message naming the file and the field or byte, a non-zero exit status,
//! and no panic.

use nvmem_image::{onie, sl28, uboot};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(tag: &str) -> Dir {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("nvmem-image-bad-{}-{tag}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    Dir(d)
}

/// Runs the binary; asserts failure without panic; returns stderr.
fn fails(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nvmem-image"))
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?} should fail with 1; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    err
}

/// A redundant environment of two copies with `top` among its top-level
/// fields (where a field about one copy does not belong).
fn redundant_with(top: &str) -> String {
    format!(
        "format = \"uboot-env\"\nsize = 64\nredundant = true\n{top}\n\
         [[copy]]\nflag = 1\n[copy.vars]\na = \"1\"\n\
         [[copy]]\nflag = 0\n[copy.vars]\na = \"2\"\n"
    )
}

fn bad_desc(text: &str, want: &[&str]) {
    let d = tmp("desc");
    let p = d.0.join("bad.toml");
    std::fs::write(&p, text).unwrap();
    let out = d.0.join("out.bin");
    let err = fails(&["build", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(err.contains("bad.toml"), "no file name in: {err}");
    for w in want {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
    assert!(
        !Path::new(&out).exists(),
        "an output was written for a bad description"
    );
}

#[test]
fn unknown_field() {
    bad_desc(
        "format = \"onie-tlv\"\nproduct-nam = \"x\"\n",
        &["product-nam", "unknown"],
    );
    bad_desc("format = \"sl28-vpd\"\nserial-number = \"1\"\nbase-mac-address = \"02:00:00:00:00:01\"\ncolour = 1\n", &["colour", "unknown"]);
    bad_desc(
        "format = \"blob\"\nsize = 4\n[[region]]\noffset = 0\nascii = \"a\"\nwidth = 2\n",
        &["region[0].width"],
    );
}

#[test]
fn onie_value_over_255_bytes() {
    bad_desc(
        &format!("format = \"onie-tlv\"\nvendor = \"{}\"\n", "v".repeat(256)),
        &["vendor", "256 bytes", "255"],
    );
}

#[test]
fn onie_total_over_2048() {
    let mut t = String::from("format = \"onie-tlv\"\nvendor-extension = [");
    for _ in 0..9 {
        t.push_str(&format!("\"{}\",", "ab".repeat(250)));
    }
    t.push_str("]\n");
    bad_desc(&t, &["2048"]);
}

#[test]
fn env_over_size() {
    bad_desc(
        &format!(
            "format = \"uboot-env\"\nsize = 64\n[vars]\nbig = \"{}\"\n",
            "x".repeat(80)
        ),
        &["vars", "over the size of 64"],
    );
}

#[test]
fn bad_mac_syntax() {
    bad_desc(
        "format = \"onie-tlv\"\nmac-address = \"02:11:22:33:44\"\n",
        &["mac-address", "not a MAC"],
    );
    bad_desc(
        "format = \"sl28-vpd\"\nserial-number = \"1\"\nbase-mac-address = \"zz:11:22:33:44:55\"\n",
        &["base-mac-address"],
    );
}

#[test]
fn sl28_serial_over_15() {
    bad_desc(
        "format = \"sl28-vpd\"\nserial-number = \"0123456789ABCDEF\"\nbase-mac-address = \"02:00:00:00:00:01\"\n",
        &["serial-number", "16 bytes"],
    );
}

#[test]
fn duplicate_variable() {
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\n[vars]\na = \"1\"\na = \"2\"\n",
        &["duplicate key"],
    );
}

#[test]
fn equals_in_variable_name() {
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\n[vars]\n\"a=b\" = \"1\"\n",
        &["vars.a=b", "'='"],
    );
}

#[test]
fn other_description_errors() {
    bad_desc("size = 4\n", &["format", "missing"]);
    bad_desc("format = \"zip\"\n", &["unknown format"]);
    bad_desc(
        "format = \"onie-tlv\"\nmanufacture-date = \"2026-11-30\"\n",
        &["manufacture-date", "MM/DD/YYYY"],
    );
    bad_desc("format = \"onie-tlv\"\ncrc32 = 5\n", &["crc32", "computed"]);
    bad_desc(
        "format = \"blob\"\nsize = 4\n[[region]]\noffset = 3\nascii = \"ab\"\n",
        &["region[0].offset", "past"],
    );
    bad_desc(
        "format = \"onie-tlv\"\nsize = 16\nproduct-name = \"long enough to overflow\"\n",
        &["size"],
    );
    bad_desc(
        "format = \"uboot-env\"\nsize = \"big\"\n",
        &["size", "integer"],
    );
    bad_desc("not toml [", &["bad.toml"]);
    // a damaged copy is named in its [[copy]]; mac-base needs a cell
    bad_desc(&redundant_with("bad-crc = true"), &["bad-crc", "[[copy]]"]);
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\nbad-crc = \"yes\"\n",
        &["bad-crc", "true or false"],
    );
    bad_desc(
        "format = \"blob\"\nsize = 16\n[[region]]\noffset = 0\nhex = \"02\"\nmac-base = true\n",
        &["region[0].mac-base", "cell"],
    );
}

fn bad_image(bytes: &[u8], format: &str, want: &[&str]) {
    let d = tmp("img");
    let p = d.0.join("bad.bin");
    std::fs::write(&p, bytes).unwrap();
    let err = fails(&["inspect", p.to_str().unwrap(), "--format", format]);
    assert!(err.contains("bad.bin"), "no file name in: {err}");
    for w in want {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
}

fn onie_ok() -> Vec<u8> {
    onie::encode(&[(0x21, b"hello".to_vec()), (0x24, vec![2, 0, 0, 0, 0, 1])]).unwrap()
}

#[test]
fn images_wrong_magic_and_version() {
    let mut b = onie_ok();
    b[0] = b't';
    bad_image(&b, "onie-tlv", &["byte 0x0", "bad magic"]);
    let mut b = onie_ok();
    b[8] = 2;
    bad_image(&b, "onie-tlv", &["byte 0x8", "unsupported version"]);
    let mut s = sl28::encode(b"A", [2, 0, 0, 0, 0, 1]).unwrap();
    s[0] = b'W';
    bad_image(&s, "sl28-vpd", &["byte 0x0", "bad magic"]);
    let mut s = sl28::encode(b"A", [2, 0, 0, 0, 0, 1]).unwrap();
    s[1] = 2;
    bad_image(&s, "sl28-vpd", &["byte 0x1", "unsupported version 2"]);
}

#[test]
fn images_crc_mismatch_shows_expected_and_found() {
    let mut b = onie_ok();
    b[13] ^= 1;
    let want = format!("{:#010x}", onie::crc32(&b[..b.len() - 4]));
    let found = format!(
        "{:#010x}",
        u32::from_be_bytes(b[b.len() - 4..].try_into().unwrap())
    );
    bad_image(&b, "auto", &["CRC-32 mismatch", &want, &found]);
    let mut s = sl28::encode(b"A", [2, 0, 0, 0, 0, 1]).unwrap();
    s[23] ^= 0xff;
    bad_image(&s, "sl28-vpd", &["CRC-8 mismatch", "byte 0x17"]);
    let mut e = uboot::encode(&[("a".into(), "1".into())], 64, uboot::Kind::Single, 0, 0).unwrap();
    e[5] = b'b';
    bad_image(&e, "uboot-env", &["CRC-32 mismatch", "expected", "found"]);
}

#[test]
fn images_tlv_past_declared_length_or_file() {
    let mut b = onie_ok();
    b[12] = 200; // product-name length runs past the TLV area
    bad_image(
        &b,
        "onie-tlv",
        &["byte 0xb", "runs past the declared TLV area"],
    );
    let b = onie_ok();
    bad_image(
        &b[..b.len() - 3],
        "onie-tlv",
        &["runs past the end of the image"],
    );
    let mut b = onie_ok();
    b[9..11].copy_from_slice(&3000u16.to_be_bytes());
    bad_image(&b, "onie-tlv", &["byte 0x9", "2048"]);
}

#[test]
fn images_env_without_terminator() {
    let mut e = vec![0u8; 16];
    e[4..16].copy_from_slice(b"abc=12345678");
    let crc = onie::crc32(&e[4..]);
    e[..4].copy_from_slice(&crc.to_le_bytes());
    bad_image(&e, "uboot-env", &["without a NUL"]);
    let mut e = vec![0xffu8; 16];
    e[4..10].copy_from_slice(b"noeq\0\0");
    let crc = onie::crc32(&e[4..]);
    e[..4].copy_from_slice(&crc.to_le_bytes());
    bad_image(&e, "uboot-env", &["has no '='"]);
}

#[test]
fn images_blank_empty_truncated() {
    for f in ["auto", "onie-tlv", "sl28-vpd", "uboot-env"] {
        bad_image(&[0xff; 256], f, &["all bytes 0xff"]);
        bad_image(&[0; 256], f, &["all bytes 0x00"]);
        bad_image(&[], f, &["0 bytes"]);
    }
    bad_image(b"TlvInfo\0\x01", "onie-tlv", &["truncated header"]);
    bad_image(b"V\x01abc", "sl28-vpd", &["truncated"]);
    bad_image(b"\x01\x02\x03", "uboot-env", &["truncated"]);
    bad_image(
        b"random bytes, not an image at all",
        "auto",
        &["unrecognised image"],
    );
}

#[test]
fn cells_of_bad_images_and_missing_files() {
    let d = tmp("cells");
    let p = d.0.join("bad.bin");
    std::fs::write(&p, [0xffu8; 64]).unwrap();
    let p = p.to_str().unwrap();
    for l in ["onie,tlv-layout", "kontron,sl28-vpd", "u-boot,env"] {
        let err = fails(&["cells", p, "--layout", l]);
        assert!(err.contains("bad.bin") && err.contains("0xff"), "{err}");
    }
    assert!(fails(&["cells", p, "--layout", "vendor,magic"]).contains("unknown layout"));
    assert!(fails(&["cells", p, "--layout", "fixed-layout"]).contains("description"));
    assert!(fails(&["inspect", "/nonexistent/x.bin"]).contains("/nonexistent/x.bin"));
}

#[test]
fn malformed_environment_fields_checked() {
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\nlines = \"novalue\"\n",
        &["lines", "array of strings"],
    );
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\nlines = [\"a\\nb\"]\n",
        &["lines[0]", "newline"],
    );
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\nlines = [1]\n",
        &["lines[0]", "string"],
    );
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\ntruncate = 64\n[vars]\na = \"1\"\n",
        &["truncate", "whole image"],
    );
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\npad = 0\nunterminated = true\n[vars]\na = \"1\"\n",
        &["unterminated", "pad 0x00"],
    );
    bad_desc(
        "format = \"uboot-env\"\nsize = 64\nunterminated = true\n",
        &["unterminated", "no variable"],
    );
    bad_desc(&redundant_with("lines = [\"x\"]"), &["lines", "[[copy]]"]);
    bad_desc(
        "format = \"uboot-env\"\nsize = 16\nlines = [\"a-very-long-line-indeed\"]\n",
        &["vars", "over the size"],
    );
}

/// `cells --bytes`: the cells are read from the bytes a device gave back,
/// the description only declares the fixed cells; bytes shorter than a
/// cell, or `--bytes` with an image input, are errors.
#[test]
fn cells_from_read_back_bytes() {
    let d = tmp("bytes");
    let desc = d.0.join("fixed.toml");
    std::fs::write(
        &desc,
        "format = \"blob\"\nsize = 16\n[[region]]\noffset = 2\nascii = \"ab\"\ncell = \"c\"\n",
    )
    .unwrap();
    let raw = d.0.join("raw.bin");
    std::fs::write(&raw, b"..xy............").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nvmem-image"))
        .args([
            "cells",
            desc.to_str().unwrap(),
            "--layout",
            "fixed-layout",
            "--json",
        ])
        .args(["--bytes", raw.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"7879\""),
        "cell content not from the bytes: {text}"
    );
    std::fs::write(&raw, b"..").unwrap();
    let err = fails(&[
        "cells",
        desc.to_str().unwrap(),
        "--layout",
        "fixed-layout",
        "--bytes",
        raw.to_str().unwrap(),
    ]);
    assert!(
        err.contains("raw.bin") && err.contains("past the device"),
        "{err}"
    );
    let err = fails(&[
        "cells",
        raw.to_str().unwrap(),
        "--layout",
        "onie,tlv-layout",
        "--bytes",
        raw.to_str().unwrap(),
    ]);
    assert!(err.contains("--bytes"), "{err}");
}

#[test]
fn bad_defects() {
    let onie = "format = \"onie-tlv\"\nsize = 64\nproduct-name = \"X\"\n";
    let with = |extra: &str| format!("{onie}{extra}");
    bad_desc(
        &with("[[defect]]\noffset = 0\nhex = \"00\"\n"),
        &["defect[0].what", "missing"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \" \"\noffset = 0\nhex = \"00\"\n"),
        &["defect[0].what", "must say what is wrong"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \"two\"\noffset = 0\nhex = \"00\"\ntruncate = 3\n"),
        &["defect[0]", "one change"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \"past\"\noffset = 63\nhex = \"00 00\"\n"),
        &["defect[0]", "run past the image's 64 bytes"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \"grow\"\ntruncate = 65\n"),
        &["defect[0]", "has only 64"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \"cut, then seal\"\ntruncate = 8\nreseal = true\n"),
        &["defect[0].reseal", "checksum is at byte"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \"x\"\noffset = 0\nhex = \"zz\"\n"),
        &["defect[0].hex"],
    );
    bad_desc(
        &with("[[defect]]\nwhat = \"x\"\nbytes = 1\n"),
        &["defect[0].bytes", "unknown field"],
    );
    bad_desc(
        "format = \"blob\"\nsize = 8\n[[defect]]\nwhat = \"x\"\noffset = 0\nhex = \"01\"\nreseal = true\n",
        &["defect[0].reseal", "no checksum of its own"],
    );
    bad_desc(&with("expect = \"maybe\"\n"), &["expect", "rejected"]);
    let blob = "format = \"blob\"\nsize = 8\n[[region]]\noffset = 0\nhex = \"01\"\n";
    bad_desc(
        &format!("{blob}bits = [0, 1]\n"),
        &["region[0].bits", "only a region with `cell`"],
    );
    for bits in ["[1]", "[1, 2, 3]", "[-1, 2]", "[0, 4294967296]", "\"0 1\""] {
        bad_desc(
            &format!("{blob}cell = \"c\"\nbits = {bits}\n"),
            &["region[0].bits", "two integers"],
        );
    }
    bad_desc(
        &with("[layout]\ncompatible = \"onie,tlv\"\n"),
        &["layout.compatible", "unknown layout"],
    );
    bad_desc(
        &with("[layout]\ncompatible = \"u-boot,env\"\nenv-size = -1\n"),
        &["layout.env-size", "out of range"],
    );
}

#[test]
fn layout_node_needs_a_layout() {
    let d = tmp("node");
    let p = d.0.join("plain.toml");
    std::fs::write(&p, "format = \"blob\"\nsize = 8\n").unwrap();
    let err = fails(&["layout-node", p.to_str().unwrap()]);
    assert!(
        err.contains("plain.toml") && err.contains("field `layout`"),
        "{err}"
    );
    std::fs::write(
        &p,
        "format = \"blob\"\nsize = 8\n[layout]\ncompatible = \"fixed-layout\"\n\
         [[region]]\noffset = 0\nhex = \"01\"\ncell = \"bad name\"\n",
    )
    .unwrap();
    let err = fails(&["layout-node", p.to_str().unwrap()]);
    assert!(err.contains("no device-tree node name"), "{err}");
}
