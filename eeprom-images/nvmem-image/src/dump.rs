//! The reverse of `build`: a description (.toml) of an existing image, such
//! as a dump of a real board's EEPROM, that builds the same bytes again.
//!
//! The image is decoded as its format (ONIE TLV, sl28 VPD, U-Boot
//! environment) and described in that format's terms. Every candidate is
//! built and compared with the image; where a format's description cannot
//! say what the image holds (a damaged checksum, TLVs in an order the
//! description does not keep, bytes after the data that are not fill), the
//! image is described as a `blob` of its non-fill byte runs instead, with a
//! comment that says why. Either way the result rebuilds the image exactly.

use crate::desc::Description;
use crate::error::{Error, Result};
use crate::{hex, onie, sl28, uboot};
use std::fmt::Write as _;
use std::path::Path;

/// A description that rebuilds an image.
#[derive(Debug, Clone)]
pub struct Dump {
    /// `format` of the description
    pub format: &'static str,
    pub toml: String,
    /// why a decoded format was not used (a `blob` of a recognised image)
    pub fallback: Option<String>,
}

/// Bytes closer than this stay in one blob region.
const GAP: usize = 16;

fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// The byte the image is filled with after `from`, when every byte there is
/// the same (an image that ends at `from` takes `default`).
fn uniform_tail(img: &[u8], from: usize, default: u8) -> Option<u8> {
    let tail = img.get(from..)?;
    let b = tail.first().copied().unwrap_or(default);
    tail.iter().all(|&x| x == b).then_some(b)
}

