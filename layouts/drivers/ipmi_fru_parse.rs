// SPDX-License-Identifier: GPL-2.0

//! IPMI FRU information (Platform Management FRU Information Storage
//! Definition v1.0, revision 1.3): validation of an image and the NVMEM
//! cells of its chassis, board and product info areas.
//!
//! This one file is built twice: into the kernel's `nvmem-lab,ipmi-fru`
//! layout driver (Rust 1.63, `core` only) and into the host tool
//! `nvmem-image`, which predicts the kernel's cells with it. It uses no
//! `std`, no `alloc`, no `unsafe`, and does not panic on any input: every
//! byte is read with `get` and every position is computed with checked
//! arithmetic.
//!
//! # What is checked
//!
//! [`parse`] validates the whole image before it returns a [`Fru`]; one
//! problem rejects the image (no cells at all):
//!
//! - the 8-byte common header: present, format version 0x01, bytes summing
//!   to 0 (mod 256);
//! - each of the five area offsets (internal use, chassis, board, product,
//!   multirecord), in multiples of 8: when not 0, inside the image;
//! - each chassis, board and product info area: at least 2 bytes at its
//!   offset, version 0x01, a length (in multiples of 8) that is not 0 and
//!   ends inside the image, no two of header, chassis, board and product
//!   overlapping, all its bytes summing to 0, and fields that end with the
//!   0xC1 end marker before the checksum byte (its last byte), each field
//!   inside the area, the marker not before the area's fixed fields, at
//!   most 256 custom fields (they are numbered 0 to 255);
//! - internal-use and multirecord areas are not decoded (offset only).
//!
//! Language codes and the padding after the end marker are not checked.
//!
//! # Cells
//!
//! A cell covers a field's stored bytes (after its type/length byte, which
//! is the device byte just before the cell), `len` is the field's length,
//! `encoding` the type from bits 7:6 of the type/length byte. A field of
//! length 0 gives no cell. Cells come in image order. Names:
//!
//! - chassis info area: `chassis-type` (the chassis type byte, binary),
//!   `chassis-part-number`, `chassis-serial-number`, `chassis-custom-N`;
//! - board info area: `board-mfg-date` (the 3 bytes of minutes since
//!   1996-01-01 00:00, little endian; binary; a cell whenever the area is
//!   there), `board-manufacturer`, `board-product-name`,
//!   `board-serial-number`, `board-part-number`, `board-fru-file-id`,
//!   `board-custom-N`;
//! - product info area: `product-manufacturer`, `product-name`,
//!   `product-part-number`, `product-version`, `product-serial-number`,
//!   `product-asset-tag`, `product-fru-file-id`, `product-custom-N`.
//!
//! N counts the custom fields of an area from 0, in the order they are
//! stored, empty ones included, so that a number always names the same
//! field.

use core::fmt;

/// Bytes beyond which no FRU byte lies: the furthest area offset (255 * 8)
/// plus the longest area (255 * 8). Callers pass the first
/// `min(device size, MAX_SPAN)` bytes of a device to [`parse`].
pub const MAX_SPAN: usize = 4080;

/// Size of the buffer [`Cell::name`] writes a cell name into: the longest
/// name and room to spare.
pub const NAME_MAX: usize = 32;

/// Length of the common header.
const HEADER_LEN: usize = 8;

/// The type/length byte that ends the fields of an info area.
const END_MARKER: u8 = 0xc1;

/// An info area that holds cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    /// Chassis info area (header offset byte 2).
    Chassis,
    /// Board info area (header offset byte 3).
    Board,
    /// Product info area (header offset byte 4).
    Product,
}

impl Area {
    /// The three info areas, in the order of their header offset bytes.
    const ALL: [Area; 3] = [Area::Chassis, Area::Board, Area::Product];

