//! Cells as people read them: the listing a board's guest prints
//! (`guest/payloads/nvmem-list`: one `device` line per nvmem device, one
//! `cell` line per cell with the bytes a read gave) decoded in the terms of
//! each device's layout: text, MAC addresses, dates, integers, hex.
//!
//! The values are those the guest read, so a MAC cell with a read hook
//! shows the address after post-processing with index 0; such values are
//! marked.

use crate::format;
use crate::{hex, mac};
use serde::Serialize;
use std::fmt::{self, Write as _};

/// A cell's value, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Value {
    Text {
        text: String,
    },
    /// `post_processed`: the layout's read hook made these bytes (index 0)
    Mac {
        address: String,
        post_processed: bool,
    },
    Date {
        text: String,
    },
    Integer {
        value: u64,
    },
    Hex {
        hex: String,
    },
    Empty,
    /// reading the cell failed in the guest
    ReadError,
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Text { text } => write!(f, "{text:?}"),
            Value::Mac {
                address,
                post_processed: true,
            } => write!(f, "{address}  (MAC, read hook, index 0)"),
            Value::Mac { address, .. } => write!(f, "{address}  (MAC)"),
            Value::Date { text } => write!(f, "{text}  (date)"),
            Value::Integer { value } => write!(f, "{value}"),
            Value::Hex { hex } if hex.len() > 64 => {
                write!(f, "hex {}… ({} bytes)", &hex[..64], hex.len() / 2)
            }
            Value::Hex { hex } => write!(f, "hex {hex}"),
            Value::Empty => f.write_str("(empty)"),
            Value::ReadError => f.write_str("(read fails)"),
        }
    }
}

pub(crate) fn text_or_hex(b: &[u8]) -> Value {
    match hex::printable(b) {
        Some(text) => Value::Text { text },
        None if b.is_empty() => Value::Empty,
        None => Value::Hex {
            hex: hex::encode(b),
        },
    }
}

pub(crate) fn mac_value(b: &[u8], post_processed: bool) -> Value {
    match <[u8; 6]>::try_from(b) {
        Ok(m) => Value::Mac {
            address: mac::format(&m),
            post_processed,
        },
        Err(_) => text_or_hex(b),
    }
}

/// The value of cell `name` of a `layout` (its compatible; None: cells of
/// the node itself or a fixed layout) read as `b`: in the terms of the
/// format whose layout it is, else as a MAC, text or hex.
pub fn decode(layout: Option<&str>, name: &str, b: &[u8], mac_base: bool) -> Value {
    if let Some(v) = layout.and_then(|l| format::FORMATS.iter().find_map(|f| f.view(l, name, b))) {
        return v;
    }
    if mac_base {
        mac_value(b, true)
    } else if b.len() == 6 && name.contains("mac") && hex::printable(b).is_none() {
        // a fixed cell of six bytes named for a MAC address
        mac_value(b, false)
    } else {
        text_or_hex(b)
    }
}

/// `rmem2` before `rmem10`: names compared by their text and numbers.
fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (text, tail) = rest.split_at(split);
        let digits = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (num, tail) = tail.split_at(digits);
        out.push((text.to_owned(), num.parse().unwrap_or(u64::MAX)));
        rest = tail;
    }
    out
}

#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// the file under cells/: `<name>@<byte>,<bit>`
    pub file: String,
    pub name: String,
    pub offset: Option<usize>,
    pub bit: Option<u8>,
    pub size: usize,
    /// the bytes read, None when the read failed
    pub hex: Option<String>,
    pub mac_base: bool,
    pub value: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct Device {
    pub name: String,
    pub size: Option<u64>,
    #[serde(rename = "type")]
    pub kind: String,
    pub of_node: Option<String>,
    pub layout: Option<String>,
    pub sysfs: Option<String>,
    /// the image the host attached there, when known
    pub image: Option<String>,
    pub cells: Vec<Cell>,
}

