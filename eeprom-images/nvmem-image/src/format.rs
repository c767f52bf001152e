//! One module per image format: [`ImageFormat`] is what a format does
//! (descriptions, building, decoding, auto-detection, the layouts it
//! serves and their cells, dump and view), [`FORMATS`] is the table of
//! formats. Adding a format is its module plus one line in that table.
//!
//! Blobs and flash images are not formats of their own: they are
//! containers of bytes and of other descriptions ([`crate::desc`]).

use crate::cells::{Cell, Layout};
use crate::desc::Spec;
use crate::error::{DecodeError, DescError};
use crate::inspect::Inspection;
use crate::{ipmi_fru, onie, sl28, uboot, view};
use std::any::Any;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use toml::Table;

/// Every format, in the order auto-detection and `dump` try them.
pub static FORMATS: &[&dyn ImageFormat] = &[
    &onie::OnieTlv,
    &sl28::Sl28Vpd,
    &uboot::UbootEnv,
    &ipmi_fru::IpmiFru,
];

/// The format called `name` (`format = "…"`, `inspect --format`).
pub fn by_name(name: &str) -> Option<&'static dyn ImageFormat> {
    FORMATS.iter().copied().find(|f| f.name() == name)
}

/// The format that serves `layout`.
pub fn by_layout(layout: Layout) -> Option<&'static dyn ImageFormat> {
    FORMATS.iter().copied().find(|f| f.serves(layout))
}

/// Every layout compatible a format serves, in table order.
pub fn compatibles() -> impl Iterator<Item = (&'static str, Layout)> {
    FORMATS.iter().flat_map(|f| f.layouts().iter().copied())
}

/// A `dump` candidate: the text of a description of the image in the
/// format's terms, or why the format cannot describe it.
pub type Candidate = fn(&[u8]) -> Result<String, String>;

/// What goes wrong building a description's image (the caller adds the
/// file name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// a field of the description
    Desc(DescError),
    /// an outside tool failed
    Tool { tool: &'static str, msg: String },
}

impl From<DescError> for BuildError {
    fn from(e: DescError) -> Self {
        BuildError::Desc(e)
    }
}

/// What a format does. Implemented by one unit struct per format module.
pub trait ImageFormat: Sync {
    /// The name of the format in descriptions (`format = "…"`) and in
    /// `inspect --format`.
    fn name(&self) -> &'static str;

    /// A description's table (the shared `defect`, `expect` and `layout`
    /// keys taken out) as a [`Spec`] this format builds.
    fn parse(&self, t: &Table) -> Result<Spec, DescError>;

    /// The image of a description this format parsed, before defects.
    /// `path` names the description (for descriptions of other files).
    fn build(&self, spec: &Spec, path: &Path) -> Result<Vec<u8>, BuildError>;

    /// Recomputes the checksums of an image built from `spec` after a
    /// defect changed it (`reseal = true`).
    fn reseal(&self, spec: &Spec, img: &mut [u8]) -> Result<(), String> {
        let _ = (spec, img);
        Err(format!("{} has no checksum to reseal", self.name()))
    }

    /// Auto-detection by a cheap and safe rule (a magic). A format
    /// without one says so with `magic() == None` and is tried through
    /// [`ImageFormat::inspect_unmarked`] when no magic matched.
    fn detect(&self, img: &[u8]) -> bool;

    /// What was missing when an image is not of this format, for the
    /// error of an unrecognised image ("no … magic"); None: no magic.
    fn magic(&self) -> Option<&'static str>;

    /// Decodes an image of this format.
    fn inspect(&self, img: &[u8]) -> Result<Inspection, DecodeError>;

    /// A format without magic: the image decoded as this format when no
    /// magic matched, `Ok(Err(why))` when it is not of this format (the
    /// next one is tried), `Err` for an image nothing can decode.
    fn inspect_unmarked(&self, img: &[u8]) -> Result<Result<Inspection, String>, DecodeError> {
        let _ = img;
        Ok(Err(format!("not {}", self.name())))
    }

