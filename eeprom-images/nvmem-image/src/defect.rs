//! Malformed test images: a well-formed description plus named defects.
//!
//! A description may carry, next to its format's fields:
//!
//! - `[[defect]]` tables, applied in order to the image its format builds:
//!   `what` (required: what is wrong, in words) and one change, either
//!   `offset` with `hex` or `ascii` (bytes overwritten, inside the image)
//!   or `truncate = N` (only the first N bytes stay: a device smaller than
//!   the data); `reseal = true`
//!   recomputes the format's own checksums after the change, so that the
//!   defect is the only thing wrong;
//! - `expect = "rejected"` or `"cells"`: what a layout does with the image
//!   (checked against `cells` by the tests);
//! - `[layout]` with `compatible` and the U-Boot properties `env-size` and
//!   `env-redundant-offset`: the nvmem-layout node a board gives the image
//!   (`cells` takes it when no `--layout` is given).

use crate::cells::Layout;
use crate::desc::{required, str_field, tables, usize_field, within, MAX_IMAGE};
use crate::error::DescError;
use crate::hex;
use toml::{Table, Value};

type R<T> = std::result::Result<T, DescError>;

/// One change made to a well-formed image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Write { offset: usize, data: Vec<u8> },
    Truncate(usize),
}

/// A named defect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defect {
    pub what: String,
    pub change: Change,
    pub reseal: bool,
}

/// What a layout is expected to make of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Rejected,
    Cells,
}

/// The nvmem-layout node a board gives the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutNode {
    pub compatible: String,
    pub env_size: Option<usize>,
    pub env_redundant_offset: Option<usize>,
}

/// Everything a description says besides its format's fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    pub defects: Vec<Defect>,
    pub expect: Option<Expect>,
    pub layout: Option<LayoutNode>,
}

fn defect(t: &Table, ctx: &str) -> R<Defect> {
    let field = |k: &str| format!("{ctx}{k}");
    for k in t.keys() {
        if !["what", "offset", "hex", "ascii", "truncate", "reseal"].contains(&k.as_str()) {
            return Err(DescError::field(
                field(k),
                "unknown field (allowed here: what, offset, hex, ascii, truncate, reseal)",
            ));
        }
    }
    let what = required(str_field(t, "what").map_err(within(ctx))?, &field("what"))?;
    if what.trim().is_empty() {
        return Err(DescError::field(field("what"), "must say what is wrong"));
    }
    let reseal = match t.get("reseal") {
        None => false,
        Some(Value::Boolean(b)) => *b,
        Some(_) => return Err(DescError::field(field("reseal"), "expected true or false")),
    };
    let offset = usize_field(t, "offset", MAX_IMAGE).map_err(within(ctx))?;
    let truncate = usize_field(t, "truncate", MAX_IMAGE).map_err(within(ctx))?;
    let hex_text = str_field(t, "hex").map_err(within(ctx))?;
    let ascii = str_field(t, "ascii").map_err(within(ctx))?;
    let change = match (offset, truncate, hex_text, ascii) {
        (None, Some(n), None, None) => Change::Truncate(n),
        (Some(offset), None, Some(h), None) => Change::Write {
            offset,
            data: hex::decode(h).map_err(|e| DescError::field(field("hex"), e))?,
        },
        (Some(offset), None, None, Some(a)) => Change::Write {
            offset,
            data: a.as_bytes().to_vec(),
        },
        _ => {
            return Err(DescError::field(
                ctx.trim_end_matches('.'),
                "give one change: `offset` with `hex` or `ascii`, or `truncate`",
            ))
        }
    };
    if let Change::Write { data, .. } = &change {
        if data.is_empty() {
            return Err(DescError::field(field("hex"), "no bytes to write"));
        }
    }
    Ok(Defect {
        what: what.to_owned(),
        change,
        reseal,
    })
}

fn layout_node(v: &Value) -> R<LayoutNode> {
    let t = v
        .as_table()
        .ok_or_else(|| DescError::field("layout", "expected a table"))?;
    for k in t.keys() {
        if !["compatible", "env-size", "env-redundant-offset"].contains(&k.as_str()) {
            return Err(DescError::field(
                format!("layout.{k}"),
                "unknown field (allowed here: compatible, env-size, env-redundant-offset)",
            ));
        }
    }
    let c = str_field(t, "compatible").map_err(within("layout."))?;
    let c = required(c, "layout.compatible")?;
    let known = Layout::known();
    if !known.contains(&c) {
        return Err(DescError::field(
            "layout.compatible",
            format!("unknown layout {c:?} (known: {})", known.join(", ")),
        ));
    }
    Ok(LayoutNode {
        compatible: c.to_owned(),
        env_size: usize_field(t, "env-size", MAX_IMAGE).map_err(within("layout."))?,
        env_redundant_offset: usize_field(t, "env-redundant-offset", MAX_IMAGE)
            .map_err(within("layout."))?,
    })
}

/// Takes the keys every format shares (`defect`, `expect`, `layout`) out
/// of a description's table.
pub fn take(t: &mut Table) -> R<Extras> {
    let mut extras = Extras::default();
    for (i, d) in tables(t, "defect")?.into_iter().enumerate() {
        extras.defects.push(defect(d, &format!("defect[{i}]."))?);
    }
    extras.expect = match str_field(t, "expect")? {
        None => None,
        Some("rejected") => Some(Expect::Rejected),
        Some("cells") => Some(Expect::Cells),
        Some(other) => {
            return Err(DescError::field(
                "expect",
                format!("{other:?}: expected \"rejected\" or \"cells\""),
            ))
        }
    };
    if let Some(v) = t.get("layout") {
        extras.layout = Some(layout_node(v)?);
    }
    t.remove("defect");
    t.remove("expect");
    t.remove("layout");
    Ok(extras)
}

/// Applies one defect's change (not its reseal) to an image.
pub fn apply(img: &mut Vec<u8>, change: &Change) -> Result<(), String> {
    match change {
        Change::Write { offset, data } => {
            let end = offset
                .checked_add(data.len())
                .filter(|&e| e <= MAX_IMAGE)
                .ok_or_else(|| format!("{} bytes at {offset:#x} are out of range", data.len()))?;
            if end > img.len() {
                return Err(format!(
                    "{} bytes at {offset:#x} run past the image's {} bytes",
                    data.len(),
                    img.len()
                ));
            }
            img[*offset..end].copy_from_slice(data);
        }
        Change::Truncate(n) => {
            if *n > img.len() {
                return Err(format!(
                    "truncate to {n} bytes: the image has only {}",
                    img.len()
                ));
            }
            img.truncate(*n);
        }
    }
    Ok(())
}
