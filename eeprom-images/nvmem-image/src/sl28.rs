//! Kontron sl28 VPD, version 1: magic 'V', version 1, 15-byte serial
//! number, 6-byte base MAC address, CRC-8 (polynomial 0x07, MSB first,
//! initial value 0) over the 23 bytes before it.

use crate::cells::{self, Cell, Layout, Post};
use crate::desc::{
    byte_field, only_keys, pad_to, required, str_field, usize_field, Spec, MAX_IMAGE,
};
use crate::dump::{quote, uniform_tail};
use crate::error::{DecodeError, DescError};
use crate::format::{self, BuildError, Candidate, ImageFormat};
use crate::inspect::Inspection;
use crate::view::{self, Value};
use crate::{hex, mac, onie, uboot};
use serde::Serialize;
use std::fmt::{self, Write as _};
use std::path::Path;
use toml::Table;

pub const MAGIC: u8 = b'V';
pub const VERSION: u8 = 1;
pub const LEN: usize = 24;
pub const SERIAL_OFFSET: usize = 2;
pub const SERIAL_LEN: usize = 15;
pub const MAC_OFFSET: usize = 17;
pub const CRC_OFFSET: usize = 23;

const CRC8: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_8_SMBUS);

pub fn crc8(data: &[u8]) -> u8 {
    CRC8.checksum(data)
}