    /// The `nvmem-layout` compatibles this format serves and their
    /// [`Layout`].
    fn layouts(&self) -> &'static [(&'static str, Layout)];

    /// Whether `layout` is this format's (one of its [`ImageFormat::layouts`]
    /// or a variant of them).
    fn serves(&self, layout: Layout) -> bool {
        self.layouts().iter().any(|(_, l)| *l == layout)
    }

    /// The cells `layout` (one it [`ImageFormat::serves`]) creates on a
    /// device holding `img`, MAC cells also post-processed with `index`;
    /// the layout node's U-Boot geometry in `env`.
    fn predict(
        &self,
        layout: Layout,
        img: &[u8],
        index: Option<i64>,
        env: uboot::Geometry,
    ) -> Result<Vec<Cell>, DecodeError>;

    /// `dump`: when the image looks like this format, the descriptions to
    /// try in turn (the first that rebuilds the image is used).
    fn dump_candidates(&self, img: &[u8]) -> Option<&'static [Candidate]> {
        let _ = img;
        None
    }

    /// `view`: the value of a cell `name` read as `b` from a device whose
    /// layout is `layout`, when the layout is this format's.
    fn view(&self, layout: &str, name: &str, b: &[u8]) -> Option<view::Value>;
}

/// What `inspect` found, decoded, for people ([`fmt::Display`]) and
/// machines ([`Decoded::to_json`]).
pub trait Decoded: fmt::Display + fmt::Debug + Send + Sync {
    /// Err when a checksum (or whatever makes the image unusable) is bad.
    fn check(&self) -> Result<(), DecodeError>;
    /// The JSON `inspect --json` prints, with its `format`.
    fn to_json(&self) -> serde_json::Value;
}

/// A decoded image of a format that keeps its own type (see
/// [`Inspection::Format`]).
#[derive(Debug, Clone)]
pub struct Found(pub Arc<dyn Decoded>);

impl serde::Serialize for Found {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.to_json().serialize(s)
    }
}

/// The description data of a format that keeps its own type (see
/// [`Spec::Format`]).
pub trait SpecData: Any + fmt::Debug + Send + Sync {}
impl<T: Any + fmt::Debug + Send + Sync> SpecData for T {}

/// A parsed description of a format that keeps its own type: the format
/// and its data.
#[derive(Clone)]
pub struct FormatSpec {
    format: &'static dyn ImageFormat,
    data: Arc<dyn SpecData>,
}

impl FormatSpec {
    pub fn new<T: SpecData>(format: &'static dyn ImageFormat, data: T) -> Self {
        Self {
            format,
            data: Arc::new(data),
        }
    }

    pub fn format(&self) -> &'static dyn ImageFormat {
        self.format
    }

    /// The data, when it is a `T`.
    pub fn data<T: Any>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.data;
        any.downcast_ref()
    }
}

impl fmt::Debug for FormatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FormatSpec")
            .field("format", &self.format.name())
            .field("data", &self.data)
            .finish()
    }
}

/// "valid" or "INVALID", for checksums in `inspect`'s text.
pub(crate) fn valid(ok: bool) -> &'static str {
    if ok {
        "valid"
    } else {
        "INVALID"
    }
}

/// The checksum line of `inspect`: `crc32: found 0x…, computed 0x…: valid`,
/// the values in `digits` hex digits.
pub(crate) fn checksum_line(name: &str, digits: usize, found: u32, computed: u32) -> String {
    let w = digits + 2;
    format!(
        "{name}: found {found:#0w$x}, computed {computed:#0w$x}: {}",
        valid(found == computed)
    )
}

/// `impl Decoded` for a format's decoded image that has its own
/// `check(&self) -> Result<(), DecodeError>` and an [`Inspection`]
/// variant, which is its JSON.
macro_rules! decoded_by_variant {
    ($image:ty, $variant:ident) => {
        impl $crate::format::Decoded for $image {
            fn check(&self) -> Result<(), $crate::error::DecodeError> {
                <$image>::check(self)
            }

            fn to_json(&self) -> serde_json::Value {
                serde_json::to_value($crate::inspect::Inspection::$variant(self.clone()))
                    .unwrap_or_default()
            }
        }
    };
}
pub(crate) use decoded_by_variant;

/// The error for a `spec` handed to a format that did not parse it.
pub(crate) fn not_mine(format: &dyn ImageFormat) -> DescError {
    DescError::whole(format!(
        "internal error: not a description of {}",
        format.name()
    ))
}