fn onie_candidate(img: &[u8]) -> std::result::Result<String, String> {
    let image = onie::decode(img).map_err(|e| e.to_string())?;
    if !image.crc_valid {
        return Err("its CRC-32 does not match".into());
    }
    let end = onie::HEADER_LEN + image.total_len;
    let fill = uniform_tail(img, end, 0xff)
        .ok_or_else(|| format!("bytes after the TLV area (from {end:#x}) are not one fill byte"))?;
    let mut s = String::new();
    let _ = writeln!(s, "format = \"onie-tlv\"");
    let _ = writeln!(s, "size = {:#x}", img.len());
    let _ = writeln!(s, "fill = {fill:#04x}\n");
    let mut raw = String::new();
    let mut hex_fields: Vec<(&str, Vec<String>)> = Vec::new();
    for t in &image.tlvs {
        if t.code == onie::CRC_TYPE {
            continue;
        }
        let value = &img[t.value_offset..t.value_offset + t.len];
        match onie::type_info(t.code) {
            Some((name, onie::Kind::Hex)) => {
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
                    onie::Kind::U8 if value.len() == 1 => value[0].to_string(),
                    onie::Kind::U16 if value.len() == 2 => {
                        u16::from_be_bytes([value[0], value[1]]).to_string()
                    }
                    onie::Kind::Mac if value.len() == 6 => quote(
                        &value
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect::<Vec<_>>()
                            .join(":"),
                    ),
                    onie::Kind::Text | onie::Kind::Date | onie::Kind::Country
                        if value.is_ascii() =>
                    {
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

fn sl28_candidate(img: &[u8]) -> std::result::Result<String, String> {
    let image = sl28::decode(img).map_err(|e| e.to_string())?;
    if !image.crc_valid {
        return Err("its CRC-8 does not match".into());
    }
    let serial = &img[sl28::SERIAL_OFFSET..sl28::SERIAL_OFFSET + sl28::SERIAL_LEN];
    let len = serial.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let serial = std::str::from_utf8(&serial[..len])
        .ok()
        .filter(|t| t.is_ascii() && !t.contains('\0'))
        .ok_or("its serial number is not ASCII text")?;
    let fill = uniform_tail(img, sl28::LEN, 0xff)
        .ok_or("bytes after the 24-byte record are not one fill byte")?;
    Ok(format!(
        "format = \"sl28-vpd\"\nsize = {:#x}\nfill = {fill:#04x}\nserial-number = {}\nbase-mac-address = {}\n",
        img.len(),
        quote(serial),
        quote(&image.base_mac)
    ))
}

fn env_vars(s: &mut String, table: &str, copy: &uboot::Copy) {
    let _ = writeln!(s, "\n[{table}]");
    for v in &copy.vars {
        let _ = writeln!(s, "{} = {}", quote(&v.name), quote(&v.value));
    }
}

fn env_candidate(img: &[u8]) -> std::result::Result<String, String> {
    env_text(img, &uboot::decode(img, None).map_err(|e| e.to_string())?)
}

/// Both halves as copies of a redundant environment: what a pair with no
/// intact copy needs (the decoder then cannot tell the format).
fn env_pair_candidate(img: &[u8]) -> std::result::Result<String, String> {
    let half = img.len() / 2;
    if half < 6 || !img.len().is_multiple_of(2) {
        return Err("the image does not split into two copies".into());
    }
    let copy = |at| uboot::decode_copy(img, at, half, uboot::Kind::Redundant);
    let copies = vec![
        copy(0).map_err(|e| e.to_string())?,
        copy(half).map_err(|e| e.to_string())?,
    ];
    env_text(
        img,
        &uboot::Image {
            copies,
            active: None,
        },
    )
}

fn env_text(img: &[u8], image: &uboot::Image) -> std::result::Result<String, String> {
    let first = &image.copies[0];
    let pad = *img.last().ok_or("the image is empty")?;
    let mut s = String::new();
    let _ = writeln!(s, "format = \"uboot-env\"");
    let _ = writeln!(s, "size = {:#x}", first.size);
    let _ = writeln!(s, "pad = {pad:#04x}");
    if image.copies.len() == 1 {
        if first.kind == uboot::Kind::Redundant {
            let _ = writeln!(s, "redundant = true");
            let _ = writeln!(s, "flag = {}", first.flag.unwrap_or(0));
        }
        if !first.crc_valid {
            let _ = writeln!(s, "bad-crc = true");
        }
        env_vars(&mut s, "vars", first);
    } else {
        let _ = writeln!(s, "redundant = true");
        for c in &image.copies {
            let _ = writeln!(s, "\n[[copy]]\nflag = {}", c.flag.unwrap_or(0));
            if !c.crc_valid {
                let _ = writeln!(s, "bad-crc = true");
            }
            env_vars(&mut s, "copy.vars", c);
        }
    }
    Ok(s)
}

fn spaced_hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The image as a `blob`: size, the commoner of 0xff and 0x00 as fill, and
/// each run of other bytes as a region (ASCII where it is printable text).
pub fn blob(img: &[u8]) -> String {
    let ff = img.iter().filter(|&&b| b == 0xff).count();
    let zero = img.iter().filter(|&&b| b == 0).count();
    let fill = if zero > ff { 0x00 } else { 0xff };
    let mut s = format!(
        "format = \"blob\"\nsize = {:#x}\nfill = {fill:#04x}\n",
        img.len()
    );
    let mut i = 0;
    while i < img.len() {
        if img[i] == fill {
            i += 1;
            continue;
        }
        let start = i;
        // img[end - 1] is not fill; take the next run in too when fewer
        // than GAP fill bytes separate them
        let mut end = i + 1;
        while let Some(p) = img[end..].iter().position(|&b| b != fill) {
            if p >= GAP {
                break;
            }
            end += p + 1;
        }
        let data = &img[start..end];
        let value = match hex::printable(data) {
            Some(t) if !t.starts_with(' ') && !t.ends_with(' ') => format!("ascii = {}", quote(&t)),
            _ => format!("hex = {}", quote(&spaced_hex(data))),
        };
        let _ = write!(s, "\n[[region]]\noffset = {start:#x}\n{value}\n");
        i = end;
    }
    s
}

fn build(text: &str) -> Result<Vec<u8>> {
    Description::from_text(Path::new("<dump>"), text)?.build()
}

/// A description of `img` that rebuilds it byte for byte.
pub fn dump(img: &[u8]) -> Result<Dump> {
    type Candidate = fn(&[u8]) -> std::result::Result<String, String>;
    let (format, candidates): (&'static str, &[Candidate]) = if img.starts_with(onie::MAGIC) {
        ("onie-tlv", &[onie_candidate])
    } else if img.len() >= 2 && img[0] == sl28::MAGIC && img[1] == sl28::VERSION {
        ("sl28-vpd", &[sl28_candidate])
    } else if onie::blank_kind(img).is_none()
        && uboot::decode(img, None).is_ok_and(|e| {
            // an intact copy, or variables behind a damaged CRC
            e.active.is_some()
                || e.copies
                    .iter()
                    .any(|c| c.data_error.is_none() && !c.vars.is_empty())
        })
    {
        ("uboot-env", &[env_candidate, env_pair_candidate])
    } else {
        ("", &[])
    };
    // the first candidate that rebuilds the image wins; else the first
    // one's reason is reported
    let mut fallback = None;
    for candidate in candidates {
        let why = match candidate(img) {
            Ok(text) => match build(&text) {
                Ok(b) if b == img => {
                    return Ok(Dump {
                        format,
                        toml: text,
                        fallback: None,
                    })
                }
                Ok(b) => {
                    let at = b
                        .iter()
                        .zip(img)
                        .position(|(x, y)| x != y)
                        .unwrap_or(b.len().min(img.len()));
                    format!("{format}, but its description builds other bytes (from {at:#x} on)")
                }
                Err(e) => format!("{format}, but its description does not build: {e}"),
            },
            Err(why) => format!("{format}, but {why}"),
        };
        fallback.get_or_insert(why);
    }
    // one short line of text, whatever the decoder quoted from the image
    let fallback = fallback.map(|f| {
        let mut f: String = f
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        if f.len() > 160 {
            f.truncate(157);
            f.push_str("...");
        }
        f
    });
    let mut text = String::new();
    if let Some(f) = &fallback {
        let _ = writeln!(text, "# recognised as {f}: described byte by byte");
    }
    text.push_str(&blob(img));
    // the blob rebuilds by construction; a difference is a bug of ours,
    // reported rather than handed out
    if build(&text)? != img {
        return Err(Error::Usage(
            "internal error: the blob description does not rebuild the image".into(),
        ));
    }
    Ok(Dump {
        format: "blob",
        toml: text,
        fallback,
    })
}
