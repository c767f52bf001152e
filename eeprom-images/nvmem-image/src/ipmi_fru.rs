//! IPMI FRU information (Platform Management FRU Information Storage
//! Definition v1.0 rev 1.3): common header, chassis, board and product
//! info areas (`format = "ipmi-fru"`, layout `nvmem-lab,ipmi-fru`).
//!
//! Validation and cells come from [`parse`], the very file the kernel's
//! layout driver is built from, so that `cells` predicts what the kernel
//! makes. This module builds images from descriptions and decodes the
//! field encodings (6-bit ASCII, BCD plus, 8-bit text) for people.

#[path = "../../../layouts/drivers/ipmi_fru_parse.rs"]
pub mod parse;

use crate::cells::{self, Cell, Layout, Post};
use crate::desc::{byte_field, int, only_keys, pad_to, usize_field, Spec, MAX_IMAGE};
use crate::dump::{quote, spaced_hex, uniform_tail};
use crate::error::{DecodeError, DescError};
use crate::format::{self, BuildError, Candidate, Decoded, FormatSpec, Found, ImageFormat};
use crate::inspect::Inspection;
use crate::view::{self, Value};
use crate::{hex, uboot};
use parse::{Area, Encoding};
use serde::Serialize;
use std::fmt::{self, Write as _};
use std::path::Path;
use std::sync::Arc;
use toml::{Table, Value as TomlValue};

type R<T> = std::result::Result<T, DescError>;

/// The layout compatible (ours: upstream has none for FRU information).
pub const COMPATIBLE: &str = "nvmem-lab,ipmi-fru";

/// The type/length byte that ends an area's fields.
const END_MARKER: u8 = 0xc1;

/// Latest manufacturing date the 3 bytes hold, in minutes since 1996.
const MAX_MINUTES: i64 = 0xff_ffff;

/// One field as stored: its encoding and data bytes (at most 63).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldValue {
    pub encoding: Encoding,
    pub bytes: Vec<u8>,
}

/// One info area of a description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AreaDesc {
    pub area: Area,
    /// chassis type (chassis area)
    pub chassis_type: u8,
    /// language code (board and product areas)
    pub language: u8,
    /// minutes since 1996-01-01 00:00 UTC (board area; 0: unspecified)
    pub mfg_minutes: u32,
    /// the area's fixed fields in order (empty ones included)
    pub fields: Vec<FieldValue>,
    pub custom: Vec<FieldValue>,
}

/// A description of a FRU image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desc {
    /// chassis, board, product (those present), placed after the header
    pub areas: Vec<AreaDesc>,
    pub size: Option<usize>,
    pub fill: u8,
}

/// The fixed fields of each area: description key (cell name suffix).
fn field_keys(area: Area) -> &'static [&'static str] {
    match area {
        Area::Chassis => &["part-number", "serial-number"],
        Area::Board => &[
            "manufacturer",
            "product-name",
            "serial-number",
            "part-number",
            "fru-file-id",
        ],
        Area::Product => &[
            "manufacturer",
            "name",
            "part-number",
            "version",
            "serial-number",
            "asset-tag",
            "fru-file-id",
        ],
    }
}

fn area_key(area: Area) -> &'static str {
    match area {
        Area::Chassis => "chassis",
        Area::Board => "board",
        Area::Product => "product",
    }
}

/// English (language code 0 or 25) stores 8-bit text as Latin-1, other
/// languages as 16-bit Unicode (least significant byte first).
fn english(language: u8) -> bool {
    language == 0 || language == 25
}

// ---- field encodings ----

/// BCD plus: one character per nibble, high nibble first.
const BCD_PLUS: &[u8; 13] = b"0123456789 -.";

fn encode_bcd_plus(s: &str) -> Result<Vec<u8>, String> {
    let mut nibbles = Vec::new();
    for c in s.chars() {
        let n = BCD_PLUS
            .iter()
            .position(|&b| char::from(b) == c)
            .ok_or_else(|| format!("{c:?} is no BCD plus character (0-9, space, '-', '.')"))?;
        nibbles.push(n as u8);
    }
    if nibbles.len() % 2 == 1 {
        // a space fills the last byte
        nibbles.push(0xa);
    }
    Ok(nibbles.chunks(2).map(|p| p[0] << 4 | p[1]).collect())
}

