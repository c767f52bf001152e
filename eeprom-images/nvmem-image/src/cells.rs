//! The cells the kernel's layouts create for an image, as the sysfs
//! listing shows them (`/sys/bus/nvmem/devices/<dev>/cells/<name>@<byte>,<bit>`,
//! reading gives the cell bytes after post-processing with index 0).

use crate::desc::FixedCell;
use crate::error::DecodeError;
use crate::format;
use crate::{hex, mac, uboot};
use serde::Serialize;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    OnieTlv,
    Sl28Vpd,
    /// the format of a copy, and whether the flags count (or are boolean)
    UbootEnv(uboot::Kind, bool),
    Fixed,
    /// the layout of another format, by its compatible
    Compatible(&'static str),
}

impl Layout {
    /// The `nvmem-layout` compatible of the layout.
    pub fn compatible(&self) -> Option<&'static str> {
        if *self == Layout::Fixed {
            return Some("fixed-layout");
        }
        format::compatibles()
            .find(|(_, l)| l == self)
            .map(|(c, _)| c)
    }

    /// Every compatible known: the formats' layouts and `fixed-layout`.
    pub fn known() -> Vec<&'static str> {
        format::compatibles()
            .map(|(c, _)| c)
            .chain(["fixed-layout"])
            .collect()
    }
}

impl FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "fixed-layout" {
            return Ok(Layout::Fixed);
        }
        format::compatibles()
            .find(|(c, _)| *c == s)
            .map(|(_, l)| l)
            .ok_or_else(|| format!("unknown layout {s:?} ({})", Layout::known().join(", ")))
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Cell {
    pub name: String,
    /// file name under cells/
    pub sysfs: String,
    pub offset: usize,
    pub bit: u8,
    /// size of the sysfs file
    pub size: usize,
    /// the bytes stored in the device
    pub raw: String,
    /// what reading the sysfs file gives (post-processing, index 0), or None
    /// when the read fails
    pub content: Option<String>,
    pub read_error: Option<String>,
    /// the content as text where it is printable
    pub text: Option<String>,
    /// the post-processed value with the requested index (MAC cells)
    pub indexed: Option<String>,
}

pub(crate) enum Post {
    None,
    /// add the index to a 6-byte MAC (ONIE)
    MacAdd,
    /// like MacAdd, but fails on a multicast or zero address (sl28)
    MacAddValid,
    /// parse "xx:xx:xx:xx:xx:xx" into 6 bytes, then add (U-Boot ethaddr)
    MacText,
    /// mac-base: 6 bytes, 12 hex digits or 17 characters, then add
    MacBase,
}

fn post(kind: &Post, raw: &[u8], index: i64) -> Result<Vec<u8>, String> {
    let six = || -> Result<[u8; 6], String> { raw.try_into().map_err(|_| "EINVAL".to_string()) };
    match kind {
        Post::None => Ok(raw.to_vec()),
        Post::MacAdd => Ok(mac::add(six()?, index).to_vec()),
        Post::MacAddValid => {
            let m = six()?;
            if !mac::is_valid(&m) {
                return Err("EINVAL".into());
            }
            Ok(mac::add(m, index).to_vec())
        }
        Post::MacText => {
            let s = std::str::from_utf8(raw).map_err(|_| "EINVAL".to_string())?;
            let m = mac::parse(s).ok_or_else(|| "EINVAL".to_string())?;
            Ok(mac::add(m, index).to_vec())
        }
        Post::MacBase => {
            let m = mac::parse_base(raw).ok_or_else(|| "EINVAL".to_string())?;
            Ok(mac::add(m, index).to_vec())
        }
    }
}

pub(crate) fn make(
    name: &str,
    offset: usize,
    raw: &[u8],
    size: usize,
    kind: Post,
    index: Option<i64>,
) -> Cell {
    let read = post(&kind, raw, 0);
    let indexed = match (&kind, index) {
        (Post::None, _) | (_, None) => None,
        (_, Some(i)) => post(&kind, raw, i).ok().map(|b| hex::encode(&b)),
    };
    Cell {
        name: name.to_owned(),
        sysfs: format!("{name}@{offset:x},0"),
        offset,
        bit: 0,
        size,
        raw: hex::encode(raw),
        text: read.as_ref().ok().and_then(|b| hex::printable(b)),
        content: read.as_ref().ok().map(|b| hex::encode(b)),
        read_error: read.err(),
        indexed,
    }
}

/// Predicts the cells of `layout` on a device holding `img`. An image the
/// layout rejects gives the error the kernel logs, and no cells.
pub fn predict(
    layout: Layout,
    img: &[u8],
    fixed: &[FixedCell],
    index: Option<i64>,
    env: uboot::Geometry,
) -> Result<Vec<Cell>, DecodeError> {
    if layout != Layout::Fixed {
        let f = format::by_layout(layout)
            .ok_or_else(|| DecodeError::whole(format!("no format serves layout {layout:?}")))?;
        return f.predict(layout, img, index, env);
    }
    fixed
        .iter()
        .map(|c| {
            if c.offset + c.size > img.len() {
                return Err(DecodeError::at(
                    c.offset,
                    format!(
                        "cell {} of {} bytes runs past the device ({} bytes)",
                        c.name,
                        c.size,
                        img.len()
                    ),
                ));
            }
            if let Some((bit_offset, nbits)) = c.bits {
                return Ok(bits_cell(c, img, bit_offset, nbits));
            }
            let raw = &img[c.offset..c.offset + c.size];
            if c.mac_base {
                // the kernel leaves out a mac-base cell of another length
                if ![6, 12, 17].contains(&c.size) {
                    return Ok(None);
                }
                return Ok(Some(make(&c.name, c.offset, raw, 6, Post::MacBase, index)));
            }
            Ok(Some(make(
                &c.name,
                c.offset,
                raw,
                c.size,
                Post::None,
                index,
            )))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|v| v.into_iter().flatten().collect())
}

/// A fixed cell with `bits`: the kernel leaves it out unless the bit
/// offset is 0..=7, there is at least one bit and the bits lie inside the
/// cell's bytes (and a mac-base cell has no bits at all); its file then
/// has the bytes the bits touch, and reads the bits shifted down to bit 0,
/// the bytes above them zero.
fn bits_cell(c: &FixedCell, img: &[u8], bit_offset: u32, nbits: u32) -> Option<Cell> {
    let span = u64::from(bit_offset) + u64::from(nbits);
    if bit_offset >= 8 || nbits == 0 || span > c.size as u64 * 8 || c.mac_base {
        return None;
    }
    let bytes = span.div_ceil(8) as usize;
    let raw = &img[c.offset..c.offset + bytes];
    let mut value = vec![0u8; bytes];
    for i in 0..nbits as usize {
        let from = bit_offset as usize + i;
        if raw[from / 8] >> (from % 8) & 1 == 1 {
            value[i / 8] |= 1 << (i % 8);
        }
    }
    Some(Cell {
        name: c.name.clone(),
        sysfs: format!("{}@{:x},{:x}", c.name, c.offset, bit_offset),
        offset: c.offset,
        bit: bit_offset as u8,
        size: bytes,
        raw: hex::encode(raw),
        text: hex::printable(&value),
        content: Some(hex::encode(&value)),
        read_error: None,
        indexed: None,
    })
}
