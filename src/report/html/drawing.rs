//! What every section draws into: the capture's drawing budget, the hover data the
//! script reads, the notes of what was thinned, and the y axes both captures of a
//! comparison share.

use serde_json::{Map, Value as Json};

/// Drawing limits for one capture (halved for side-by-side pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Track points on the map.
    pub map_points: usize,
    /// Condition points over all per-ship charts.
    pub health_points: usize,
    /// Time columns of bucketed series.
    pub columns: usize,
    /// Per-ship charts.
    pub ship_charts: usize,
    /// Event marks on the map and the ship time lines.
    pub marks: usize,
    /// Opcodes drawn separately in the rate charts (the rest are "other").
    pub opcodes: usize,
}

impl Budget {
    pub fn for_captures(n: usize) -> Budget {
        let n = n.max(1);
        Budget {
            map_points: 12_000 / n,
            health_points: 6_000 / n,
            columns: 240 / n,
            ship_charts: 16,
            marks: 1_500 / n,
            opcodes: 10,
        }
    }
}

/// Collects the hover data of every chart and whether anything was thinned.
pub(super) struct Page {
    pub(super) data: Map<String, Json>,
    pub(super) thinned: Vec<String>,
    pub(super) budget: Budget,
    pub(super) width: f64,
    /// The longest capture's duration: every time axis of the page spans it, so the
    /// two captures of a comparison line up.
    pub(super) t_max: f64,
    /// Largest value each chart (by its id without the capture prefix) wants on its
    /// y axis, and the ones fixed by a first pass: both captures' charts share them.
    pub(super) y_wanted: std::collections::HashMap<String, f64>,
    pub(super) y_fixed: std::collections::HashMap<String, f64>,
    /// Dirty-flag combinations per direction in the order every capture lists them.
    pub(super) dirty_rows: [Vec<u8>; 2],
}

impl Page {
    /// The y-axis top of chart `id`: the largest over the captures once known.
    pub(super) fn y_top(&mut self, id: &str, local: f64) -> f64 {
        let role = id.split_once('-').map_or(id, |(_, r)| r).to_string();
        let want = self.y_wanted.entry(role.clone()).or_insert(local);
        *want = want.max(local);
        self.y_fixed.get(&role).copied().unwrap_or(local).max(local)
    }
}

pub(super) fn note_thinned(pg: &mut Page, what: String) {
    if !pg.thinned.contains(&what) {
        pg.thinned.push(what);
    }
}
