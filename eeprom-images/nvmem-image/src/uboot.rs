//! U-Boot environments.
//!
//! Single copy: CRC-32 (little-endian) of the data area, then `name=value\0`
//! entries ending with an empty entry, padded to the environment size.
//! Redundant copy: CRC, one flag byte (not covered by the CRC), data.
//! An image may hold two redundant copies back to back (each half of it).

use crate::error::DecodeError;
use crate::onie;
use serde::Serialize;
use std::path::Path;
use std::process::Command;

const CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Single,
    Redundant,
}

impl Kind {
    pub fn data_offset(self) -> usize {
        match self {
            Kind::Single => 4,
            Kind::Redundant => 5,
        }
    }
}

/// Checks a variable name the way a description must give it.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        Err("empty variable name".into())
    } else if name.contains('=') {
        Err(format!("variable name {name:?} contains '='"))
    } else if name.starts_with('#') {
        Err(format!("variable name {name:?} starts with '#'"))
    } else if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Err(format!(
            "variable name {name:?} contains whitespace or control characters"
        ))
    } else {
        Ok(())
    }
}

pub fn check_value(name: &str, value: &str) -> Result<(), String> {
    if value.chars().any(|c| c == '\0' || c == '\n') {
        Err(format!("value of {name:?} contains a NUL or newline"))
    } else {
        Ok(())
    }
}

/// The data area (`name=value\0`… `\0`) of these variables.
pub fn data_bytes(vars: &[(String, String)]) -> Vec<u8> {
    let mut d = Vec::new();
    for (k, v) in vars {
        d.extend_from_slice(k.as_bytes());
        d.push(b'=');
        d.extend_from_slice(v.as_bytes());
        d.push(0);
    }
    d.push(0);
    d
}

