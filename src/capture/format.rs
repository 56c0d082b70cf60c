//! Block types, byte orders and timestamp resolutions shared by reader and writer.

use std::fmt;

/// pcapng Section Header Block type (a palindrome, so readable before the byte order).
pub(crate) const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
pub(crate) const PCAPNG_IDB: u32 = 1;
pub(crate) const PCAPNG_PB_OBSOLETE: u32 = 2;
pub(crate) const PCAPNG_SPB: u32 = 3;
pub(crate) const PCAPNG_EPB: u32 = 6;
/// `opt_comment`, the option code every pcapng block shares.
pub(crate) const OPT_COMMENT: u16 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    pub(crate) fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    pub(crate) fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    pub(crate) fn u16_bytes(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    pub(crate) fn u32_bytes(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        }
    }
}

/// Timestamp unit, encoded as the pcapng `if_tsresol` byte: high bit clear = 10^-n
/// seconds, high bit set = 2^-n seconds. Classic pcap uses 10^-6 or 10^-9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TsResolution(pub u8);

impl TsResolution {
    pub const MICRO: TsResolution = TsResolution(6);
    pub const NANO: TsResolution = TsResolution(9);

    fn is_binary(self) -> bool {
        self.0 & 0x80 != 0
    }
    fn exponent(self) -> u32 {
        u32::from(self.0 & 0x7F)
    }

    /// Converts a count of units to nanoseconds. Exact for decimal resolutions down to
    /// 1 ns; finer units are truncated toward zero. Never overflows (i128).
    pub fn to_ns(self, units: u64) -> i128 {
        /// 10^k for the factors of the decimal units (10^-9 s to 1 s) to nanoseconds.
        const NS_PER_UNIT: [u64; 10] = [
            1_000_000_000,
            100_000_000,
            10_000_000,
            1_000_000,
            100_000,
            10_000,
            1_000,
            100,
            10,
            1,
        ];
        let e = self.exponent();
        if !self.is_binary() {
            // Every frame's fraction goes through here: one 64-bit multiply when the
            // product fits (any fraction of a second does), rather than a power and a
            // multiply of 128 bits.
            if let Some(ns) = NS_PER_UNIT
                .get(e as usize)
                .and_then(|&f| units.checked_mul(f))
            {
                return i128::from(ns);
            }
        }
        let units = i128::from(units);
        if self.is_binary() {
            // 2^-e s: units * 1e9 / 2^e. e < 128 and units < 2^64, so the product fits.
            if e >= 127 {
                return 0;
            }
            (units * 1_000_000_000) >> e
        } else if e <= 9 {
            units * 10i128.pow(9 - e)
        } else if e <= 38 {
            units / 10i128.pow(e - 9)
        } else {
            0
        }
    }

    /// Converts nanoseconds to units (the inverse of [`to_ns`](Self::to_ns), truncating).
    /// `None` if the value does not fit the 64-bit field.
    pub fn from_ns(self, ns: i128) -> Option<u64> {
        let e = self.exponent();
        let units = if self.is_binary() {
            if e >= 64 {
                return None;
            }
            (ns << e) / 1_000_000_000
        } else if e <= 9 {
            ns / 10i128.pow(9 - e)
        } else if e <= 27 {
            ns.checked_mul(10i128.pow(e - 9))?
        } else {
            return None;
        };
        u64::try_from(units).ok()
    }

    /// Digits of a second a time in this unit is printed with: tshark's automatic
    /// precision, the power of ten at or below the units per second (9 at most), so a
    /// microsecond file prints 6 and a nanosecond one 9.
    pub fn digits(self) -> u8 {
        let e = self.exponent();
        if self.is_binary() {
            // 2^e units per second: 10^k <= 2^e for k = floor(e * log10(2)).
            let k = (u64::from(e.min(64)) * 30_103 / 100_000) as u8;
            return match k {
                0..=3 => k,
                4..=5 => 3,
                6..=8 => 6,
                _ => 9,
            };
        }
        match e {
            0..=3 => e as u8,
            4..=5 => 3,
            6..=8 => 6,
            _ => 9,
        }
    }

    pub fn describe(self) -> String {
        match (self.is_binary(), self.exponent()) {
            (false, 6) => "µs".to_string(),
            (false, 9) => "ns".to_string(),
            (false, 3) => "ms".to_string(),
            (false, e) => format!("10^-{e} s"),
            (true, e) => format!("2^-{e} s"),
        }
    }
}

/// What kind of file is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Classic pcap with one link type, µs or ns, either byte order.
    Pcap {
        resolution: TsResolution,
        endian: Endian,
        version: (u16, u16),
        snaplen: u32,
    },
    /// pcapng; the byte order and resolution can change per section and interface.
    PcapNg,
}

impl fmt::Display for CaptureFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureFormat::Pcap {
                resolution, endian, ..
            } => write!(f, "pcap ({}, {})", resolution.describe(), endian.as_str()),
            CaptureFormat::PcapNg => f.write_str("pcapng"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_resolutions_convert_exactly() {
        assert_eq!(TsResolution::MICRO.to_ns(1_500_000), 1_500_000_000);
        assert_eq!(TsResolution::NANO.to_ns(42), 42);
        assert_eq!(TsResolution(3).to_ns(7), 7_000_000);
        assert_eq!(TsResolution(12).to_ns(7_000), 7);
        // Products past 64 bits stay exact (seconds counted as units, far future).
        for e in 0..=9u8 {
            for units in [0, 1, 999_999, u64::MAX / 1_000_000_000 + 1, u64::MAX] {
                assert_eq!(
                    TsResolution(e).to_ns(units),
                    i128::from(units) * 10i128.pow(9 - u32::from(e)),
                    "10^-{e} s, {units} units"
                );
            }
        }
        assert_eq!(TsResolution::MICRO.from_ns(1_500_000_999), Some(1_500_000));
        assert_eq!(TsResolution::MICRO.digits(), 6);
        assert_eq!(TsResolution::NANO.digits(), 9);
        assert_eq!(TsResolution(3).digits(), 3);
        assert_eq!(TsResolution(4).digits(), 3);
        assert_eq!(TsResolution(7).digits(), 6);
        assert_eq!(TsResolution(12).digits(), 9);
        assert_eq!(TsResolution(0x80 | 20).digits(), 6);
        assert_eq!(TsResolution(0x80 | 30).digits(), 9);
        assert_eq!(TsResolution(12).from_ns(7), Some(7_000));
    }

    #[test]
    fn binary_resolutions_convert() {
        // 2^-10 s units: 1024 units are one second.
        let r = TsResolution(0x80 | 10);
        assert_eq!(r.to_ns(1024), 1_000_000_000);
        assert_eq!(r.to_ns(512), 500_000_000);
        assert_eq!(r.from_ns(250_000_000), Some(256));
        // Extreme exponents do not panic.
        assert_eq!(TsResolution(0xFF).to_ns(u64::MAX), 0);
        assert_eq!(TsResolution(0x7F).to_ns(u64::MAX), 0);
        assert_eq!(TsResolution(0x7F).from_ns(1), None);
    }
}
