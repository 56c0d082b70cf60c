//! The session overview: file facts, traffic per direction and each session's clients.

use super::collect::CaptureReport;
use super::problems::file_name;
use super::svg::esc;
use super::table::{client_label, row, secs_since, td, thead, tn};
use crate::diag::Direction;
use std::fmt::Write as _;

pub(super) fn section(c: &CaptureReport) -> String {
    let s = &c.summary;
    let st = c.stats();
    let mut h = String::from("<table class=\"facts\">");
    let facts: [(&str, String); 7] = [
        ("file", file_name(&c.name).to_string()),
        ("format", s.format.clone()),
        ("frames", format!("{} ({} bytes)", s.frames, s.bytes)),
        ("duration", format!("{:.3} s", c.duration)),
        (
            "datagrams",
            format!("{} game, {} GameSpy", s.game_frames, s.gamespy_frames),
        ),
        ("sessions", s.sessions.len().to_string()),
        // The capture's own problems (reading, limits, conflicts), not the records'
        // warnings, which the Problems section counts by code.
        ("capture problems", s.problems.len().to_string()),
    ];
    for (k, v) in facts {
        h.push_str(&row(&[format!("<th>{}</th>", esc(k)), td(&v)]));
    }
    h.push_str("</table>");
    for p in s.problems.iter().take(20) {
        let _ = write!(h, "<p class=\"note warn\">{}</p>", esc(&p.text));
    }
    h.push_str("<h4>Traffic per direction</h4><table class=\"traffic\">");
    h.push_str(&thead(&["", "client → host", "host → client"]));
    let [a, b] = &st.dirs;
    let rows: [(&str, u64, u64); 8] = [
        ("datagrams", a.counts.packets, b.counts.packets),
        ("UDP payload bytes", a.counts.bytes, b.counts.bytes),
        ("transport messages", a.counts.messages, b.counts.messages),
        (
            "game messages delivered",
            a.opcodes.values().sum(),
            b.opcodes.values().sum(),
        ),
        (
            "StateUpdates",
            a.dirty_flags.iter().sum(),
            b.dirty_flags.iter().sum(),
        ),
        (
            "retransmissions",
            a.counts.retransmissions,
            b.counts.retransmissions,
        ),
        ("unacknowledged at end", a.counts.unacked, b.counts.unacked),
        ("warnings", a.counts.warnings, b.counts.warnings),
    ];
    for (k, x, y) in rows {
        h.push_str(&row(&[td(k), tn(x), tn(y)]));
    }
    h.push_str("</table>");
    for sess in &s.sessions {
        let server = sess.server.map(|a| a.to_string()).unwrap_or_default();
        let _ = write!(
            h,
            "<h4>Session {} — server {}, {:.1}–{:.1} s</h4>",
            sess.index,
            esc(&server),
            secs_since(c, sess.first_ts_ns),
            secs_since(c, sess.last_ts_ns)
        );
        h.push_str("<table class=\"clients\">");
        h.push_str(&thead(&[
            "player",
            "peer",
            "slot",
            "ships (team)",
            "joined s",
            "left",
            "c2s pkts",
            "c2s bytes",
            "s2c pkts",
            "s2c bytes",
        ]));
        for cl in &sess.clients {
            let left = match cl.departure() {
                Some(how) => format!("{:.1} s ({how})", secs_since(c, cl.last_ts_ns)),
                // A port that only asked the server's status never joined.
                None if cl.is_query_only() => "GameSpy query only".into(),
                None => "still there".into(),
            };
            let (up, down) = (cl.dir(Direction::C2S), cl.dir(Direction::S2C));
            h.push_str(&row(&[
                td(&client_label(cl)),
                td(&cl.peer_id.map(|p| format!("0x{p:02X}")).unwrap_or_default()),
                td(&cl.slot.map(|p| p.to_string()).unwrap_or_default()),
                td(&cl.ships.join("; ")),
                tn(format!("{:.1}", secs_since(c, cl.first_ts_ns))),
                td(&left),
                tn(up.packets),
                tn(up.bytes),
                tn(down.packets),
                tn(down.bytes),
            ]));
        }
        h.push_str("</table>");
    }
    h
}
