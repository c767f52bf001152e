//! Kontron sl28 VPD, version 1: magic 'V', version 1, 15-byte serial
//! number, 6-byte base MAC address, CRC-8 (polynomial 0x07, MSB first,
//! initial value 0) over the 23 bytes before it.

use crate::error::DecodeError;
use crate::{hex, mac, onie};
use serde::Serialize;

pub const MAGIC: u8 = b'V';
pub const VERSION: u8 = 1;
pub const LEN: usize = 24;
pub const SERIAL_OFFSET: usize = 2;
pub const SERIAL_LEN: usize = 15;
pub const MAC_OFFSET: usize = 17;
pub const CRC_OFFSET: usize = 23;

const CRC8: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_8_SMBUS);

pub fn crc8(data: &[u8]) -> u8 {
    CRC8.checksum(data)
}

/// The 24-byte record. The serial number is padded with NUL bytes.
pub fn encode(serial: &[u8], base_mac: [u8; 6]) -> Result<Vec<u8>, String> {
    if serial.len() > SERIAL_LEN {
        return Err(format!(
            "serial number of {} bytes exceeds {SERIAL_LEN}",
            serial.len()
        ));
    }
    let mut out = vec![0u8; LEN];
    out[0] = MAGIC;
    out[1] = VERSION;
    out[SERIAL_OFFSET..SERIAL_OFFSET + serial.len()].copy_from_slice(serial);
    out[MAC_OFFSET..MAC_OFFSET + 6].copy_from_slice(&base_mac);
    out[CRC_OFFSET] = crc8(&out[..CRC_OFFSET]);
    Ok(out)
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Image {
    pub version: u8,
    pub serial_hex: String,
    /// the serial number up to its first NUL, if printable
    pub serial: Option<String>,
    pub base_mac: String,
    pub crc_found: u8,
    pub crc_expected: u8,
    pub crc_valid: bool,
}

impl Image {
    pub fn check(&self) -> Result<(), DecodeError> {
        if self.crc_valid {
            Ok(())
        } else {
            Err(DecodeError::at(
                CRC_OFFSET,
                format!(
                    "CRC-8 mismatch: expected {:#04x}, found {:#04x}",
                    self.crc_expected, self.crc_found
                ),
            ))
        }
    }
}

pub fn decode(data: &[u8]) -> Result<Image, DecodeError> {
    if let Some(b) = onie::blank_kind(data) {
        return Err(DecodeError::whole(format!("not an sl28 VPD image: {b}")));
    }
    if data.len() < LEN {
        return Err(DecodeError::whole(format!(
            "truncated: {} bytes, sl28 VPD v1 needs {LEN}",
            data.len()
        )));
    }
    if data[0] != MAGIC {
        return Err(DecodeError::at(
            0,
            format!("bad magic {:#04x}, expected 0x56 ('V')", data[0]),
        ));
    }
    if data[1] != VERSION {
        return Err(DecodeError::at(
            1,
            format!("unsupported version {}, expected 1", data[1]),
        ));
    }
    let serial = &data[SERIAL_OFFSET..SERIAL_OFFSET + SERIAL_LEN];
    let text_end = serial.iter().position(|&b| b == 0).unwrap_or(SERIAL_LEN);
    let crc_expected = crc8(&data[..CRC_OFFSET]);
    Ok(Image {
        version: data[1],
        serial_hex: hex::encode(serial),
        serial: hex::printable(&serial[..text_end]),
        base_mac: mac::format(&data[MAC_OFFSET..MAC_OFFSET + 6]),
        crc_found: data[CRC_OFFSET],
        crc_expected,
        crc_valid: crc_expected == data[CRC_OFFSET],
    })
}