/// BCD plus bytes as text (reserved nibbles 0xD..0xF as '?').
pub fn decode_bcd_plus(b: &[u8]) -> String {
    b.iter()
        .flat_map(|&x| [x >> 4, x & 0xf])
        .map(|n| BCD_PLUS.get(usize::from(n)).map_or('?', |&c| char::from(c)))
        .collect()
}

/// 6-bit ASCII: characters 0x20..=0x5f as 0..=63, packed least
/// significant bits first, four in three bytes.
fn encode_six_bit(s: &str) -> Result<Vec<u8>, String> {
    let mut bits: u32 = 0;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in s.chars() {
        let v = u32::from(c)
            .checked_sub(0x20)
            .filter(|&v| v < 64)
            .ok_or_else(|| {
                format!("{c:?} is no 6-bit ASCII character (space to '_', upper case)")
            })?;
        bits |= v << nbits;
        nbits += 6;
        while nbits >= 8 {
            out.push(bits as u8);
            bits >>= 8;
            nbits -= 8;
        }
    }
    if nbits > 0 {
        out.push(bits as u8);
    }
    Ok(out)
}

/// 6-bit ASCII bytes as text: every whole 6 bits of the bytes, so 3
/// bytes give 4 characters.
pub fn decode_six_bit(b: &[u8]) -> String {
    let total = b.len() * 8 / 6;
    (0..total)
        .map(|i| {
            let bit = i * 6;
            let lo = u32::from(b[bit / 8]);
            let hi = b.get(bit / 8 + 1).map_or(0, |&x| u32::from(x));
            let v = ((hi << 8 | lo) >> (bit % 8)) & 0x3f;
            char::from(0x20 + v as u8)
        })
        .collect()
}

/// 8-bit text: Latin-1 for English, else 16-bit Unicode (LSB first).
pub fn decode_text(b: &[u8], language: u8) -> String {
    if english(language) {
        b.iter().map(|&x| char::from(x)).collect()
    } else {
        let units: Vec<u16> = b
            .chunks(2)
            .map(|p| u16::from_le_bytes([p[0], p.get(1).copied().unwrap_or(0)]))
            .collect();
        String::from_utf16_lossy(&units)
    }
}

/// A field's bytes as text for people (None: binary).
pub fn decode_field(encoding: Encoding, b: &[u8], language: u8) -> Option<String> {
    match encoding {
        Encoding::Binary => None,
        Encoding::BcdPlus => Some(decode_bcd_plus(b)),
        Encoding::SixBitAscii => Some(decode_six_bit(b)),
        Encoding::Text => Some(decode_text(b, language)),
    }
}

// ---- dates ----

/// Days from 1970-01-01 to a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn epoch_1996() -> i64 {
    days_from_civil(1996, 1, 1)
}

/// "YYYY-MM-DD hh:mm" (UTC) as minutes since 1996-01-01 00:00.
fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let shape = b.len() == 16
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b' ',
            13 => c == b':',
            _ => c.is_ascii_digit(),
        });
    if !shape {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s[r].parse::<i64>().ok();
    let (y, mo, d, h, mi) = (n(0..4)?, n(5..7)?, n(8..10)?, n(11..13)?, n(14..16)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[(mo - 1) as usize] || h > 23 || mi > 59 {
        return None;
    }
    Some((days_from_civil(y, mo, d) - epoch_1996()) * 1440 + h * 60 + mi)
}

/// Minutes since 1996 as "YYYY-MM-DD hh:mm UTC" (0: unspecified).
pub fn format_date(minutes: u32) -> String {
    if minutes == 0 {
        return "unspecified".into();
    }
    let m = i64::from(minutes);
    let (y, mo, d) = civil_from_days(epoch_1996() + m / 1440);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02} UTC",
        m % 1440 / 60,
        m % 60
    )
}

// ---- descriptions ----

