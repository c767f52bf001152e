//! The reverse of `build`: a description (.toml) of an existing image, such
//! as a dump of a real board's EEPROM, that builds the same bytes again.
//!
//! The image is decoded as its format (the first in the format table that
//! recognises it, see [`crate::format::ImageFormat::dump_candidates`]) and
//! described in that format's terms. Every candidate is
//! built and compared with the image; where a format's description cannot
//! say what the image holds (a damaged checksum, TLVs in an order the
//! description does not keep, bytes after the data that are not fill), the
//! image is described as a `blob` of its non-fill byte runs instead, with a
//! comment that says why. Either way the result rebuilds the image exactly.

use crate::desc::Description;
use crate::error::{Error, Result};
use crate::format::{self, Candidate};
use crate::hex;
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

pub(crate) fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// The byte the image is filled with after `from`, when every byte there is
/// the same (an image that ends at `from` takes `default`).
pub(crate) fn uniform_tail(img: &[u8], from: usize, default: u8) -> Option<u8> {
    let tail = img.get(from..)?;
    let b = tail.first().copied().unwrap_or(default);
    tail.iter().all(|&x| x == b).then_some(b)
}

pub(crate) fn spaced_hex(b: &[u8]) -> String {
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
    let (format, candidates): (&'static str, &[Candidate]) = format::FORMATS
        .iter()
        .find_map(|f| f.dump_candidates(img).map(|c| (f.name(), c)))
        .unwrap_or(("", &[]));
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
