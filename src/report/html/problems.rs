//! The problems section, after Wireshark's Expert Info: every warning code with its
//! count, kind and first frames, the transport trouble (unacknowledged messages,
//! retransmission bursts, silences) with where it happened, and for each the
//! `bcwire show` command that shows the frame.

use super::collect::CaptureReport;
use super::explosion_places::unplaced_explosions;
use super::svg::esc;
use super::table::{
    client_label, dir_title, player_attr, row, row_with, secs_since, td, thead, tn,
};
use crate::diag::Direction;
use std::fmt::Write as _;

/// Rows of each table, at most.
const MAX_ROWS: usize = 12;
/// A second with at least this many retransmissions, and at least
/// [`BURST_OVER_MEAN`] times the mean of the seconds that had any, is a burst.
const BURST_MIN: u64 = 5;
const BURST_OVER_MEAN: f64 = 3.0;

/// The file name without its folders: pages are shared, local paths are not for them.
pub fn file_name(path: &str) -> &str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

/// The command that shows one frame of this capture.
fn look(c: &CaptureReport, frame: u64) -> String {
    format!(
        "<code class=\"cmd\">bcwire show {} --frame {frame}</code>",
        esc(&shell_word(file_name(&c.name)))
    )
}

/// A file name as one shell word.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|ch| ch.is_ascii_alphanumeric() || "._-+/".contains(ch))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn frames(list: &[u64]) -> String {
    list.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn section(c: &CaptureReport) -> String {
    let mut h = String::new();
    let total: u64 = c.problems.iter().map(|p| p.count).sum();
    let findings = findings(c);
    if c.problems.is_empty() && findings.is_empty() {
        h.push_str(
            "<p class=\"note\">No warnings: every message decoded as stock peers send it.</p>",
        );
    } else if c.problems.is_empty() {
        h.push_str("<p class=\"note\">No warnings in single messages.</p>");
    } else {
        let _ = write!(
            h,
            "<h4>Warnings by code — {total} in {} code{}</h4><div class=\"scroll\"><table class=\"problems\">",
            c.problems.len(),
            if c.problems.len() == 1 { "" } else { "s" }
        );
        h.push_str(&thead(&[
            "kind",
            "code",
            "layer",
            "count",
            "first frames",
            "first",
            "look",
        ]));
        let mut list: Vec<_> = c.problems.iter().collect();
        // Malformed first, then by count: what most needs a look comes first.
        list.sort_by(|a, b| {
            a.code
                .kind()
                .cmp(&b.code.kind())
                .then(b.count.cmp(&a.count))
        });
        for p in list {
            let first = p.frames.first().copied().unwrap_or(0);
            h.push_str(&row(&[
                format!(
                    "<td class=\"kind {}\">{}</td>",
                    p.code.kind().as_str(),
                    p.code.kind().as_str()
                ),
                format!(
                    "<td title=\"{}\"><code>{}</code></td>",
                    esc(p.code.description()),
                    p.code.as_str()
                ),
                td(p.code.layer().as_str()),
                tn(p.count),
                td(&frames(&p.frames)),
                td(&p.example),
                format!("<td>{}</td>", look(c, first)),
            ]));
        }
        h.push_str("</table></div>");
    }
    h.push_str(&findings);
    h.push_str(&unacked(c));
    h.push_str(&bursts(c));
    h.push_str(&silences(c));
    if !c.summary.problems.is_empty() {
        h.push_str("<h4>Capture problems</h4><ul class=\"problems\">");
        for p in c.summary.problems.iter().take(MAX_ROWS) {
            let _ = write!(h, "<li>{}</li>", esc(&p.text));
        }
        if c.summary.problems.len() > MAX_ROWS {
            let _ = write!(
                h,
                "<li>… {} more (bcwire decode's summary lists them all)</li>",
                c.summary.problems.len() - MAX_ROWS
            );
        }
        h.push_str("</ul>");
    }
    h
}

/// Non-stock traits seen only over a whole session, where no single message is wrong.
fn findings(c: &CaptureReport) -> String {
    let unplaced = unplaced_explosions(c);
    if unplaced.is_empty() {
        return String::new();
    }
    let mut h = format!(
        "<h4>Found over whole sessions</h4><table class=\"findings\">{}",
        thead(&["kind", "what", "session", "count", "first frames", "look"])
    );
    for u in &unplaced {
        h.push_str(&row(&[
            "<td class=\"kind non_stock\">non_stock</td>".to_string(),
            td(&format!(
                "explosion (0x29) positions are directions, not places: none is longer \
                 than {:.2} while the session's ships move over {:.0} units; not drawn on \
                 the map",
                u.longest, u.ship_span
            )),
            tn(u.session),
            tn(u.count),
            td(&frames(&u.frames)),
            format!(
                "<td>{}</td>",
                u.frames.first().map(|&f| look(c, f)).unwrap_or_default()
            ),
        ]));
    }
    h + "</table>"
}

