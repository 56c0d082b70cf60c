//! The command line's values as the layers below take them: filters, time formats,
//! colour choice, statistics grouping.

use crate::report::term;

/// The command line's `--color` as the printers take it.
pub(super) fn color_choice(c: crate::cli::ColorChoice) -> term::ColorChoice {
    match c {
        crate::cli::ColorChoice::Auto => term::ColorChoice::Auto,
        crate::cli::ColorChoice::Always => term::ColorChoice::Always,
        crate::cli::ColorChoice::Never => term::ColorChoice::Never,
    }
}

/// The command line's `stats --by` as the statistics take it.
pub(super) fn stats_by(by: crate::cli::StatsBy) -> crate::report::stats::StatsBy {
    use crate::report::stats::StatsBy as By;
    match by {
        crate::cli::StatsBy::Object => By::Object,
        crate::cli::StatsBy::Class => By::Class,
        crate::cli::StatsBy::Client => By::Client,
    }
}

/// The command line's filter flags as the pipeline's filter takes them.
pub(super) fn filter_spec(a: &crate::cli::FilterArgs) -> crate::pipeline::filter::FilterSpec {
    crate::pipeline::filter::FilterSpec {
        opcode: a.opcode.clone(),
        exclude: a.exclude.clone(),
        direction: a.direction.clone(),
        client: a.client.clone(),
        object: a.object.clone(),
        ship: a.ship.clone(),
        frames: a.frames.clone(),
        time: a.time.clone(),
        display: a.display_filter.clone(),
    }
}

/// The command line's `-t` as the printers take it.
pub(super) fn time_format(t: crate::cli::TimeFormat) -> crate::report::timefmt::TimeFormat {
    use crate::cli::TimeFormat as T;
    use crate::report::timefmt::TimeFormat as F;
    match t {
        T::R => F::R,
        T::A => F::A,
        T::Ad => F::Ad,
        T::Adoy => F::Adoy,
        T::U => F::U,
        T::Ud => F::Ud,
        T::Udoy => F::Udoy,
        T::E => F::E,
        T::D => F::D,
        T::Dd => F::Dd,
    }
}
