// SPDX-License-Identifier: GPL-2.0

//! NVMEM layout for the vital product data of Kontron sl28 boards, in Rust.
//!
//! The same layout as `sl28vpd.c` (Kconfig builds one of the two into the
//! kernel; both can be modules): a 24-byte version 1 record at the start
//! of the device, checked as a whole (magic 'V', version, CRC-8 with
//! polynomial 0x07 over the 23 bytes before it) before its two cells,
//! `serial-number` and `base-mac-address`, are added. The MAC cell refuses
//! an invalid address and a negative index, and adds the consumer's index.
//! Messages and errors are those of the C layout, so that either can
//! replace the other.

use kernel::{
    c_str,
    nvmem::{Cell, Cells, Device, Layout, OfMatch},
    prelude::*,
};

kernel::module_nvmem_layout! {
    type: Sl28Vpd,
    name: "sl28vpd_rust",
    author: "nvmem-lab",
    description: "NVMEM layout for Kontron sl28 vital product data (Rust)",
    license: "GPL",
}

const MAGIC: u8 = b'V';
const VERSION: u8 = 1;
const SERIAL_OFFSET: usize = 2;
const SERIAL_LEN: usize = 15;
const MAC_OFFSET: usize = SERIAL_OFFSET + SERIAL_LEN;
const MAC_LEN: usize = 6;
const CRC_OFFSET: usize = MAC_OFFSET + MAC_LEN;
const RECORD_LEN: usize = CRC_OFFSET + 1;

/// CRC-8, polynomial 0x07, most significant bit first, no final XOR.
const CRC8_TABLE: [u8; 256] = crc8_table(0x07);

const fn crc8_table(poly: u8) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ poly
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

fn crc8(data: &[u8]) -> u8 {
    data.iter()
        .fold(0, |crc, &b| CRC8_TABLE[usize::from(crc ^ b)])
}

/// Neither multicast nor all zeroes, as `is_valid_ether_addr()` says.
fn valid_mac(mac: &[u8]) -> bool {
    mac.len() == MAC_LEN && mac[0] & 1 == 0 && mac.iter().any(|&b| b != 0)
}

/// The base address plus the consumer's index, as `eth_addr_add()` adds:
/// the address as a 48-bit number, wrapping.
fn mac_read(index: i32, _offset: u32, data: &mut [u8]) -> Result {
    if index < 0 || !valid_mac(data) {
        return Err(EINVAL);
    }
    let mut value = data.iter().fold(0u64, |v, &b| v << 8 | u64::from(b));
    value = value.wrapping_add(index as u64) & 0xffff_ffff_ffff;
    for (i, byte) in data.iter_mut().enumerate() {
        *byte = (value >> (8 * (MAC_LEN - 1 - i))) as u8;
    }
    Ok(())
}

/// Reads and checks the record; `None` after reporting what is wrong.
fn record(dev: &Device<'_>) -> Option<[u8; RECORD_LEN]> {
    let mut vpd = [0u8; RECORD_LEN];
    if dev.size() < RECORD_LEN {
        dev.err(fmt!("sl28vpd: device of {} bytes is too small", dev.size()));
        return None;
    }
    if let Err(e) = dev.read(0, &mut vpd) {
        dev.err(fmt!("sl28vpd: cannot read the record: {}", e.to_errno()));
        return None;
    }
    if vpd[0] != MAGIC {
        dev.err(fmt!("sl28vpd: bad magic {:#x}", vpd[0]));
        return None;
    }
    if vpd[1] != VERSION {
        dev.err(fmt!("sl28vpd: unsupported version {}", vpd[1]));
        return None;
    }
    let crc = crc8(&vpd[..CRC_OFFSET]);
    if crc != vpd[CRC_OFFSET] {
        dev.err(fmt!(
            "sl28vpd: CRC mismatch (stored {:02x}, computed {:02x})",
            vpd[CRC_OFFSET],
            crc
        ));
        return None;
    }
    Some(vpd)
}

struct Sl28Vpd;

impl Layout for Sl28Vpd {
    type Data = ();
    const NAME: &'static CStr = c_str!("sl28-vpd-rust");
    const OF_MATCH: &'static [OfMatch<()>] = &[OfMatch::new(c_str!("kontron,sl28-vpd"), ())];

    fn add_cells(dev: &Device<'_>, _data: &(), cells: &mut Cells<'_>) -> Result {
        // bad content: reported, no cells, the device stays readable
        if record(dev).is_none() {
            return Ok(());
        }
        let serial = c_str!("serial-number");
        let mac = c_str!("base-mac-address");
        let list = [
            Cell::new(serial, SERIAL_OFFSET as u32, SERIAL_LEN as u32).of_node(serial),
            Cell::new(mac, MAC_OFFSET as u32, MAC_LEN as u32)
                .of_node(mac)
                .post_process(mac_read),
        ];
        for cell in &list {
            match cells.add(cell) {
                Ok(()) => {}
                Err(e) if e == ENOMEM => return Err(e),
                // e.g. an offset the device cannot address: the others stay
                Err(e) => dev.err(fmt!(
                    "sl28vpd: {} at {:#x} not added: {}",
                    cell.name(),
                    cell.offset(),
                    e.to_errno()
                )),
            }
        }
        Ok(())
    }
}
