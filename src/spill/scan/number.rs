//! Streaming validation of JSON numbers, with serde_json's verdict on their range.
//!
//! The grammar is [RFC 8259 §6]. Range: serde_json (without its `arbitrary_precision` and
//! `float_roundtrip` features, as this crate builds it) rejects a number whose value overflows
//! `f64`, and it decides that from a `u64` significand and an `i32` decimal exponent in its own
//! way (`Deserializer::parse_integer` and friends in serde_json's `de.rs`). A skeleton holding a
//! number that serde_json then refuses would be useless, so this module replays exactly that
//! computation while the digits stream by, holding no digits.
//!
//! [RFC 8259 §6]: https://www.rfc-editor.org/rfc/rfc8259#section-6

/// Error reason for a number serde_json would reject as out of range; reported at the number's
/// first byte (other reasons name the byte at fault).
pub(super) const OUT_OF_RANGE: &str = "number out of range";

/// Where in the number grammar the next byte falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// After `-`: a digit must follow.
    Minus,
    /// After a leading `0` of the integer part: no digit may follow.
    Zero,
    /// In the integer part.
    Int,
    /// After `.`: a digit must follow.
    Dot,
    /// In the fraction.
    Frac,
    /// After `e`/`E`: a sign or digit must follow.
    E,
    /// After the exponent's sign: a digit must follow.
    ESign,
    /// In the exponent.
    Exp,
}

/// One number in progress.
#[derive(Debug, Clone)]
pub(super) struct Number {
    phase: Phase,
    /// Leading digits, as serde_json accumulates them (frozen once the next digit would overflow).
    significand: u64,
    /// The integer part overflowed `significand`: each further integer digit scales by ten.
    int_overflow: bool,
    /// The fraction overflowed `significand`: further fraction digits are ignored.
    frac_overflow: bool,
    /// Decimal exponent implied by the digits (integer overflow, fraction digits).
    exponent: i32,
    /// The explicit exponent after `e`, and its sign.
    exp: i32,
    exp_negative: bool,
    /// The explicit exponent overflowed `i32` (the value is then zero, or out of range).
    exp_overflow: bool,
}

/// What one byte did to a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// The byte belongs to the number.
    Consumed,
    /// The byte does not belong to the number, which ended before it (and is valid).
    Ended,
}

impl Number {
    /// A number starting with `first` (a `-` or a digit).
    pub(super) fn start(first: u8) -> Self {
        let mut n = Number {
            phase: Phase::Minus,
            significand: 0,
            int_overflow: false,
            frac_overflow: false,
            exponent: 0,
            exp: 0,
            exp_negative: false,
            exp_overflow: false,
        };
        if first != b'-' {
            n.first_digit(first);
        }
        n
    }

    fn first_digit(&mut self, d: u8) {
        if d == b'0' {
            self.phase = Phase::Zero;
        } else {
            self.phase = Phase::Int;
            self.significand = u64::from(d - b'0');
        }
    }

    /// Feeds one byte.
    ///
    /// # Errors
    /// Why the number is malformed or out of range.
    pub(super) fn push(&mut self, b: u8) -> Result<Step, &'static str> {
        let digit = b.is_ascii_digit();
        match self.phase {
            Phase::Minus if digit => self.first_digit(b),
            Phase::Minus => return Err("expected a digit after '-'"),
            Phase::Zero if digit => return Err("leading zero in a number"),
            Phase::Int if digit => {
                if self.int_overflow {
                    self.exponent = self.exponent.saturating_add(1);
                } else if let Some(s) = grow(self.significand, b) {
                    self.significand = s;
                } else {
                    self.int_overflow = true;
                    self.exponent = self.exponent.saturating_add(1);
                }
            }
            Phase::Zero | Phase::Int | Phase::Frac if b == b'e' || b == b'E' => {
                self.phase = Phase::E
            }
            Phase::Zero | Phase::Int if b == b'.' => self.phase = Phase::Dot,
            Phase::Dot | Phase::Frac if digit => {
                self.phase = Phase::Frac;
                if !self.frac_overflow {
                    match grow(self.significand, b) {
                        Some(s) => {
                            self.significand = s;
                            self.exponent = self.exponent.saturating_sub(1);
                        }
                        None => self.frac_overflow = true,
                    }
                }
            }
            Phase::Dot => return Err("expected a digit after '.'"),
            Phase::E if b == b'+' || b == b'-' => {
                self.exp_negative = b == b'-';
                self.phase = Phase::ESign;
            }
            Phase::E | Phase::ESign if digit => {
                self.phase = Phase::Exp;
                self.exp = i32::from(b - b'0');
            }
            Phase::E | Phase::ESign => return Err("expected a digit in the exponent"),
            Phase::Exp if digit => {
                if !self.exp_overflow {
                    match self.exp.checked_mul(10).and_then(|e| e.checked_add(i32::from(b - b'0')))
                    {
                        Some(e) => self.exp = e,
                        None => {
                            if self.significand != 0 && !self.exp_negative {
                                return Err(OUT_OF_RANGE);
                            }
                            self.exp_overflow = true;
                        }
                    }
                }
            }
            Phase::Zero | Phase::Int | Phase::Frac | Phase::Exp => {
                self.end()?;
                return Ok(Step::Ended);
            }
        }
        Ok(Step::Consumed)
    }

    /// The number ended; checks its range like serde_json's `f64_from_parts`.
    fn end(&self) -> Result<(), &'static str> {
        let float = self.int_overflow || self.phase != Phase::Int && self.phase != Phase::Zero;
        if !float || self.exp_overflow {
            return Ok(());
        }
        let exponent = if self.phase != Phase::Exp {
            self.exponent
        } else if self.exp_negative {
            self.exponent.saturating_sub(self.exp)
        } else {
            self.exponent.saturating_add(self.exp)
        };
        if overflows(self.significand, exponent) { Err(OUT_OF_RANGE) } else { Ok(()) }
    }
}

