//! ONIE TLV EEPROM ("TlvInfo") images.
//!
//! Header: 8 bytes `TlvInfo\0`, version 0x01, 2-byte big-endian length of
//! the TLV area. TLVs: type, length, value. The last TLV is the CRC-32
//! (type 0xFE, length 4, big-endian) over every byte before its value.

use crate::error::DecodeError;
use crate::{hex, mac};
use serde::Serialize;

pub const MAGIC: &[u8; 8] = b"TlvInfo\0";
pub const HEADER_LEN: usize = 11;
pub const MAX_LEN: usize = 2048;
pub const CRC_TYPE: u8 = 0xfe;

const CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// How a TLV's value is written in a description and shown by `inspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Date,
    Country,
    Mac,
    U8,
    U16,
    Hex,
    Crc,
}

/// The TLV types of the ONIE specification, with the cell names of the
/// kernel's onie-tlv layout.
pub const TYPES: &[(u8, &str, Kind)] = &[
    (0x21, "product-name", Kind::Text),
    (0x22, "part-number", Kind::Text),
    (0x23, "serial-number", Kind::Text),
    (0x24, "mac-address", Kind::Mac),
    (0x25, "manufacture-date", Kind::Date),
    (0x26, "device-version", Kind::U8),
    (0x27, "label-revision", Kind::Text),
    (0x28, "platform-name", Kind::Text),
    (0x29, "onie-version", Kind::Text),
    (0x2a, "num-macs", Kind::U16),
    (0x2b, "manufacturer", Kind::Text),
    (0x2c, "country-code", Kind::Country),
    (0x2d, "vendor", Kind::Text),
    (0x2e, "diag-version", Kind::Text),
    (0x2f, "service-tag", Kind::Text),
    (0xfd, "vendor-extension", Kind::Hex),
    (CRC_TYPE, "crc32", Kind::Crc),
];

pub fn type_by_name(name: &str) -> Option<(u8, Kind)> {
    TYPES.iter().find(|t| t.1 == name).map(|t| (t.0, t.2))
}

pub fn type_info(code: u8) -> Option<(&'static str, Kind)> {
    TYPES.iter().find(|t| t.0 == code).map(|t| (t.1, t.2))
}

pub fn crc32(data: &[u8]) -> u32 {
    CRC32.checksum(data)
}

