//! Decoding an image of unknown or given format, for people and for JSON.

use crate::error::DecodeError;
use crate::{onie, sl28, uboot};
use serde::Serialize;
use std::fmt::{self, Write as _};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Auto,
    OnieTlv,
    Sl28Vpd,
    UbootEnv,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "format", rename_all = "kebab-case")]
pub enum Inspection {
    OnieTlv(onie::Image),
    Sl28Vpd(sl28::Image),
    UbootEnv(uboot::Image),
}

impl Inspection {
    /// Err when the checksum (or, for environments, every copy) is bad.
    pub fn check(&self) -> Result<(), DecodeError> {
        match self {
            Inspection::OnieTlv(i) => i.check(),
            Inspection::Sl28Vpd(i) => i.check(),
            Inspection::UbootEnv(i) => i.check(),
        }
    }
}

/// Decodes `img`. Auto-detection goes by magic: `TlvInfo\0` is ONIE TLV,
/// 'V' followed by version 1 is sl28 VPD, otherwise a U-Boot environment.
pub fn inspect(img: &[u8], format: Format) -> Result<Inspection, DecodeError> {
    let format = match format {
        Format::Auto if img.starts_with(onie::MAGIC) => Format::OnieTlv,
        Format::Auto if img.len() >= 2 && img[0] == sl28::MAGIC && img[1] == sl28::VERSION => {
            Format::Sl28Vpd
        }
        Format::Auto => {
            if let Some(b) = onie::blank_kind(img) {
                return Err(DecodeError::whole(format!("nothing to inspect: {b}")));
            }
            let env = uboot::decode(img, None)?;
            if env.active.is_none() {
                let c = &env.copies[0];
                let why = if c.crc_valid {
                    c.data_error.clone().unwrap_or_default()
                } else {
                    format!(
                        "CRC-32 expected {:#010x}, found {:#010x}",
                        c.crc_expected, c.crc_found
                    )
                };
                return Err(DecodeError::whole(format!(
                    "unrecognised image: no ONIE \"TlvInfo\" magic, no sl28 'V' v1 magic, \
                     and not a valid U-Boot environment ({why})"
                )));
            }
            return Ok(Inspection::UbootEnv(env));
        }
        f => f,
    };
    Ok(match format {
        Format::OnieTlv => Inspection::OnieTlv(onie::decode(img)?),
        Format::Sl28Vpd => Inspection::Sl28Vpd(sl28::decode(img)?),
        Format::UbootEnv => Inspection::UbootEnv(uboot::decode(img, None)?),
        Format::Auto => unreachable!("resolved above"),
    })
}

fn valid(ok: bool) -> &'static str {
    if ok {
        "valid"
    } else {
        "INVALID"
    }
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        match self {
            Inspection::OnieTlv(i) => {
                writeln!(
                    s,
                    "format: ONIE TLV, version {}, TLV area {} bytes",
                    i.version, i.total_len
                )?;
                writeln!(
                    s,
                    "{:>6}  {:>4}  {:<18} {:>3}  value",
                    "offset", "type", "name", "len"
                )?;
                for t in &i.tlvs {
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
                writeln!(
                    s,
                    "crc32: found {:#010x}, computed {:#010x}: {}",
                    i.crc_found,
                    i.crc_expected,
                    valid(i.crc_valid)
                )?;
            }
            Inspection::Sl28Vpd(i) => {
                writeln!(s, "format: Kontron sl28 VPD, version {}", i.version)?;
                writeln!(s, "{:>6}  {:<16} {:>3}  value", "offset", "field", "len")?;
                writeln!(
                    s,
                    "{:>#6x}  {:<16} {:>3}  {:?} (hex {})",
                    sl28::SERIAL_OFFSET,
                    "serial-number",
                    sl28::SERIAL_LEN,
                    i.serial.clone().unwrap_or_default(),
                    i.serial_hex
                )?;
                writeln!(
                    s,
                    "{:>#6x}  {:<16} {:>3}  {}",
                    sl28::MAC_OFFSET,
                    "base-mac-address",
                    6,
                    i.base_mac
                )?;
                writeln!(
                    s,
                    "crc8: found {:#04x}, computed {:#04x}: {}",
                    i.crc_found,
                    i.crc_expected,
                    valid(i.crc_valid)
                )?;
            }
            Inspection::UbootEnv(i) => {
                writeln!(
                    s,
                    "format: U-Boot environment, {} cop{}",
                    i.copies.len(),
                    if i.copies.len() == 1 { "y" } else { "ies" }
                )?;
                for (n, c) in i.copies.iter().enumerate() {
                    let flag = c
                        .flag
                        .map(|x| format!(", flag {x:#04x}"))
                        .unwrap_or_default();
                    let used = if i.active == Some(n) {
                        " <- U-Boot uses this one"
                    } else {
                        ""
                    };
                    writeln!(
                        s,
                        "copy {n} at {:#x}, {} bytes, {:?}{flag}, crc32 found {:#010x} computed {:#010x}: {}{used}",
                        c.offset, c.size, c.kind, c.crc_found, c.crc_expected, valid(c.crc_valid)
                    )?;
                    if let Some(e) = &c.data_error {
                        writeln!(s, "  data: {e}")?;
                    }
                    for v in &c.vars {
                        writeln!(
                            s,
                            "  {:>#6x} {:>4}  {}={}",
                            v.value_offset, v.value_len, v.name, v.value
                        )?;
                    }
                }
            }
        }
        f.write_str(&s)
    }
}
