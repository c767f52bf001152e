//! Image descriptions: one TOML file per image, `format = "…"` picks the
//! kind. Every problem is reported with the file and the field.

use crate::defect::{self, Extras};
use crate::error::{DescError, Error, Result};
use crate::format::{self, BuildError, FormatSpec, ImageFormat};
use crate::hex;
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

/// One copy of a U-Boot environment (its format module's type).
pub use crate::uboot::EnvCopy;

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
    /// A description of a format that keeps its own data type (every
    /// format but the three above, whose variants stay for the API).
    Format(FormatSpec),
}

impl Spec {
    /// The format that builds this description (None: a blob or flash
    /// image, built here).
    pub fn format(&self) -> Option<&'static dyn ImageFormat> {
        match self {
            Spec::OnieTlv { .. } => Some(&crate::onie::OnieTlv),
            Spec::Sl28Vpd { .. } => Some(&crate::sl28::Sl28Vpd),
            Spec::UbootEnv { .. } => Some(&crate::uboot::UbootEnv),
            Spec::Format(f) => Some(f.format()),
            Spec::Blob { .. } | Spec::Flash { .. } => None,
        }
    }
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

pub(crate) fn byte_field(t: &Table, key: &str, default: u8) -> R<u8> {
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

pub(crate) fn bool_field(t: &Table, key: &str) -> R<bool> {
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

pub(crate) fn only_keys(t: &Table, allowed: &[&str], ctx: &str) -> R<()> {
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
    let known = || {
        format::FORMATS
            .iter()
            .map(|f| f.name())
            .chain(["blob", "flash"])
            .collect::<Vec<_>>()
            .join(", ")
    };
    match str_field(t, "format")? {
        Some("blob") => parse_blob(t),
        Some("flash") => parse_flash(t),
        Some(name) => match format::by_name(name) {
            Some(f) => f.parse(t),
            None => Err(DescError::field(
                "format",
                format!("unknown format {name:?} ({})", known()),
            )),
        },
        None => Err(DescError::field("format", format!("missing ({})", known()))),
    }
}

pub(crate) fn pad_to(mut img: Vec<u8>, size: Option<usize>, fill: u8) -> R<Vec<u8>> {
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
        match self.spec.format() {
            Some(f) => f.reseal(&self.spec, img),
            None => Err("a blob or flash image has no checksum of its own".into()),
        }
    }

    fn build_format(&self, depth: usize) -> Result<Vec<u8>> {
        match &self.spec {
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
            spec => {
                let f = spec
                    .format()
                    .ok_or_else(|| self.err(DescError::whole("no format builds this")))?;
                f.build(spec, &self.path).map_err(|e| match e {
                    BuildError::Desc(err) => self.err(err),
                    BuildError::Tool { tool, msg } => Error::Tool {
                        path: self.path.display().to_string(),
                        tool: tool.into(),
                        msg,
                    },
                })
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
