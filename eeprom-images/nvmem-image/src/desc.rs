//! Image descriptions: one TOML file per image, `format = "…"` picks the
//! kind. Every problem is reported with the file and the field.

use crate::defect::{self, Extras};
use crate::error::{DescError, Error, Result};
use crate::{hex, mac, onie, sl28, uboot};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// A cell of a fixed layout: a named region of a blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedCell {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    /// `compatible = "mac-base"`: a base MAC address (6 bytes, 12 hex
    /// digits or 17 characters) read as 6 bytes plus the index
    pub mac_base: bool,
    /// `bits = <bit-offset nbits>`: the cell is these bits of its bytes,
    /// least significant first
    pub bits: Option<(u32, u32)>,
}

#[derive(Debug, Clone)]
pub struct Region {
    pub offset: usize,
    pub data: Vec<u8>,
    pub cell: Option<String>,
    pub mac_base: bool,
    pub bits: Option<(u32, u32)>,
}

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

#[derive(Debug, Clone)]
pub struct Partition {
    pub offset: usize,
    pub size: Option<usize>,
    pub image: String,
}

#[derive(Debug, Clone)]
pub enum Spec {
    OnieTlv {
        tlvs: Vec<(u8, Vec<u8>)>,
        size: Option<usize>,
        fill: u8,
    },
    Sl28Vpd {
        serial: Vec<u8>,
        base_mac: [u8; 6],
        size: Option<usize>,
        fill: u8,
    },
    UbootEnv {
        size: usize,
        pad: u8,
        redundant: bool,
        copies: Vec<EnvCopy>,
        /// only the first bytes of the image are kept (a device smaller
        /// than its environment)
        truncate: Option<usize>,
    },
    Blob {
        size: usize,
        fill: u8,
        regions: Vec<Region>,
    },
    Flash {
        size: usize,
        fill: u8,
        partitions: Vec<Partition>,
    },
}

#[derive(Debug, Clone)]
pub struct Description {
    pub path: PathBuf,
    pub spec: Spec,
    /// defects, expected outcome and layout node (malformed test images)
    pub extras: Extras,
}

type R<T> = std::result::Result<T, DescError>;

pub(crate) fn int(t: &Table, key: &str) -> R<Option<i64>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Integer(i)) => Ok(Some(*i)),
        Some(v) => Err(DescError::field(
            key,
            format!("expected an integer, found {}", v.type_str()),
        )),
    }
}

pub(crate) fn usize_field(t: &Table, key: &str, max: usize) -> R<Option<usize>> {
    match int(t, key)? {
        None => Ok(None),
        Some(i) if i < 0 || i as u64 > max as u64 => Err(DescError::field(
            key,
            format!("{i} is out of range 0..={max}"),
        )),
        Some(i) => Ok(Some(i as usize)),
    }
}

fn byte_field(t: &Table, key: &str, default: u8) -> R<u8> {
    Ok(usize_field(t, key, 255)?
        .map(|v| v as u8)
        .unwrap_or(default))
}

/// `key = [bit-offset, nbits]`, each 0..=u32::MAX (what a device tree
/// cell holds; whether the kernel takes them is the kernel's business)
fn bits_field(t: &Table, key: &str) -> R<Option<(u32, u32)>> {
    let err = || {
        DescError::field(
            key,
            "expected [bit offset, number of bits], two integers 0..=0xffffffff",
        )
    };
    match t.get(key) {
        None => Ok(None),
        Some(Value::Array(a)) if a.len() == 2 => {
            let mut v = [0u32; 2];
            for (slot, x) in v.iter_mut().zip(a) {
                *slot = x
                    .as_integer()
                    .and_then(|i| u32::try_from(i).ok())
                    .ok_or_else(err)?;
            }
            Ok(Some((v[0], v[1])))
        }
        Some(_) => Err(err()),
    }
}

fn bool_field(t: &Table, key: &str) -> R<bool> {
    match t.get(key) {
        None => Ok(false),
        Some(Value::Boolean(b)) => Ok(*b),
        Some(v) => Err(DescError::field(
            key,
            format!("expected true or false, found {}", v.type_str()),
        )),
    }
}

