//! The rate-collapse Problem against an oracle written here from its rule: one
//! direction of a client's flow below 10 % of its median datagram rate over the
//! previous 30 s, for 10 s or more, while the other direction keeps at least half of
//! its own median. The oracle counts datagrams from `bcwire decode`'s records, not from
//! the report's own tallies.

use crate::common;
use crate::html_browser::{report_page, tmp};
use std::collections::BTreeMap;
use std::path::Path;

fn median(w: &[u64]) -> f64 {
    let mut v = w.to_vec();
    v.sort_unstable();
    (v[v.len() / 2 - 1] + v[v.len() / 2]) as f64 / 2.0
}

/// (client, direction, first second) of every collapse the rule finds in the records.
fn oracle(capture: &Path) -> Vec<(u64, String, i64)> {
    let out = common::bcwire(&["decode", &capture.to_string_lossy(), "--format", "jsonl"]);
    assert!(out.status.success());
    let mut first_ns = None;
    // (session, client) -> second -> [c2s, s2c]
    let mut per: BTreeMap<(u64, u64), BTreeMap<i64, [u64; 2]>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" {
            continue;
        }
        let ns = r["time_ns"].as_i64().unwrap();
        let first = *first_ns.get_or_insert(ns);
        let (Some(session), Some(client)) = (r["session"].as_u64(), r["client"].as_u64()) else {
            continue;
        };
        let d = usize::from(r["direction"] == "s2c");
        per.entry((session, client))
            .or_default()
            .entry((ns - first).div_euclid(1_000_000_000))
            .or_default()[d] += 1;
    }
    let mut found = Vec::new();
    for ((_, client), secs) in &per {
        let (a, b) = (*secs.keys().next().unwrap(), *secs.keys().last().unwrap());
        let rate = |d: usize, s: i64| secs.get(&s).map_or(0, |v| v[d]);
        for d in 0..2 {
            let hist = |d: usize, s: i64| -> f64 {
                median(&(s - 30..s).map(|x| rate(d, x)).collect::<Vec<_>>())
            };
            let low = |s: i64| {
                let (m, o) = (hist(d, s), hist(1 - d, s));
                m > 0.0
                    && o > 0.0
                    && (rate(d, s) as f64) < 0.1 * m
                    && rate(1 - d, s) as f64 >= 0.5 * o
            };
            let mut s = a + 30;
            while s <= b {
                if low(s) && (s..s + 10).all(|x| x <= b && low(x)) {
                    found.push((*client, ["c2s", "s2c"][d].to_string(), s));
                    // The rest of this collapse: until the rate is back.
                    let m = hist(d, s);
                    while s <= b && (rate(d, s) as f64) < 0.1 * m {
                        s += 1;
                    }
                } else {
                    s += 1;
                }
            }
        }
    }
    found
}

/// The rate_collapse row of a report page: (count, example text).
fn listed(page: &str) -> Option<(u64, String)> {
    let at = page.find("<code>rate_collapse</code>")?;
    let cells: Vec<String> = page[at..]
        .split("<td")
        .skip(1)
        .take(4)
        .map(|c| {
            let inner = c.split_once('>').map_or("", |x| x.1);
            inner.split("</td>").next().unwrap_or("").to_string()
        })
        .collect();
    Some((cells[1].parse().ok()?, cells[3].clone()))
}

#[test]
fn a_one_way_stop_is_listed_as_a_rate_collapse() {
    // A two-minute session whose host→client traffic stops at 70 s while the client
    // keeps sending.
    let full = tmp("collapse_full.pcapng");
    let cut = tmp("collapse_cut.pcap");
    let ok = |args: &[&str]| {
        let o = common::bcwire(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    ok(&[
        "-q",
        "synth",
        "--players",
        "2",
        "--minutes",
        "2",
        "--seed",
        "7",
        "-o",
        &full.to_string_lossy(),
    ]);
    ok(&[
        "-q",
        "decode",
        &full.to_string_lossy(),
        "-Y",
        "not (direction == \"s2c\" and client == 0 and time_relative >= 70)",
        "-w",
        &cut.to_string_lossy(),
        "--format",
        "jsonl",
    ]);
    let want = oracle(&cut);
    assert!(!want.is_empty(), "the capture was built to hold a collapse");
    assert!(
        want.iter()
            .all(|w| w.1 == "s2c" && (70..=71).contains(&w.2)),
        "{want:?}"
    );
    let (count, example) =
        listed(&report_page(&cut, "collapse_cut.html")).expect("rate_collapse listed");
    assert_eq!(count, want.len() as u64, "{example}");
    assert!(
        example.contains("s2c: ") && example.contains(&format!("from {} s", want[0].2)),
        "{example}"
    );
    // The uncut session has none, by the oracle and on the page.
    assert_eq!(oracle(&full), vec![]);
    assert_eq!(listed(&report_page(&full, "collapse_full.html")), None);
}

#[test]
fn the_shipped_sample_lists_no_rate_collapse() {
    let sample = common::shipped_capture("sample.pcapng");
    assert_eq!(oracle(&sample), vec![]);
    let page = report_page(&sample, "collapse_sample.html");
    assert!(page.contains("id=\"problems\""));
    assert_eq!(listed(&page), None);
}
