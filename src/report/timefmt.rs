//! Record times as `-t` asks for them (tshark's formats).

/// How record times are written (tshark's `-t`): `R` relative to the first frame,
/// `A`/`Ad`/`Adoy` local time of day, date and time, year/day-of-year and time,
/// `U`/`Ud`/`Udoy` the same in UTC, `E` epoch seconds, `D` since the previous frame
/// captured, `Dd` since the previous record shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    #[default]
    R,
    A,
    Ad,
    Adoy,
    U,
    Ud,
    Udoy,
    E,
    D,
    Dd,
}

impl TimeFormat {
    /// A time of day or a date, rather than a count of seconds.
    pub fn is_clock_time(self) -> bool {
        matches!(
            self,
            TimeFormat::A
                | TimeFormat::Ad
                | TimeFormat::Adoy
                | TimeFormat::U
                | TimeFormat::Ud
                | TimeFormat::Udoy
        )
    }

    /// In UTC rather than the local zone.
    fn is_utc(self) -> bool {
        matches!(self, TimeFormat::U | TimeFormat::Ud | TimeFormat::Udoy)
    }
}

/// Digits of a second printed when the capture's unit is not known (the tables'
/// microseconds).
pub const DEFAULT_DIGITS: u8 = 6;

/// Renders record times, keeping what the relative and delta formats need.
#[derive(Debug, Clone)]
pub struct Clock {
    format: TimeFormat,
    /// The first frame captured (`r`).
    first_ns: Option<i64>,
    /// The frame before the one last read (`d`).
    prev_ns: Option<i64>,
    /// The frame last read.
    cur_ns: Option<i64>,
    /// The previous record shown (`dd`).
    prev_shown_ns: Option<i64>,
    /// Digits of a second, from the timestamp unit of the frame last read.
    digits: u8,
    /// The local zone, looked up once.
    zone: Option<jiff::tz::TimeZone>,
}

impl Clock {
    pub fn new(format: TimeFormat) -> Clock {
        let zone = (format.is_clock_time() && !format.is_utc()).then(jiff::tz::TimeZone::system);
        Clock {
            format,
            first_ns: None,
            prev_ns: None,
            cur_ns: None,
            prev_shown_ns: None,
            digits: DEFAULT_DIGITS,
            zone,
        }
    }

    pub fn format(&self) -> TimeFormat {
        self.format
    }

    /// Digits of a second of the frame last read.
    pub fn digits(&self) -> u8 {
        self.digits
    }

    /// Note a frame read, whatever it holds (call for every frame, in order, before
    /// [`Clock::render`] of its record); `digits` is its timestamp unit's precision.
    pub fn frame(&mut self, ts_ns: i64, digits: u8) {
        self.first_ns.get_or_insert(ts_ns);
        self.prev_ns = self.cur_ns.replace(ts_ns);
        self.digits = digits;
    }

    /// The time column of a shown record, of the frame last read (or, for a time
    /// alone, as in the tables of intervals, with no frame read: then `d` and `r`
    /// count from this time itself).
    pub fn render(&mut self, ts_ns: i64) -> String {
        let first = self.first_ns.unwrap_or(ts_ns);
        let prev_shown = self.prev_shown_ns.replace(ts_ns);
        let d = self.digits;
        match self.format {
            TimeFormat::R => seconds_with(ts_ns - first, d),
            TimeFormat::D => seconds_with(ts_ns - self.prev_ns.unwrap_or(ts_ns), d),
            TimeFormat::Dd => seconds_with(ts_ns - prev_shown.unwrap_or(ts_ns), d),
            TimeFormat::E => seconds_with(ts_ns, d),
            f => {
                let pattern = match f {
                    TimeFormat::A | TimeFormat::U => "%H:%M:%S",
                    TimeFormat::Adoy | TimeFormat::Udoy => "%Y/%j %H:%M:%S",
                    _ => "%Y-%m-%d %H:%M:%S",
                };
                match (&self.zone, f.is_utc()) {
                    (Some(z), false) => zoned(ts_ns, z, pattern, d),
                    _ => zoned(ts_ns, &jiff::tz::TimeZone::UTC, pattern, d),
                }
            }
        }
    }
}

/// Seconds with microseconds, as the tables always printed them.
pub fn seconds(ns: i64) -> String {
    seconds_with(ns, DEFAULT_DIGITS)
}

/// Seconds with `digits` digits of a second (at most 9), cut rather than rounded as
/// tshark cuts them, so that two frames a unit apart never print alike.
pub fn seconds_with(ns: i64, digits: u8) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!(
        "{sign}{}{}",
        a / 1_000_000_000,
        fraction(a % 1_000_000_000, digits)
    )
}

/// `.489688` for 489_688_000 ns with 6 digits; nothing with 0.
fn fraction(sub_ns: u64, digits: u8) -> String {
    let digits = u32::from(digits.min(9));
    if digits == 0 {
        return String::new();
    }
    let v = sub_ns / 10u64.pow(9 - digits);
    format!(".{v:0width$}", width = digits as usize)
}

/// `2002-02-26 00:00:00.489688` in UTC, as capinfos and tshark `-t ud` print it.
pub fn utc_datetime(ts_ns: i64) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(ts_ns)) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S%.6f").to_string(),
        Err(_) => seconds(ts_ns),
    }
}

/// As [`utc_datetime`] with nanoseconds, for `info` (pcapng keeps them).
pub fn utc_datetime_ns(ts_ns: i64) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(ts_ns)) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S%.9f UTC").to_string(),
        Err(_) => seconds(ts_ns),
    }
}

/// The time in `zone` by `pattern`, with `digits` digits of a second cut as
/// [`seconds_with`] cuts them.
fn zoned(ts_ns: i64, zone: &jiff::tz::TimeZone, pattern: &str, digits: u8) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(ts_ns)) {
        Ok(t) => {
            let dt = zone.to_datetime(t);
            let sub = u64::try_from(ts_ns.rem_euclid(1_000_000_000)).unwrap_or(0);
            format!("{}{}", dt.strftime(pattern), fraction(sub, digits))
        }
        Err(_) => seconds_with(ts_ns, digits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        // 2002-02-26 00:00:00.489688 UTC, the first frame of captures/sample.pcapng.
        let t = 1_014_681_600_489_688_000;
        assert_eq!(utc_datetime(t), "2002-02-26 00:00:00.489688");
        assert_eq!(utc_datetime_ns(t + 7), "2002-02-26 00:00:00.489688007 UTC");
        assert_eq!(seconds(-1_500_000), "-0.001500");
        let mut c = Clock::new(TimeFormat::Dd);
        c.frame(t, 6);
        assert_eq!(c.render(t), "0.000000");
        c.frame(t + 1_000_000_000, 6);
        c.frame(t + 3_000_000_000, 6);
        assert_eq!(c.render(t + 3_000_000_000), "3.000000");
        let mut c = Clock::new(TimeFormat::D);
        c.frame(t, 9);
        c.frame(t + 2_007, 9);
        assert_eq!(c.render(t + 2_007), "0.000002007");
        assert_eq!(seconds_with(1_807_937_999, 6), "1.807937");
        assert_eq!(seconds_with(-1_500_000, 9), "-0.001500000");
        assert_eq!(seconds_with(2_500_000_000, 0), "2");
        let mut c = Clock::new(TimeFormat::Udoy);
        c.frame(t + 7, 9);
        assert_eq!(c.render(t + 7), "2002/057 00:00:00.489688007");
        let mut c = Clock::new(TimeFormat::U);
        c.frame(t, 6);
        assert_eq!(c.render(t), "00:00:00.489688");
    }
}