fn opt(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.is_empty() && *s != "-").map(str::to_owned)
}

/// `name@byte,bit` (hex) into its parts.
fn split_file(file: &str) -> (String, Option<usize>, Option<u8>) {
    let Some((name, at)) = file.rsplit_once('@') else {
        return (file.to_owned(), None, None);
    };
    let (byte, bit) = at.split_once(',').unwrap_or((at, "0"));
    (
        name.to_owned(),
        usize::from_str_radix(byte, 16).ok(),
        bit.parse().ok(),
    )
}

/// The devices and cells of a listing. Lines that are neither `device` nor
/// `cell` (comments, console noise) are skipped; a cell of a device not
/// listed before it is an error.
pub fn parse_listing(text: &str) -> Result<Vec<Device>, String> {
    let mut devices: Vec<Device> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.trim_end_matches('\r').split('\t').collect();
        match f[0] {
            "device" if f.len() >= 5 => devices.push(Device {
                name: f[1].to_owned(),
                size: f[2].parse().ok(),
                kind: f[3].to_owned(),
                of_node: opt(f.get(4).copied()),
                layout: opt(f.get(5).copied()),
                sysfs: opt(f.get(6).copied()),
                image: None,
                cells: Vec::new(),
            }),
            "cell" if f.len() >= 4 => {
                let dev = devices
                    .iter_mut()
                    .rev()
                    .find(|d| d.name == f[1])
                    .ok_or_else(|| format!("line {}: cell of unlisted device {:?}", n + 1, f[1]))?;
                let content = f.get(4).copied().unwrap_or("");
                let bytes = if content == "ERR" {
                    None
                } else {
                    Some(hex::decode(content).map_err(|e| format!("line {}: {e}", n + 1))?)
                };
                let mac_base = f.get(5) == Some(&"mac-base");
                let (name, offset, bit) = split_file(f[2]);
                let value = match &bytes {
                    None => Value::ReadError,
                    Some(b) => decode(dev.layout.as_deref(), &name, b, mac_base),
                };
                dev.cells.push(Cell {
                    file: f[2].to_owned(),
                    name,
                    offset,
                    bit,
                    size: f[3].parse().unwrap_or(0),
                    hex: bytes.map(|b| hex::encode(&b)),
                    mac_base,
                    value,
                });
            }
            _ => {}
        }
    }
    // sysfs lists names in byte order: people want rmem2 before rmem10
    // and cells in the order they are stored
    devices.sort_by_cached_key(|d| natural_key(&d.name));
    for d in &mut devices {
        d.cells
            .sort_by(|a, b| (a.offset, a.bit, &a.name).cmp(&(b.offset, b.bit, &b.name)));
    }
    Ok(devices)
}