/// The 24-byte record. The serial number is padded with NUL bytes.
pub fn encode(serial: &[u8], base_mac: [u8; 6]) -> Result<Vec<u8>, String> {
    if serial.len() > SERIAL_LEN {
        return Err(format!(
            "serial number of {} bytes exceeds {SERIAL_LEN}",
            serial.len()
        ));
    }
    let mut out = vec![0u8; LEN];
    out[0] = MAGIC;
    out[1] = VERSION;
    out[SERIAL_OFFSET..SERIAL_OFFSET + serial.len()].copy_from_slice(serial);
    out[MAC_OFFSET..MAC_OFFSET + 6].copy_from_slice(&base_mac);
    out[CRC_OFFSET] = crc8(&out[..CRC_OFFSET]);
    Ok(out)
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Image {
    pub version: u8,
    pub serial_hex: String,
    /// the serial number up to its first NUL, if printable
    pub serial: Option<String>,
    pub base_mac: String,
    pub crc_found: u8,
    pub crc_expected: u8,
    pub crc_valid: bool,
}

impl Image {
    pub fn check(&self) -> Result<(), DecodeError> {
        if self.crc_valid {
            Ok(())
        } else {
            Err(DecodeError::at(
                CRC_OFFSET,
                format!(
                    "CRC-8 mismatch: expected {:#04x}, found {:#04x}",
                    self.crc_expected, self.crc_found
                ),
            ))
        }
    }
}

pub fn decode(data: &[u8]) -> Result<Image, DecodeError> {
    if let Some(b) = onie::blank_kind(data) {
        return Err(DecodeError::whole(format!("not an sl28 VPD image: {b}")));
    }
    if data.len() < LEN {
        return Err(DecodeError::whole(format!(
            "truncated: {} bytes, sl28 VPD v1 needs {LEN}",
            data.len()
        )));
    }
    if data[0] != MAGIC {
        return Err(DecodeError::at(
            0,
            format!("bad magic {:#04x}, expected 0x56 ('V')", data[0]),
        ));
    }
    if data[1] != VERSION {
        return Err(DecodeError::at(
            1,
            format!("unsupported version {}, expected 1", data[1]),
        ));
    }
    let serial = &data[SERIAL_OFFSET..SERIAL_OFFSET + SERIAL_LEN];
    let text_end = serial.iter().position(|&b| b == 0).unwrap_or(SERIAL_LEN);
    let crc_expected = crc8(&data[..CRC_OFFSET]);
    Ok(Image {
        version: data[1],
        serial_hex: hex::encode(serial),
        serial: hex::printable(&serial[..text_end]),
        base_mac: mac::format(&data[MAC_OFFSET..MAC_OFFSET + 6]),
        crc_found: data[CRC_OFFSET],
        crc_expected,
        crc_valid: crc_expected == data[CRC_OFFSET],
    })
}

type R<T> = std::result::Result<T, DescError>;

fn parse_desc(t: &Table) -> R<Spec> {
    only_keys(
        t,
        &[
            "format",
            "serial-number",
            "base-mac-address",
            "size",
            "fill",
        ],
        "",
    )?;
    let serial = required(str_field(t, "serial-number")?, "serial-number")?;
    if !serial.is_ascii() {
        return Err(DescError::field("serial-number", "must be ASCII text"));
    }
    if serial.len() > SERIAL_LEN {
        return Err(DescError::field(
            "serial-number",
            format!(
                "{} bytes exceed the {} of the sl28 VPD",
                serial.len(),
                SERIAL_LEN
            ),
        ));
    }
    let m = required(str_field(t, "base-mac-address")?, "base-mac-address")?;
    let base_mac = mac::parse(m).ok_or_else(|| {
        DescError::field(
            "base-mac-address",
            format!("{m:?} is not a MAC address (xx:xx:xx:xx:xx:xx)"),
        )
    })?;
    Ok(Spec::Sl28Vpd {
        serial: serial.as_bytes().to_vec(),
        base_mac,
        size: usize_field(t, "size", MAX_IMAGE)?,
        fill: byte_field(t, "fill", 0xff)?,
    })
}

/// Kontron sl28 VPD (`format = "sl28-vpd"`, layout `kontron,sl28-vpd`).
pub struct Sl28Vpd;

fn has_magic(img: &[u8]) -> bool {
    img.len() >= 2 && img[0] == MAGIC && img[1] == VERSION
}

impl ImageFormat for Sl28Vpd {
    fn name(&self) -> &'static str {
        "sl28-vpd"
    }

    fn parse(&self, t: &Table) -> R<Spec> {
        parse_desc(t)
    }

    fn build(&self, spec: &Spec, _path: &Path) -> Result<Vec<u8>, BuildError> {
        let Spec::Sl28Vpd {
            serial,
            base_mac,
            size,
            fill,
        } = spec
        else {
            return Err(format::not_mine(self).into());
        };
        let img = encode(serial, *base_mac).map_err(|e| DescError::field("serial-number", e))?;
        Ok(pad_to(img, *size, *fill)?)
    }

    fn reseal(&self, _spec: &Spec, img: &mut [u8]) -> Result<(), String> {
        if img.len() <= CRC_OFFSET {
            return Err(format!(
                "the checksum is at byte {CRC_OFFSET:#x}, the image has {} bytes",
                img.len()
            ));
        }
        img[CRC_OFFSET] = crc8(&img[..CRC_OFFSET]);
        Ok(())
    }

    fn detect(&self, img: &[u8]) -> bool {
        has_magic(img)
    }

    fn magic(&self) -> Option<&'static str> {
        Some("no sl28 'V' v1 magic")
    }

    fn inspect(&self, img: &[u8]) -> Result<Inspection, DecodeError> {
        decode(img).map(Inspection::Sl28Vpd)
    }

    fn layouts(&self) -> &'static [(&'static str, Layout)] {
        &[("kontron,sl28-vpd", Layout::Sl28Vpd)]
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
        let serial = &img[SERIAL_OFFSET..SERIAL_OFFSET + SERIAL_LEN];
        let m = &img[MAC_OFFSET..MAC_OFFSET + 6];
        Ok(vec![
            cells::make(
                "serial-number",
                SERIAL_OFFSET,
                serial,
                SERIAL_LEN,
                Post::None,
                index,
            ),
            cells::make(
                "base-mac-address",
                MAC_OFFSET,
                m,
                6,
                Post::MacAddValid,
                index,
            ),
        ])
    }

    fn dump_candidates(&self, img: &[u8]) -> Option<&'static [Candidate]> {
        has_magic(img).then_some(&[dump_candidate])
    }

    fn view(&self, layout: &str, name: &str, b: &[u8]) -> Option<Value> {
        if layout != "kontron,sl28-vpd" {
            return None;
        }
        Some(match name {
            "base-mac-address" => view::mac_value(b, true),
            // NUL-padded in the record
            _ => {
                let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
                view::text_or_hex(&b[..end])
            }
        })
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        writeln!(s, "format: Kontron sl28 VPD, version {}", self.version)?;
        writeln!(s, "{:>6}  {:<16} {:>3}  value", "offset", "field", "len")?;
        writeln!(
            s,
            "{:>#6x}  {:<16} {:>3}  {:?} (hex {})",
            SERIAL_OFFSET,
            "serial-number",
            SERIAL_LEN,
            self.serial.clone().unwrap_or_default(),
            self.serial_hex
        )?;
        writeln!(
            s,
            "{:>#6x}  {:<16} {:>3}  {}",
            MAC_OFFSET, "base-mac-address", 6, self.base_mac
        )?;
        let crc = format::checksum_line("crc8", 2, self.crc_found.into(), self.crc_expected.into());
        writeln!(s, "{crc}")?;
        f.write_str(&s)
    }
}

format::decoded_by_variant!(Image, Sl28Vpd);

fn dump_candidate(img: &[u8]) -> std::result::Result<String, String> {
    let image = decode(img).map_err(|e| e.to_string())?;
    if !image.crc_valid {
        return Err("its CRC-8 does not match".into());
    }
    let serial = &img[SERIAL_OFFSET..SERIAL_OFFSET + SERIAL_LEN];
    let len = serial.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let serial = std::str::from_utf8(&serial[..len])
        .ok()
        .filter(|t| t.is_ascii() && !t.contains('\0'))
        .ok_or("its serial number is not ASCII text")?;
    let fill = uniform_tail(img, LEN, 0xff)
        .ok_or("bytes after the 24-byte record are not one fill byte")?;
    Ok(format!(
        "format = \"sl28-vpd\"\nsize = {:#x}\nfill = {fill:#04x}\nserial-number = {}\nbase-mac-address = {}\n",
        img.len(),
        quote(serial),
        quote(&image.base_mac)
    ))
}