pub(crate) fn str_field<'a>(t: &'a Table, key: &str) -> R<Option<&'a str>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(DescError::field(
            key,
            format!("expected a string, found {}", v.type_str()),
        )),
    }
}

/// Prefixes the field of an error found inside a nested table
/// (`region[2].` + `offset`).
pub(crate) fn within(ctx: &str) -> impl Fn(DescError) -> DescError + '_ {
    move |e| DescError {
        field: Some(format!("{ctx}{}", e.field.unwrap_or_default())),
        msg: e.msg,
    }
}

pub(crate) fn required<T>(v: Option<T>, key: &str) -> R<T> {
    v.ok_or_else(|| DescError::field(key, "missing"))
}

fn only_keys(t: &Table, allowed: &[&str], ctx: &str) -> R<()> {
    for k in t.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(DescError::field(
                format!("{ctx}{k}"),
                format!("unknown field (allowed here: {})", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

pub(crate) fn tables<'a>(t: &'a Table, key: &str) -> R<Vec<&'a Table>> {
    match t.get(key) {
        None => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_table()
                    .ok_or_else(|| DescError::field(format!("{key}[{i}]"), "expected a table"))
            })
            .collect(),
        Some(v) => Err(DescError::field(
            key,
            format!("expected an array of tables, found {}", v.type_str()),
        )),
    }
}

pub(crate) const MAX_IMAGE: usize = 1 << 30;

