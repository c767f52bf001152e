//! ONIE TLV EEPROM ("TlvInfo") images.
//!
//! Header: 8 bytes `TlvInfo\0`, version 0x01, 2-byte big-endian length of
//! the TLV area. TLVs: type, length, value. The last TLV is the CRC-32
//! (type 0xFE, length 4, big-endian) over every byte before its value.

use crate::cells::{self, Cell, Layout, Post};
use crate::desc::{
    byte_field, only_keys, pad_to, required, str_field, tables, usize_field, within, Spec,
    MAX_IMAGE,
};
use crate::dump::{quote, spaced_hex, uniform_tail};
use crate::error::{DecodeError, DescError};
use crate::format::{self, BuildError, Candidate, ImageFormat};
use crate::inspect::Inspection;
use crate::view::{self, Value};
use crate::{hex, mac, uboot};
use serde::Serialize;
use std::fmt::{self, Write as _};
use std::path::Path;
use toml::{Table, Value as TomlValue};

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

type R<T> = std::result::Result<T, DescError>;

fn onie_value(name: &str, kind: Kind, v: &TomlValue) -> R<Vec<Vec<u8>>> {
    let text = |v: &TomlValue| -> R<String> {
        v.as_str().map(str::to_owned).ok_or_else(|| {
            DescError::field(name, format!("expected a string, found {}", v.type_str()))
        })
    };
    let ascii = |s: String| -> R<Vec<u8>> {
        if s.is_ascii() {
            Ok(s.into_bytes())
        } else {
            Err(DescError::field(name, "must be ASCII text"))
        }
    };
    let out = match kind {
        Kind::Text => ascii(text(v)?)?,
        Kind::Date => {
            let s = text(v)?;
            let ok = s.len() == 19
                && s.bytes().enumerate().all(|(i, c)| match i {
                    2 | 5 => c == b'/',
                    10 => c == b' ',
                    13 | 16 => c == b':',
                    _ => c.is_ascii_digit(),
                });
            if !ok {
                return Err(DescError::field(
                    name,
                    format!("{s:?} is not MM/DD/YYYY hh:mm:ss"),
                ));
            }
            s.into_bytes()
        }
        Kind::Country => {
            let s = text(v)?;
            if s.len() != 2 || !s.bytes().all(|c| c.is_ascii_uppercase()) {
                return Err(DescError::field(
                    name,
                    format!("{s:?} is not a two-letter country code"),
                ));
            }
            s.into_bytes()
        }
        Kind::Mac => {
            let s = text(v)?;
            mac::parse(&s)
                .ok_or_else(|| {
                    DescError::field(
                        name,
                        format!("{s:?} is not a MAC address (xx:xx:xx:xx:xx:xx)"),
                    )
                })?
                .to_vec()
        }
        Kind::U8 | Kind::U16 => {
            let max = if kind == Kind::U8 { 255 } else { 65535 };
            let i = v.as_integer().ok_or_else(|| {
                DescError::field(name, format!("expected an integer, found {}", v.type_str()))
            })?;
            if !(0..=max).contains(&i) {
                return Err(DescError::field(
                    name,
                    format!("{i} is out of range 0..={max}"),
                ));
            }
            if kind == Kind::U8 {
                vec![i as u8]
            } else {
                (i as u16).to_be_bytes().to_vec()
            }
        }
        Kind::Hex => {
            // one value, or an array of them (one TLV each)
            if let TomlValue::Array(a) = v {
                let mut all = Vec::new();
                for (i, item) in a.iter().enumerate() {
                    let s = item.as_str().ok_or_else(|| {
                        DescError::field(format!("{name}[{i}]"), "expected a hex string")
                    })?;
                    all.push(
                        hex::decode(s).map_err(|e| DescError::field(format!("{name}[{i}]"), e))?,
                    );
                }
                return Ok(all);
            }
            hex::decode(&text(v)?).map_err(|e| DescError::field(name, e))?
        }
        Kind::Crc => {
            return Err(DescError::field(
                name,
                "is computed by the tool, do not give it",
            ))
        }
    };
    if out.len() > 255 {
        return Err(DescError::field(
            name,
            format!(
                "value of {} bytes exceeds the TLV maximum of 255",
                out.len()
            ),
        ));
    }
    Ok(vec![out])
}

