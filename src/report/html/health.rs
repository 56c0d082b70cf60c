//! Per-player connection health, like Wireshark's Conversations: one sortable row per
//! client with its traffic each way and the figures that say whether it lagged. The
//! worst value of each health column is marked, so the player who suffered stands out.

use super::battle::player_name;
use super::collect::CaptureReport;
use super::svg::esc;
use crate::diag::Direction;
use std::fmt::Write as _;

/// A cell: shown text and the raw value the table sorts by.
struct Cell {
    text: String,
    value: Option<f64>,
}

fn count(v: u64) -> Cell {
    Cell {
        text: v.to_string(),
        value: Some(v as f64),
    }
}

fn measured(v: Option<f64>, digits: usize) -> Cell {
    Cell {
        text: v.map_or("-".into(), |v| format!("{v:.digits$}")),
        value: v,
    }
}

/// Columns: title, and whether a larger value is worse (marked).
const COLUMNS: [(&str, bool); 12] = [
    ("Player", false),
    ("datagrams c→h", false),
    ("datagrams h→c", false),
    ("bytes c→h", false),
    ("bytes h→c", false),
    ("retransmitted %", true),
    ("unacknowledged", true),
    ("ACK delay p50 ms", true),
    ("ACK delay p95 ms", true),
    ("jitter ms", true),
    ("longest silence s", true),
    ("session", false),
];

pub(super) fn section(c: &CaptureReport) -> String {
    let many = c.summary.sessions.len() > 1;
    let mut rows: Vec<(String, Vec<Cell>)> = Vec::new();
    // A port that only asked the server's status (GameSpy) never played: no row.
    let queries: usize = c
        .summary
        .sessions
        .iter()
        .flat_map(|s| &s.clients)
        .filter(|cl| cl.is_query_only())
        .count();
    for s in &c.summary.sessions {
        for cl in s.game_clients() {
            let (up, down) = (cl.dir(Direction::C2S), cl.dir(Direction::S2C));
            let h = c.client_health.get(&(s.index, cl.index));
            let reliable = up.reliable + down.reliable;
            let retx = up.retransmissions + down.retransmissions;
            let ms = |ns: Option<f64>| ns.map(|v| v / 1e6);
            let mut cells = vec![
                count(up.packets),
                count(down.packets),
                count(up.bytes),
                count(down.bytes),
                measured(
                    (reliable > 0).then(|| retx as f64 * 100.0 / reliable as f64),
                    1,
                ),
                count(up.unacked + down.unacked),
                measured(
                    ms(h.and_then(|h| h.delay_quantile_ns(0.5)).map(|v| v as f64)),
                    1,
                ),
                measured(
                    ms(h.and_then(|h| h.delay_quantile_ns(0.95)).map(|v| v as f64)),
                    1,
                ),
                measured(ms(h.and_then(|h| h.jitter_ns())), 1),
                measured(
                    h.filter(|h| h.longest_silence_ns > 0)
                        .map(|h| h.longest_silence_ns as f64 / 1e9),
                    2,
                ),
            ];
            if many {
                cells.push(count(s.index as u64));
            }
            rows.push((player_name(cl), cells));
        }
    }
    let queries_note = match queries {
        0 => String::new(),
        1 => "<p class=\"note\">1 port that only asked the server's status (GameSpy query) \
              is not listed.</p>"
            .into(),
        n => format!(
            "<p class=\"note\">{n} ports that only asked the server's status (GameSpy \
             queries) are not listed.</p>"
        ),
    };
    if rows.is_empty() {
        return format!("<p class=\"note\">No client in this capture.</p>{queries_note}");
    }
    // The worst (largest) value of each health column, if any is above zero.
    let ncols = rows[0].1.len();
    let worst: Vec<Option<f64>> = (0..ncols)
        .map(|i| {
            let bad = COLUMNS[i + 1].1;
            rows.iter()
                .filter_map(|r| r.1[i].value)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
                .filter(|v| bad && *v > 0.0)
        })
        .collect();
    let mut h = String::from(
        "<p class=\"note\">One row per client, both directions of its flow; click a column \
         title to sort. The worst value of each health column is marked ▲. Retransmitted: \
         resent reliable messages of all reliable ones; unacknowledged: reliable messages \
         never acknowledged by the end; ACK delay: nearest-rank percentiles of the measured \
         delays, both directions; jitter: mean change of the gap between two datagrams to \
         the host; longest silence: longest time without a datagram in one direction.</p>\
         <div class=\"scroll wide\"><table class=\"health sortable\"><tr>",
    );
    for (i, (title, _)) in COLUMNS.iter().enumerate().take(ncols + 1) {
        let _ = write!(
            h,
            "<th data-col=\"{i}\" class=\"{}\">{}</th>",
            if i == 0 { "" } else { "n" },
            esc(title)
        );
    }
    h.push_str("</tr>");
    for (name, cells) in &rows {
        let _ = write!(h, "<tr data-player=\"{0}\"><td>{0}</td>", esc(name));
        for (i, cell) in cells.iter().enumerate() {
            let is_worst = worst[i].is_some() && cell.value == worst[i];
            let _ = write!(
                h,
                "<td class=\"n{}\" data-v=\"{}\">{}{}</td>",
                if is_worst { " worst" } else { "" },
                cell.value.map(|v| v.to_string()).unwrap_or_default(),
                esc(&cell.text),
                if is_worst { " ▲" } else { "" }
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</table></div>");
    h.push_str(&queries_note);
    h
}
