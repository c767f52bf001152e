//! U-Boot environments.
//!
//! Single copy: CRC-32 (little-endian) of the data area, then `name=value\0`
//! entries ending with an empty entry, padded to the environment size.
//! Redundant copy: CRC, one flag byte (not covered by the CRC), data.
//! An image may hold two redundant copies back to back (each half of it).

use crate::cells::{self, Cell, Layout, Post};
use crate::desc::{
    bool_field, byte_field, only_keys, required, tables, usize_field, within, Spec, MAX_IMAGE,
};
use crate::dump::quote;
use crate::error::{DecodeError, DescError};
use crate::format::{self, BuildError, Candidate, ImageFormat};
use crate::inspect::Inspection;
use crate::view::{self, Value};
use crate::{mac, onie};
use serde::Serialize;
use std::fmt::{self, Write as _};
use std::path::Path;
use std::process::Command;
use toml::{Table, Value as TomlValue};

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

type R<T> = std::result::Result<T, DescError>;

/// One copy of an environment in a description.
#[derive(Debug, Clone)]
pub struct EnvCopy {
    pub flag: u8,
    pub vars: Vec<(String, String)>,
    /// store a CRC that does not match (a damaged copy)
    pub bad_crc: bool,
    /// lines given to mkenvimage after the variables, as they are (a line
    /// without '=', an empty name)
    pub lines: Vec<String>,
    /// the NULs after the last variable removed (it runs to the end)
    pub unterminated: bool,
}

fn env_vars(t: &Table, key: &str) -> R<Vec<(String, String)>> {
    let vars = match t.get(key) {
        None => return Ok(vec![]),
        Some(TomlValue::Table(v)) => v,
        Some(v) => {
            return Err(DescError::field(
                key,
                format!("expected a table, found {}", v.type_str()),
            ))
        }
    };
    let mut out = Vec::new();
    for (k, v) in vars {
        let field = format!("{key}.{k}");
        check_name(k).map_err(|e| DescError::field(&field, e))?;
        let value = match v {
            TomlValue::String(s) => s.clone(),
            TomlValue::Integer(i) => i.to_string(),
            other => {
                return Err(DescError::field(
                    &field,
                    format!("expected a string, found {}", other.type_str()),
                ))
            }
        };
        check_value(k, &value).map_err(|e| DescError::field(&field, e))?;
        out.push((k.clone(), value));
    }
    Ok(out)
}