/// The listing for people: per device a header (size, type, image, layout,
/// node) and a table of its cells, at most `max_cells` of them (0: all).
pub fn render(devices: &[Device], max_cells: usize) -> String {
    let mut s = String::new();
    for d in devices {
        let size = d.size.map_or("?".into(), |n| format!("{n} bytes"));
        let _ = writeln!(s, "{}  ({size}, {})", d.name, d.kind);
        let _ = writeln!(
            s,
            "  image: {}   layout: {}   node: {}",
            d.image.as_deref().unwrap_or("-"),
            d.layout.as_deref().unwrap_or("-"),
            d.of_node.as_deref().unwrap_or("-")
        );
        if d.cells.is_empty() {
            let why = if d.layout.is_some() {
                " (a layout is declared: rejected image or unbound layout, see dmesg)"
            } else {
                ""
            };
            let _ = writeln!(s, "  no cells{why}\n");
            continue;
        }
        let w = d
            .cells
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(s, "  {:<w$}  {:>8}  {:>5}  value", "cell", "offset", "size");
        let shown = if max_cells == 0 {
            d.cells.len()
        } else {
            max_cells.min(d.cells.len())
        };
        for c in &d.cells[..shown] {
            let off = match (c.offset, c.bit) {
                (Some(o), Some(0)) => format!("{o:#x}"),
                (Some(o), Some(b)) => format!("{o:#x}.{b}"),
                _ => "?".into(),
            };
            let _ = writeln!(s, "  {:<w$}  {off:>8}  {:>5}  {}", c.name, c.size, c.value);
        }
        if shown < d.cells.len() {
            let _ = writeln!(s, "  … and {} more cells", d.cells.len() - shown);
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "# device\tname\n\
device\trmem10\t8192\tUnknown\t/reserved-memory/eeprom@9f024000\tu-boot,env\t/sys/devices/x\t-\n\
cell\trmem10\tethaddr@33,0\t6\t021122334466\t-\n\
cell\trmem10\tbootcmd@c,0\t18\t72756e2064697374726f5f626f6f74636d64\t-\n\
[  12.5] noise from the console\r\n\
device\trmem2\t4096\tUnknown\t/reserved-memory/eeprom@9f004000\tonie,tlv-layout\t/sys/devices/y\t-\n\
cell\trmem2\tnum-macs@84,0\t2\t0040\t-\n\
cell\trmem2\tmanufacture-date@3e,0\t19\t31312f33302f323032362031343a30353a3030\t-\n\
device\trmem3\t4096\tUnknown\t/reserved-memory/eeprom@9f009000\tfixed-layout\t/sys/devices/z\t-\n\
cell\trmem3\tmac-bad@40,0\t6\tERR\tmac-base\n\
cell\trmem3\tmac-bin@0,0\t6\t0211223344ff\tmac-base\n\
cell\trmem3\tblob@10,4\t3\t00ff10\t-\n";

    #[test]
    fn listing_decoded_per_layout() {
        let d = parse_listing(LISTING).unwrap();
        let names: Vec<_> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["rmem2", "rmem3", "rmem10"]);
        let env = &d[2];
        assert_eq!(env.layout.as_deref(), Some("u-boot,env"));
        assert_eq!(env.cells[0].name, "bootcmd");
        assert_eq!(
            env.cells[0].value,
            Value::Text {
                text: "run distro_bootcmd".into()
            }
        );
        assert_eq!(
            env.cells[1].value,
            Value::Mac {
                address: "02:11:22:33:44:66".into(),
                post_processed: true
            }
        );
        assert_eq!(
            d[0].cells[0].value,
            Value::Date {
                text: "11/30/2026 14:05:00".into()
            }
        );
        assert_eq!(d[0].cells[1].value, Value::Integer { value: 64 });
        let fixed = &d[1].cells;
        assert_eq!(
            fixed[0].value,
            Value::Mac {
                address: "02:11:22:33:44:ff".into(),
                post_processed: true
            }
        );
        assert_eq!((fixed[1].offset, fixed[1].bit), (Some(0x10), Some(4)));
        assert_eq!(
            fixed[1].value,
            Value::Hex {
                hex: "00ff10".into()
            }
        );
        assert_eq!(fixed[2].value, Value::ReadError);
        let text = render(&d, 1);
        assert!(text.contains("  … and 1 more cells"), "{text}");
        let all = render(&d, 0);
        assert!(
            all.contains("0x10.4") && !all.contains("more cells"),
            "{all}"
        );
    }

    #[test]
    fn bad_listing_lines() {
        assert!(parse_listing("cell\trmem9\tx@0,0\t1\t00\t-\n")
            .unwrap_err()
            .contains("unlisted"));
        let e = parse_listing("device\trmem9\t1\tx\t-\t-\t-\t-\ncell\trmem9\tx@0,0\t1\tzz\t-\n");
        assert!(e.unwrap_err().contains("line 2"));
        // a truncated console line is skipped, not a panic
        assert!(parse_listing("device\n\tcell\nrandom words\n")
            .unwrap()
            .is_empty());
    }
}
