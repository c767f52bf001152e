//! The device-tree `nvmem-layout` node a description's `[layout]` asks
//! for, as DTS text a board's overlay can include.

use crate::desc::Description;
use crate::error::{DescError, Error, Result};

fn node_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 31
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ",._+-".contains(c))
}

/// The `nvmem-layout { … };` node (tab-indented by `indent` tabs): its
/// compatible, the U-Boot geometry properties, and for a fixed layout one
/// child per cell of the blob (`compatible = "mac-base"` and `bits` where
/// the region says so).
pub fn layout_node(d: &Description, indent: usize) -> Result<String> {
    let err = |field: &str, msg: String| Error::Desc {
        path: d.path.display().to_string(),
        err: DescError::field(field, msg),
    };
    let node = d
        .extras
        .layout
        .as_ref()
        .ok_or_else(|| err("layout", "missing: the description names no layout".into()))?;
    let t = "\t".repeat(indent);
    let mut out = format!(
        "{t}nvmem-layout {{\n{t}\tcompatible = \"{}\";\n",
        node.compatible
    );
    for (prop, value) in [
        ("env-size", node.env_size),
        ("env-redundant-offset", node.env_redundant_offset),
    ] {
        if let Some(v) = value {
            let v = u32::try_from(v)
                .map_err(|_| err(&format!("layout.{prop}"), format!("{v:#x} exceeds 32 bits")))?;
            out.push_str(&format!("{t}\t{prop} = <{v:#x}>;\n"));
        }
    }
    if node.compatible == "fixed-layout" {
        out.push_str(&format!(
            "{t}\t#address-cells = <1>;\n{t}\t#size-cells = <1>;\n"
        ));
        for c in d.fixed_cells()? {
            if !node_name_ok(&c.name) {
                return Err(err(
                    "region.cell",
                    format!("{:?} is no device-tree node name", c.name),
                ));
            }
            out.push_str(&format!(
                "\n{t}\t{}@{:x} {{\n{t}\t\treg = <{:#x} {:#x}>;\n",
                c.name, c.offset, c.offset, c.size
            ));
            if c.mac_base {
                out.push_str(&format!(
                    "{t}\t\tcompatible = \"mac-base\";\n{t}\t\t#nvmem-cell-cells = <1>;\n"
                ));
            }
            if let Some((bit_offset, nbits)) = c.bits {
                out.push_str(&format!("{t}\t\tbits = <{bit_offset} {nbits}>;\n"));
            }
            out.push_str(&format!("{t}\t}};\n"));
        }
    }
    out.push_str(&format!("{t}}};\n"));
    Ok(out)
}
