//! The data the page's zoom re-bins from: each rate and transport chart's series as
//! counts per fine tick (see `fine`), written sparse as pairs of (ticks since the
//! previous entry, count), so an idle stretch costs nothing. The script (`rebin.js`)
//! sums them into bins of the chosen interval over the chosen time window.

use super::collect::CaptureReport;
use super::drawing::Page;
use super::fine::FineAcks;
use super::svg::colour;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// `[gap, count, gap, count, …]`: ticks since the previous entry (since tick 0 for the
/// first) and the count there.
fn sparse(m: &BTreeMap<i64, u32>) -> Vec<i64> {
    let mut out = Vec::with_capacity(m.len() * 2);
    let mut last = 0;
    for (&k, &n) in m {
        if n > 0 {
            out.push(k - last);
            out.push(n as i64);
            last = k;
        }
    }
    out
}

fn tick_s(c: &CaptureReport) -> f64 {
    c.fine.tick_ns as f64 / 1e9
}

fn insert(pg: &mut Page, id: &str, c: &CaptureReport, kind: &str, extra: Json, series: Vec<Json>) {
    let mut v = json!({"k": kind, "tick": tick_s(c), "end": c.duration, "s": series});
    if let (Some(o), Json::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
    pg.data.insert(format!("{id}-fine"), v);
}

/// A stacked rate chart by opcode: the `top` opcodes in the chart's order with their
/// names and colours, and (when `names` has one more) the rest summed as "other".
pub(super) fn stacked(
    pg: &mut Page,
    id: &str,
    c: &CaptureReport,
    dir: usize,
    top: &[u8],
    names: &[String],
    colours: &[&str],
) {
    let per_op = &c.fine.messages[dir];
    let mut series: Vec<Json> = top
        .iter()
        .zip(names)
        .zip(colours)
        .map(|((op, n), col)| {
            let v = per_op.get(op).map(sparse).unwrap_or_default();
            json!({"n": n, "c": col, "v": v})
        })
        .collect();
    if names.len() > top.len() {
        let mut other: BTreeMap<i64, u32> = BTreeMap::new();
        for (op, m) in per_op {
            if !top.contains(op) {
                for (k, n) in m {
                    let e = other.entry(*k).or_default();
                    *e = e.saturating_add(*n);
                }
            }
        }
        series.push(json!({
            "n": names[top.len()],
            "c": colours.get(top.len()).copied().unwrap_or(super::svg::OTHER),
            "v": sparse(&other)
        }));
    }
    insert(
        pg,
        id,
        c,
        "stack",
        json!({"unit": "msg/s", "y": "messages/s"}),
        series,
    );
}

/// Retransmissions per second, one line per direction, named as the chart names them.
pub(super) fn retransmissions(pg: &mut Page, id: &str, c: &CaptureReport, names: &[String]) {
    let series = names
        .iter()
        .enumerate()
        .map(|(d, n)| json!({"n": n, "c": colour(d), "v": sparse(&c.fine.retransmissions[d])}))
        .collect();
    insert(
        pg,
        id,
        c,
        "rate",
        json!({"unit": "/s", "y": "retransmissions/s"}),
        series,
    );
}

/// ACK delays per direction: `[gap, count, sum µs, max µs, …]`, drawn as the mean and
/// the largest delay of each bin (`names`: mean and max of c2s, then of s2c).
pub(super) fn ack_delays(pg: &mut Page, id: &str, c: &CaptureReport, names: &[String]) {
    let quads = |m: &BTreeMap<i64, FineAcks>| {
        let mut out = Vec::with_capacity(m.len() * 4);
        let mut last = 0;
        for (&k, a) in m {
            out.extend([k - last, a.count as i64, a.sum_us, a.max_us]);
            last = k;
        }
        out
    };
    let series = (0..2)
        .map(|d| {
            json!({"n": [names.get(2 * d), names.get(2 * d + 1)],
                   "c": [colour(2 * d), colour(2 * d + 1)], "v": quads(&c.fine.acks[d])})
        })
        .collect();
    insert(pg, id, c, "ack", json!({"unit": "ms", "y": "ms"}), series);
}
