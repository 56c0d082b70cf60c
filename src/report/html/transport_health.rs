//! Transport health: retransmissions, ACKs and their delays, unfinished fragment sets
//! and the longest silences.

use super::chart::line_chart;
use super::collect::CaptureReport;
use super::drawing::Page;
use super::series::{blank_after, column_layout, rebucket};
use super::svg::esc;
use super::table::{client_label, dir_title, row, td, thead, tn};
use crate::diag::Direction;
use std::fmt::Write as _;

fn ms(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

pub(super) fn section(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let t = &c.transport;
    let st = c.stats();
    let (width, n) = column_layout(pg.t_max, pg.budget.columns);
    let mut h = String::from("<table class=\"transport\">");
    h.push_str(&thead(&["", "client → host", "host → client"]));
    let both =
        |f: &dyn Fn(Direction) -> String| -> [String; 2] { [f(Direction::C2S), f(Direction::S2C)] };
    let incomplete = |d: Direction| -> u64 {
        c.summary
            .sessions
            .iter()
            .flat_map(|s| &s.clients)
            .map(|cl| cl.dir(d).fragment_sets_incomplete)
            .sum()
    };
    let rows: Vec<(&str, [String; 2])> = vec![
        (
            "reliable retransmissions",
            both(&|d| st.dirs[d.index()].counts.retransmissions.to_string()),
        ),
        (
            "ACKs (duplicate)",
            both(&|d| {
                format!(
                    "{} ({})",
                    st.dirs[d.index()].counts.acks,
                    st.dirs[d.index()].duplicate_acks
                )
            }),
        ),
        (
            "ACKs matched to a message",
            both(&|d| t.ack_delays[d.index()].to_string()),
        ),
        (
            "ACK delay mean ms",
            both(&|d| {
                let i = d.index();
                if t.ack_delays[i] == 0 {
                    "-".into()
                } else {
                    ms((t.ack_delay_sum_ns[i] / t.ack_delays[i] as i128) as i64)
                }
            }),
        ),
        (
            "ACK delay p50 / p95 ms (≤)",
            both(&|d| match (
                t.ack_delay_quantile_ns(d, 0.5),
                t.ack_delay_quantile_ns(d, 0.95),
            ) {
                (Some(a), Some(b)) => format!("{} / {}", ms(a), ms(b)),
                _ => "-".into(),
            }),
        ),
        (
            "ACK delay max ms",
            both(&|d| {
                if t.ack_delays[d.index()] == 0 {
                    "-".into()
                } else {
                    ms(t.ack_delay_max_ns[d.index()])
                }
            }),
        ),
        (
            "unacknowledged at end",
            both(&|d| st.dirs[d.index()].counts.unacked.to_string()),
        ),
        (
            "fragment sets never completed",
            both(&|d| incomplete(d).to_string()),
        ),
        (
            "gaps > 1 s",
            both(&|d| {
                t.gaps
                    .iter()
                    .filter(|g| g.direction == d)
                    .count()
                    .to_string()
            }),
        ),
    ];
    for (k, [a, b]) in rows {
        h.push_str(&row(&[
            td(k),
            format!("<td class=\"n\">{}</td>", esc(&a)),
            format!("<td class=\"n\">{}</td>", esc(&b)),
        ]));
    }
    h.push_str("</table>");
    // Direction of an ACK is the direction it travels; its delay belongs to the other
    // direction's messages. Labels say which.
    let retx: Vec<(String, Vec<f64>)> = [Direction::C2S, Direction::S2C]
        .into_iter()
        .map(|d| {
            let cols = rebucket(&t.retransmissions[d.index()], pg.t_max, pg.budget.columns).1;
            let mut rate: Vec<f64> = cols.iter().map(|v| *v as f64 / width).collect();
            blank_after(&mut rate, width, c.duration);
            (format!("retransmissions {}", dir_title(d)), rate)
        })
        .collect();
    h.push_str("<h4>Retransmissions per second</h4>");
    h.push_str(&line_chart(
        pg,
        &format!("{cid}-retx"),
        &retx,
        (width, c.duration),
        "retransmissions/s",
        "/s",
        true,
    ));
    let names: Vec<String> = retx.iter().map(|s| s.0.clone()).collect();
    super::rebin::retransmissions(pg, &format!("{cid}-retx"), c, &names);
    let mut delay: Vec<(String, Vec<f64>)> = Vec::new();
    for d in [Direction::C2S, Direction::S2C] {
        // NaN where no ACK was matched: the chart draws a gap, not a delay of 0 ms.
        let mut mean = vec![f64::NAN; n];
        let mut max = vec![f64::NAN; n];
        let mut cnt = vec![0u64; n];
        let mut sum = vec![0i128; n];
        for (sec, a) in &t.acks[d.index()] {
            let i = super::series::column_of(*sec as f64, width, n);
            cnt[i] += a.count;
            sum[i] += a.sum_ns;
            max[i] = f64::max(max[i], a.max_ns as f64 / 1e6); // NaN.max(x) is x
        }
        for i in 0..n {
            if cnt[i] > 0 {
                mean[i] = (sum[i] / cnt[i] as i128) as f64 / 1e6;
            }
        }
        delay.push((format!("mean ACK delay, ACKs {}", dir_title(d)), mean));
        delay.push((format!("max ACK delay, ACKs {}", dir_title(d)), max));
    }
    if t.ack_delays.iter().sum::<u64>() > 0 {
        h.push_str("<h4>ACK delay (ms)</h4>");
        h.push_str(&line_chart(
            pg,
            &format!("{cid}-ackdelay"),
            &delay,
            (width, c.duration),
            "ms",
            "ms",
            false,
        ));
        let names: Vec<String> = delay.iter().map(|s| s.0.clone()).collect();
        super::rebin::ack_delays(pg, &format!("{cid}-ackdelay"), c, &names);
    }
    if !t.gaps.is_empty() {
        let _ = write!(
            h,
            "<h4>Longest silences ({} gaps over 1 s in all)</h4>",
            t.gap_count
        );
        h.push_str("<table class=\"gaps\">");
        h.push_str(&thead(&[
            "session",
            "client",
            "direction",
            "from s",
            "length s",
        ]));
        for g in t.gaps.iter().take(10) {
            let name = c
                .summary
                .client(g.session, g.client)
                .map(client_label)
                .unwrap_or_else(|| format!("client {}", g.client));
            h.push_str(&row(&[
                tn(g.session),
                td(&name),
                td(dir_title(g.direction)),
                tn(format!("{:.2}", g.start)),
                tn(format!("{:.2}", g.length)),
            ]));
        }
        h.push_str("</table>");
    }
    h
}
