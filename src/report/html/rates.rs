//! Game messages per second by opcode, one stacked chart per direction.

use super::chart::stacked_chart;
use super::collect::CaptureReport;
use super::drawing::{note_thinned, Page};
use super::series::{column_layout, rebucket};
use super::svg::{opcode_colour, OTHER};
use super::table::dir_title;
use crate::diag::Direction;
use crate::game::opcodes::opcode_name;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub(super) fn section(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let mut h = super::timeline::section(pg, c, cid);
    for dir in [Direction::C2S, Direction::S2C] {
        let per_op = &c.rates[dir.index()];
        let _ = write!(h, "<h4>{}</h4>", dir_title(dir));
        if per_op.is_empty() {
            h.push_str("<p class=\"note\">No game messages.</p>");
            continue;
        }
        let mut totals: Vec<(u8, u64)> = per_op
            .iter()
            .map(|(op, m)| (*op, m.values().sum()))
            .collect();
        totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        // Only opcodes with a colour of their own are drawn apart; the rest are "other".
        let top: Vec<u8> = totals
            .iter()
            .filter(|t| opcode_colour(t.0).is_some())
            .take(pg.budget.opcodes)
            .map(|t| t.0)
            .collect();
        let mut series: Vec<(String, BTreeMap<i64, u64>)> = top
            .iter()
            .map(|op| {
                (
                    format!("0x{op:02X} {}", opcode_name(*op)),
                    per_op[op].clone(),
                )
            })
            .collect();
        let mut colours: Vec<&'static str> = top
            .iter()
            .map(|op| opcode_colour(*op).unwrap_or(OTHER))
            .collect();
        if totals.len() > top.len() {
            let mut other: BTreeMap<i64, u64> = BTreeMap::new();
            for (op, m) in per_op {
                if !top.contains(op) {
                    for (s, n) in m {
                        *other.entry(*s).or_default() += n;
                    }
                }
            }
            series.push((
                format!("other ({} opcodes)", totals.len() - top.len()),
                other,
            ));
            colours.push(OTHER);
        }
        let (width, n) = column_layout(pg.t_max, pg.budget.columns);
        if (c.duration / width).ceil() as usize > n || width > 1.0 {
            note_thinned(pg, format!("message rates in {width:.0}-second columns"));
        }
        let cols: Vec<Vec<u64>> = series
            .iter()
            .map(|(_, m)| rebucket(m, pg.t_max, pg.budget.columns).1)
            .collect();
        let id = format!("{cid}-rates-{}", dir.as_str());
        h.push_str(&stacked_chart(
            pg,
            &id,
            &series,
            &colours,
            &cols,
            (width, n, c.duration),
        ));
        let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
        super::rebin::stacked(pg, &id, c, dir.index(), &top, &names, &colours);
    }
    h
}