fn field_value(v: &TomlValue, key: &str, language: u8) -> R<FieldValue> {
    let err = |msg: String| DescError::field(key, msg);
    let (encoding, bytes) = match v {
        TomlValue::String(s) => (Encoding::Text, encode_text(s, language).map_err(err)?),
        TomlValue::Table(t) if t.len() == 1 => {
            let (kind, inner) = t.iter().next().expect("one key");
            let text = inner.as_str().ok_or_else(|| {
                DescError::field(
                    format!("{key}.{kind}"),
                    format!("expected a string, found {}", inner.type_str()),
                )
            })?;
            let sub = |msg: String| DescError::field(format!("{key}.{kind}"), msg);
            match kind.as_str() {
                "text" => (Encoding::Text, encode_text(text, language).map_err(sub)?),
                "bcd-plus" => (Encoding::BcdPlus, encode_bcd_plus(text).map_err(sub)?),
                "six-bit" => (Encoding::SixBitAscii, encode_six_bit(text).map_err(sub)?),
                "binary" => (Encoding::Binary, hex::decode(text).map_err(sub)?),
                other => {
                    return Err(DescError::field(
                        format!("{key}.{other}"),
                        "unknown encoding (text, bcd-plus, six-bit, binary)",
                    ))
                }
            }
        }
        other => {
            return Err(err(format!(
            "expected a string or a table with one of text, bcd-plus, six-bit, binary; found {}",
            other.type_str()
        )))
        }
    };
    if bytes.len() > 63 {
        return Err(err(format!(
            "{} bytes exceed the 63 a field holds",
            bytes.len()
        )));
    }
    if encoding == Encoding::Text && bytes.len() == 1 {
        return Err(err(
            "a 1-byte text field would be the end marker 0xc1: use another length or type".into(),
        ));
    }
    Ok(FieldValue { encoding, bytes })
}

fn encode_text(s: &str, language: u8) -> Result<Vec<u8>, String> {
    if english(language) {
        s.chars()
            .map(|c| {
                u8::try_from(u32::from(c)).map_err(|_| {
                    format!("{c:?} is not Latin-1 (8-bit text of language {language})")
                })
            })
            .collect()
    } else {
        Ok(s.encode_utf16().flat_map(u16::to_le_bytes).collect())
    }
}

fn parse_area(area: Area, v: &TomlValue) -> R<AreaDesc> {
    let key = area_key(area);
    let t = v.as_table().ok_or_else(|| {
        DescError::field(key, format!("expected a table, found {}", v.type_str()))
    })?;
    let ctx = format!("{key}.");
    let mut allowed: Vec<&str> = field_keys(area).to_vec();
    allowed.push("custom");
    match area {
        Area::Chassis => allowed.push("type"),
        Area::Board => allowed.extend(["language", "mfg-date"]),
        Area::Product => allowed.push("language"),
    }
    only_keys(t, &allowed, &ctx)?;
    let within = |e: DescError| DescError {
        field: Some(format!("{ctx}{}", e.field.unwrap_or_default())),
        msg: e.msg,
    };
    let language = byte_field(t, "language", 0).map_err(within)?;
    let chassis_type = byte_field(t, "type", 0).map_err(within)?;
    let mfg_minutes = match t.get("mfg-date") {
        None => 0,
        Some(TomlValue::Integer(i)) if (0..=MAX_MINUTES).contains(i) => *i as u32,
        Some(TomlValue::String(s)) => match parse_date(s) {
            Some(m) if (0..=MAX_MINUTES).contains(&m) => m as u32,
            Some(_) => {
                return Err(DescError::field(
                    format!("{ctx}mfg-date"),
                    format!("{s:?} is outside 1996-01-01 00:00 .. 2027-11-24 20:15 (3 bytes of minutes)"),
                ))
            }
            None => {
                return Err(DescError::field(
                    format!("{ctx}mfg-date"),
                    format!("{s:?} is not \"YYYY-MM-DD hh:mm\" (UTC)"),
                ))
            }
        },
        Some(other) => {
            return Err(DescError::field(
                format!("{ctx}mfg-date"),
                format!(
                    "expected \"YYYY-MM-DD hh:mm\" or minutes since 1996 (0..={MAX_MINUTES}), found {other}"
                ),
            ))
        }
    };
    let mut fields = Vec::new();
    for k in field_keys(area) {
        fields.push(match t.get(*k) {
            None => FieldValue {
                encoding: Encoding::Text,
                bytes: Vec::new(),
            },
            Some(v) => field_value(v, &format!("{ctx}{k}"), language)?,
        });
    }
    let mut custom = Vec::new();
    match t.get("custom") {
        None => {}
        Some(TomlValue::Array(a)) => {
            for (i, v) in a.iter().enumerate() {
                custom.push(field_value(v, &format!("{ctx}custom[{i}]"), language)?);
            }
        }
        Some(other) => {
            return Err(DescError::field(
                format!("{ctx}custom"),
                format!("expected an array of fields, found {}", other.type_str()),
            ))
        }
    }
    Ok(AreaDesc {
        area,
        chassis_type,
        language,
        mfg_minutes,
        fields,
        custom,
    })
}