/// Encodes TLVs (type, value) into an image, appending the CRC TLV.
/// Errors name the TLV (by index) that does not fit.
pub fn encode(tlvs: &[(u8, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(MAX_LEN);
    out.extend_from_slice(MAGIC);
    out.push(1);
    out.extend_from_slice(&[0, 0]);
    for (t, v) in tlvs {
        let len = u8::try_from(v.len())
            .map_err(|_| format!("type {t:#04x}: value of {} bytes exceeds 255", v.len()))?;
        out.push(*t);
        out.push(len);
        out.extend_from_slice(v);
    }
    let total = out.len() - HEADER_LEN + 6;
    if HEADER_LEN + total > MAX_LEN {
        return Err(format!(
            "image of {} bytes exceeds the ONIE maximum of {MAX_LEN}",
            HEADER_LEN + total
        ));
    }
    out[9..11].copy_from_slice(&(total as u16).to_be_bytes());
    out.extend_from_slice(&[CRC_TYPE, 4]);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(out)
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Tlv {
    /// offset of the type byte
    pub offset: usize,
    #[serde(rename = "type")]
    pub code: u8,
    pub name: Option<&'static str>,
    pub len: usize,
    /// offset of the value
    pub value_offset: usize,
    pub hex: String,
    /// the value as text (strings, dates, MACs, numbers)
    pub text: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Image {
    pub version: u8,
    pub total_len: usize,
    pub tlvs: Vec<Tlv>,
    pub crc_found: u32,
    pub crc_expected: u32,
    pub crc_valid: bool,
}

impl Image {
    /// Err if the checksum does not match.
    pub fn check(&self) -> Result<(), DecodeError> {
        if self.crc_valid {
            Ok(())
        } else {
            let crc_tlv = self.tlvs.last().map(|t| t.value_offset).unwrap_or(0);
            Err(DecodeError::at(
                crc_tlv,
                format!(
                    "CRC-32 mismatch: expected {:#010x}, found {:#010x}",
                    self.crc_expected, self.crc_found
                ),
            ))
        }
    }
}

fn value_text(kind: Kind, v: &[u8]) -> Option<String> {
    match kind {
        Kind::Text | Kind::Date | Kind::Country => hex::printable(v),
        Kind::Mac if v.len() == 6 => Some(mac::format(v)),
        Kind::U8 if v.len() == 1 => Some(v[0].to_string()),
        Kind::U16 if v.len() == 2 => Some(u16::from_be_bytes([v[0], v[1]]).to_string()),
        Kind::Crc if v.len() == 4 => Some(format!(
            "{:#010x}",
            u32::from_be_bytes([v[0], v[1], v[2], v[3]])
        )),
        _ => None,
    }
}

/// Describes images that hold no data at all, for clearer errors.
pub fn blank_kind(data: &[u8]) -> Option<&'static str> {
    if data.is_empty() {
        Some("empty image (0 bytes)")
    } else if data.iter().all(|&b| b == 0xff) {
        Some("erased image (all bytes 0xff)")
    } else if data.iter().all(|&b| b == 0) {
        Some("blank image (all bytes 0x00)")
    } else {
        None
    }
}

/// Decodes the TLV structure. Structural problems are errors; a checksum
/// mismatch is reported in the result (see [`Image::check`]).
pub fn decode(data: &[u8]) -> Result<Image, DecodeError> {
    if let Some(b) = blank_kind(data) {
        return Err(DecodeError::whole(format!("not an ONIE TLV image: {b}")));
    }
    if data.len() < HEADER_LEN {
        return Err(DecodeError::whole(format!(
            "truncated header: {} bytes, an ONIE header needs {HEADER_LEN}",
            data.len()
        )));
    }
    if &data[..8] != MAGIC {
        return Err(DecodeError::at(
            0,
            format!(
                "bad magic {:?}, expected \"TlvInfo\\0\"",
                String::from_utf8_lossy(&data[..8])
            ),
        ));
    }
    if data[8] != 1 {
        return Err(DecodeError::at(
            8,
            format!("unsupported version {:#04x}, expected 0x01", data[8]),
        ));
    }
    let total = usize::from(u16::from_be_bytes([data[9], data[10]]));
    if HEADER_LEN + total > MAX_LEN {
        return Err(DecodeError::at(
            9,
            format!("TLV area of {total} bytes makes the image {} bytes, over the ONIE maximum of {MAX_LEN}", HEADER_LEN + total),
        ));
    }
    let end = HEADER_LEN + total;
    if end > data.len() {
        return Err(DecodeError::at(
            9,
            format!(
                "TLV area of {total} bytes runs past the end of the image ({} bytes)",
                data.len()
            ),
        ));
    }
    let mut tlvs = Vec::new();
    let mut off = HEADER_LEN;
    while off < end {
        if off + 2 > end {
            return Err(DecodeError::at(
                off,
                format!("TLV header runs past the declared TLV area (ends at {end:#x})"),
            ));
        }
        let (code, len) = (data[off], usize::from(data[off + 1]));
        if off + 2 + len > end {
            return Err(DecodeError::at(
                off,
                format!("TLV type {code:#04x} of length {len} runs past the declared TLV area (ends at {end:#x})"),
            ));
        }
        // the kernel's layout takes nothing after the CRC-32 TLV
        if code == CRC_TYPE && (len != 4 || off + 2 + len != end) {
            return Err(DecodeError::at(
                off,
                format!(
                    "CRC-32 TLV of length {len} with {} byte(s) of TLV area after it: it must be the last, of length 4",
                    end - (off + 2 + len)
                ),
            ));
        }
        let v = &data[off + 2..off + 2 + len];
        let info = type_info(code);
        tlvs.push(Tlv {
            offset: off,
            code,
            name: info.map(|i| i.0),
            len,
            value_offset: off + 2,
            hex: hex::encode(v),
            text: info.and_then(|i| value_text(i.1, v)),
        });
        off += 2 + len;
    }
    let last = match tlvs.last() {
        Some(t) if t.code == CRC_TYPE && t.len == 4 => t.clone(),
        Some(t) => {
            return Err(DecodeError::at(
                t.offset,
                format!(
                    "last TLV is type {:#04x} length {}, not the CRC-32 TLV (type 0xfe, length 4)",
                    t.code, t.len
                ),
            ))
        }
        None => {
            return Err(DecodeError::at(
                HEADER_LEN,
                "no TLVs, not even the CRC-32 TLV",
            ))
        }
    };
    let v = &data[last.value_offset..last.value_offset + 4];
    let crc_found = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
    let crc_expected = crc32(&data[..last.value_offset]);
    Ok(Image {
        version: data[8],
        total_len: total,
        tlvs,
        crc_found,
        crc_expected,
        crc_valid: crc_found == crc_expected,
    })
}