fn parse_desc(t: &Table) -> R<Spec> {
    let mut tlvs = Vec::new();
    for (k, v) in t {
        match k.as_str() {
            "format" | "size" | "fill" => {}
            "raw-tlv" => {
                for (i, r) in tables(t, "raw-tlv")?.into_iter().enumerate() {
                    let ctx = format!("raw-tlv[{i}].");
                    only_keys(r, &["type", "hex"], &ctx)?;
                    let code = usize_field(r, "type", 255).map_err(within(&ctx))?;
                    let code = required(code, &format!("{ctx}type"))? as u8;
                    let h = required(
                        str_field(r, "hex").map_err(within(&ctx))?,
                        &format!("{ctx}hex"),
                    )?;
                    let data =
                        hex::decode(h).map_err(|e| DescError::field(format!("{ctx}hex"), e))?;
                    if data.len() > 255 {
                        return Err(DescError::field(
                            format!("{ctx}hex"),
                            format!("value of {} bytes exceeds 255", data.len()),
                        ));
                    }
                    tlvs.push((code, data));
                }
            }
            name => {
                let Some((code, kind)) = type_by_name(name) else {
                    let known: Vec<_> = TYPES
                        .iter()
                        .filter(|t| t.0 != CRC_TYPE)
                        .map(|t| t.1)
                        .collect();
                    return Err(DescError::field(
                        name,
                        format!("unknown ONIE field (known: {}, raw-tlv)", known.join(", ")),
                    ));
                };
                for value in onie_value(name, kind, v)? {
                    tlvs.push((code, value));
                }
            }
        }
    }
    let size = usize_field(t, "size", MAX_IMAGE)?;
    Ok(Spec::OnieTlv {
        tlvs,
        size,
        fill: byte_field(t, "fill", 0xff)?,
    })
}

/// The ONIE TLV format (`format = "onie-tlv"`, layout `onie,tlv-layout`).
pub struct OnieTlv;

impl ImageFormat for OnieTlv {
    fn name(&self) -> &'static str {
        "onie-tlv"
    }

    fn parse(&self, t: &Table) -> R<Spec> {
        parse_desc(t)
    }

    fn build(&self, spec: &Spec, _path: &Path) -> Result<Vec<u8>, BuildError> {
        let Spec::OnieTlv { tlvs, size, fill } = spec else {
            return Err(format::not_mine(self).into());
        };
        let img = encode(tlvs).map_err(DescError::whole)?;
        Ok(pad_to(img, *size, *fill)?)
    }

    fn reseal(&self, spec: &Spec, img: &mut [u8]) -> Result<(), String> {
        let Spec::OnieTlv { tlvs, .. } = spec else {
            return Err(format::not_mine(self).msg);
        };
        let at = encode(tlvs)?.len() - 4;
        if img.len() < at + 4 {
            return Err(format!(
                "the checksum is at byte {:#x}, the image has {} bytes",
                at + 3,
                img.len()
            ));
        }
        let crc = crc32(&img[..at]);
        img[at..at + 4].copy_from_slice(&crc.to_be_bytes());
        Ok(())
    }

    fn detect(&self, img: &[u8]) -> bool {
        img.starts_with(MAGIC)
    }

    fn magic(&self) -> Option<&'static str> {
        Some("no ONIE \"TlvInfo\" magic")
    }

    fn inspect(&self, img: &[u8]) -> Result<Inspection, DecodeError> {
        decode(img).map(Inspection::OnieTlv)
    }

    fn layouts(&self) -> &'static [(&'static str, Layout)] {
        &[("onie,tlv-layout", Layout::OnieTlv)]
    }

    fn predict(
        &self,
        _layout: Layout,
        img: &[u8],
        index: Option<i64>,
        _env: uboot::Geometry,
    ) -> Result<Vec<Cell>, DecodeError> {
        let image = decode(img)?;
        image.check()?;
        Ok(image
            .tlvs
            .iter()
            // the kernel makes no cell of an empty TLV, and reads a
            // mac-address TLV plus the index only when it has 6 bytes
            .filter(|t| t.len > 0)
            .filter_map(|t| {
                let name = t.name?;
                let raw = &img[t.value_offset..t.value_offset + t.len];
                let kind = if t.code == 0x24 && t.len == 6 {
                    Post::MacAdd
                } else {
                    Post::None
                };
                Some(cells::make(name, t.value_offset, raw, t.len, kind, index))
            })
            .collect())
    }

    fn dump_candidates(&self, img: &[u8]) -> Option<&'static [Candidate]> {
        img.starts_with(MAGIC).then_some(&[dump_candidate])
    }

    fn view(&self, layout: &str, name: &str, b: &[u8]) -> Option<Value> {
        if layout != "onie,tlv-layout" {
            return None;
        }
        Some(match type_by_name(name).map(|t| t.1) {
            Some(Kind::Mac) => view::mac_value(b, true),
            Some(Kind::Date) => match hex::printable(b) {
                Some(text) => Value::Date { text },
                None => view::text_or_hex(b),
            },
            Some(Kind::U8 | Kind::U16) if (1..=2).contains(&b.len()) => Value::Integer {
                value: b.iter().fold(0, |v, &x| v << 8 | u64::from(x)),
            },
            Some(Kind::Hex | Kind::Crc) => Value::Hex {
                hex: hex::encode(b),
            },
            _ => view::text_or_hex(b),
        })
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        writeln!(
            s,
            "format: ONIE TLV, version {}, TLV area {} bytes",
            self.version, self.total_len
        )?;
        writeln!(
            s,
            "{:>6}  {:>4}  {:<18} {:>3}  value",
            "offset", "type", "name", "len"
        )?;
        for t in &self.tlvs {
            let v = t
                .text
                .clone()
                .map(|x| format!("{x:?}"))
                .unwrap_or_else(|| format!("hex {}", t.hex));
            writeln!(
                s,
                "{:>#6x}  {:#04x}  {:<18} {:>3}  {v}",
                t.offset,
                t.code,
                t.name.unwrap_or("(unknown)"),
                t.len
            )?;
        }
        let crc = format::checksum_line("crc32", 8, self.crc_found, self.crc_expected);
        writeln!(s, "{crc}")?;
        f.write_str(&s)
    }
}