fn parse_desc(t: &Table) -> R<Spec> {
    only_keys(
        t,
        &["format", "size", "fill", "chassis", "board", "product"],
        "",
    )?;
    let mut areas = Vec::new();
    for area in [Area::Chassis, Area::Board, Area::Product] {
        if let Some(v) = t.get(area_key(area)) {
            areas.push(parse_area(area, v)?);
        }
    }
    if let Some(i) = int(t, "size")? {
        if i < 8 {
            return Err(DescError::field(
                "size",
                format!("{i} bytes cannot hold the 8-byte common header"),
            ));
        }
    }
    let desc = Desc {
        areas,
        size: usize_field(t, "size", MAX_IMAGE)?,
        fill: byte_field(t, "fill", 0xff)?,
    };
    // the layout's errors (an area over 2040 bytes) now, with the field
    desc.encode()?;
    Ok(Spec::Format(FormatSpec::new(&IpmiFru, desc)))
}

// ---- building ----

fn encode_area(a: &AreaDesc) -> R<Vec<u8>> {
    let mut out = vec![1, 0];
    match a.area {
        Area::Chassis => out.push(a.chassis_type),
        Area::Board => {
            out.push(a.language);
            out.extend_from_slice(&a.mfg_minutes.to_le_bytes()[..3]);
        }
        Area::Product => out.push(a.language),
    }
    for f in a.fields.iter().chain(&a.custom) {
        let code = match f.encoding {
            Encoding::Binary => 0,
            Encoding::BcdPlus => 1,
            Encoding::SixBitAscii => 2,
            Encoding::Text => 3,
        };
        out.push(code << 6 | f.bytes.len() as u8);
        out.extend_from_slice(&f.bytes);
    }
    out.push(END_MARKER);
    // zero padding, then the checksum as the last byte
    let len = (out.len() + 1).div_ceil(8) * 8;
    let units = u8::try_from(len / 8).map_err(|_| {
        DescError::field(
            area_key(a.area),
            format!("the area needs {len} bytes, over the 2040 of its length byte"),
        )
    })?;
    out[1] = units;
    out.resize(len - 1, 0);
    out.push(checksum(&out));
    Ok(out)
}

/// The zero-sum checksum of `bytes`.
fn checksum(bytes: &[u8]) -> u8 {
    bytes
        .iter()
        .fold(0u8, |s, &b| s.wrapping_add(b))
        .wrapping_neg()
}

/// An image (unpadded) and where each of its areas lies (start, length).
type Encoded = (Vec<u8>, Vec<(usize, usize)>);

impl Desc {
    /// The image (unpadded) and where each area lies.
    fn encode(&self) -> R<Encoded> {
        let mut img = vec![1, 0, 0, 0, 0, 0, 0, 0];
        let mut spans = Vec::new();
        for a in &self.areas {
            let start = img.len();
            let units = u8::try_from(start / 8).map_err(|_| {
                DescError::field(
                    area_key(a.area),
                    format!("the area would start at {start:#x}, past the 0x7f8 an offset reaches"),
                )
            })?;
            img[a.area_header_byte()] = units;
            let bytes = encode_area(a)?;
            spans.push((start, bytes.len()));
            img.extend_from_slice(&bytes);
        }
        img[7] = checksum(&img[..7]);
        Ok((img, spans))
    }
}

impl AreaDesc {
    fn area_header_byte(&self) -> usize {
        match self.area {
            Area::Chassis => 2,
            Area::Board => 3,
            Area::Product => 4,
        }
    }
}