fn onie_value(name: &str, kind: onie::Kind, v: &Value) -> R<Vec<Vec<u8>>> {
    let text = |v: &Value| -> R<String> {
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
        onie::Kind::Text => ascii(text(v)?)?,
        onie::Kind::Date => {
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
        onie::Kind::Country => {
            let s = text(v)?;
            if s.len() != 2 || !s.bytes().all(|c| c.is_ascii_uppercase()) {
                return Err(DescError::field(
                    name,
                    format!("{s:?} is not a two-letter country code"),
                ));
            }
            s.into_bytes()
        }
        onie::Kind::Mac => {
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
        onie::Kind::U8 | onie::Kind::U16 => {
            let max = if kind == onie::Kind::U8 { 255 } else { 65535 };
            let i = v.as_integer().ok_or_else(|| {
                DescError::field(name, format!("expected an integer, found {}", v.type_str()))
            })?;
            if !(0..=max).contains(&i) {
                return Err(DescError::field(
                    name,
                    format!("{i} is out of range 0..={max}"),
                ));
            }
            if kind == onie::Kind::U8 {
                vec![i as u8]
            } else {
                (i as u16).to_be_bytes().to_vec()
            }
        }
        onie::Kind::Hex => {
            // one value, or an array of them (one TLV each)
            if let Value::Array(a) = v {
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
        onie::Kind::Crc => {
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

fn parse_onie(t: &Table) -> R<Spec> {
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
                let Some((code, kind)) = onie::type_by_name(name) else {
                    let known: Vec<_> = onie::TYPES
                        .iter()
                        .filter(|t| t.0 != onie::CRC_TYPE)
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

fn parse_sl28(t: &Table) -> R<Spec> {
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
    if serial.len() > sl28::SERIAL_LEN {
        return Err(DescError::field(
            "serial-number",
            format!(
                "{} bytes exceed the {} of the sl28 VPD",
                serial.len(),
                sl28::SERIAL_LEN
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

fn env_vars(t: &Table, key: &str) -> R<Vec<(String, String)>> {
    let vars = match t.get(key) {
        None => return Ok(vec![]),
        Some(Value::Table(v)) => v,
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
        uboot::check_name(k).map_err(|e| DescError::field(&field, e))?;
        let value = match v {
            Value::String(s) => s.clone(),
            Value::Integer(i) => i.to_string(),
            other => {
                return Err(DescError::field(
                    &field,
                    format!("expected a string, found {}", other.type_str()),
                ))
            }
        };
        uboot::check_value(k, &value).map_err(|e| DescError::field(&field, e))?;
        out.push((k.clone(), value));
    }
    Ok(out)
}

/// `lines`: an array of strings, each one line of mkenvimage's input
fn env_lines(t: &Table, key: &str) -> R<Vec<String>> {
    let Some(v) = t.get(key) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(DescError::field(
            key,
            format!("expected an array of strings, found {}", v.type_str()),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(l) if !l.contains(['\n', '\0']) => Ok(l.clone()),
            Value::String(_) => Err(DescError::field(
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

fn parse_env(t: &Table) -> R<Spec> {
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
        Some(Value::Boolean(b)) => *b,
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
        let need = uboot::data_bytes(&c.vars).len()
            + c.lines.iter().map(|l| l.len() + 1).sum::<usize>()
            + hdr;
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

fn parse_blob(t: &Table) -> R<Spec> {
    only_keys(t, &["format", "size", "fill", "region"], "")?;
    let size = required(usize_field(t, "size", MAX_IMAGE)?, "size")?;
    let mut regions = Vec::new();
    for (i, r) in tables(t, "region")?.into_iter().enumerate() {
        let ctx = format!("region[{i}].");
        only_keys(
            r,
            &["offset", "ascii", "hex", "cell", "mac-base", "bits"],
            &ctx,
        )?;
        let offset = usize_field(r, "offset", MAX_IMAGE).map_err(within(&ctx))?;
        let offset = required(offset, &format!("{ctx}offset"))?;
        let data = match (
            str_field(r, "ascii").map_err(within(&ctx))?,
            str_field(r, "hex").map_err(within(&ctx))?,
        ) {
            (Some(a), None) if a.is_ascii() => a.as_bytes().to_vec(),
            (Some(_), None) => {
                return Err(DescError::field(
                    format!("{ctx}ascii"),
                    "must be ASCII text",
                ))
            }
            (None, Some(h)) => {
                hex::decode(h).map_err(|e| DescError::field(format!("{ctx}hex"), e))?
            }
            _ => {
                return Err(DescError::field(
                    format!("{ctx}ascii"),
                    "give exactly one of `ascii` and `hex`",
                ))
            }
        };
        if offset + data.len() > size {
            return Err(DescError::field(
                format!("{ctx}offset"),
                format!(
                    "{} bytes at {offset:#x} run past the image size {size:#x}",
                    data.len()
                ),
            ));
        }
        let cell = str_field(r, "cell")
            .map_err(within(&ctx))?
            .map(str::to_owned);
        let mac_base = bool_field(r, "mac-base").map_err(within(&ctx))?;
        if mac_base && cell.is_none() {
            return Err(DescError::field(
                format!("{ctx}mac-base"),
                "only a region with `cell` is a mac-base cell",
            ));
        }
        let bits = bits_field(r, "bits").map_err(within(&ctx))?;
        if bits.is_some() && cell.is_none() {
            return Err(DescError::field(
                format!("{ctx}bits"),
                "only a region with `cell` has bits",
            ));
        }
        regions.push(Region {
            offset,
            data,
            cell,
            mac_base,
            bits,
        });
    }
    Ok(Spec::Blob {
        size,
        fill: byte_field(t, "fill", 0xff)?,
        regions,
    })
}

fn parse_flash(t: &Table) -> R<Spec> {
    only_keys(t, &["format", "size", "fill", "partition"], "")?;
    let size = required(usize_field(t, "size", MAX_IMAGE)?, "size")?;
    let mut partitions = Vec::new();
    for (i, p) in tables(t, "partition")?.into_iter().enumerate() {
        let ctx = format!("partition[{i}].");
        only_keys(p, &["offset", "size", "image"], &ctx)?;
        let offset = usize_field(p, "offset", MAX_IMAGE).map_err(within(&ctx))?;
        let offset = required(offset, &format!("{ctx}offset"))?;
        let psize = usize_field(p, "size", MAX_IMAGE).map_err(within(&ctx))?;
        let image = required(
            str_field(p, "image").map_err(within(&ctx))?,
            &format!("{ctx}image"),
        )?
        .to_owned();
        if image.contains('/') || image.contains('\\') {
            return Err(DescError::field(
                format!("{ctx}image"),
                "name a description in the same directory, without a path",
            ));
        }
        partitions.push(Partition {
            offset,
            size: psize,
            image,
        });
    }
    Ok(Spec::Flash {
        size,
        fill: byte_field(t, "fill", 0xff)?,
        partitions,
    })
}

/// Parses a description from TOML text.
pub fn parse(text: &str) -> R<Spec> {
    parse_full(text).map(|(spec, _)| spec)
}

/// Parses a description with what it says besides its format's fields.
pub fn parse_full(text: &str) -> R<(Spec, Extras)> {
    let mut t: Table = text
        .parse()
        .map_err(|e: toml::de::Error| DescError::whole(e.to_string().trim().replace('\n', " ")))?;
    let extras = defect::take(&mut t)?;
    parse_format(&t).map(|spec| (spec, extras))
}

fn parse_format(t: &Table) -> R<Spec> {
    match str_field(t, "format")? {
        Some("onie-tlv") => parse_onie(t),
        Some("sl28-vpd") => parse_sl28(t),
        Some("uboot-env") => parse_env(t),
        Some("blob") => parse_blob(t),
        Some("flash") => parse_flash(t),
        Some(other) => Err(DescError::field(
            "format",
            format!("unknown format {other:?} (onie-tlv, sl28-vpd, uboot-env, blob, flash)"),
        )),
        None => Err(DescError::field(
            "format",
            "missing (onie-tlv, sl28-vpd, uboot-env, blob, flash)",
        )),
    }
}

fn pad_to(mut img: Vec<u8>, size: Option<usize>, fill: u8) -> R<Vec<u8>> {
    if let Some(size) = size {
        if img.len() > size {
            return Err(DescError::field(
                "size",
                format!("the image needs {} bytes, more than size {size}", img.len()),
            ));
        }
        img.resize(size, fill);
    }
    Ok(img)
}

impl Description {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_text(path, &text)
    }

    /// A description from its TOML text; `path` names it in errors.
    pub fn from_text(path: &Path, text: &str) -> Result<Self> {
        let (spec, extras) = parse_full(text).map_err(|err| Error::Desc {
            path: path.display().to_string(),
            err,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            spec,
            extras,
        })
    }

    fn err(&self, err: DescError) -> Error {
        Error::Desc {
            path: self.path.display().to_string(),
            err,
        }
    }

    /// The image bytes. U-Boot environments come from mkenvimage.
    pub fn build(&self) -> Result<Vec<u8>> {
        self.build_nested(0)
    }

    fn build_nested(&self, depth: usize) -> Result<Vec<u8>> {
        let mut img = self.build_format(depth)?;
        for (i, d) in self.extras.defects.iter().enumerate() {
            let field = format!("defect[{i}]");
            defect::apply(&mut img, &d.change)
                .map_err(|e| self.err(DescError::field(&field, e)))?;
            if d.reseal {
                self.reseal(&mut img)
                    .map_err(|e| self.err(DescError::field(format!("{field}.reseal"), e)))?;
            }
        }
        Ok(img)
    }

    /// Recomputes the format's checksums over the (changed) image, where
    /// the well-formed image has them.
    fn reseal(&self, img: &mut [u8]) -> std::result::Result<(), String> {
        let short = |need: usize| {
            format!(
                "the checksum is at byte {:#x}, the image has {} bytes",
                need - 1,
                img.len()
            )
        };
        match &self.spec {
            Spec::OnieTlv { tlvs, .. } => {
                let at = onie::encode(tlvs)?.len() - 4;
                if img.len() < at + 4 {
                    return Err(short(at + 4));
                }
                let crc = onie::crc32(&img[..at]);
                img[at..at + 4].copy_from_slice(&crc.to_be_bytes());
            }
            Spec::Sl28Vpd { .. } => {
                if img.len() <= sl28::CRC_OFFSET {
                    return Err(short(sl28::CRC_OFFSET + 1));
                }
                img[sl28::CRC_OFFSET] = sl28::crc8(&img[..sl28::CRC_OFFSET]);
            }
            Spec::UbootEnv {
                size,
                redundant,
                copies,
                ..
            } => {
                let kind = if *redundant {
                    uboot::Kind::Redundant
                } else {
                    uboot::Kind::Single
                };
                for i in 0..copies.len() {
                    let copy = img
                        .get_mut(i * size..(i + 1) * size)
                        .ok_or_else(|| format!("copy {i} runs past the image"))?;
                    uboot::seal(copy, kind);
                }
            }
            Spec::Blob { .. } | Spec::Flash { .. } => {
                return Err("a blob or flash image has no checksum of its own".into())
            }
        }
        Ok(())
    }

    fn build_format(&self, depth: usize) -> Result<Vec<u8>> {
        match &self.spec {
            Spec::OnieTlv { tlvs, size, fill } => {
                let img = onie::encode(tlvs).map_err(|e| self.err(DescError::whole(e)))?;
                pad_to(img, *size, *fill).map_err(|e| self.err(e))
            }
            Spec::Sl28Vpd {
                serial,
                base_mac,
                size,
                fill,
            } => {
                let img = sl28::encode(serial, *base_mac)
                    .map_err(|e| self.err(DescError::field("serial-number", e)))?;
                pad_to(img, *size, *fill).map_err(|e| self.err(e))
            }
            Spec::UbootEnv {
                size,
                pad,
                redundant,
                copies,
                truncate,
            } => {
                let mut out = Vec::new();
                let kind = if *redundant {
                    uboot::Kind::Redundant
                } else {
                    uboot::Kind::Single
                };
                for c in copies {
                    let mut img =
                        uboot::mkenvimage_lines(&c.vars, &c.lines, *size, *redundant, *pad)
                            .map_err(|msg| Error::Tool {
                                path: self.path.display().to_string(),
                                tool: "mkenvimage".into(),
                                msg,
                            })?;
                    if c.unterminated {
                        uboot::unterminate(&mut img, kind, *pad)
                            .map_err(|e| self.err(DescError::field("unterminated", e)))?;
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
            Spec::Blob {
                size,
                fill,
                regions,
            } => {
                let mut img = vec![*fill; *size];
                for r in regions {
                    img[r.offset..r.offset + r.data.len()].copy_from_slice(&r.data);
                }
                Ok(img)
            }
            Spec::Flash {
                size,
                fill,
                partitions,
            } => {
                if depth > 4 {
                    return Err(self.err(DescError::field(
                        "partition",
                        "flash images nested too deeply",
                    )));
                }
                let mut img = vec![*fill; *size];
                let dir = self.path.parent().unwrap_or(Path::new("."));
                for (i, p) in partitions.iter().enumerate() {
                    let sub = Description::load(&dir.join(format!("{}.toml", p.image)))?;
                    let data = sub.build_nested(depth + 1)?;
                    let field = format!("partition[{i}]");
                    if let Some(ps) = p.size {
                        if data.len() > ps {
                            return Err(self.err(DescError::field(
                                &field,
                                format!(
                                    "{} is {} bytes, over the partition size {ps:#x}",
                                    p.image,
                                    data.len()
                                ),
                            )));
                        }
                    }
                    if p.offset + data.len() > *size {
                        return Err(self.err(DescError::field(
                            &field,
                            format!(
                                "{} bytes at {:#x} run past the image size {size:#x}",
                                data.len(),
                                p.offset
                            ),
                        )));
                    }
                    img[p.offset..p.offset + data.len()].copy_from_slice(&data);
                }
                Ok(img)
            }
        }
    }

    /// The cells a fixed layout of this blob declares (regions with `cell`).
    pub fn fixed_cells(&self) -> Result<Vec<FixedCell>> {
        match &self.spec {
            Spec::Blob { regions, .. } => Ok(regions
                .iter()
                .filter_map(|r| {
                    r.cell.as_ref().map(|n| FixedCell {
                        name: n.clone(),
                        offset: r.offset,
                        size: r.data.len(),
                        mac_base: r.mac_base,
                        bits: r.bits,
                    })
                })
                .collect()),
            _ => Err(self.err(DescError::field(
                "format",
                "fixed-layout cells are declared by `cell` in the regions of a blob",
            ))),
        }
    }
}