/// Damages an environment of `kind` in `img` (a copy as mkenvimage wrote
/// it) so that its last variable runs to the end: the NULs that end it and
/// the list become `pad`, the CRC is computed again. An environment
/// without variables has nothing to damage.
pub fn unterminate(img: &mut [u8], kind: Kind, pad: u8) -> Result<(), String> {
    if pad == 0 {
        return Err("with pad 0x00 the variables stay terminated".into());
    }
    let hdr = kind.data_offset();
    let data = &img[hdr..];
    let end = data
        .windows(2)
        .position(|w| w == [0, 0])
        .filter(|&p| p > 0)
        .ok_or("no variable whose end could be removed")?;
    img[hdr + end] = pad;
    img[hdr + end + 1] = pad;
    let crc = CRC32.checksum(&img[hdr..]);
    img[..4].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Stores the CRC-32 of a copy's data in its first bytes.
pub fn seal(copy: &mut [u8], kind: Kind) {
    let crc = CRC32.checksum(&copy[kind.data_offset()..]);
    copy[..4].copy_from_slice(&crc.to_le_bytes());
}

/// Our own encoder (the images we ship are made by mkenvimage; this one
/// cross-checks it and is the benchmark's subject).
pub fn encode(
    vars: &[(String, String)],
    size: usize,
    kind: Kind,
    flag: u8,
    pad: u8,
) -> Result<Vec<u8>, String> {
    let hdr = kind.data_offset();
    let data = data_bytes(vars);
    if hdr + data.len() > size {
        return Err(format!(
            "environment data of {} bytes does not fit in {} ({size} bytes minus a {hdr}-byte header)",
            data.len(),
            size - hdr.min(size)
        ));
    }
    let mut out = vec![pad; size];
    out[hdr..hdr + data.len()].copy_from_slice(&data);
    let crc = CRC32.checksum(&out[hdr..]);
    out[..4].copy_from_slice(&crc.to_le_bytes());
    if kind == Kind::Redundant {
        out[4] = flag;
    }
    Ok(out)
}

/// Runs `mkenvimage` (u-boot-tools) on these variables.
pub fn mkenvimage(
    vars: &[(String, String)],
    size: usize,
    redundant: bool,
    pad: u8,
) -> Result<Vec<u8>, String> {
    mkenvimage_lines(vars, &[], size, redundant, pad)
}

/// Runs `mkenvimage` on these variables followed by `lines` as they are
/// (which need not be `name=value`: mkenvimage copies any line).
pub fn mkenvimage_lines(
    vars: &[(String, String)],
    lines: &[String],
    size: usize,
    redundant: bool,
    pad: u8,
) -> Result<Vec<u8>, String> {
    let dir = std::env::temp_dir().join(format!("nvmem-image-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("temporary directory: {e}"))?;
    let result = run_mkenvimage(&dir, vars, lines, size, redundant, pad);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn run_mkenvimage(
    dir: &Path,
    vars: &[(String, String)],
    lines: &[String],
    size: usize,
    redundant: bool,
    pad: u8,
) -> Result<Vec<u8>, String> {
    let txt = dir.join("env.txt");
    let bin = dir.join("env.bin");
    let mut text = String::new();
    for (k, v) in vars {
        text.push_str(k);
        text.push('=');
        text.push_str(v);
        text.push('\n');
    }
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&txt, text).map_err(|e| format!("{}: {e}", txt.display()))?;
    let mut cmd = Command::new("mkenvimage");
    cmd.arg("-s")
        .arg(size.to_string())
        .arg("-p")
        .arg(pad.to_string())
        .arg("-o")
        .arg(&bin);
    if redundant {
        cmd.arg("-r");
    }
    cmd.arg(&txt);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run mkenvimage ({e}); install u-boot-tools"))?;
    if !out.status.success() {
        return Err(format!(
            "mkenvimage failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    std::fs::read(&bin).map_err(|e| format!("{}: {e}", bin.display()))
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    pub value: String,
    /// offset of the entry (its name) in the image
    pub offset: usize,
    /// offset of the value in the image
    pub value_offset: usize,
    pub value_len: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Copy {
    pub offset: usize,
    pub size: usize,
    pub kind: Kind,
    pub flag: Option<u8>,
    pub crc_found: u32,
    pub crc_expected: u32,
    pub crc_valid: bool,
    pub vars: Vec<Var>,
    /// a problem in the data area (missing terminator, entry without '=')
    pub data_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Image {
    pub copies: Vec<Copy>,
    /// index in `copies` of the one U-Boot would use
    pub active: Option<usize>,
}

impl Image {
    pub fn check(&self) -> Result<(), DecodeError> {
        if self.active.is_some() {
            return Ok(());
        }
        let c = &self.copies[0];
        Err(DecodeError::at(c.offset, c.problem().unwrap_or_default()))
    }
}

impl Copy {
    /// What makes this copy unusable (a CRC that does not match, then a
    /// problem in its strings), or None for an intact copy.
    pub fn problem(&self) -> Option<String> {
        if !self.crc_valid {
            Some(format!(
                "CRC-32 mismatch: expected {:#010x}, found {:#010x}",
                self.crc_expected, self.crc_found
            ))
        } else {
            self.data_error.clone()
        }
    }
}

fn parse_data(img: &[u8], start: usize, end: usize) -> (Vec<Var>, Option<String>) {
    let mut vars = Vec::new();
    let mut off = start;
    loop {
        if off >= end {
            return (
                vars,
                Some(format!(
                    "no empty string ends the variables before the end of the environment at {end:#x}"
                )),
            );
        }
        if img[off] == 0 {
            return (vars, None);
        }
        let Some(len) = img[off..end].iter().position(|&b| b == 0) else {
            return (
                vars,
                Some(format!(
                    "entry at {off:#x} runs to the end of the environment without a NUL"
                )),
            );
        };
        let entry = &img[off..off + len];
        let Some(eq) = entry.iter().position(|&b| b == b'=') else {
            return (vars, Some(format!("entry at {off:#x} has no '='")));
        };
        if eq == 0 {
            return (vars, Some(format!("entry at {off:#x} has an empty name")));
        }
        vars.push(Var {
            name: String::from_utf8_lossy(&entry[..eq]).into_owned(),
            value: String::from_utf8_lossy(&entry[eq + 1..]).into_owned(),
            offset: off,
            value_offset: off + eq + 1,
            value_len: len - eq - 1,
        });
        off += len + 1;
    }
}

/// Decodes one copy occupying `img[offset..offset + size]`.
pub fn decode_copy(
    img: &[u8],
    offset: usize,
    size: usize,
    kind: Kind,
) -> Result<Copy, DecodeError> {
    let hdr = kind.data_offset();
    if size <= hdr || offset + size > img.len() {
        return Err(DecodeError::at(
            offset,
            format!("{size} bytes cannot hold a {kind:?} environment"),
        ));
    }
    let region = &img[offset..offset + size];
    let crc_found = u32::from_le_bytes([region[0], region[1], region[2], region[3]]);
    let crc_expected = CRC32.checksum(&region[hdr..]);
    let (vars, data_error) = parse_data(img, offset + hdr, offset + size);
    Ok(Copy {
        offset,
        size,
        kind,
        flag: (kind == Kind::Redundant).then(|| region[4]),
        crc_found,
        crc_expected,
        crc_valid: crc_found == crc_expected,
        vars,
        data_error,
    })
}

fn usable(c: &Copy) -> bool {
    c.crc_valid && c.data_error.is_none()
}

/// Which of two redundant copies U-Boot uses: the only intact one, or of
/// two intact ones the newer by flag, the first on a tie.
/// Counters (`u-boot,env-redundant-count`, U-Boot's `env_import_redund()`,
/// libubootenv on files): the higher, 0 following 255.
/// Boolean flags (`u-boot,env-redundant-bool`, U-Boot's `env/flash.c`):
/// active 1 over obsolete 0, else a flag still erased (0xff) over any other.
pub fn choose(a: &Copy, b: &Copy, counter: bool) -> Option<usize> {
    match (usable(a), usable(b)) {
        (false, false) => None,
        (true, false) => Some(0),
        (false, true) => Some(1),
        (true, true) => {
            let (fa, fb) = (a.flag.unwrap_or(0), b.flag.unwrap_or(0));
            let second = if fa == fb {
                false
            } else if counter {
                match (fa, fb) {
                    (255, 0) => true,
                    (0, 255) => false,
                    _ => fb > fa,
                }
            } else {
                match (fa, fb) {
                    (1, 0) => false,
                    (0, 1) => true,
                    _ => fb == 0xff,
                }
            };
            Some(usize::from(second))
        }
    }
}

/// Where the kernel's layout looks for the environment: `env-size` (one
/// copy) and `env-redundant-offset` (the second copy) of its node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Geometry {
    pub env_size: Option<usize>,
    pub redundant_offset: Option<usize>,
}

/// The copy of the environment in a device holding `img` that the kernel's
/// layout takes its cells from (U-Boot's choice when there are two), or
/// the problem it reports.
pub fn layout_copy(
    img: &[u8],
    kind: Kind,
    counter: bool,
    geo: Geometry,
) -> Result<Copy, DecodeError> {
    let hdr = kind.data_offset();
    let second = geo.redundant_offset.unwrap_or(0);
    if geo.redundant_offset.is_some() && (kind == Kind::Single || second == 0) {
        return Err(DecodeError::whole(
            "env-redundant-offset needs a redundant format and a non-zero offset",
        ));
    }
    let size = geo
        .env_size
        .unwrap_or(if second > 0 { second } else { img.len() });
    if size <= hdr {
        return Err(DecodeError::whole(format!(
            "an environment of {size} bytes holds no variables"
        )));
    }
    if second > 0 && second < size {
        return Err(DecodeError::whole(format!(
            "the copies overlap (second at {second:#x}, each {size:#x} bytes)"
        )));
    }
    if size > img.len() || second > img.len() - size {
        return Err(DecodeError::whole(format!(
            "device of {:#x} bytes smaller than its environment ({size:#x} bytes{})",
            img.len(),
            if second > 0 { " twice" } else { "" }
        )));
    }
    let first = decode_copy(img, 0, size, kind)?;
    if second == 0 {
        return if usable(&first) {
            Ok(first)
        } else {
            Err(copy_problem(&first))
        };
    }
    let other = decode_copy(img, second, size, kind)?;
    match choose(&first, &other, counter) {
        Some(0) => Ok(first),
        Some(_) => Ok(other),
        None => Err(DecodeError::whole(format!(
            "no intact copy ({}; {})",
            copy_problem(&first),
            copy_problem(&other)
        ))),
    }
}

fn copy_problem(c: &Copy) -> DecodeError {
    DecodeError::at(
        c.offset,
        format!(
            "copy at {:#x}: {}",
            c.offset,
            c.problem().unwrap_or_default()
        ),
    )
}

/// Decodes an environment image: one copy (single or redundant format) or
/// two redundant copies in the two halves. With `kind`, only that format is
/// tried; otherwise single, redundant, then two copies.
pub fn decode(img: &[u8], kind: Option<Kind>) -> Result<Image, DecodeError> {
    if let Some(b) = onie::blank_kind(img) {
        return Err(DecodeError::whole(format!("not a U-Boot environment: {b}")));
    }
    if img.len() < 6 {
        return Err(DecodeError::whole(format!(
            "truncated: {} bytes cannot hold an environment",
            img.len()
        )));
    }
    let mut first_error = None;
    for k in [Kind::Single, Kind::Redundant] {
        if kind.is_some_and(|want| want != k) {
            continue;
        }
        let c = decode_copy(img, 0, img.len(), k)?;
        if usable(&c) {
            return Ok(Image {
                copies: vec![c],
                active: Some(0),
            });
        }
        first_error.get_or_insert(c);
    }
    if kind != Some(Kind::Single) && img.len().is_multiple_of(2) && img.len() >= 12 {
        let half = img.len() / 2;
        let a = decode_copy(img, 0, half, Kind::Redundant)?;
        let b = decode_copy(img, half, half, Kind::Redundant)?;
        if usable(&a) || usable(&b) {
            let active = choose(&a, &b, true);
            return Ok(Image {
                copies: vec![a, b],
                active,
            });
        }
    }
    // Nothing valid: report the first interpretation tried.
    let c = first_error.expect("at least one format was tried");
    Ok(Image {
        copies: vec![c],
        active: None,
    })
}
