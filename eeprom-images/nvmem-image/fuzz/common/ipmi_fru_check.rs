//! The invariants of the shared IPMI FRU parser
//! (layouts/drivers/ipmi_fru_parse.rs, reached as
//! `nvmem_image::ipmi_fru::parse`) on one input, held by the cargo-fuzz
//! target `ipmi_fru_parse` and by the corpus replay test
//! (tests/ipmi_fru_fuzz_corpus.rs), which both include this file.
//!
//! [`check`] panics, naming the input's offending cell, when one fails:
//! - no panic in `parse` or `Fru::for_each_cell`;
//! - deterministic: a second parse gives the same error or the same cells;
//! - on Ok every cell is inside the image (`len > 0`,
//!   `offset + len <= image.len()`), inside its area as the header and the
//!   area's length byte place it (after version and length, before the
//!   checksum byte), cells in increasing offset order without overlap,
//!   a field's length and encoding those of the type/length byte before it;
//! - names unique, non-empty ASCII from the documented set (the area's
//!   prefix, a fixed field name or `custom-N` with N in 0..=255), fields of
//!   an area in the documented order, `chassis-type` and `board-mfg-date`
//!   there whenever their area is;
//! - `for_each_cell` stops at the callback's first error and returns it;
//! - only the first `MAX_SPAN` bytes matter: the same outcome on them;
//! - differential: the tool's `cells --layout nvmem-lab,ipmi-fru`
//!   prediction (`cells::predict`) accepts exactly when the parser does,
//!   with the same cells (name, offset, size, bytes).

use nvmem_image::cells::{self, Layout};
use nvmem_image::hex;
use nvmem_image::ipmi_fru::parse::{self, Area, Cell, Encoding, Field, NAME_MAX};
use nvmem_image::ipmi_fru::COMPATIBLE;

/// The binding that documents the cell names: its `patternProperties`
/// key lists, per area, the fixed fields in the order the area stores
/// them, then `custom-[0-9]+`.
const BINDING: &str = include_str!("../../../../layouts/bindings/nvmem-lab,ipmi-fru.yaml");

/// The documented name suffixes of an area's cells before its custom
/// fields, in the order the area stores them, read from [`BINDING`].
fn documented(area: Area) -> &'static [&'static str] {
    static TABLE: std::sync::OnceLock<[Vec<&'static str>; 3]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let key = BINDING
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("\"^(") && l.contains("chassis-("))
            .expect("the binding has the cell-name pattern");
        [Area::Chassis, Area::Board, Area::Product].map(|a| {
            let group = key
                .split(&format!("{}(", prefix(a)))
                .nth(1)
                .and_then(|rest| rest.split(')').next())
                .unwrap_or_else(|| panic!("the binding's pattern has no {}(...) group", prefix(a)));
            let fixed: Vec<&str> = group
                .split('|')
                .filter(|s| !s.starts_with("custom-"))
                .collect();
            assert!(
                !fixed.is_empty() && fixed.len() < group.split('|').count(),
                "the binding's {}(...) group lists no fixed fields or no custom-N",
                prefix(a)
            );
            fixed
        })
    });
    &table[match area {
        Area::Chassis => 0,
        Area::Board => 1,
        Area::Product => 2,
    }]
}

fn prefix(area: Area) -> &'static str {
    match area {
        Area::Chassis => "chassis-",
        Area::Board => "board-",
        Area::Product => "product-",
    }
}

/// The header byte that holds an area's offset (in multiples of 8).
fn header_byte(area: Area) -> usize {
    match area {
        Area::Chassis => 2,
        Area::Board => 3,
        Area::Product => 4,
    }
}

/// Where a documented name stands among its area's fields: the fixed ones
/// first, then `custom-N` by N. None for a name outside the documented set.
fn rank(area: Area, name: &str) -> Option<usize> {
    let suffix = name.strip_prefix(prefix(area))?;
    let fixed = documented(area);
    if let Some(i) = fixed.iter().position(|&f| f == suffix) {
        return Some(i);
    }
    let n = suffix.strip_prefix("custom-")?;
    // decimal, no sign, no leading zero
    if n.is_empty() || n.len() > 3 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if n.len() > 1 && n.starts_with('0') {
        return None;
    }
    let n: usize = n.parse().ok()?;
    (n <= 255).then_some(fixed.len() + n)
}

fn encoding_of(type_length: u8) -> Encoding {
    match type_length >> 6 {
        0 => Encoding::Binary,
        1 => Encoding::BcdPlus,
        2 => Encoding::SixBitAscii,
        _ => Encoding::Text,
    }
}

/// A parse's outcome, comparable: the error, or the cells with their names.
type Outcome = Result<Vec<(Cell, String)>, parse::Error>;

fn outcome(image: &[u8]) -> Outcome {
    let fru = parse::parse(image)?;
    let mut cells = Vec::new();
    let mut buf = [0u8; NAME_MAX];
    let r: Result<(), ()> = fru.for_each_cell(|c| {
        cells.push((*c, c.name(&mut buf).to_owned()));
        Ok(())
    });
    assert_eq!(
        r,
        Ok(()),
        "for_each_cell failed with a callback that never fails"
    );
    Ok(cells)
}