/// `s * 10 + digit`, unless that overflows `u64`.
fn grow(s: u64, digit: u8) -> Option<u64> {
    s.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
}

/// serde_json's `f64_from_parts` (non-`float_roundtrip`), reduced to its verdict.
fn overflows(significand: u64, mut exponent: i32) -> bool {
    let mut f = significand as f64;
    loop {
        match POW10.get(exponent.unsigned_abs() as usize) {
            Some(&pow) => return exponent >= 0 && (f * pow).is_infinite(),
            None => {
                if f == 0.0 {
                    return false;
                }
                if exponent >= 0 {
                    return true;
                }
                f /= 1e308;
                exponent += 308;
            }
        }
    }
}

/// Powers of ten as f64 literals (correctly rounded), like serde_json's table.
#[rustfmt::skip]
static POW10: [f64; 309] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32,
    1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39, 1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47, 1e48,
    1e49, 1e50, 1e51, 1e52, 1e53, 1e54, 1e55, 1e56, 1e57, 1e58, 1e59, 1e60, 1e61, 1e62, 1e63, 1e64,
    1e65, 1e66, 1e67, 1e68, 1e69, 1e70, 1e71, 1e72, 1e73, 1e74, 1e75, 1e76, 1e77, 1e78, 1e79, 1e80,
    1e81, 1e82, 1e83, 1e84, 1e85, 1e86, 1e87, 1e88, 1e89, 1e90, 1e91, 1e92, 1e93, 1e94, 1e95, 1e96,
    1e97, 1e98, 1e99, 1e100, 1e101, 1e102, 1e103, 1e104, 1e105, 1e106, 1e107, 1e108, 1e109, 1e110,
    1e111, 1e112, 1e113, 1e114, 1e115, 1e116, 1e117, 1e118, 1e119, 1e120, 1e121, 1e122, 1e123,
    1e124, 1e125, 1e126, 1e127, 1e128, 1e129, 1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136,
    1e137, 1e138, 1e139, 1e140, 1e141, 1e142, 1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149,
    1e150, 1e151, 1e152, 1e153, 1e154, 1e155, 1e156, 1e157, 1e158, 1e159, 1e160, 1e161, 1e162,
    1e163, 1e164, 1e165, 1e166, 1e167, 1e168, 1e169, 1e170, 1e171, 1e172, 1e173, 1e174, 1e175,
    1e176, 1e177, 1e178, 1e179, 1e180, 1e181, 1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188,
    1e189, 1e190, 1e191, 1e192, 1e193, 1e194, 1e195, 1e196, 1e197, 1e198, 1e199, 1e200, 1e201,
    1e202, 1e203, 1e204, 1e205, 1e206, 1e207, 1e208, 1e209, 1e210, 1e211, 1e212, 1e213, 1e214,
    1e215, 1e216, 1e217, 1e218, 1e219, 1e220, 1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227,
    1e228, 1e229, 1e230, 1e231, 1e232, 1e233, 1e234, 1e235, 1e236, 1e237, 1e238, 1e239, 1e240,
    1e241, 1e242, 1e243, 1e244, 1e245, 1e246, 1e247, 1e248, 1e249, 1e250, 1e251, 1e252, 1e253,
    1e254, 1e255, 1e256, 1e257, 1e258, 1e259, 1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266,
    1e267, 1e268, 1e269, 1e270, 1e271, 1e272, 1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279,
    1e280, 1e281, 1e282, 1e283, 1e284, 1e285, 1e286, 1e287, 1e288, 1e289, 1e290, 1e291, 1e292,
    1e293, 1e294, 1e295, 1e296, 1e297, 1e298, 1e299, 1e300, 1e301, 1e302, 1e303, 1e304, 1e305,
    1e306, 1e307, 1e308,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `text` (followed by a delimiter) through [`Number`].
    fn verdict(text: &str) -> Result<(), &'static str> {
        let bytes = text.as_bytes();
        let mut n = Number::start(bytes[0]);
        for &b in &bytes[1..] {
            assert_eq!(n.push(b)?, Step::Consumed, "{text}");
        }
        assert_eq!(n.push(b',')?, Step::Ended);
        Ok(())
    }

    #[test]
    fn agrees_with_serde_json() {
        let cases = [
            "0",
            "-0",
            "7",
            "-12",
            "0.5",
            "1e5",
            "1E+5",
            "1e-5",
            "-0.0e0",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1e308",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e309",
            "-1e309",
            "1e400",
            "0e999999999999",
            "1e-999999999999",
            "1e999999999999",
            "0.000000000000000000000000000000001e330",
            "184467440737095516150000000000000000e300",
            "1844674407370955161.5e290",
            "123456789012345678901234567890e280",
            "4e-400",
            "1.5",
            "01",
            "-",
            "1.",
            "1e",
            "1e+",
            "-a",
            "0.e1",
        ];
        for text in cases {
            let ours = verdict(text).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(text).is_ok();
            assert_eq!(ours, theirs, "{text}");
        }
    }
}
