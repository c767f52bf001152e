//! Hex text helpers.

pub fn encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Hex digits, optionally separated by whitespace or colons.
pub fn decode(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<char> = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    digits
        .chunks(2)
        .map(|p| {
            let hi = p[0]
                .to_digit(16)
                .ok_or_else(|| format!("not a hex digit: {:?}", p[0]))?;
            let lo = p[1]
                .to_digit(16)
                .ok_or_else(|| format!("not a hex digit: {:?}", p[1]))?;
            Ok((hi * 16 + lo) as u8)
        })
        .collect()
}

/// Printable ASCII text of the bytes, or None.
pub fn printable(b: &[u8]) -> Option<String> {
    if !b.is_empty() && b.iter().all(|&c| (0x20..0x7f).contains(&c)) {
        Some(String::from_utf8_lossy(b).into_owned())
    } else {
        None
    }
}
