//! Byte sizes on the command line (`--payload 10MB`, `1GiB`) and in human output.

/// Units accepted after the number, lower-cased, with their multipliers. Decimal units are
/// powers of 1000 and binary ones powers of 1024, as in IEC 80000-13.
const UNITS: [(&str, u64); 7] = [
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
];

/// Parses `123`, `123B`, `10MB`, `1.5 KiB`, `1GiB` (units case-insensitive) into bytes.
///
/// # Errors
/// A message naming what is wrong: no number, an unknown unit, or a size beyond `u64`.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let multiplier = if unit.is_empty() {
        1
    } else {
        UNITS.iter().find(|(name, _)| *name == unit).map(|&(_, m)| m).ok_or_else(|| {
            format!("unknown size unit {unit:?} in {text:?} (use B, KB, MB, GB, KiB, MiB or GiB)")
        })?
    };
    if number.is_empty() {
        return Err(format!("{text:?} is not a size (expected e.g. 512, 64KiB, 10MB)"));
    }
    let too_big = || format!("{text:?} is too large");
    if let Ok(whole) = number.parse::<u64>() {
        return whole.checked_mul(multiplier).ok_or_else(too_big);
    }
    // A fraction such as `1.5MB`: exact enough for sizes, which are whole bytes anyway.
    let value: f64 =
        number.parse().map_err(|_| format!("{number:?} in {text:?} is not a number"))?;
    let bytes = (value * multiplier as f64).round();
    if bytes > u64::MAX as f64 {
        return Err(too_big());
    }
    Ok(bytes as u64)
}

/// `532 B`, `9.54 MiB`, `1.00 GiB`: binary units, three significant digits.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const NAMES: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < NAMES.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{} {}", sig3(value), NAMES[unit]) }
}

/// A number with three significant digits (more for large integers: `12345` stays `12345`).
pub(crate) fn sig3(value: f64) -> String {
    let magnitude = if value == 0.0 { 0 } else { value.abs().log10().floor() as i32 };
    let decimals = (2 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers_are_bytes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("12345"), Ok(12345));
        assert_eq!(parse_size(" 7 "), Ok(7));
        assert_eq!(parse_size("5B"), Ok(5));
    }

    #[test]
    fn decimal_and_binary_units() {
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("10mb"), Ok(10_000_000));
        assert_eq!(parse_size("3KB"), Ok(3_000));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("10 MiB"), Ok(10 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("0.5MB"), Ok(500_000));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_size("").is_err());
        assert!(parse_size("MB").is_err());
        assert!(parse_size("10XB").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("1.2.3MB").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("18446744073709551615GiB").unwrap_err().contains("too large"));
    }

    #[test]
    fn formats_three_significant_digits() {
        assert_eq!(format_bytes(532), "532 B");
        assert_eq!(format_bytes(10_000_000), "9.54 MiB");
        assert_eq!(format_bytes(1 << 30), "1.00 GiB");
        assert_eq!(sig3(0.0), "0.00");
        assert_eq!(sig3(23.456), "23.5");
        assert_eq!(sig3(1.23456), "1.23");
        assert_eq!(sig3(12345.6), "12346");
    }
}
