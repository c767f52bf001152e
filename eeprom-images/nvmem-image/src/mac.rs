//! MAC addresses: the text form used in descriptions and U-Boot
//! environments, and the arithmetic the kernel applies for a cell index.

/// Parses `xx:xx:xx:xx:xx:xx` (hex digits, colons, exactly 17 characters),
/// the form the kernel's `mac_pton()` accepts.
pub fn parse(s: &str) -> Option<[u8; 6]> {
    let b = s.as_bytes();
    if b.len() != 17 {
        return None;
    }
    let mut mac = [0u8; 6];
    for (i, byte) in mac.iter_mut().enumerate() {
        let hi = (b[i * 3] as char).to_digit(16)?;
        let lo = (b[i * 3 + 1] as char).to_digit(16)?;
        if i < 5 && b[i * 3 + 2] != b':' {
            return None;
        }
        *byte = (hi * 16 + lo) as u8;
    }
    Some(mac)
}

pub fn format(mac: &[u8]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A mac-base cell's stored address: 6 bytes as they are, 12 hex digits,
/// or 17 characters `xx:xx:xx:xx:xx:xx`; None for anything else.
pub fn parse_base(raw: &[u8]) -> Option<[u8; 6]> {
    match raw.len() {
        6 => raw.try_into().ok(),
        12 => {
            let mut mac = [0u8; 6];
            for (i, byte) in mac.iter_mut().enumerate() {
                let hi = (raw[2 * i] as char).to_digit(16)?;
                let lo = (raw[2 * i + 1] as char).to_digit(16)?;
                *byte = (hi * 16 + lo) as u8;
            }
            Some(mac)
        }
        17 => parse(std::str::from_utf8(raw).ok()?),
        _ => None,
    }
}

/// The address `index` above `mac` (below for a negative index), as a
/// 48-bit number (wrapping), as the kernel's `eth_addr_add()` computes it.
pub fn add(mac: [u8; 6], index: i64) -> [u8; 6] {
    let mut v = 0u64;
    for b in mac {
        v = (v << 8) | u64::from(b);
    }
    let v = v.wrapping_add(index as u64) & 0xffff_ffff_ffff;
    let mut out = [0u8; 6];
    for (i, b) in out.iter_mut().enumerate() {
        *b = (v >> (8 * (5 - i))) as u8;
    }
    out
}

/// Unicast and not all zero (the kernel's `is_valid_ether_addr()`).
pub fn is_valid(mac: &[u8; 6]) -> bool {
    mac[0] & 1 == 0 && mac.iter().any(|&b| b != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        assert_eq!(
            parse("02:11:22:33:44:5f"),
            Some([2, 0x11, 0x22, 0x33, 0x44, 0x5f])
        );
        assert_eq!(
            format(&[2, 0x11, 0x22, 0x33, 0x44, 0x5f]),
            "02:11:22:33:44:5f"
        );
        for bad in [
            "02:11:22:33:44",
            "02-11-22-33-44-55",
            "02:11:22:33:44:5g",
            "",
            "02:11:22:33:44:555",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn add_carries_across_bytes() {
        assert_eq!(add([2, 0, 0, 0, 0, 0xff], 1), [2, 0, 0, 0, 1, 0]);
        assert_eq!(add([0xff; 6], 1), [0; 6]);
        assert_eq!(add([2, 0, 0, 0, 0, 1], 0), [2, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn validity() {
        assert!(is_valid(&[2, 0, 0, 0, 0, 1]));
        assert!(!is_valid(&[1, 0, 0, 0, 0, 1]));
        assert!(!is_valid(&[0; 6]));
    }
}
