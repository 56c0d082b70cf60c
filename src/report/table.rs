//! Terminal tables: the one look every command's tables share, fitted to the width
//! of the terminal or of `COLUMNS`.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};

pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header.iter().map(Cell::new).collect::<Vec<_>>());
    fit_width(&mut t);
    t
}

/// A two-column table without a header, for `key  value` summaries.
pub fn kv_table() -> Table {
    let mut t = Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    fit_width(&mut t);
    t
}

/// Tables wrap their cells to fit the terminal when stdout is one, or the width in
/// `COLUMNS` when that is set (a pipe has no width: there they keep their natural one).
fn fit_width(t: &mut Table) {
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    if let Some(w) = columns() {
        t.set_width(w);
    }
}

/// A table as text, fitting the width it was given (`COLUMNS`, or the terminal's):
/// as a table where its natural width fits (or where there is no width, as in a
/// pipe); else each row as a block of `header  value` lines under the row's first
/// cell, so that no number and no header is split across lines (as a narrow table's
/// wrapped cells would split them).
pub fn fit_or_blocks(t: &Table) -> String {
    let mut natural = t.clone();
    natural.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    let text = natural.trim_fmt();
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let Some(width) = columns().or_else(|| t.width()) else {
        return text;
    };
    if widest <= usize::from(width) {
        return text;
    }
    let headers: Vec<String> = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    let pad = headers
        .iter()
        .skip(1)
        .map(|h| h.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (k, row) in t.row_iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let cells: Vec<String> = row.cell_iter().map(|c| c.content()).collect();
        let first = cells.first().map(String::as_str).unwrap_or("");
        let head = headers.first().map(String::as_str).unwrap_or("");
        out.push_str(&format!("{head} {first}\n"));
        for (h, v) in headers.iter().zip(&cells).skip(1) {
            let mut lines = v.lines();
            let line = lines.next().unwrap_or("");
            out.push_str(&format!("  {h:<pad$}  {line}\n"));
            for more in lines {
                out.push_str(&format!("  {:<pad$}  {more}\n", ""));
            }
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// `COLUMNS`, when it holds a usable width.
fn columns() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|w| *w >= 20)
}

pub fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}