format::decoded_by_variant!(Image, OnieTlv);

fn dump_candidate(img: &[u8]) -> std::result::Result<String, String> {
    let image = decode(img).map_err(|e| e.to_string())?;
    if !image.crc_valid {
        return Err("its CRC-32 does not match".into());
    }
    let end = HEADER_LEN + image.total_len;
    let fill = uniform_tail(img, end, 0xff)
        .ok_or_else(|| format!("bytes after the TLV area (from {end:#x}) are not one fill byte"))?;
    let mut s = String::new();
    let _ = writeln!(s, "format = \"onie-tlv\"");
    let _ = writeln!(s, "size = {:#x}", img.len());
    let _ = writeln!(s, "fill = {fill:#04x}\n");
    let mut raw = String::new();
    let mut hex_fields: Vec<(&str, Vec<String>)> = Vec::new();
    for t in &image.tlvs {
        if t.code == CRC_TYPE {
            continue;
        }
        let value = &img[t.value_offset..t.value_offset + t.len];
        match type_info(t.code) {
            Some((name, Kind::Hex)) => {
                let h = spaced_hex(value);
                match hex_fields.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => v.push(h),
                    None => {
                        // the first of its type holds the place of all
                        let _ = writeln!(s, "{name} = @{name}@");
                        hex_fields.push((name, vec![h]));
                    }
                }
            }
            Some((name, kind)) => {
                let v = match kind {
                    Kind::U8 if value.len() == 1 => value[0].to_string(),
                    Kind::U16 if value.len() == 2 => {
                        u16::from_be_bytes([value[0], value[1]]).to_string()
                    }
                    Kind::Mac if value.len() == 6 => quote(
                        &value
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect::<Vec<_>>()
                            .join(":"),
                    ),
                    Kind::Text | Kind::Date | Kind::Country if value.is_ascii() => {
                        quote(std::str::from_utf8(value).expect("ASCII"))
                    }
                    _ => {
                        return Err(format!(
                            "the {name} TLV at {:#x} is not a valid {name}",
                            t.offset
                        ))
                    }
                };
                let _ = writeln!(s, "{name} = {v}");
            }
            None => {
                let _ = write!(
                    raw,
                    "\n[[raw-tlv]]\ntype = {:#04x}\nhex = {}\n",
                    t.code,
                    quote(&spaced_hex(value))
                );
            }
        }
    }
    for (name, values) in hex_fields {
        let v = if values.len() == 1 {
            quote(&values[0])
        } else {
            format!(
                "[{}]",
                values
                    .iter()
                    .map(|h| quote(h))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        s = s.replacen(&format!("@{name}@"), &v, 1);
    }
    s.push_str(&raw);
    Ok(s)
}