/// `lines`: an array of strings, each one line of mkenvimage's input
fn env_lines(t: &Table, key: &str) -> R<Vec<String>> {
    let Some(v) = t.get(key) else {
        return Ok(Vec::new());
    };
    let TomlValue::Array(items) = v else {
        return Err(DescError::field(
            key,
            format!("expected an array of strings, found {}", v.type_str()),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            TomlValue::String(l) if !l.contains(['\n', '\0']) => Ok(l.clone()),
            TomlValue::String(_) => Err(DescError::field(
                format!("{key}[{i}]"),
                "a line holds no newline or NUL",
            )),
            other => Err(DescError::field(
                format!("{key}[{i}]"),
                format!("expected a string, found {}", other.type_str()),
            )),
        })
        .collect()
}

/// The fields that damage one copy of an environment on purpose.
const DAMAGE_KEYS: [&str; 3] = ["bad-crc", "lines", "unterminated"];

/// One copy's variables and damage, from the table that holds them (the
/// description itself for a single copy, or a `[[copy]]`).
fn env_copy(t: &Table, flag: u8) -> R<EnvCopy> {
    Ok(EnvCopy {
        flag,
        vars: env_vars(t, "vars")?,
        bad_crc: bool_field(t, "bad-crc")?,
        lines: env_lines(t, "lines")?,
        unterminated: bool_field(t, "unterminated")?,
    })
}

fn parse_desc(t: &Table) -> R<Spec> {
    only_keys(
        t,
        &[
            "format",
            "size",
            "pad",
            "redundant",
            "flag",
            "vars",
            "copy",
            "bad-crc",
            "lines",
            "unterminated",
            "truncate",
        ],
        "",
    )?;
    let size = required(usize_field(t, "size", MAX_IMAGE)?, "size")?;
    let redundant = match t.get("redundant") {
        None => false,
        Some(TomlValue::Boolean(b)) => *b,
        Some(v) => {
            return Err(DescError::field(
                "redundant",
                format!("expected true or false, found {}", v.type_str()),
            ))
        }
    };
    let mut copies = Vec::new();
    let copy_tables = tables(t, "copy")?;
    if copy_tables.is_empty() {
        // one copy; in the redundant format it is one of a pair that the
        // device keeps elsewhere (as `mkenvimage -r` writes it)
        if t.contains_key("flag") && !redundant {
            return Err(DescError::field("flag", "only a redundant copy has a flag"));
        }
        copies.push(env_copy(t, byte_field(t, "flag", 1)?)?);
    } else {
        if t.contains_key("flag") {
            return Err(DescError::field("flag", "give each [[copy]] its flag"));
        }
        if !redundant {
            return Err(DescError::field("copy", "copies need `redundant = true`"));
        }
        if t.contains_key("vars") {
            return Err(DescError::field(
                "vars",
                "give the variables in each [[copy]] instead",
            ));
        }
        for key in DAMAGE_KEYS {
            if t.contains_key(key) {
                return Err(DescError::field(
                    key,
                    format!("say which copy is damaged: {key} in its [[copy]]"),
                ));
            }
        }
        if copy_tables.len() != 2 {
            return Err(DescError::field(
                "copy",
                format!(
                    "{} copies given, a redundant environment has 2",
                    copy_tables.len()
                ),
            ));
        }
        for (i, c) in copy_tables.into_iter().enumerate() {
            let ctx = format!("copy[{i}].");
            let keys: Vec<&str> = ["flag", "vars"].into_iter().chain(DAMAGE_KEYS).collect();
            only_keys(c, &keys, &ctx)?;
            let flag = byte_field(c, "flag", 1).map_err(within(&ctx))?;
            copies.push(env_copy(c, flag).map_err(within(&ctx))?);
        }
    }
    let hdr = if redundant { 5 } else { 4 };
    for (i, c) in copies.iter().enumerate() {
        let need =
            data_bytes(&c.vars).len() + c.lines.iter().map(|l| l.len() + 1).sum::<usize>() + hdr;
        if need > size {
            let field = if copies.len() > 1 {
                format!("copy[{i}].vars")
            } else {
                "vars".into()
            };
            return Err(DescError::field(
                field,
                format!("environment needs {need} bytes with its header, over the size of {size}"),
            ));
        }
    }
    let truncate = usize_field(t, "truncate", MAX_IMAGE)?;
    let whole = size * copies.len();
    if let Some(n) = truncate {
        if n >= whole {
            return Err(DescError::field(
                "truncate",
                format!("{n:#x} keeps the whole image of {whole:#x} bytes"),
            ));
        }
    }
    Ok(Spec::UbootEnv {
        size,
        pad: byte_field(t, "pad", 0xff)?,
        redundant,
        copies,
        truncate,
    })
}

/// U-Boot environments (`format = "uboot-env"`, layouts `u-boot,env`,
/// `u-boot,env-redundant-bool`, `u-boot,env-redundant-count`).
pub struct UbootEnv;

impl ImageFormat for UbootEnv {
    fn name(&self) -> &'static str {
        "uboot-env"
    }

    fn parse(&self, t: &Table) -> R<Spec> {
        parse_desc(t)
    }

    fn build(&self, spec: &Spec, _path: &Path) -> Result<Vec<u8>, BuildError> {
        let Spec::UbootEnv {
            size,
            pad,
            redundant,
            copies,
            truncate,
        } = spec
        else {
            return Err(format::not_mine(self).into());
        };
        let mut out = Vec::new();
        let kind = if *redundant {
            Kind::Redundant
        } else {
            Kind::Single
        };
        for c in copies {
            let mut img =
                mkenvimage_lines(&c.vars, &c.lines, *size, *redundant, *pad).map_err(|msg| {
                    BuildError::Tool {
                        tool: "mkenvimage",
                        msg,
                    }
                })?;
            if c.unterminated {
                unterminate(&mut img, kind, *pad)
                    .map_err(|e| DescError::field("unterminated", e))?;
            }
            if *redundant {
                // the flag byte is outside the CRC
                img[4] = c.flag;
            }
            if c.bad_crc {
                img[0] ^= 0xff;
            }
            out.extend_from_slice(&img);
        }
        if let Some(n) = truncate {
            out.truncate(*n);
        }
        Ok(out)
    }

    fn reseal(&self, spec: &Spec, img: &mut [u8]) -> Result<(), String> {
        let Spec::UbootEnv {
            size,
            redundant,
            copies,
            ..
        } = spec
        else {
            return Err(format::not_mine(self).msg);
        };
        let kind = if *redundant {
            Kind::Redundant
        } else {
            Kind::Single
        };
        for i in 0..copies.len() {
            let copy = img
                .get_mut(i * size..(i + 1) * size)
                .ok_or_else(|| format!("copy {i} runs past the image"))?;
            seal(copy, kind);
        }
        Ok(())
    }

    fn detect(&self, _img: &[u8]) -> bool {
        false
    }

    fn magic(&self) -> Option<&'static str> {
        None
    }

    fn inspect(&self, img: &[u8]) -> Result<Inspection, DecodeError> {
        decode(img, None).map(Inspection::UbootEnv)
    }

    fn inspect_unmarked(&self, img: &[u8]) -> Result<Result<Inspection, String>, DecodeError> {
        let env = decode(img, None)?;
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
            return Ok(Err(format!("not a valid U-Boot environment ({why})")));
        }
        Ok(Ok(Inspection::UbootEnv(env)))
    }

    fn serves(&self, layout: Layout) -> bool {
        matches!(layout, Layout::UbootEnv(..))
    }

    fn layouts(&self) -> &'static [(&'static str, Layout)] {
        &[
            ("u-boot,env", Layout::UbootEnv(Kind::Single, true)),
            (
                "u-boot,env-redundant-bool",
                Layout::UbootEnv(Kind::Redundant, false),
            ),
            (
                "u-boot,env-redundant-count",
                Layout::UbootEnv(Kind::Redundant, true),
            ),
        ]
    }

    fn predict(
        &self,
        layout: Layout,
        img: &[u8],
        index: Option<i64>,
        env: Geometry,
    ) -> Result<Vec<Cell>, DecodeError> {
        let Layout::UbootEnv(kind, counter) = layout else {
            return Err(DecodeError::whole(format!(
                "{layout:?} is no U-Boot environment layout"
            )));
        };
        // a blank device fails as the layout finds it (a CRC that does
        // not match), the blankness said as well
        let copy =
            layout_copy(img, kind, counter, env).map_err(|e| match onie::blank_kind(img) {
                Some(b) => DecodeError {
                    msg: format!("{} ({b})", e.msg),
                    ..e
                },
                None => e,
            })?;
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
                    cells.push(cells::make(
                        &v.name,
                        v.value_offset,
                        raw,
                        6,
                        Post::MacText,
                        index,
                    ));
                }
            } else {
                cells.push(cells::make(
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

    fn dump_candidates(&self, img: &[u8]) -> Option<&'static [Candidate]> {
        let looks_like = onie::blank_kind(img).is_none()
            && decode(img, None).is_ok_and(|e| {
                // an intact copy, or variables behind a damaged CRC
                e.active.is_some()
                    || e.copies
                        .iter()
                        .any(|c| c.data_error.is_none() && !c.vars.is_empty())
            });
        looks_like.then_some(&[dump_candidate, dump_pair_candidate])
    }

    fn view(&self, layout: &str, name: &str, b: &[u8]) -> Option<Value> {
        if !layout.starts_with("u-boot,env") {
            return None;
        }
        Some(match name {
            // the text as stored where no read hook converts it (6.1's
            // MTD u-boot-env driver)
            "ethaddr" if b.len() == 17 => match std::str::from_utf8(b).ok().and_then(mac::parse) {
                Some(m) => Value::Mac {
                    address: mac::format(&m),
                    post_processed: false,
                },
                None => view::text_or_hex(b),
            },
            "ethaddr" => view::mac_value(b, true),
            _ => view::text_or_hex(b),
        })
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        writeln!(
            s,
            "format: U-Boot environment, {} cop{}",
            self.copies.len(),
            if self.copies.len() == 1 { "y" } else { "ies" }
        )?;
        for (n, c) in self.copies.iter().enumerate() {
            let flag = c
                .flag
                .map(|x| format!(", flag {x:#04x}"))
                .unwrap_or_default();
            let used = if self.active == Some(n) {
                " <- U-Boot uses this one"
            } else {
                ""
            };
            writeln!(
                s,
                "copy {n} at {:#x}, {} bytes, {:?}{flag}, crc32 found {:#010x} computed {:#010x}: {}{used}",
                c.offset, c.size, c.kind, c.crc_found, c.crc_expected, format::valid(c.crc_valid)
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
        f.write_str(&s)
    }
}

format::decoded_by_variant!(Image, UbootEnv);

fn dump_vars(s: &mut String, table: &str, copy: &Copy) {
    let _ = writeln!(s, "\n[{table}]");
    for v in &copy.vars {
        let _ = writeln!(s, "{} = {}", quote(&v.name), quote(&v.value));
    }
}

fn dump_candidate(img: &[u8]) -> std::result::Result<String, String> {
    dump_text(img, &decode(img, None).map_err(|e| e.to_string())?)
}

/// Both halves as copies of a redundant environment: what a pair with no
/// intact copy needs (the decoder then cannot tell the format).
fn dump_pair_candidate(img: &[u8]) -> std::result::Result<String, String> {
    let half = img.len() / 2;
    if half < 6 || !img.len().is_multiple_of(2) {
        return Err("the image does not split into two copies".into());
    }
    let copy = |at| decode_copy(img, at, half, Kind::Redundant);
    let copies = vec![
        copy(0).map_err(|e| e.to_string())?,
        copy(half).map_err(|e| e.to_string())?,
    ];
    dump_text(
        img,
        &Image {
            copies,
            active: None,
        },
    )
}

fn dump_text(img: &[u8], image: &Image) -> std::result::Result<String, String> {
    let first = &image.copies[0];
    let pad = *img.last().ok_or("the image is empty")?;
    let mut s = String::new();
    let _ = writeln!(s, "format = \"uboot-env\"");
    let _ = writeln!(s, "size = {:#x}", first.size);
    let _ = writeln!(s, "pad = {pad:#04x}");
    if image.copies.len() == 1 {
        if first.kind == Kind::Redundant {
            let _ = writeln!(s, "redundant = true");
            let _ = writeln!(s, "flag = {}", first.flag.unwrap_or(0));
        }
        if !first.crc_valid {
            let _ = writeln!(s, "bad-crc = true");
        }
        dump_vars(&mut s, "vars", first);
    } else {
        let _ = writeln!(s, "redundant = true");
        for c in &image.copies {
            let _ = writeln!(s, "\n[[copy]]\nflag = {}", c.flag.unwrap_or(0));
            if !c.crc_valid {
                let _ = writeln!(s, "bad-crc = true");
            }
            dump_vars(&mut s, "copy.vars", c);
        }
    }
    Ok(s)
}