    /// The prefix of the area's cell names.
    fn prefix(self) -> &'static str {
        match self {
            Area::Chassis => "chassis",
            Area::Board => "board",
            Area::Product => "product",
        }
    }

    /// Bytes before the first type/length byte: version, length and the
    /// area's fixed bytes (chassis type; language and manufacturing date;
    /// language).
    fn fixed_bytes(self) -> usize {
        match self {
            Area::Chassis => 3,
            Area::Board => 6,
            Area::Product => 3,
        }
    }

    /// The fields every area of this kind holds before its custom fields.
    fn fixed_fields(self) -> &'static [Field] {
        match self {
            Area::Chassis => &[Field::PartNumber, Field::SerialNumber],
            Area::Board => &[
                Field::Manufacturer,
                Field::Name,
                Field::SerialNumber,
                Field::PartNumber,
                Field::FileId,
            ],
            Area::Product => &[
                Field::Manufacturer,
                Field::Name,
                Field::PartNumber,
                Field::Version,
                Field::SerialNumber,
                Field::AssetTag,
                Field::FileId,
            ],
        }
    }

    /// The header byte that holds the area's offset.
    fn header_byte(self) -> usize {
        match self {
            Area::Chassis => 2,
            Area::Board => 3,
            Area::Product => 4,
        }
    }
}

/// A part of the image the common header locates, named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The common header itself, bytes 0x0 to 0x7.
    Header,
    /// The internal use area (not decoded).
    InternalUse,
    /// An info area.
    Info(Area),
    /// The multirecord area (not decoded).
    MultiRecord,
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Region::Header => "common header",
            Region::InternalUse => "internal use area",
            Region::Info(Area::Chassis) => "chassis info area",
            Region::Info(Area::Board) => "board info area",
            Region::Info(Area::Product) => "product info area",
            Region::MultiRecord => "multirecord area",
        })
    }
}

/// How a field's bytes are encoded: bits 7:6 of its type/length byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// 00b: binary or unspecified (also the fixed chassis type and
    /// manufacturing date bytes).
    Binary,
    /// 01b: BCD plus, one character per nibble.
    BcdPlus,
    /// 10b: 6-bit ASCII, four characters packed in three bytes.
    SixBitAscii,
    /// 11b: 8-bit text (ASCII and Latin-1 for English, 16-bit Unicode for
    /// other languages).
    Text,
}

impl Encoding {
    /// The encoding of a type/length byte.
    fn of(type_length: u8) -> Encoding {
        match type_length >> 6 {
            0 => Encoding::Binary,
            1 => Encoding::BcdPlus,
            2 => Encoding::SixBitAscii,
            _ => Encoding::Text,
        }
    }
}

/// Which field of its area a cell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Chassis type byte (chassis area).
    ChassisType,
    /// Manufacturing date and time (board area).
    MfgDate,
    /// Manufacturer (board and product areas).
    Manufacturer,
    /// Board product name or product name.
    Name,
    /// Part number (chassis, board), part/model number (product).
    PartNumber,
    /// Product version (product area).
    Version,
    /// Serial number.
    SerialNumber,
    /// Asset tag (product area).
    AssetTag,
    /// FRU file ID (board and product areas).
    FileId,
    /// The N-th custom field of its area, counted from 0.
    Custom(u8),
}

/// One NVMEM cell: a field of an info area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The area the field belongs to.
    pub area: Area,
    /// The field.
    pub field: Field,
    /// Image offset of the field's first data byte.
    pub offset: usize,
    /// Number of data bytes.
    pub len: usize,
    /// The encoding of the data bytes.
    pub encoding: Encoding,
}

/// Appends text to a fixed buffer, dropping what does not fit.
struct NameBuf<'b> {
    buf: &'b mut [u8; NAME_MAX],
    len: usize,
}

impl NameBuf<'_> {
    fn push(&mut self, s: &str) {
        for &b in s.as_bytes() {
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = b;
                self.len += 1;
            }
        }
    }

    fn push_decimal(&mut self, n: u8) {
        let digits = [b'0' + n / 100, b'0' + n / 10 % 10, b'0' + n % 10];
        let skip = if n >= 100 {
            0
        } else if n >= 10 {
            1
        } else {
            2
        };
        for &d in digits.iter().skip(skip) {
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = d;
                self.len += 1;
            }
        }
    }
}

