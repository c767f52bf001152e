//! The cells the kernel's layouts create for an image, as the sysfs
//! listing shows them (`/sys/bus/nvmem/devices/<dev>/cells/<name>@<byte>,<bit>`,
//! reading gives the cell bytes after post-processing with index 0).

use crate::desc::FixedCell;
use crate::error::DecodeError;
use crate::{hex, mac, onie, sl28, uboot};
use serde::Serialize;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    OnieTlv,
    Sl28Vpd,
    /// the format of a copy, and whether the flags count (or are boolean)
    UbootEnv(uboot::Kind, bool),
    Fixed,
}

impl FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "onie,tlv-layout" => Layout::OnieTlv,
            "kontron,sl28-vpd" => Layout::Sl28Vpd,
            "u-boot,env" => Layout::UbootEnv(uboot::Kind::Single, true),
            "u-boot,env-redundant-bool" => Layout::UbootEnv(uboot::Kind::Redundant, false),
            "u-boot,env-redundant-count" => Layout::UbootEnv(uboot::Kind::Redundant, true),
            "fixed-layout" => Layout::Fixed,
            _ => {
                return Err(format!(
                    "unknown layout {s:?} (onie,tlv-layout, kontron,sl28-vpd, u-boot,env, \
                     u-boot,env-redundant-bool, u-boot,env-redundant-count, fixed-layout)"
                ))
            }
        })
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

enum Post {
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

fn make(
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
    match layout {
        Layout::OnieTlv => {
            let image = onie::decode(img)?;
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
                    Some(make(name, t.value_offset, raw, t.len, kind, index))
                })
                .collect())
        }
        Layout::Sl28Vpd => {
            let image = sl28::decode(img)?;
            image.check()?;
            let serial = &img[sl28::SERIAL_OFFSET..sl28::SERIAL_OFFSET + sl28::SERIAL_LEN];
            let m = &img[sl28::MAC_OFFSET..sl28::MAC_OFFSET + 6];
            Ok(vec![
                make(
                    "serial-number",
                    sl28::SERIAL_OFFSET,
                    serial,
                    sl28::SERIAL_LEN,
                    Post::None,
                    index,
                ),
                make(
                    "base-mac-address",
                    sl28::MAC_OFFSET,
                    m,
                    6,
                    Post::MacAddValid,
                    index,
                ),
            ])
        }
        Layout::UbootEnv(kind, counter) => {
            // a blank device fails as the layout finds it (a CRC that does
            // not match), the blankness said as well
            let copy =
                uboot::layout_copy(img, kind, counter, env).map_err(
                    |e| match onie::blank_kind(img) {
                        Some(b) => DecodeError {
                            msg: format!("{} ({b})", e.msg),
                            ..e
                        },
                        None => e,
                    },
                )?;
            let mut cells = Vec::new();
            for v in &copy.vars {
                let raw = &img[v.value_offset..v.value_offset + v.value_len];
                // a name with '/' cannot be a sysfs file: the layout skips it
                if v.name.contains('/') {
                    continue;
                }
                if v.name == "ethaddr" {
                    // an ethaddr that spells no address gets no cell
                    if std::str::from_utf8(raw).ok().and_then(mac::parse).is_some() {
                        cells.push(make(&v.name, v.value_offset, raw, 6, Post::MacText, index));
                    }
                } else {
                    cells.push(make(
                        &v.name,
                        v.value_offset,
                        raw,
                        raw.len(),
                        Post::None,
                        index,
                    ));
                }
            }
            Ok(cells)
        }
        Layout::Fixed => fixed
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
            .map(|v| v.into_iter().flatten().collect()),
    }
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
