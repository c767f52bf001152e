//! Golden vectors: checksums computed outside this crate (the CRC
//! catalogue's check values, Python's zlib.crc32 and a bit-by-bit CRC-8
//! loop), never by the code under test.

use nvmem_image::{cells, onie, sl28, uboot};

#[test]
fn crc_check_values() {
    // CRC-32/ISO-HDLC and CRC-8/SMBUS check values over "123456789"
    assert_eq!(onie::crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(sl28::crc8(b"123456789"), 0xf4);
}

#[test]
fn onie_golden_image() {
    let img = onie::encode(&[(0x21, b"AB".to_vec())]).unwrap();
    let mut want = b"TlvInfo\x00\x01\x00\x0a\x21\x02AB\xfe\x04".to_vec();
    want.extend_from_slice(&0x8d53_af81u32.to_be_bytes());
    assert_eq!(img, want);
    let d = onie::decode(&want).unwrap();
    assert!(d.crc_valid);
    assert_eq!(d.tlvs[0].name, Some("product-name"));
    assert_eq!(d.tlvs[0].value_offset, 13);
}

#[test]
fn sl28_golden_image() {
    let img = sl28::encode(b"SN123456789ABCD", [2, 0, 0, 0, 0, 1]).unwrap();
    let mut want = b"V\x01SN123456789ABCD".to_vec();
    want.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x76]);
    assert_eq!(img, want);
    assert!(sl28::decode(&want).unwrap().crc_valid);
}

#[test]
fn env_golden_images() {
    let vars = vec![("a".to_string(), "1".to_string())];
    let single = uboot::encode(&vars, 32, uboot::Kind::Single, 0, 0xff).unwrap();
    assert_eq!(&single[..4], &0x419c_2188u32.to_le_bytes());
    assert_eq!(&single[4..9], b"a=1\0\0");
    assert!(single[9..].iter().all(|&b| b == 0xff));
    let red = uboot::encode(&vars, 32, uboot::Kind::Redundant, 1, 0xff).unwrap();
    assert_eq!(&red[..4], &0x9731_9872u32.to_le_bytes());
    assert_eq!(red[4], 1);
    assert_eq!(&red[5..10], b"a=1\0\0");
}

#[test]
fn cells_of_golden_onie() {
    let mut img = b"TlvInfo\x00\x01\x00\x0a\x21\x02AB\xfe\x04".to_vec();
    img.extend_from_slice(&0x8d53_af81u32.to_be_bytes());
    let c = cells::predict(cells::Layout::OnieTlv, &img, &[], None, Default::default()).unwrap();
    let names: Vec<_> = c.iter().map(|c| c.sysfs.as_str()).collect();
    assert_eq!(names, ["product-name@d,0", "crc32@11,0"]);
    assert_eq!(c[1].content.as_deref(), Some("8d53af81"));
}

/// An ONIE table as the kernel's layout reads it: TLVs (type, value) and
/// the CRC-32 TLV over all before its value.
fn onie_table(tlvs: &[(u8, &[u8])]) -> Vec<u8> {
    let mut img = b"TlvInfo\x00\x01\x00\x00".to_vec();
    for (t, v) in tlvs {
        img.push(*t);
        img.push(v.len() as u8);
        img.extend_from_slice(v);
    }
    let total = (img.len() - 11 + 6) as u16;
    img[9..11].copy_from_slice(&total.to_be_bytes());
    img.extend_from_slice(&[0xfe, 4]);
    let crc = onie::crc32(&img);
    img.extend_from_slice(&crc.to_be_bytes());
    img
}

#[test]
fn onie_cells_as_the_kernel_makes_them() {
    // found by the kernel parser's fuzzing (make fuzz-kernel): an empty
    // TLV is no cell, a 3-byte mac-address one gets no index
    let img = onie_table(&[(0x21, b""), (0x22, b"P1"), (0x24, b"\x02\x00\x01")]);
    let c = cells::predict(
        cells::Layout::OnieTlv,
        &img,
        &[],
        Some(1),
        Default::default(),
    )
    .unwrap();
    let names: Vec<_> = c.iter().map(|c| c.sysfs.as_str()).collect();
    assert_eq!(names, ["part-number@f,0", "mac-address@13,0", "crc32@18,0"]);
    assert_eq!(c[1].indexed, None);
    assert_eq!(c[1].content.as_deref(), Some("020001"));
}

#[test]
fn onie_crc_tlv_must_be_last() {
    // a CRC-32 TLV with TLVs after it: the kernel rejects the table
    let img = onie_table(&[(0x21, b"A"), (0xfe, b"\0\0\0\0"), (0x22, b"B")]);
    let err = cells::predict(cells::Layout::OnieTlv, &img, &[], None, Default::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("must be the last"), "{err}");
    assert!(err.contains("0xe"), "no offset of the TLV in: {err}");
}
