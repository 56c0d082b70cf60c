//! Table cells and rows, and the labels tables share (clients, directions, times).

use super::collect::CaptureReport;
use super::svg::esc;
use crate::diag::Direction;
use crate::pipeline::summary::ClientSummary;
use std::fmt::Write as _;

pub(super) fn secs_since(c: &CaptureReport, ts_ns: i64) -> f64 {
    ts_ns.saturating_sub(c.t0_ns) as f64 / 1e9
}

pub(super) fn row(cells: &[String]) -> String {
    row_with("", cells)
}

/// A row whose `<tr>` carries attributes (` data-born="3" data-end="4"`), for the script's filters.
pub(super) fn row_with(attrs: &str, cells: &[String]) -> String {
    format!("<tr{attrs}>{}", self::cells(cells))
}

/// ` data-player="…"` for an element that belongs to a player (the script shows only
/// the chosen player's), or nothing.
pub(super) fn player_attr(player: Option<&str>) -> String {
    player
        .map(|p| format!(" data-player=\"{}\"", esc(p)))
        .unwrap_or_default()
}

/// The cells of a row and its end, after an opening `<tr>` with attributes.
pub(super) fn cells(cells: &[String]) -> String {
    let mut s = String::new();
    for c in cells {
        s.push_str(c);
    }
    s.push_str("</tr>");
    s
}
pub(super) fn td(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}
pub(super) fn tn(v: impl std::fmt::Display) -> String {
    format!("<td class=\"n\">{v}</td>")
}
pub(super) fn thead(cols: &[&str]) -> String {
    let mut s = String::from("<tr>");
    for c in cols {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr>");
    s
}

pub(super) fn client_label(c: &ClientSummary) -> String {
    match (&c.name, c.addr) {
        (Some(n), _) => n.clone(),
        (None, Some(a)) => a.to_string(),
        _ => format!("client {}", c.index),
    }
}

pub(super) fn dir_title(d: Direction) -> &'static str {
    match d {
        Direction::C2S => "client → host",
        Direction::S2C => "host → client",
    }
}