/// Reliable messages never acknowledged by the end, per client and direction.
fn unacked(c: &CaptureReport) -> String {
    let mut rows = String::new();
    for sess in &c.summary.sessions {
        for cl in &sess.clients {
            for dir in [Direction::C2S, Direction::S2C] {
                let n = cl.dir(dir).unacked;
                if n > 0 {
                    let who = player_attr(Some(&client_label(cl)));
                    rows.push_str(&row_with(
                        &who,
                        &[
                            tn(sess.index),
                            td(&client_label(cl)),
                            td(dir_title(dir)),
                            tn(n),
                            tn(format!("{:.1}", secs_since(c, cl.last_ts_ns))),
                        ],
                    ));
                }
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h4>Reliable messages never acknowledged</h4><table class=\"unacked\">{}{rows}</table>\
         <p class=\"note\">Each is a reliable message whose sender saw no ACK by the end of \
         the client's flow; <code>-Y \"reliable and client == NAME\"</code> lists the candidates.</p>",
        thead(&["session", "client", "sent", "messages", "flow ends s"])
    )
}

/// Seconds with many more retransmissions than usual: (count, second, direction,
/// first frame), largest first.
pub(super) fn burst_seconds(c: &CaptureReport) -> Vec<(u64, i64, Direction, Option<u64>)> {
    let t = &c.transport;
    let mut found = Vec::new();
    for dir in [Direction::C2S, Direction::S2C] {
        let per = &t.retransmissions[dir.index()];
        if per.is_empty() {
            continue;
        }
        let mean = per.values().sum::<u64>() as f64 / per.len() as f64;
        for (&sec, &n) in per {
            if n >= BURST_MIN && n as f64 >= BURST_OVER_MEAN * mean {
                let frame = t.retransmission_frames[dir.index()].get(&sec).copied();
                found.push((n, sec, dir, frame));
            }
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    found
}

/// Seconds with many more retransmissions than usual.
fn bursts(c: &CaptureReport) -> String {
    let found = burst_seconds(c);
    if found.is_empty() {
        return String::new();
    }
    let mut h = format!(
        "<h4>Retransmission bursts — {} second{} with at least {BURST_MIN} and {BURST_OVER_MEAN}× the usual</h4><table class=\"bursts\">{}",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        thead(&["second", "direction", "retransmissions", "first frame", "look"])
    );
    for (n, sec, dir, frame) in found.into_iter().take(MAX_ROWS) {
        h.push_str(&row_with(
            &format!(" data-born=\"{sec}\" data-end=\"{}\"", sec + 1),
            &[
                tn(sec),
                td(dir_title(dir)),
                tn(n),
                tn(frame.map(|f| f.to_string()).unwrap_or_default()),
                format!("<td>{}</td>", frame.map(|f| look(c, f)).unwrap_or_default()),
            ],
        ));
    }
    h + "</table>"
}

/// The longest silences, with the frame that ended each.
fn silences(c: &CaptureReport) -> String {
    let t = &c.transport;
    if t.gaps.is_empty() {
        return String::new();
    }
    let mut h = format!(
        "<h4>Silences over 1 s — {} in all, longest first</h4><table class=\"silences\">{}",
        t.gap_count,
        thead(&[
            "client",
            "direction",
            "from s",
            "length s",
            "ended by frame",
            "look"
        ])
    );
    for g in t.gaps.iter().take(MAX_ROWS) {
        let name = c
            .summary
            .client(g.session, g.client)
            .map(client_label)
            .unwrap_or_else(|| format!("client {}", g.client));
        // A silence belongs to every window it overlaps, and to its player.
        let attrs = format!(
            " data-born=\"{:.2}\" data-end=\"{:.2}\"{}",
            g.start,
            g.start + g.length,
            player_attr(Some(&name))
        );
        h.push_str(&row_with(
            &attrs,
            &[
                td(&name),
                td(dir_title(g.direction)),
                tn(format!("{:.2}", g.start)),
                tn(format!("{:.2}", g.length)),
                tn(g.frame),
                format!("<td>{}</td>", look(c, g.frame)),
            ],
        ));
    }
    h + "</table>"
}
