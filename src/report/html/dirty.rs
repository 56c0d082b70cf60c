//! StateUpdate dirty flags: the most frequent combinations and each bit, per direction.

use super::chart::bar_chart;
use super::collect::CaptureReport;
use super::drawing::Page;
use super::table::dir_title;
use crate::diag::Direction;
use crate::game::dirty::flag_names;
use std::fmt::Write as _;

/// Dirty-flag combinations to show per direction, most frequent over every capture
/// first: both captures of a comparison list the same rows in the same order.
pub(super) fn dirty_rows(captures: &[CaptureReport]) -> [Vec<u8>; 2] {
    [Direction::C2S, Direction::S2C].map(|dir| {
        let mut sum = [0u64; 256];
        for c in captures {
            for (f, n) in c.stats().dirs[dir.index()].dirty_flags.iter().enumerate() {
                sum[f] += n;
            }
        }
        let mut combos: Vec<u8> = (0..=255u8).filter(|f| sum[*f as usize] > 0).collect();
        combos.sort_by(|a, b| sum[*b as usize].cmp(&sum[*a as usize]).then(a.cmp(b)));
        combos
    })
}

/// Dirty-flag combinations shown as bars; the rest are summed in one row.
const DIRTY_ROWS: usize = 16;

pub(super) fn section(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let mut h = String::new();
    for dir in [Direction::C2S, Direction::S2C] {
        let d = &c.stats().dirs[dir.index()];
        let total: u64 = d.dirty_flags.iter().sum();
        let _ = write!(h, "<h4>{} — {total} StateUpdates</h4>", dir_title(dir));
        if total == 0 {
            h.push_str("<p class=\"note\">No StateUpdates.</p>");
            continue;
        }
        let order = &pg.dirty_rows[dir.index()];
        let shown: Vec<u8> = order.iter().take(DIRTY_ROWS).copied().collect();
        let mut bars: Vec<(String, u64)> = shown
            .iter()
            .map(|f| {
                (
                    format!("0x{f:02X} {}", flag_names(*f)),
                    d.dirty_flags[*f as usize],
                )
            })
            .collect();
        let rest: u64 = order
            .iter()
            .skip(DIRTY_ROWS)
            .map(|f| d.dirty_flags[*f as usize])
            .sum();
        let rest_kinds = order
            .iter()
            .skip(DIRTY_ROWS)
            .filter(|f| d.dirty_flags[**f as usize] > 0)
            .count();
        if order.len() > DIRTY_ROWS {
            bars.push((format!("{rest_kinds} other combinations"), rest));
        }
        h.push_str("<div class=\"pairs\"><div>");
        h.push_str(&bar_chart(
            pg,
            &format!("{cid}-combinations-{}", dir.as_str()),
            &bars,
            total,
        ));
        h.push_str("</div><div>");
        let bits: Vec<(String, u64)> = d
            .dirty_bits()
            .into_iter()
            .enumerate()
            .map(|(b, n)| (format!("0x{:02X} {}", 1u8 << b, flag_names(1 << b)), n))
            .collect();
        h.push_str(&bar_chart(
            pg,
            &format!("{cid}-bits-{}", dir.as_str()),
            &bits,
            total,
        ));
        h.push_str("</div></div>");
    }
    h
}