/// The IPMI FRU information format.
pub struct IpmiFru;

fn desc_of(spec: &Spec) -> Option<&Desc> {
    match spec {
        Spec::Format(f) => f.data::<Desc>(),
        _ => None,
    }
}

/// Cheap and safe detection: format version 0x01, pad byte 0, a zero-sum
/// header and at least one area.
fn has_header(img: &[u8]) -> bool {
    match img.get(..8) {
        Some(h) => {
            h[0] == 1
                && h[6] == 0
                && h[1..6].iter().any(|&o| o != 0)
                && h.iter().fold(0u8, |s, &b| s.wrapping_add(b)) == 0
        }
        None => false,
    }
}

impl ImageFormat for IpmiFru {
    fn name(&self) -> &'static str {
        "ipmi-fru"
    }

    fn parse(&self, t: &Table) -> R<Spec> {
        parse_desc(t)
    }

    fn build(&self, spec: &Spec, _path: &Path) -> Result<Vec<u8>, BuildError> {
        let d = desc_of(spec).ok_or_else(|| format::not_mine(self))?;
        let (img, _) = d.encode()?;
        Ok(pad_to(img, d.size, d.fill)?)
    }

    fn reseal(&self, spec: &Spec, img: &mut [u8]) -> Result<(), String> {
        let d = desc_of(spec).ok_or_else(|| format::not_mine(self).msg)?;
        let (_, spans) = d.encode().map_err(|e| e.to_string())?;
        if img.len() < 8 {
            return Err(format!(
                "the header checksum is at byte 0x7, the image has {} bytes",
                img.len()
            ));
        }
        img[7] = checksum(&img[..7]);
        for (start, len) in spans {
            let Some(area) = img.get_mut(start..start + len) else {
                return Err(format!(
                    "the area at {start:#x} ({len} bytes) runs past the image"
                ));
            };
            area[len - 1] = checksum(&area[..len - 1]);
        }
        Ok(())
    }

    fn detect(&self, img: &[u8]) -> bool {
        has_header(img)
    }

    fn magic(&self) -> Option<&'static str> {
        Some("no IPMI FRU common header")
    }

    fn inspect(&self, img: &[u8]) -> Result<Inspection, DecodeError> {
        Ok(Inspection::Format(Found(Arc::new(decode(img)?))))
    }

    fn layouts(&self) -> &'static [(&'static str, Layout)] {
        &[(COMPATIBLE, Layout::Compatible(COMPATIBLE))]
    }

    fn dump_candidates(&self, img: &[u8]) -> Option<&'static [Candidate]> {
        has_header(img).then_some(&[dump_candidate])
    }

    fn predict(
        &self,
        _layout: Layout,
        img: &[u8],
        index: Option<i64>,
        _env: uboot::Geometry,
    ) -> Result<Vec<Cell>, DecodeError> {
        let span = &img[..img.len().min(parse::MAX_SPAN)];
        let fru = parse::parse(span).map_err(to_decode_error)?;
        let mut out = Vec::new();
        let mut name = [0u8; parse::NAME_MAX];
        fru.for_each_cell(|c| {
            let raw = &span[c.offset..c.offset + c.len];
            out.push(cells::make(
                c.name(&mut name),
                c.offset,
                raw,
                c.len,
                Post::None,
                index,
            ));
            Ok::<(), ()>(())
        })
        .ok();
        Ok(out)
    }

    fn view(&self, layout: &str, name: &str, b: &[u8]) -> Option<Value> {
        if layout != COMPATIBLE {
            return None;
        }
        Some(match (name, b) {
            ("board-mfg-date", [x, y, z]) => Value::Date {
                text: format_date(u32::from_le_bytes([*x, *y, *z, 0])),
            },
            ("chassis-type", [t]) => Value::Integer {
                value: u64::from(*t),
            },
            // the type/length byte is not part of the cell: the bytes are
            // shown as text when they are, else hex
            _ => view::text_or_hex(b),
        })
    }
}

// ---- dump ----