impl Cell {
    /// The cell's name (see the module documentation), written into `buf`.
    pub fn name<'b>(&self, buf: &'b mut [u8; NAME_MAX]) -> &'b str {
        let mut w = NameBuf { buf, len: 0 };
        w.push(self.area.prefix());
        w.push("-");
        match self.field {
            Field::Custom(n) => {
                w.push("custom-");
                w.push_decimal(n);
            }
            other => w.push(match (self.area, other) {
                (_, Field::ChassisType) => "type",
                (_, Field::MfgDate) => "mfg-date",
                (_, Field::Manufacturer) => "manufacturer",
                (Area::Product, Field::Name) => "name",
                (_, Field::Name) => "product-name",
                (_, Field::PartNumber) => "part-number",
                (_, Field::Version) => "version",
                (_, Field::SerialNumber) => "serial-number",
                (_, Field::AssetTag) => "asset-tag",
                (_, Field::FileId) => "fru-file-id",
                (_, Field::Custom(_)) => "custom",
            }),
        }
        let len = w.len;
        match w.buf.get(..len).map(core::str::from_utf8) {
            Some(Ok(s)) => s,
            _ => "",
        }
    }
}

/// Why an image is rejected. Offsets are image offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The image is shorter than the common header.
    Short {
        /// Image length.
        len: usize,
    },
    /// The common header's format version byte is not 0x01.
    HeaderVersion {
        /// The version byte found.
        found: u8,
    },
    /// The common header's bytes do not sum to 0.
    HeaderChecksum {
        /// The sum (mod 256) of the 8 header bytes.
        sum: u8,
    },
    /// A non-zero area offset points at or past the end of the image.
    OffsetPastEnd {
        /// The area.
        region: Region,
        /// Its offset in bytes.
        offset: usize,
        /// Image length.
        len: usize,
    },
    /// Fewer than 2 bytes (version, length) at an info area's offset.
    AreaShort {
        /// The area.
        area: Area,
        /// Its offset.
        offset: usize,
        /// Image length.
        len: usize,
    },
    /// An info area's version byte is not 0x01.
    AreaVersion {
        /// The area.
        area: Area,
        /// Its offset.
        offset: usize,
        /// The version byte found.
        found: u8,
    },
    /// An info area's length byte is 0.
    AreaEmpty {
        /// The area.
        area: Area,
        /// Its offset.
        offset: usize,
    },
    /// An info area's length runs past the end of the image.
    AreaPastEnd {
        /// The area.
        area: Area,
        /// Its offset.
        offset: usize,
        /// Its length in bytes.
        area_len: usize,
        /// Image length.
        len: usize,
    },
    /// Two of header, chassis, board and product areas share bytes.
    Overlap {
        /// The region that starts first.
        first: Region,
        /// Where it starts.
        first_offset: usize,
        /// Where it ends (exclusive).
        first_end: usize,
        /// The region that starts inside it.
        second: Region,
        /// Where that one starts.
        second_offset: usize,
    },
    /// An info area's bytes do not sum to 0.
    AreaChecksum {
        /// The area.
        area: Area,
        /// Its offset.
        offset: usize,
        /// Offset of its checksum byte (its last byte).
        checksum_at: usize,
        /// The sum (mod 256) of all its bytes.
        sum: u8,
    },
    /// No 0xC1 end marker before the area's checksum byte.
    MissingEndMarker {
        /// The area.
        area: Area,
        /// Where a type/length byte was expected: the checksum byte.
        at: usize,
    },
    /// A field's data runs past the area's last data byte.
    FieldPastArea {
        /// The area.
        area: Area,
        /// Offset of the field's type/length byte.
        at: usize,
        /// The field's length.
        field_len: usize,
        /// Offset of the area's checksum byte (where data must end).
        checksum_at: usize,
    },
    /// More than 256 custom fields in an area: field numbers are 0 to 255.
    TooManyCustomFields {
        /// The area.
        area: Area,
        /// Offset of the type/length byte of the 257th custom field.
        at: usize,
    },
    /// The end marker comes before the area's fixed fields are all there.
    EarlyEndMarker {
        /// The area.
        area: Area,
        /// Offset of the end marker.
        at: usize,
        /// Fields found before it.
        found: usize,
        /// Fixed fields the area has.
        needed: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Short { len } => write!(
                f,
                "image of {len:#x} bytes is shorter than the 8-byte common header"
            ),
            Error::HeaderVersion { found } => write!(
                f,
                "common header: format version {found:#04x} at 0x0, expected 0x01"
            ),
            Error::HeaderChecksum { sum } => write!(
                f,
                "common header: checksum mismatch, bytes 0x0..0x7 sum to {sum:#04x}, expected 0x00"
            ),
            Error::OffsetPastEnd {
                region,
                offset,
                len,
            } => write!(
                f,
                "{region} offset {offset:#x} is past the end of the image ({len:#x} bytes)"
            ),
            Error::AreaShort { area, offset, len } => write!(
                f,
                concat!(
                    "{} at {offset:#x}: no room for its version and length bytes ",
                    "(image of {len:#x} bytes)"
                ),
                Region::Info(area),
                offset = offset,
                len = len
            ),
            Error::AreaVersion {
                area,
                offset,
                found,
            } => write!(
                f,
                "{} at {offset:#x}: version {found:#04x}, expected 0x01",
                Region::Info(area)
            ),
            Error::AreaEmpty { area, offset } => {
                write!(f, "{} at {offset:#x}: length byte is 0", Region::Info(area))
            }
            Error::AreaPastEnd {
                area,
                offset,
                area_len,
                len,
            } => write!(
                f,
                concat!(
                    "{} at {offset:#x}: {area_len:#x} bytes run past the end of the image ",
                    "({len:#x} bytes)"
                ),
                Region::Info(area),
                offset = offset,
                area_len = area_len,
                len = len
            ),
            Error::Overlap {
                first,
                first_offset,
                first_end,
                second,
                second_offset,
            } => write!(
                f,
                "{second} at {second_offset:#x} overlaps {first} at {first_offset:#x}..{:#x}",
                first_end.saturating_sub(1)
            ),
            Error::AreaChecksum {
                area,
                offset,
                checksum_at,
                sum,
            } => write!(
                f,
                concat!(
                    "{} at {offset:#x}: checksum mismatch, bytes {offset:#x}..{checksum_at:#x} ",
                    "sum to {sum:#04x}, expected 0x00"
                ),
                Region::Info(area),
                offset = offset,
                checksum_at = checksum_at,
                sum = sum
            ),
            Error::MissingEndMarker { area, at } => write!(
                f,
                "{}: missing end marker 0xc1 before the checksum byte at {at:#x}",
                Region::Info(area)
            ),
            Error::FieldPastArea {
                area,
                at,
                field_len,
                checksum_at,
            } => write!(
                f,
                concat!(
                    "{}: field at {at:#x} of {field_len:#x} bytes runs past the area ",
                    "(its checksum byte at {checksum_at:#x})"
                ),
                Region::Info(area),
                at = at,
                field_len = field_len,
                checksum_at = checksum_at
            ),
            Error::TooManyCustomFields { area, at } => write!(
                f,
                "{}: custom field at {at:#x} is the 257th, more than the 256 that can be named",
                Region::Info(area)
            ),
            Error::EarlyEndMarker {
                area,
                at,
                found,
                needed,
            } => write!(
                f,
                "{}: end marker at {at:#x} after {found} of its {needed} fixed fields",
                Region::Info(area)
            ),
        }
    }
}

