// SPDX-License-Identifier: GPL-2.0

//! NVMEM layout for IPMI FRU information, in Rust.
//!
//! The EEPROM of BMC and server boards describes the board in the format
//! of the IPMI Platform Management FRU Information Storage Definition
//! (v1.0 rev 1.3): a common header pointing at the chassis, board and
//! product info areas, each a list of typed fields closed by a checksum.
//! The image is validated as a whole (`ipmi_fru_parse.rs`, which the host
//! tool nvmem-image shares to predict these cells) before any cell
//! exists; each non-empty field then becomes a cell over its stored
//! bytes, named after its area and field (`board-serial-number`,
//! `product-custom-0`, ...), and the board's manufacturing date is a cell
//! of its own. Fields stored as 6-bit ASCII or BCD plus are given as
//! stored: the type/length byte just before the cell says how to decode.
//!
//! `nvmem-lab,ipmi-fru` is nvmem-lab's compatible, not upstream's.

use kernel::{
    c_str,
    nvmem::{Cell, Cells, Device, Layout, OfMatch},
    prelude::*,
};

/// The FRU parser this layout shares with the host tool nvmem-image.
#[path = "ipmi_fru_parse.rs"]
pub mod parse;

kernel::module_nvmem_layout! {
    type: IpmiFru,
    name: "ipmi_fru",
    author: "nvmem-lab",
    description: "NVMEM layout for IPMI FRU information (Rust)",
    license: "GPL",
    alias: ["of:N*T*Cnvmem-lab,ipmi-fru", "of:N*T*Cnvmem-lab,ipmi-fruC*"],
}

struct IpmiFru;

/// The first `min(size, MAX_SPAN)` bytes of the device: all a FRU can use.
fn image(dev: &Device<'_>) -> Result<Vec<u8>> {
    let len = dev.size().min(parse::MAX_SPAN);
    let mut image = Vec::new();
    image.try_reserve_exact(len)?;
    for _ in 0..len {
        image.try_push(0)?;
    }
    if let Err(e) = dev.read(0, &mut image) {
        dev.err(fmt!(
            "ipmi-fru: cannot read {} bytes: {}",
            len,
            e.to_errno()
        ));
        return Err(e);
    }
    Ok(image)
}

/// Adds one parsed field as a cell, with the container's child of the
/// same name as its node; a cell the core refuses is reported and left out.
fn add_one(dev: &Device<'_>, cells: &mut Cells<'_>, field: &parse::Cell) -> Result {
    let mut text = [0u8; parse::NAME_MAX];
    let name = field.name(&mut text);
    let mut with_nul = [0u8; parse::NAME_MAX + 1];
    with_nul[..name.len()].copy_from_slice(name.as_bytes());
    let name = CStr::from_bytes_with_nul(&with_nul[..=name.len()]).map_err(|_| EINVAL)?;
    let offset = u32::try_from(field.offset).map_err(|_| EINVAL)?;
    let len = u32::try_from(field.len).map_err(|_| EINVAL)?;
    match cells.add(&Cell::new(name, offset, len).of_node(name)) {
        Err(e) if e == ENOMEM => Err(e),
        Err(e) => {
            dev.err(fmt!(
                "ipmi-fru: {} at {:#x} not added: {}",
                name,
                offset,
                e.to_errno()
            ));
            Ok(())
        }
        Ok(()) => Ok(()),
    }
}

impl Layout for IpmiFru {
    type Data = ();
    const NAME: &'static CStr = c_str!("ipmi-fru");
    const OF_MATCH: &'static [OfMatch<()>] = &[OfMatch::new(c_str!("nvmem-lab,ipmi-fru"), ())];

    fn add_cells(dev: &Device<'_>, _data: &(), cells: &mut Cells<'_>) -> Result {
        // a device that cannot be read, or malformed content: reported,
        // no cells, the device stays registered and readable
        let image = match image(dev) {
            Ok(image) => image,
            Err(e) if e == ENOMEM => return Err(e),
            Err(_) => return Ok(()),
        };
        let fru = match parse::parse(&image) {
            Ok(fru) => fru,
            Err(e) => {
                dev.err(fmt!("ipmi-fru: {}", e));
                return Ok(());
            }
        };
        fru.for_each_cell(|field| add_one(dev, cells, field))
    }
}