/// A description of a valid image, in the terms `build` lays images out
/// with: areas after the header, fields as stored, fill after the last
/// area (`dump` rebuilds it and falls back to a blob when the bytes differ).
fn dump_candidate(img: &[u8]) -> Result<String, String> {
    let image = decode(img).map_err(|e| e.to_string())?;
    if let Some(p) = &image.problem {
        return Err(format!("the layout rejects it ({p})"));
    }
    for (offset, what) in [
        (image.internal_use, "an internal use area"),
        (image.multirecord, "a multirecord area"),
    ] {
        if offset != 0 {
            return Err(format!(
                "it has {what} (at {offset:#x}), which descriptions do not hold"
            ));
        }
    }
    let mut areas = String::new();
    let mut end = 8;
    for (area, start) in [
        (Area::Chassis, image.chassis),
        (Area::Board, image.board),
        (Area::Product, image.product),
    ] {
        if start == 0 {
            continue;
        }
        let len = img.get(start + 1).map_or(0, |&b| usize::from(b) * 8);
        let bytes = img
            .get(start..start + len)
            .ok_or_else(|| format!("the {} area runs past the image", area_key(area)))?;
        end = end.max(start + len);
        dump_area(&mut areas, area, bytes)?;
    }
    let fill = uniform_tail(img, end, 0xff).ok_or_else(|| {
        format!("bytes after the last area (from {end:#x}) are not one fill byte")
    })?;
    Ok(format!(
        "format = \"ipmi-fru\"\nsize = {:#x}\nfill = {fill:#04x}\n{areas}",
        img.len()
    ))
}

/// One info area (its bytes, checksum included) as its table.
fn dump_area(s: &mut String, area: Area, a: &[u8]) -> Result<(), String> {
    let byte = |i: usize| {
        a.get(i)
            .copied()
            .ok_or("the area ends inside its fixed bytes")
    };
    let _ = writeln!(s, "\n[{}]", area_key(area));
    let language = match area {
        Area::Chassis => {
            let _ = writeln!(s, "type = {:#04x}", byte(2)?);
            0
        }
        Area::Board => {
            let language = byte(2)?;
            let minutes = u32::from_le_bytes([byte(3)?, byte(4)?, byte(5)?, 0]);
            let _ = writeln!(s, "language = {language}");
            if minutes != 0 {
                let date = format_date(minutes);
                let _ = writeln!(s, "mfg-date = {}", quote(date.trim_end_matches(" UTC")));
            }
            language
        }
        Area::Product => {
            let language = byte(2)?;
            let _ = writeln!(s, "language = {language}");
            language
        }
    };
    let keys = field_keys(area);
    let mut custom = Vec::new();
    let mut at = if area == Area::Board { 6 } else { 3 };
    for n in 0.. {
        let tl = byte(at)?;
        if tl == END_MARKER {
            break;
        }
        let len = usize::from(tl & 0x3f);
        let data = a
            .get(at + 1..at + 1 + len)
            .ok_or_else(|| format!("the field at {at:#x} of its area runs past it"))?;
        let value = match tl >> 6 {
            0 => format!("{{ binary = {} }}", quote(&spaced_hex(data))),
            1 => format!("{{ bcd-plus = {} }}", quote(&decode_bcd_plus(data))),
            2 => format!("{{ six-bit = {} }}", quote(&decode_six_bit(data))),
            _ => quote(&decode_text(data, language)),
        };
        match keys.get(n) {
            // an empty text field is what an absent key builds
            Some(_) if tl == 0xc0 => {}
            Some(k) => {
                let _ = writeln!(s, "{k} = {value}");
            }
            None => custom.push(value),
        }
        at += 1 + len;
    }
    if !custom.is_empty() {
        let _ = writeln!(s, "custom = [{}]", custom.join(", "));
    }
    Ok(())
}

/// The parser's error where it names an offset.
fn to_decode_error(e: parse::Error) -> DecodeError {
    DecodeError::whole(e.to_string())
}

// ---- inspect ----

/// A field (cell) as `inspect` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FieldInfo {
    /// the cell name
    pub name: String,
    /// offset of the data (the type/length byte is the one before)
    pub offset: usize,
    pub len: usize,
    pub encoding: &'static str,
    pub hex: String,
    /// decoded for people (text, 6-bit ASCII, BCD plus, date, type)
    pub text: Option<String>,
}

