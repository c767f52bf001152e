//! nvmem-image: build EEPROM and flash images from readable descriptions,
//! decode them, and predict the NVMEM cells the kernel's layouts create.
//!
//! Formats: ONIE TLV ([`onie`]), Kontron sl28 VPD ([`sl28`]), U-Boot
//! environment ([`uboot`], built with `mkenvimage`), fixed blobs and flash
//! images composed of partitions ([`desc`]); an existing image back to a
//! description ([`dump`]).

pub mod cells;
pub mod defect;
pub mod desc;
pub mod dts;
pub mod dump;
pub mod error;
pub mod hex;
pub mod inspect;
pub mod mac;
pub mod onie;
pub mod sl28;
pub mod uboot;
pub mod view;

pub use error::{DecodeError, DescError, Error, Result};
