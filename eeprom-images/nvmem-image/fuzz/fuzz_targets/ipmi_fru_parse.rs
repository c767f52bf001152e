#![no_main]
//! The shared IPMI FRU parser (layouts/drivers/ipmi_fru_parse.rs, the
//! kernel's nvmem-lab,ipmi-fru layout and the tool's prediction): no
//! panic, and the invariants of common/ipmi_fru_check.rs on every input,
//! the tool's `cells` prediction included.
use libfuzzer_sys::fuzz_target;

#[path = "../common/ipmi_fru_check.rs"]
mod ipmi_fru_check;

fuzz_target!(|data: &[u8]| {
    ipmi_fru_check::check(data);
});