/// An info area where the header puts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Located {
    area: Area,
    /// first byte
    start: usize,
    /// length in bytes (the length byte times 8)
    len: usize,
}

/// A validated FRU image: [`Fru::for_each_cell`] gives its cells.
#[derive(Clone, Copy, Debug)]
pub struct Fru<'a> {
    image: &'a [u8],
    /// the info areas present, in image order
    areas: [Option<Located>; 3],
}

/// The sum of `bytes` mod 256 (0 for a correct zero-sum checksum).
fn sum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |s, &b| s.wrapping_add(b))
}

/// What stopped a walk over an area's fields.
enum Stop<E> {
    /// the fields are malformed
    Invalid(Error),
    /// the callback returned an error
    Callback(E),
}

/// Walks the fields of a located area (whose bounds are checked), giving
/// each cell to `f`.
fn walk<E>(
    image: &[u8],
    loc: Located,
    f: &mut dyn FnMut(&Cell) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    let area = loc.area;
    // bounds are checked by the caller: start + len <= image.len(), len >= 8
    let checksum_at = loc.start + loc.len - 1;
    // the fixed bytes that are cells of their own
    let fixed = match area {
        Area::Chassis => Some((Field::ChassisType, 2, 1)),
        Area::Board => Some((Field::MfgDate, 3, 3)),
        Area::Product => None,
    };
    if let Some((field, at, len)) = fixed {
        let cell = Cell {
            area,
            field,
            offset: loc.start + at,
            len,
            encoding: Encoding::Binary,
        };
        f(&cell).map_err(Stop::Callback)?;
    }
    let fixed_fields = area.fixed_fields();
    let mut pos = loc.start + area.fixed_bytes();
    let mut count = 0usize;
    let mut custom = 0usize;
    loop {
        if pos >= checksum_at {
            return Err(Stop::Invalid(Error::MissingEndMarker {
                area,
                at: checksum_at,
            }));
        }
        let type_length = match image.get(pos) {
            Some(&b) => b,
            None => {
                return Err(Stop::Invalid(Error::MissingEndMarker {
                    area,
                    at: checksum_at,
                }))
            }
        };
        if type_length == END_MARKER {
            if count < fixed_fields.len() {
                return Err(Stop::Invalid(Error::EarlyEndMarker {
                    area,
                    at: pos,
                    found: count,
                    needed: fixed_fields.len(),
                }));
            }
            return Ok(());
        }
        let len = usize::from(type_length & 0x3f);
        let end = pos.checked_add(1).and_then(|d| d.checked_add(len));
        let end = match end {
            Some(e) if e <= checksum_at => e,
            _ => {
                return Err(Stop::Invalid(Error::FieldPastArea {
                    area,
                    at: pos,
                    field_len: len,
                    checksum_at,
                }))
            }
        };
        let field = match fixed_fields.get(count) {
            Some(&field) => field,
            None => match u8::try_from(custom) {
                Ok(n) => {
                    custom += 1;
                    Field::Custom(n)
                }
                // 1-byte empty fields fit 2000 in an area
                Err(_) => return Err(Stop::Invalid(Error::TooManyCustomFields { area, at: pos })),
            },
        };
        if len > 0 {
            let cell = Cell {
                area,
                field,
                offset: pos + 1,
                len,
                encoding: Encoding::of(type_length),
            };
            f(&cell).map_err(Stop::Callback)?;
        }
        count = count.saturating_add(1);
        pos = end;
    }
}

