//! What happened when, marked on the page's time charts: players joining and leaving,
//! kills, chat lines and retransmission bursts. The marks are drawn by the script
//! (`rebin.js`) so that they follow the time window; each says what, when and who.

use super::collect::CaptureReport;
use super::drawing::Page;
use super::problems::burst_seconds;
use super::table::{client_label, dir_title};
use crate::pipeline::summary::SessionSummary;
use serde_json::json;

/// Marks per capture, at most; the legend says how many more there were.
pub const MAX_MARKS: usize = 2000;

/// The kinds of mark, their symbols and colours, as the legend shows them.
pub const KINDS: [(&str, &str, &str); 5] = [
    ("join", "▲", "#2ca02c"),
    ("leave", "▼", "#7f7f7f"),
    ("kill", "✕", "#d62728"),
    ("chat", "●", "#1f77b4"),
    ("burst", "◆", "#ff7f0e"),
];

fn peer_name(s: Option<&SessionSummary>, peer: Option<i32>) -> String {
    let found = s.and_then(|s| {
        s.clients
            .iter()
            .find(|c| peer.is_some() && c.peer_id.map(i32::from) == peer)
    });
    match (found, peer) {
        (Some(c), _) => client_label(c),
        (None, Some(p)) if p > 0 => format!("peer {p}"),
        _ => "the environment".to_string(),
    }
}

/// The capture's marks as page data (`{cid}-events`: `[t, kind, text]` in time order)
/// and the legend that explains them.
pub(super) fn section(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let t_of = |ns: i64| (ns.saturating_sub(c.t0_ns)) as f64 / 1e9;
    let mut marks: Vec<(f64, &str, String)> = Vec::new();
    for s in &c.summary.sessions {
        for cl in &s.clients {
            let who = client_label(cl);
            marks.push((t_of(cl.first_ts_ns), "join", format!("{who} joins")));
            if let Some(how) = &cl.left {
                marks.push((
                    t_of(cl.last_ts_ns),
                    "leave",
                    format!("{who} leaves ({how})"),
                ));
            }
        }
    }
    for k in &c.kills {
        let s = c.summary.sessions.iter().find(|s| s.index == k.session);
        let text = format!(
            "{} killed by {}{}",
            peer_name(s, k.victim_peer),
            peer_name(s, k.killer_peer),
            if k.scored {
                " (ScoreChange)"
            } else {
                " (ship exploding)"
            }
        );
        marks.push((k.t, if k.scored { "kill" } else { "kill-unscored" }, text));
    }
    for l in &c.chat {
        let to = if l.team { " to the team" } else { "" };
        marks.push((l.t, "chat", format!("{}{to}: {}", l.sender, l.text)));
    }
    for (n, sec, dir, _) in burst_seconds(c) {
        marks.push((
            sec as f64,
            "burst",
            format!("{n} retransmissions {} in one second", dir_title(dir)),
        ));
    }
    marks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let more = marks.len().saturating_sub(MAX_MARKS);
    marks.truncate(MAX_MARKS);
    let rows: Vec<_> = marks
        .iter()
        .map(|(t, k, text)| json!([(t * 1000.0).round() / 1000.0, k, text]))
        .collect();
    pg.data.insert(format!("{cid}-events"), json!(rows));
    let mut h = String::from("<div class=\"legend marks-legend\">Marks on the time charts: ");
    for (kind, sym, col) in KINDS {
        let n = marks
            .iter()
            .filter(|m| m.1 == kind || (kind == "kill" && m.1 == "kill-unscored"))
            .count();
        h.push_str(&format!(
            "<span data-mark-kind=\"{kind}\"><b style=\"color:{col}\">{sym}</b> {kind} ({n})</span>"
        ));
    }
    if more > 0 {
        h.push_str(&format!("<span>{more} more not marked</span>"));
    }
    h.push_str("</div>");
    h
}