/// A decoded FRU image.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Image {
    pub format: &'static str,
    pub version: u8,
    pub header_checksum_valid: bool,
    /// byte offsets from the header (0: absent): internal use, chassis,
    /// board, product, multirecord
    pub internal_use: usize,
    pub chassis: usize,
    pub board: usize,
    pub product: usize,
    pub multirecord: usize,
    /// the fields, when the image is valid
    pub fields: Vec<FieldInfo>,
    /// why the kernel's layout rejects the image
    pub problem: Option<String>,
}

fn encoding_name(e: Encoding) -> &'static str {
    match e {
        Encoding::Binary => "binary",
        Encoding::BcdPlus => "bcd-plus",
        Encoding::SixBitAscii => "six-bit",
        Encoding::Text => "text",
    }
}

/// Decodes an image: the header always, the fields when the whole image is
/// valid (else the problem the layout reports).
pub fn decode(img: &[u8]) -> Result<Image, DecodeError> {
    let Some(h) = img.get(..8) else {
        return Err(to_decode_error(parse::Error::Short { len: img.len() }));
    };
    let off = |i: usize| usize::from(h[i]) * 8;
    let mut image = Image {
        format: "ipmi-fru",
        version: h[0],
        header_checksum_valid: h.iter().fold(0u8, |s, &b| s.wrapping_add(b)) == 0,
        internal_use: off(1),
        chassis: off(2),
        board: off(3),
        product: off(4),
        multirecord: off(5),
        fields: Vec::new(),
        problem: None,
    };
    let span = &img[..img.len().min(parse::MAX_SPAN)];
    match parse::parse(span) {
        Err(e) => image.problem = Some(e.to_string()),
        Ok(fru) => {
            let mut name = [0u8; parse::NAME_MAX];
            let language = |area: Area| {
                let start = match area {
                    Area::Chassis => return 0,
                    Area::Board => image.board,
                    Area::Product => image.product,
                };
                span.get(start + 2).copied().unwrap_or(0)
            };
            let mut fields = Vec::new();
            let _ = fru.for_each_cell(|c| {
                let b = &span[c.offset..c.offset + c.len];
                let text = match c.field {
                    parse::Field::MfgDate => {
                        Some(format_date(u32::from_le_bytes([b[0], b[1], b[2], 0])))
                    }
                    parse::Field::ChassisType => Some(b[0].to_string()),
                    _ => decode_field(c.encoding, b, language(c.area)),
                };
                fields.push(FieldInfo {
                    name: c.name(&mut name).to_owned(),
                    offset: c.offset,
                    len: c.len,
                    encoding: encoding_name(c.encoding),
                    hex: hex::encode(b),
                    text,
                });
                Ok::<(), ()>(())
            });
            image.fields = fields;
        }
    }
    Ok(image)
}

impl Decoded for Image {
    fn check(&self) -> Result<(), DecodeError> {
        match &self.problem {
            Some(p) => Err(DecodeError::whole(p.clone())),
            None => Ok(()),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        let at = |o: usize| {
            if o == 0 {
                "-".to_string()
            } else {
                format!("{o:#x}")
            }
        };
        writeln!(
            s,
            "format: IPMI FRU, version {}, header checksum {}",
            self.version,
            format::valid(self.header_checksum_valid)
        )?;
        writeln!(
            s,
            "areas: internal use {}, chassis {}, board {}, product {}, multirecord {}",
            at(self.internal_use),
            at(self.chassis),
            at(self.board),
            at(self.product),
            at(self.multirecord)
        )?;
        if !self.fields.is_empty() {
            writeln!(
                s,
                "{:>6}  {:<8} {:>3}  {:<24} value",
                "offset", "encoding", "len", "name"
            )?;
        }
        for fi in &self.fields {
            let v = match &fi.text {
                Some(t) => format!("{t:?}"),
                None => format!("hex {}", fi.hex),
            };
            writeln!(
                s,
                "{:>#6x}  {:<8} {:>3}  {:<24} {v}",
                fi.offset, fi.encoding, fi.len, fi.name
            )?;
        }
        match &self.problem {
            Some(p) => writeln!(s, "INVALID: {p}")?,
            None => writeln!(s, "checksums and fields: valid")?,
        }
        f.write_str(&s)
    }
}
