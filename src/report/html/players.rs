//! Per-player traffic: messages, bytes, retransmissions and ACK delay of each client
//! over time. Lag is a question about one player; sums over all clients hide the one
//! whose connection suffers. Every series carries its player, so choosing a player at
//! the top of the page leaves only theirs.

use super::chart::line_chart_styled;
use super::collect::{CaptureReport, ClientSecond, ClientTraffic, MAX_CLIENT_SERIES};
use super::drawing::Page;
use super::series::{blank_after, column_layout, column_of};
use super::ship_names::slot_colour;
use std::fmt::Write as _;

/// A client's colour: its player slot's, as on the map and the ship charts.
fn client_colour(c: &CaptureReport, t: &ClientTraffic, i: usize) -> &'static str {
    let slot_of = |t: &ClientTraffic| c.summary.client(t.session, t.client).and_then(|k| k.slot);
    // Clients without a slot take colours after the slots', in their order.
    let unslotted = c.clients[..i]
        .iter()
        .filter(|t| slot_of(t).is_none())
        .count();
    slot_colour(c, t.session, slot_of(t), unslotted)
}

/// One value per column for each client, from `value` of each of its seconds, summed
/// over the seconds of a column.
fn per_column(
    c: &CaptureReport,
    width: f64,
    n: usize,
    value: impl Fn(&ClientSecond) -> f64,
) -> Vec<Vec<f64>> {
    c.clients
        .iter()
        .map(|t| {
            let mut cols = vec![0.0; n];
            for (sec, s) in &t.seconds {
                cols[column_of(*sec as f64, width, n)] += value(s);
            }
            blank_after(&mut cols, width, c.duration);
            cols
        })
        .collect()
}

pub(super) fn section(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    if c.clients.is_empty() {
        return "<p class=\"note\">No client traffic in this capture.</p>".to_string();
    }
    let (width, n) = column_layout(pg.t_max, pg.budget.columns);
    let names: Vec<String> = c.clients.iter().map(|t| t.name.clone()).collect();
    let style = |k: usize| {
        let t = &c.clients[k];
        (client_colour(c, t, k), Some(t.name.clone()))
    };
    let series = |cols: Vec<Vec<f64>>| -> Vec<(String, Vec<f64>)> {
        names.iter().cloned().zip(cols).collect()
    };
    let mut h = String::from(
        "<p class=\"note\">One line per client, both directions together. Choose a player \
         at the top of the page to see only theirs.</p>",
    );
    if c.clients_dropped > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">Only the first {MAX_CLIENT_SERIES} clients are followed here; \
             {} datagrams of later clients are counted in the totals only.</p>",
            c.clients_dropped
        );
    }
    let both = |v: [u32; 2]| (v[0] + v[1]) as f64;
    // Key, title, columns, axis title, read-out unit.
    type Chart<'a> = (&'a str, &'a str, Vec<Vec<f64>>, &'a str, &'a str);
    let charts: [Chart; 3] = [
        (
            "messages",
            "Messages per second",
            per_column(c, width, n, |s| both(s.messages) / width),
            "messages/s",
            "/s",
        ),
        (
            "bytes",
            "Bytes per second (UDP payload)",
            per_column(c, width, n, |s| (s.bytes[0] + s.bytes[1]) as f64 / width),
            "bytes/s",
            "B/s",
        ),
        (
            "retx",
            "Retransmissions per second",
            per_column(c, width, n, |s| both(s.retransmissions) / width),
            "retransmissions/s",
            "/s",
        ),
    ];
    for (key, title, cols, y, unit) in charts {
        let _ = write!(h, "<h4>{title}</h4>");
        h.push_str(&line_chart_styled(
            pg,
            &format!("{cid}-player-{key}"),
            &series(cols),
            (width, c.duration),
            (y, unit, true),
            &style,
        ));
    }
    // Mean ACK delay per column; NaN (a gap in the line) where the client's flow had no
    // matched ACK.
    let sums = per_column(c, width, n, |s| (s.ack_sum_ns[0] + s.ack_sum_ns[1]) as f64);
    let counts = per_column(c, width, n, |s| both(s.acks));
    let delay: Vec<Vec<f64>> = sums
        .iter()
        .zip(&counts)
        .map(|(s, k)| {
            s.iter()
                .zip(k)
                .map(|(s, k)| if *k > 0.0 { s / k / 1e6 } else { f64::NAN })
                .collect()
        })
        .collect();
    if counts.iter().flatten().any(|k| *k > 0.0) {
        h.push_str("<h4>Mean ACK delay (ms), both directions</h4>");
        h.push_str(&line_chart_styled(
            pg,
            &format!("{cid}-player-ackdelay"),
            &series(delay),
            (width, c.duration),
            ("ms", "ms", false),
            &style,
        ));
    }
    h
}
