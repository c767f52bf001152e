//! Decoding an image of unknown or given format, for people and for JSON.
//! Each format decodes its own images ([`crate::format::ImageFormat`]);
//! this module picks the format.

use crate::error::DecodeError;
use crate::format::{self, Decoded, Found};
use crate::{onie, sl28, uboot};
use serde::Serialize;
use std::fmt;

/// The format `inspect` decodes an image as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// by its magic, else as a format without magic (a U-Boot environment)
    Auto,
    /// the format of this name ([`crate::format::FORMATS`])
    Named(&'static str),
}

/// A decoded image. The first three variants stay for the API; every
/// other format's images are [`Inspection::Format`].
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "format", rename_all = "kebab-case")]
pub enum Inspection {
    OnieTlv(onie::Image),
    Sl28Vpd(sl28::Image),
    UbootEnv(uboot::Image),
    /// serialised as the format's own JSON, which names the format
    #[serde(untagged)]
    Format(Found),
}

impl Inspection {
    /// The decoded image as its format shows it.
    pub fn decoded(&self) -> &dyn Decoded {
        match self {
            Inspection::OnieTlv(i) => i,
            Inspection::Sl28Vpd(i) => i,
            Inspection::UbootEnv(i) => i,
            Inspection::Format(Found(i)) => &**i,
        }
    }

    /// Err when the checksum (or, for environments, every copy) is bad.
    pub fn check(&self) -> Result<(), DecodeError> {
        self.decoded().check()
    }
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.decoded(), f)
    }
}

/// Decodes `img`. Auto-detection goes by magic (ONIE `TlvInfo\0`, sl28
/// 'V' version 1, an IPMI FRU common header), in the order of the format
/// table; an image with none is tried as each format without magic (a
/// U-Boot environment).
pub fn inspect(img: &[u8], format: Format) -> Result<Inspection, DecodeError> {
    let name = match format {
        Format::Named(name) => name,
        Format::Auto => return auto(img),
    };
    let f = format::by_name(name)
        .ok_or_else(|| DecodeError::whole(format!("unknown format {name:?}")))?;
    f.inspect(img)
}

fn auto(img: &[u8]) -> Result<Inspection, DecodeError> {
    if let Some(f) = format::FORMATS.iter().find(|f| f.detect(img)) {
        return f.inspect(img);
    }
    if let Some(b) = onie::blank_kind(img) {
        return Err(DecodeError::whole(format!("nothing to inspect: {b}")));
    }
    let mut why = Vec::new();
    for f in format::FORMATS.iter().filter(|f| f.magic().is_none()) {
        match f.inspect_unmarked(img)? {
            Ok(found) => return Ok(found),
            Err(e) => why.push(e),
        }
    }
    let magics: Vec<_> = format::FORMATS.iter().filter_map(|f| f.magic()).collect();
    Err(DecodeError::whole(format!(
        "unrecognised image: {}, and {}",
        magics.join(", "),
        why.join(", ")
    )))
}
