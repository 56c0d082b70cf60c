//! `bcwire report`: one self-contained HTML page for a capture, or two side by side.
//!
//! [`Collector`] reduces the records of a run (exact counters plus bounded detail);
//! [`render`] writes the page: inline CSS, inline SVG charts drawn here, one small inline
//! script for hover read-outs and map zoom, and the data it reads as an inline JSON
//! block. Nothing is fetched when the page is opened.
//!
//! Drawing is bounded so that the page of a million-packet capture opens quickly: one
//! SVG element per series (polylines and paths, not one element per point), time series
//! in at most a few hundred columns, tracks and condition series thinned to a shared
//! point budget ([`Budget`]). The page says when it thinned anything; tables always
//! show exact numbers.

mod battle;
mod chart;
mod chat;
mod collapse;
pub mod collect;
mod compare;
mod dirty;
mod drawing;
mod explosion_places;
mod fine;
mod fire_matrix;
mod health;
mod life_axes;
mod map;
mod overview;
pub mod page;
mod pending;
mod players;
pub mod problems;
mod rates;
mod rebin;
pub mod series;
mod sessions;
mod ship_names;
mod ships;
pub mod svg;
mod table;
pub mod tally;
mod timeline;
mod transport_health;

pub use collect::{CaptureReport, Collector};
pub use drawing::Budget;
pub use page::render;

use crate::pipeline::filter::Filter;
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::{self, Config, Control, Pipeline, Sink};
use crate::report::align::Side;
use crate::report::diff::{self, Comparison, DiffResult, FetchSink, Fetcher};
use crate::report::names::Names;
use anyhow::{Context, Result};

/// Field differences named in a two-capture page, at most.
pub const MAX_DIFFERENCES: usize = 20;

struct CollectSink<'a> {
    collector: &'a mut Collector,
    filter: &'a Filter,
    first_ts_ns: Option<i64>,
}

impl Sink for CollectSink<'_> {
    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }

    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        let f = self.filter;
        if !f.keeps_record(p, first, names) {
            return Ok(Control::Continue);
        }
        match &p.body {
            PacketBody::Game(g) if !f.selects_all_messages() && !g.messages.is_empty() => {
                // The page shows the datagram with the messages the filter keeps.
                let mut kept = p.clone();
                if let PacketBody::Game(k) = &mut kept.body {
                    k.messages.retain(|m| f.keep_message(p, m, names));
                }
                self.collector.add(&kept, names);
            }
            _ => self.collector.add(p, names),
        }
        Ok(Control::Continue)
    }

    fn field_trees(&self) -> pipeline::FieldTrees {
        self.filter
            .field_trees()
            .union(self.collector.field_trees())
    }
}

/// Run one capture through the pipeline into a [`CaptureReport`]. `fingerprints` keeps
/// the per-message digest needed to compare it with another capture.
pub fn collect_file(path: &str, config: &Config, fingerprints: bool) -> Result<CaptureReport> {
    collect_file_filtered(path, config, fingerprints, &Filter::default())
}

/// [`collect_file`] with only the datagrams and messages `filter` keeps (`-Y`).
pub fn collect_file_filtered(
    path: &str,
    config: &Config,
    fingerprints: bool,
    filter: &Filter,
) -> Result<CaptureReport> {
    let reader = pipeline::open(path)?;
    let mut c = Collector::new(path, config.ships.clone(), fingerprints);
    let mut sink = CollectSink {
        collector: &mut c,
        filter,
        first_ts_ns: None,
    };
    let summary = Pipeline::new(config.clone())
        .run(reader, &mut sink)
        .with_context(|| format!("reading {path}"))?;
    let mut report = c.finish(summary);
    report.problems.extend(collapse::problem(&report.clients));
    Ok(report)
}

/// Compare two collected captures the way `bcwire diff` does (a second look at both
/// files names the differing fields of the first mismatches).
/// `filters`: the selection each capture was collected under.
pub fn compare_files(
    a: &CaptureReport,
    b: &CaptureReport,
    config: &Config,
    filters: [&Filter; 2],
) -> Result<DiffResult> {
    let cmp = Comparison::standard();
    let mut result = diff::compare(&a.digest, &b.digest, MAX_DIFFERENCES)?;
    if !result.wanted.is_empty() {
        let fetch = |path: &str, side: Side, filter: &Filter| -> Result<Fetcher> {
            let mut f = Fetcher::default();
            let wanted = result.wanted_in(side);
            let reader = pipeline::open(path)?;
            Pipeline::new(config.clone()).run(
                reader,
                &mut FetchSink {
                    fetcher: &mut f,
                    wanted: &wanted,
                    map: None,
                    filter,
                    first_ts_ns: None,
                },
            )?;
            Ok(f)
        };
        let (fa, fb) = (
            fetch(&a.name, Side::A, filters[0])?,
            fetch(&b.name, Side::B, filters[1])?,
        );
        diff::explain(&mut result, &fa, &fb, &cmp, MAX_DIFFERENCES);
    }
    Ok(result)
}
