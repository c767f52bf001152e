//! nvmem-image: build EEPROM and flash images from readable descriptions,
//! decode them, and predict the NVMEM cells the kernel's layouts create.
//!
//! Formats, one module each behind [`format::ImageFormat`] and listed in
//! [`format::FORMATS`]: ONIE TLV ([`onie`]), Kontron sl28 VPD ([`sl28`]),
//! U-Boot environment ([`uboot`], built with `mkenvimage`), IPMI FRU
//! information ([`ipmi_fru`]); fixed blobs and flash images composed of
//! partitions ([`desc`]); an existing image back to a description
//! ([`dump`]).

pub mod cells;
pub mod defect;
pub mod desc;
pub mod dts;
pub mod dump;
pub mod error;
pub mod format;
pub mod hex;
pub mod inspect;
pub mod ipmi_fru;
pub mod mac;
pub mod onie;
pub mod sl28;
pub mod uboot;
pub mod view;

pub use error::{DecodeError, DescError, Error, Result};