/// Holds every invariant on `image`; returns whether the parser accepts it.
pub fn check(image: &[u8]) -> bool {
    let first = outcome(image);
    assert_eq!(first, outcome(image), "two parses of one image differ");

    // only the first MAX_SPAN bytes matter
    let span = &image[..image.len().min(parse::MAX_SPAN)];
    if span.len() < image.len() {
        assert_eq!(
            first,
            outcome(span),
            "the image and its first {} bytes parse differently",
            parse::MAX_SPAN
        );
    }

    // the tool's prediction for `cells --layout nvmem-lab,ipmi-fru`
    let layout: Layout = COMPATIBLE
        .parse()
        .expect("the tool knows the ipmi-fru layout");
    let predicted = cells::predict(layout, image, &[], None, Default::default());
    match (&first, &predicted) {
        (Ok(_), Err(e)) => panic!("the parser accepts the image, cells::predict rejects it: {e}"),
        (Err(e), Ok(c)) => panic!(
            "the parser rejects the image ({e}), cells::predict gives {} cell(s)",
            c.len()
        ),
        (Ok(ours), Ok(theirs)) => {
            let ours: Vec<_> = ours
                .iter()
                .map(|(c, n)| {
                    let raw = image.get(c.offset..c.offset + c.len).unwrap_or_default();
                    (n.clone(), c.offset, c.len, hex::encode(raw))
                })
                .collect();
            let theirs: Vec<_> = theirs
                .iter()
                .map(|c| (c.name.clone(), c.offset, c.size, c.raw.clone()))
                .collect();
            assert_eq!(
                ours, theirs,
                "cells::predict's cells differ from the parser's"
            );
        }
        (Err(_), Err(_)) => {}
    }

    let cells = match first {
        Ok(cells) => cells,
        Err(_) => return false,
    };

    let mut names = std::collections::BTreeSet::new();
    let mut prev: Option<(&Cell, &str)> = None;
    let mut last_rank: [Option<usize>; 3] = [None; 3];
    for (c, name) in &cells {
        let what = format!("cell {name:?} at {:#x}+{:#x}", c.offset, c.len);
        assert!(c.len > 0, "{what}: empty");
        let end = c.offset.checked_add(c.len).expect("offset + len overflows");
        assert!(
            end <= image.len(),
            "{what}: past the image ({:#x} bytes)",
            image.len()
        );

        // inside its area, where header and length byte put it
        let start = usize::from(image[header_byte(c.area)]) * 8;
        assert!(start != 0, "{what}: its area is absent from the header");
        let area_len = image
            .get(start + 1)
            .map(|&b| usize::from(b) * 8)
            .unwrap_or_else(|| {
                panic!(
                    "{what}: its area's length byte at {:#x} is past the image",
                    start + 1
                )
            });
        assert!(
            c.offset >= start + 2 && end < start + area_len,
            "{what}: outside its area's data {:#x}..{:#x}",
            start + 2,
            start + area_len - 1
        );

        // length and encoding: the fixed bytes, or the type/length byte
        match c.field {
            Field::ChassisType => {
                assert_eq!(
                    (c.area, c.offset, c.len),
                    (Area::Chassis, start + 2, 1),
                    "{what}"
                );
                assert_eq!(c.encoding, Encoding::Binary, "{what}");
            }
            Field::MfgDate => {
                assert_eq!(
                    (c.area, c.offset, c.len),
                    (Area::Board, start + 3, 3),
                    "{what}"
                );
                assert_eq!(c.encoding, Encoding::Binary, "{what}");
            }
            _ => {
                let tl = image[c.offset - 1];
                assert_eq!(
                    usize::from(tl & 0x3f),
                    c.len,
                    "{what}: type/length byte {tl:#04x}"
                );
                assert_eq!(
                    c.encoding,
                    encoding_of(tl),
                    "{what}: type/length byte {tl:#04x}"
                );
            }
        }

        // increasing offsets, no overlap
        if let Some((p, pname)) = prev {
            assert!(
                p.offset + p.len <= c.offset,
                "{what}: overlaps or precedes {pname:?} at {:#x}+{:#x}",
                p.offset,
                p.len
            );
        }
        prev = Some((c, name));

        // names: documented, ASCII, unique, in the area's order
        assert!(!name.is_empty(), "{what}: empty name");
        assert!(name.is_ascii(), "{what}: name not ASCII");
        assert!(name.len() < NAME_MAX, "{what}: name fills the buffer");
        let r =
            rank(c.area, name).unwrap_or_else(|| panic!("{what}: name not in the documented set"));
        assert!(names.insert(name.clone()), "{what}: name given twice");
        let slot = &mut last_rank[header_byte(c.area) - 2];
        assert!(
            slot.is_none_or(|l| l < r),
            "{what}: out of the area's documented field order"
        );
        *slot = Some(r);
    }
    // the fixed-byte cells come whenever their area is there, and no cell
    // of an absent area
    for (area, fixed) in [
        (Area::Chassis, Some("chassis-type")),
        (Area::Board, Some("board-mfg-date")),
        (Area::Product, None),
    ] {
        let present = image[header_byte(area)] != 0;
        if let Some(fixed) = fixed {
            assert_eq!(
                present,
                names.contains(fixed),
                "{area:?} area present: {present}, {fixed} cell"
            );
        }
        if !present {
            assert!(
                cells.iter().all(|(c, _)| c.area != area),
                "a cell of the absent {area:?} area"
            );
        }
    }

    // for_each_cell stops at the callback's first error and returns it
    if !cells.is_empty() {
        let stop = cells.len() / 2;
        let fru = parse::parse(image).expect("accepted above");
        let mut calls = 0usize;
        let r = fru.for_each_cell(|_| {
            calls += 1;
            if calls > stop {
                Err(calls)
            } else {
                Ok(())
            }
        });
        assert_eq!(
            r,
            Err(stop + 1),
            "for_each_cell did not return the callback's error"
        );
        assert_eq!(
            calls,
            stop + 1,
            "for_each_cell went on after the callback's error"
        );
    }
    true
}