/// The offset (in bytes) of header byte `i`, 0 for an absent area.
fn header_offset(image: &[u8], i: usize) -> usize {
    image.get(i).map_or(0, |&b| usize::from(b) * 8)
}

/// Validates `image` (the first bytes of a device, at most [`MAX_SPAN`]
/// of them matter) as IPMI FRU information; on success its cells can be
/// listed. An image with a valid header and no info area has no cells.
pub fn parse(image: &[u8]) -> Result<Fru<'_>, Error> {
    let header = match image.get(..HEADER_LEN) {
        Some(h) => h,
        None => return Err(Error::Short { len: image.len() }),
    };
    let version = header.first().copied().unwrap_or(0);
    if version != 0x01 {
        return Err(Error::HeaderVersion { found: version });
    }
    let header_sum = sum(header);
    if header_sum != 0 {
        return Err(Error::HeaderChecksum { sum: header_sum });
    }
    let regions = [
        Region::InternalUse,
        Region::Info(Area::Chassis),
        Region::Info(Area::Board),
        Region::Info(Area::Product),
        Region::MultiRecord,
    ];
    for (i, &region) in regions.iter().enumerate() {
        let offset = header_offset(image, i + 1);
        if offset != 0 && offset >= image.len() {
            return Err(Error::OffsetPastEnd {
                region,
                offset,
                len: image.len(),
            });
        }
    }

    // each info area's version and bounds
    let mut areas: [Option<Located>; 3] = [None; 3];
    for (slot, &area) in areas.iter_mut().zip(Area::ALL.iter()) {
        let start = header_offset(image, area.header_byte());
        if start == 0 {
            continue;
        }
        let head = start.checked_add(2).and_then(|end| image.get(start..end));
        let (version, len_byte) = match head {
            Some(&[v, l]) => (v, l),
            _ => {
                return Err(Error::AreaShort {
                    area,
                    offset: start,
                    len: image.len(),
                })
            }
        };
        if version != 0x01 {
            return Err(Error::AreaVersion {
                area,
                offset: start,
                found: version,
            });
        }
        if len_byte == 0 {
            return Err(Error::AreaEmpty {
                area,
                offset: start,
            });
        }
        let len = usize::from(len_byte) * 8;
        match start.checked_add(len) {
            Some(end) if end <= image.len() => {}
            _ => {
                return Err(Error::AreaPastEnd {
                    area,
                    offset: start,
                    area_len: len,
                    len: image.len(),
                })
            }
        }
        *slot = Some(Located { area, start, len });
    }

    // no two of header and info areas share a byte
    let mut spans: [Option<(Region, usize, usize)>; 4] = [None; 4];
    if let Some(first) = spans.first_mut() {
        *first = Some((Region::Header, 0, HEADER_LEN));
    }
    for (slot, loc) in spans.iter_mut().skip(1).zip(areas.iter()) {
        *slot = loc.map(|l| (Region::Info(l.area), l.start, l.start + l.len));
    }
    for (i, a) in spans.iter().enumerate() {
        for b in spans.iter().skip(i + 1) {
            if let (Some(a), Some(b)) = (a, b) {
                let (first, second) = if a.1 <= b.1 { (a, b) } else { (b, a) };
                if second.1 < first.2 {
                    return Err(Error::Overlap {
                        first: first.0,
                        first_offset: first.1,
                        first_end: first.2,
                        second: second.0,
                        second_offset: second.1,
                    });
                }
            }
        }
    }

    // each area's checksum and fields
    for loc in areas.iter().flatten() {
        let bytes = image.get(loc.start..loc.start + loc.len).unwrap_or(&[]);
        let s = sum(bytes);
        if s != 0 {
            return Err(Error::AreaChecksum {
                area: loc.area,
                offset: loc.start,
                checksum_at: loc.start + loc.len - 1,
                sum: s,
            });
        }
        let mut ignore = |_: &Cell| -> Result<(), core::convert::Infallible> { Ok(()) };
        match walk(image, *loc, &mut ignore) {
            Ok(()) => {}
            Err(Stop::Invalid(e)) => return Err(e),
            Err(Stop::Callback(never)) => match never {},
        }
    }

    // image order
    areas.sort_unstable_by_key(|a| a.map_or(usize::MAX, |l| l.start));
    Ok(Fru { image, areas })
}

impl<'a> Fru<'a> {
    /// Calls `f` with each cell, in image order; stops at the first error
    /// `f` returns and returns it.
    pub fn for_each_cell<E>(&self, mut f: impl FnMut(&Cell) -> Result<(), E>) -> Result<(), E> {
        for loc in self.areas.iter().flatten() {
            match walk(self.image, *loc, &mut f) {
                Ok(()) => {}
                Err(Stop::Callback(e)) => return Err(e),
                // validated by parse(): cannot happen; end the area
                Err(Stop::Invalid(_)) => {}
            }
        }
        Ok(())
    }
}
