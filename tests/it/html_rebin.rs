//! The report's zoom in a real browser: a brushed window and a chosen interval draw
//! the rate and transport charts again in bins of that interval over that window, and
//! the counts drawn there are the counts `bcwire stats` gives for the same selection
//! (`-Y 'time_relative >= a and time_relative < b'`). Event marks: one per kill the
//! host announced (ScoreChange) and per chat line a player sent, counted from
//! `bcwire decode`'s records.

use crate::common;
use crate::html_browser::{capture, chromium, report_page, run_chromium_at, tmp};
use serde_json::Value;
use std::path::Path;

/// Report `cap` through the binary, run the zoom probe in Chromium, return its findings.
fn probe(bin: &Path, cap: &Path, name: &str) -> Value {
    let html = report_page(cap, &format!("{name}.html"));
    let probed = tmp(&format!("{name}_rebin.html"));
    let script = include_str!("browser/rebin_probe.js");
    std::fs::write(
        &probed,
        html.replace("</body>", &format!("<script>{script}</script></body>")),
    )
    .unwrap();
    let dom = run_chromium_at(bin, &probed, "--dump-dom", 1400);
    let text = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("no probe output"));
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Game messages delivered each way, and retransmissions, in [a, b) by `bcwire stats`.
fn stats_in(cap: &Path, a: f64, b: f64) -> ([u64; 2], [u64; 2]) {
    let sel = format!("time_relative >= {a} and time_relative < {b}");
    let j = common::bcwire_json(&[
        "stats",
        &cap.to_string_lossy(),
        "--format",
        "json",
        "-Y",
        &sel,
    ]);
    let dir = |d: &str, k: &str| j["directions"][d][k].as_u64().unwrap();
    let opcodes = |d: &str| {
        j["directions"][d]["opcodes"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>()
    };
    (
        [opcodes("c2s"), opcodes("s2c")],
        [dir("c2s", "retransmissions"), dir("s2c", "retransmissions")],
    )
}

/// Kill announcements and chat lines by the records: ScoreChange copies the host sends
/// to each client within a second with the same fields are one announcement; chat
/// lines are the messages a client sent (the host's copies name theirs in `relay_of`).
fn announced(cap: &Path) -> (usize, usize) {
    let out = common::bcwire(&["decode", &cap.to_string_lossy(), "--format", "jsonl"]);
    assert!(out.status.success());
    let (mut kills, mut chat) = (Vec::<(f64, String)>::new(), 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        for m in r["messages"].as_array().into_iter().flatten() {
            if m["retransmission"] == true {
                continue;
            }
            let t = r["time"].as_f64().unwrap();
            match m["name"].as_str() {
                Some("ScoreChange") => {
                    let f = m["fields"].to_string();
                    if !kills.iter().any(|(t0, f0)| *f0 == f && t - t0 < 1.0) {
                        kills.push((t, f));
                    }
                }
                Some("ChatMessage" | "TeamChatMessage")
                    if m.get("relay_of").is_none() && r["direction"] == "c2s" =>
                {
                    chat += 1
                }
                _ => {}
            }
        }
    }
    (kills.len(), chat)
}

fn check(cap: &Path, name: &str) {
    let Some(bin) = chromium() else { return };
    let p = probe(&bin, cap, name);
    assert_eq!(p["errors"], 0, "script errors: {}", p["errorText"]);
    assert_eq!(p["resources"], serde_json::json!([]), "network requests");
    let step = |n: &str| {
        p["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    let (whole, w1, w10) = (step("whole"), step("whole 1 s"), step("whole 10 s"));
    let duration = {
        let j = common::bcwire_json(&["info", &cap.to_string_lossy(), "--format", "json"]);
        j["files"][0]["duration"].as_f64()
    };
    // The page's own drawing first; each interval then draws its own number of bins.
    let c = |s: &Value, id: &str, k: &str| s["charts"][id][k].clone();
    assert_eq!(c(&whole, "a-rates-s2c", "rebinShown"), false);
    for id in ["a-rates-c2s", "a-rates-s2c"] {
        let (b1, b10) = (
            c(&w1, id, "bins").as_u64().unwrap(),
            c(&w10, id, "bins").as_u64().unwrap(),
        );
        assert_eq!(c(&w1, id, "bars").as_u64(), Some(b1), "{id}: drawn bars");
        assert_eq!(b10, b1.div_ceil(10), "{id}");
        assert!(
            b1 > 5 * b10 && b10 >= 1,
            "{id}: {b1} one-second bins, {b10} ten-second bins"
        );
        if let Some(d) = duration {
            assert!((b1 as f64 - d).abs() <= 1.5, "{id}: {b1} bins over {d} s");
        }
    }
    // The brushed window: fewer bins than the whole capture at the same interval, more
    // at a finer one, the same count at every interval, and that count is stats'.
    let brushed: Vec<Value> = [
        "brushed 10 s",
        "brushed 1 s",
        "brushed 0.1 s",
        "brushed auto",
    ]
    .iter()
    .map(|n| step(n))
    .collect();
    let win: Vec<f64> = brushed[0]["window"]
        .as_str()
        .unwrap()
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(win[1] > win[0], "no window: {p}");
    // Ticks of 100 ms whose start lies in the window are drawn: the datagrams from the
    // first tenth of a second at or after its start to the one after its end.
    let tenth = |t: f64| (t * 10.0 - 1e-9).ceil() / 10.0;
    let (a, b) = (tenth(win[0]), tenth(win[1]));
    let (msgs, retx) = stats_in(cap, a, b);
    for (d, id) in ["a-rates-c2s", "a-rates-s2c"].iter().enumerate() {
        let b1 = c(&brushed[1], id, "bins").as_u64().unwrap();
        assert!(
            b1 < c(&w1, id, "bins").as_u64().unwrap(),
            "{id}: window not re-binned"
        );
        // Each interval cuts the window into its own number of bins: a tenth of a
        // second, unless that would be more than 4,000 bins (the page then takes the
        // next interval that fits).
        let span = win[1] - win[0];
        for (s, want) in brushed.iter().zip([10.0, 1.0, 0.1]) {
            let width = c(s, id, "width").as_f64().unwrap();
            assert!(
                width == want || (span / want > 4000.0 && width > want),
                "{id}: {width} s"
            );
            let bins = c(s, id, "bins").as_u64().unwrap();
            assert_eq!(
                bins,
                ((span / width) - 1e-9).ceil().max(1.0) as u64,
                "{id} {}",
                s["name"]
            );
        }
        assert!(c(&brushed[2], id, "bins").as_u64().unwrap() > b1, "{id}");
        for s in &brushed {
            assert_eq!(c(s, id, "rebinShown"), true, "{id} {}", s["name"]);
            assert_eq!(
                c(s, id, "count").as_u64(),
                Some(msgs[d]),
                "{id} {}: window {a}–{b}",
                s["name"]
            );
            assert_eq!(
                c(s, id, "legend").as_u64(),
                Some(msgs[d]),
                "{id} {}: legend",
                s["name"]
            );
            assert_eq!(c(s, id, "bars"), c(s, id, "bins"), "{id} {}", s["name"]);
        }
    }
    if p["steps"][0]["charts"]["a-retx"].is_object() {
        for s in &brushed {
            assert_eq!(
                c(s, "a-retx", "count").as_u64(),
                Some(retx[0] + retx[1]),
                "retransmissions {}",
                s["name"]
            );
        }
    }
    let tip = p["tip"].as_str().unwrap();
    let t: f64 = tip
        .trim_start_matches("t ")
        .split('–')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        t >= win[0] - 0.2 && t <= win[1],
        "read-out {tip} outside {win:?}"
    );
    // A double-click gives the whole capture back, as the page drew it.
    let reset = step("reset");
    assert_eq!(reset["window"], "");
    // The map legend counts the points of each life inside the window, and all again
    // after the reset.
    let legend = |s: &Value| s["legendPoints"].as_u64().unwrap();
    assert!(
        legend(&whole) > 0 && whole["legendInWindow"] == 0,
        "{whole}"
    );
    assert!(
        legend(&brushed[0]) < legend(&whole),
        "legend counts did not follow the window"
    );
    assert!(brushed[0]["legendInWindow"].as_u64().unwrap() > 0);
    assert_eq!(legend(&reset), legend(&whole));
    assert_eq!(reset["legendInWindow"], 0);
    assert_eq!(c(&reset, "a-rates-s2c", "rebinShown"), false);
    // Marks: every announced kill and every chat line, on every time chart.
    let (kills, chat) = announced(cap);
    for id in ["a-rates-c2s", "a-rates-s2c"] {
        let marks = c(&whole, id, "marks");
        let count = |kind: &str, scored: Option<&str>| {
            marks
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m[0] == kind && scored.is_none_or(|s| m[1] == s))
                .map(|m| m[3].as_u64().unwrap() as usize)
                .sum::<usize>()
        };
        assert_eq!(count("kill", Some("1")), kills, "{id}: kill marks");
        assert_eq!(count("chat", None), chat, "{id}: chat marks");
        assert!(count("join", None) > 0, "{id}: no join mark");
        assert!(
            marks
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m[2].as_str().unwrap().contains(" at ")),
            "{marks}"
        );
    }
}

#[test]
fn the_sample_re_bins_a_brushed_window_and_marks_its_events() {
    check(&common::shipped_capture("sample.pcapng"), "rebin_sample");
}

#[test]
fn b2_re_bins_a_brushed_window_and_marks_its_events() {
    let Some(cap) = capture("b2_valentines_replay") else {
        return;
    };
    check(&cap, "rebin_b2");
}
