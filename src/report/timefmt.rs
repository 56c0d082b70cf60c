//! Record times as `-t` asks for them (tshark's formats).

/// How record times are written (tshark's `-t`): `R` relative to the first frame,
/// `Ad`/`Ud` absolute local/UTC date and time, `E` epoch seconds, `D` since the
/// previous record read, `Dd` since the previous record shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    #[default]
    R,
    Ad,
    Ud,
    E,
    D,
    Dd,
}

/// Renders record times, keeping what the relative and delta formats need.
#[derive(Debug, Clone)]
pub struct Clock {
    format: TimeFormat,
    first_ns: Option<i64>,
    /// The previous record read (`d`).
    prev_ns: Option<i64>,
    /// The previous record shown (`dd`).
    prev_shown_ns: Option<i64>,
    /// The local zone, looked up once.
    zone: Option<jiff::tz::TimeZone>,
}

impl Clock {
    pub fn new(format: TimeFormat) -> Clock {
        let zone = (format == TimeFormat::Ad).then(jiff::tz::TimeZone::system);
        Clock {
            format,
            first_ns: None,
            prev_ns: None,
            prev_shown_ns: None,
            zone,
        }
    }

    pub fn format(&self) -> TimeFormat {
        self.format
    }

    /// Note a record read, shown or not (call once per record, in order, before
    /// [`Clock::render`]).
    pub fn saw(&mut self, ts_ns: i64) -> Option<i64> {
        self.first_ns.get_or_insert(ts_ns);
        self.prev_ns.replace(ts_ns)
    }

    /// The time column of a shown record; `prev_read` is what [`Clock::saw`] returned
    /// for it.
    pub fn render(&mut self, ts_ns: i64, prev_read: Option<i64>) -> String {
        let first = self.first_ns.unwrap_or(ts_ns);
        let prev_shown = self.prev_shown_ns.replace(ts_ns);
        match self.format {
            TimeFormat::R => seconds(ts_ns - first),
            TimeFormat::D => seconds(ts_ns - prev_read.unwrap_or(ts_ns)),
            TimeFormat::Dd => seconds(ts_ns - prev_shown.unwrap_or(ts_ns)),
            TimeFormat::E => seconds(ts_ns),
            TimeFormat::Ud => utc_datetime(ts_ns),
            TimeFormat::Ad => match &self.zone {
                Some(z) => local_datetime(ts_ns, z),
                None => utc_datetime(ts_ns),
            },
        }
    }
}

/// Seconds with microseconds, as the tables always printed them.
pub fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!(
        "{sign}{}.{:06}",
        a / 1_000_000_000,
        (a % 1_000_000_000) / 1000
    )
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

fn local_datetime(ts_ns: i64, zone: &jiff::tz::TimeZone) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(ts_ns)) {
        Ok(t) => zone
            .to_datetime(t)
            .strftime("%Y-%m-%d %H:%M:%S%.6f")
            .to_string(),
        Err(_) => seconds(ts_ns),
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
        let p = c.saw(t);
        assert_eq!(c.render(t, p), "0.000000");
        c.saw(t + 1_000_000_000);
        let p = c.saw(t + 3_000_000_000);
        assert_eq!(c.render(t + 3_000_000_000, p), "3.000000");
        let mut c = Clock::new(TimeFormat::D);
        c.saw(t);
        let p = c.saw(t + 2_000);
        assert_eq!(c.render(t + 2_000, p), "0.000002");
    }
}
