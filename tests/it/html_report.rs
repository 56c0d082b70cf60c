//! `bcwire report` on the third-party captures (`shared/captures/openbc`): the page is
//! self-contained and has the charts and series the capture calls for.
//!
//! The shared folder is found via `BCWIRE_SHARED`, `<crate>/../shared` or `/work/shared`;
//! the tests skip with a note when it is absent.

use crate::common;

use bcwire::diag::Direction;
use bcwire::pipeline::Config;
use bcwire::report::html::{self, CaptureReport};
use std::path::PathBuf;

/// The shared folder, through the common helper (which fails instead of skipping when
/// `BCWIRE_REQUIRE_SHARED` is set, and records the test for `.ci/run`).
fn shared_dir() -> Option<PathBuf> {
    common::shared_dir()
}

/// Every `openbc/*/*.pcapng`, sorted.
fn captures() -> Vec<PathBuf> {
    let Some(dir) = shared_dir().map(|d| d.join("captures/openbc")) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcapng"))
        .collect();
    v.sort();
    v
}

/// The value of `data-series-count` on the element carrying `data-chart="id"`.
/// The shared Valentine's Day replay, the battle among the shared captures.
fn valentines() -> Option<PathBuf> {
    captures()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("b2_valentines"))
}

fn series_count(page: &str, id: &str) -> Option<usize> {
    let at = page.find(&format!("data-chart=\"{id}\""))?;
    let tag_end = at + page[at..].find('>')?;
    let tag = &page[at..tag_end];
    let v = tag
        .split("data-series-count=\"")
        .nth(1)?
        .split('"')
        .next()?;
    v.parse().ok()
}

/// No resource is loaded from anywhere: no external src/href, no script files, no
/// style sheets, no CSS imports or URLs.
fn assert_self_contained(page: &str) {
    let lower = page.to_ascii_lowercase();
    for bad in [
        "src=\"http://",
        "src=\"https://",
        "href=\"http://",
        "href=\"https://",
        "src='http",
        "href='http",
        "<script src",
        "<link",
        "@import",
        "url(",
        "<iframe",
    ] {
        assert!(!lower.contains(bad), "page contains {bad}");
    }
    assert!(lower.starts_with("<!doctype html>"));
}

fn expected_rate_series(r: &CaptureReport, dir: Direction) -> usize {
    // Up to ten opcodes with a colour of their own, and "other" for the rest.
    let ops = &r.rates[dir.index()];
    let own = ops
        .keys()
        .filter(|op| bcwire::report::html::svg::opcode_colour(**op).is_some())
        .count()
        .min(10);
    own + usize::from(ops.len() > own)
}

fn check_structure(r: &CaptureReport, page: &str, cid: &str) {
    for dir in [Direction::C2S, Direction::S2C] {
        let id = format!("{cid}-rates-{}", dir.as_str());
        let want = expected_rate_series(r, dir);
        if want == 0 {
            assert_eq!(series_count(page, &id), None);
        } else {
            assert_eq!(series_count(page, &id), Some(want), "{id}");
            // The same opcodes the exact counters list.
            assert_eq!(
                r.rates[dir.index()].len(),
                r.stats().dirs[dir.index()].opcodes.len()
            );
        }
    }
    let tracked = r.ships.iter().filter(|s| !s.track.is_empty()).count();
    assert_eq!(series_count(page, &format!("{cid}-map")), Some(tracked));
    // Two transport charts at least: retransmissions in both directions.
    assert_eq!(series_count(page, &format!("{cid}-retx")), Some(2));
}

#[test]
fn pages_of_the_shared_captures_are_complete_and_self_contained() {
    let files = captures();
    if files.is_empty() {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    }
    let cfg = Config::default();
    for f in &files {
        let path = f.to_string_lossy();
        let r = html::collect_file(&path, &cfg, false).unwrap();
        let page = html::render(std::slice::from_ref(&r), None);
        assert_self_contained(&page);
        check_structure(&r, &page, "a");
        // Exact numbers from the counters appear in the overview.
        let st = r.stats();
        assert!(page.contains(&format!(
            "<td class=\"n\">{}</td>",
            st.dirs[0].counts.packets
        )));
        for sess in &r.summary.sessions {
            for c in &sess.clients {
                if let Some(name) = &c.name {
                    assert!(page.contains(&format!("<td>{name}</td>")), "{name}");
                }
            }
        }
        assert!(page.contains("data-bars=\"bits-s2c\""));
        eprintln!("{path}: {} KiB", page.len() / 1024);
    }
}

/// The page finds each life's events in one grouping pass: on every shared capture and
/// the shipped battle capture it must give each life exactly the events a scan of all
/// events for that life gives, in the same order, and leave no event with a ship out.
#[test]
fn events_grouped_by_life_match_a_scan_of_every_event() {
    let mut files = captures();
    files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures/sample.pcapng"));
    let mut lives_with_events = 0;
    for f in &files {
        let r = html::collect_file(&f.to_string_lossy(), &Config::default(), false).unwrap();
        let by_life = r.events_by_life();
        for s in &r.ships {
            let scanned: Vec<*const _> = r
                .events
                .iter()
                .filter(|e| e.ship.is_some_and(|k| s.is(e.session, k)))
                .map(|e| e as *const _)
                .collect();
            let grouped: Vec<*const _> = by_life
                .get(&s.key())
                .map(|v| v.iter().map(|e| *e as *const _).collect())
                .unwrap_or_default();
            assert_eq!(grouped, scanned, "{}: {}", f.display(), s.label);
            lives_with_events += usize::from(!scanned.is_empty());
        }
        let grouped: usize = by_life.values().map(Vec::len).sum();
        let with_ship = r.events.iter().filter(|e| e.ship.is_some()).count();
        assert_eq!(grouped, with_ship, "{}", f.display());
    }
    // The comparison is worth something only if lives do have events.
    assert!(lives_with_events > 0);
}

#[test]
fn the_valentines_capture_shows_its_battle() {
    let Some(f) = valentines() else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    };
    let r = html::collect_file(&f.to_string_lossy(), &Config::default(), false).unwrap();
    // Clients send every shot and explosion here; the host relays each to the other
    // two clients. Events count the originals: the client → host messages.
    use bcwire::report::html::collect::EventKind;
    let n = |k: EventKind| r.events.iter().filter(|e| e.kind == k).count() as u64;
    let sent = |op: u8| r.stats().dirs[0].opcodes.get(&op).copied().unwrap_or(0);
    let relayed = |op: u8| r.stats().dirs[1].opcodes.get(&op).copied().unwrap_or(0);
    assert_eq!(n(EventKind::Explosion), 3);
    assert_eq!(n(EventKind::Explosion), sent(0x29));
    assert_eq!(n(EventKind::TorpedoFire), sent(0x19));
    assert_eq!(n(EventKind::BeamFire), sent(0x1A));
    assert_eq!(relayed(0x19), 2 * sent(0x19));
    assert!(r.chat.iter().any(|c| c.text == "gg"));
    assert!(r.chat.iter().any(|c| c.text == "hello"));
    // Subsystem conditions from the host's 0x20 blocks, named from the ship layouts.
    let health: usize = r.ships.iter().map(|s| s.health.len()).sum();
    assert!(health > 0);
    assert!(r
        .ships
        .iter()
        .flat_map(|s| &s.health)
        .any(|h| !h.name.starts_with("subsystem ")));
    let page = html::render(std::slice::from_ref(&r), None);
    // Its tracks are deltas without a baseline: the explosions are counted beside the
    // relative map rather than drawn on it, and marked on the ship charts.
    assert!(page.contains("explosion or kill mark(s) with absolute positions"));
    assert!(page.contains("data-marks=\"death\""));
    let ship_charts = page.matches("class=\"chart ship").count();
    assert!(ship_charts >= 3, "{ship_charts}");
    // Every event on a ship chart lies within that ship's life.
    for e in &r.events {
        if let Some(s) = r
            .ships
            .iter()
            .find(|s| e.ship.is_some_and(|k| s.is(e.session, k)))
        {
            assert!(s.born <= e.t, "{e:?} before {}", s.born);
        }
    }
}

#[test]
fn the_command_writes_a_side_by_side_page_with_the_diff() {
    let files = captures();
    let [a, b, ..] = files.as_slice() else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_report_ab.html");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .arg("report")
        .arg(a)
        .arg(b)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let page = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("class=\"cols n2\""));
    assert!(page.contains("<section id=\"diff\">"));
    assert!(page.contains("The captures differ."));
    let cfg = Config::default();
    for (p, cid) in [(a, "a"), (b, "b")] {
        let r = html::collect_file(&p.to_string_lossy(), &cfg, false).unwrap();
        check_structure(&r, &page, cid);
    }
}

/// Seconds without a matched ACK are gaps in the ACK-delay chart, not delays of 0 ms:
/// each series is drawn as one line per run of seconds with ACKs, and every point of
/// a line is a measured second.
#[test]
fn ack_delay_is_not_drawn_where_nothing_was_acknowledged() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/sample.pcapng");
    let r = html::collect_file(sample, &Config::default(), false).unwrap();
    let page = html::render(std::slice::from_ref(&r), None);
    let series = "data-series=\"mean ACK delay, ACKs client → host\"";
    let lines: Vec<&str> = page.split(series).skip(1).collect();
    assert!(
        lines.len() > 1,
        "the sample has seconds without ACKs between ACKed ones"
    );
    let acked_seconds = r.transport.acks[0].len();
    let points: usize = lines
        .iter()
        .map(|l| {
            // A run of one second is a dot (a circle), a longer one a polyline.
            let element = &l[..l.find("/>").unwrap()];
            match element.split("points=\"").nth(1) {
                Some(pts) => pts[..pts.find('"').unwrap()].split(' ').count(),
                None => 1,
            }
        })
        .sum();
    // Columns group seconds, so there are at most as many points as ACKed seconds.
    assert!(
        points <= acked_seconds,
        "{points} points for {acked_seconds} seconds"
    );
}

/// An opcode has one colour on the whole page: in both directions' rate charts and in
/// both captures of a comparison, whatever its rank in each.
#[test]
fn an_opcode_has_one_colour_everywhere() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/sample.pcapng");
    let duel = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/duel-sll2.pcap");
    let cfg = Config::default();
    let a = html::collect_file(sample, &cfg, true).unwrap();
    let b = html::collect_file(duel, &cfg, true).unwrap();
    let diff =
        html::compare_files(&a, &b, &cfg, [&Default::default(), &Default::default()]).unwrap();
    let page = html::render(&[a, b], Some(&diff));
    let mut seen: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for part in page.split("<path data-series=\"").skip(1) {
        let name = &part[..part.find('"').unwrap()];
        if !name.starts_with("0x") {
            continue;
        }
        let fill = part.split("fill=\"").nth(1).unwrap();
        let fill = &fill[..fill.find('"').unwrap()];
        seen.entry(name.to_string())
            .or_default()
            .insert(fill.to_string());
    }
    assert!(seen.len() >= 5, "{seen:?}");
    assert!(seen.values().all(|c| c.len() == 1), "{seen:?}");
    // The opcodes of a battle each have their own colour.
    let battle = [
        0x1C, 0x06, 0x07, 0x08, 0x1A, 0x19, 0x29, 0x2C, 0x03, 0x20, 0x17, 0x15,
    ];
    let fills: Vec<String> = battle
        .iter()
        .map(|op| {
            bcwire::report::html::svg::opcode_colour(*op)
                .unwrap()
                .to_string()
        })
        .collect();
    let distinct: std::collections::BTreeSet<&String> = fills.iter().collect();
    assert_eq!(distinct.len(), battle.len(), "{fills:?}");
    for (name, c) in &seen {
        let op = u8::from_str_radix(&name[2..4], 16).unwrap();
        let want = bcwire::report::html::svg::opcode_colour(op).unwrap();
        assert!(c.contains(want), "{name}: {c:?}");
    }
}

/// The problems section lists each warning code with the count and first frame that
/// `bcwire decode` reports, and the command that shows that frame; the page names the
/// file, not the folder it was read from.
#[test]
fn problems_match_the_decoded_warnings_and_point_at_their_frames() {
    let Some(f) = valentines() else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["decode", "--format", "jsonl"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    // Independent count: every warning in every record, by code, with its first frame.
    let mut want: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "summary" {
            continue;
        }
        let frame = v["frame"].as_u64().unwrap_or(0);
        let mut lists = vec![&v["warnings"]];
        for m in v["messages"].as_array().into_iter().flatten() {
            lists.push(&m["warnings"]);
        }
        for w in lists.into_iter().filter_map(|l| l.as_array()).flatten() {
            let e = want
                .entry(w["code"].as_str().unwrap().to_string())
                .or_insert((0, frame));
            e.0 += 1;
        }
    }
    assert!(!want.is_empty(), "this capture has warnings");
    let r = html::collect_file(&f.to_string_lossy(), &Config::default(), false).unwrap();
    let got: std::collections::BTreeMap<String, (u64, u64)> = r
        .problems
        .iter()
        .map(|p| (p.code.as_str().to_string(), (p.count, p.frames[0])))
        .collect();
    assert_eq!(got, want);
    let page = html::render(std::slice::from_ref(&r), None);
    let name = f.file_name().unwrap().to_string_lossy().to_string();
    for (code, (count, frame)) in &want {
        assert!(
            page.contains(&format!("<code>{code}</code>")),
            "{code} missing"
        );
        assert!(page.contains(&format!("<td class=\"n\">{count}</td>")));
        assert!(page.contains(&format!("bcwire show {name} --frame {frame}")));
    }
    // Header facts: start in UTC, version; the folder is nowhere on the page.
    assert!(page.contains(&format!("{name}: started 20")));
    assert!(page.contains(concat!("written by bcwire ", env!("CARGO_PKG_VERSION"))));
    let folder = f.parent().unwrap().to_string_lossy().to_string();
    assert!(
        !page.contains(&folder),
        "the page shows the local path {folder}"
    );
}

/// The part of a section that belongs to one capture of a comparison.
fn capture_column<'p>(page: &'p str, section: &str, cid: &str) -> &'p str {
    let start = page
        .find(&format!("<section id=\"{section}\">"))
        .unwrap_or_else(|| panic!("no {section} section"));
    let end = start + page[start..].find("</section>").unwrap();
    let sec = &page[start..end];
    let col = sec
        .find(&format!("data-capture=\"{cid}\""))
        .unwrap_or_else(|| panic!("no column {cid} in {section}"));
    let rest = &sec[col..];
    let stop = rest[1..]
        .find("data-capture=\"")
        .map_or(rest.len(), |i| i + 1);
    &rest[..stop]
}

/// The texts of every element with `class` in `html`, in order (`lbl` bar labels, or
/// the tick labels inside the axes groups).
fn texts_of(html: &str, class: &str) -> Vec<String> {
    let mut out = Vec::new();
    if class == "axes" {
        for g in html.split("<g class=\"axes\">").skip(1) {
            let g = &g[..g.find("</g>").unwrap()];
            let ticks: Vec<&str> = g
                .split("<text")
                .skip(1)
                .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
                .collect();
            out.push(ticks.join("|"));
        }
    } else {
        let open = format!("<text class=\"{class}\"");
        for t in html.split(open.as_str()).skip(1) {
            out.push(t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string());
        }
    }
    out
}

/// Two captures side by side are read against each other: their time charts have
/// the same axes (ticks on both, time and value), and the dirty-flag rows come in one
/// order with the bars scaled by one maximum, so a row in A sits beside its row in B.
#[test]
fn a_comparison_shares_axes_and_row_order() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let (a, b) = (
        format!("{dir}/captures/sample.pcapng"),
        format!("{dir}/captures/duel-sll2.pcap"),
    );
    let cfg = Config::default();
    let ra = html::collect_file(&a, &cfg, false).unwrap();
    let rb = html::collect_file(&b, &cfg, false).unwrap();
    assert!(
        (ra.duration - rb.duration).abs() > 10.0,
        "the test needs captures of different lengths"
    );
    let page = html::render(&[ra, rb], None);
    for section in ["rates", "transport"] {
        let (ca, cb) = (
            capture_column(&page, section, "a"),
            capture_column(&page, section, "b"),
        );
        let (ta, tb) = (texts_of(ca, "axes"), texts_of(cb, "axes"));
        assert!(!ta.is_empty(), "{section}: no axes");
        assert_eq!(ta, tb, "{section}: A and B axes differ");
    }
    let (ca, cb) = (
        capture_column(&page, "dirty", "a"),
        capture_column(&page, "dirty", "b"),
    );
    let labels = |c: &str| -> Vec<String> {
        texts_of(c, "lbl")
            .into_iter()
            .filter(|t| t.starts_with("0x"))
            .collect()
    };
    assert_eq!(labels(ca), labels(cb), "dirty-flag rows in another order");
    // The shorter capture's lines stop where it ends, not at zero to the shared end.
    let last_x = |c: &str| -> f64 {
        c.split("points=\"")
            .skip(1)
            .flat_map(|p| {
                p[..p.find('"').unwrap()]
                    .split(' ')
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter_map(|xy| xy.split(',').next()?.parse::<f64>().ok())
            .fold(0.0, f64::max)
    };
    let (pa, pb) = (
        capture_column(&page, "players", "a"),
        capture_column(&page, "players", "b"),
    );
    assert!(
        last_x(pb) < 0.7 * last_x(pa),
        "{} vs {}",
        last_x(pb),
        last_x(pa)
    );
    // One scale: a bar's width over its share is the same constant in A and in B.
    let px_per_share = |c: &str| -> f64 {
        let svg = &c[c.find("data-bars=\"bits-c2s\"").unwrap()..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        // The widest bar: its printed share has the smallest rounding error.
        let widths = svg.split("<rect").skip(1).map(|r| {
            let w = r
                .split("width=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            w.parse::<f64>().unwrap()
        });
        let shares = texts_of(svg, "lbl")
            .into_iter()
            .skip(1)
            .step_by(2)
            .map(|t| {
                let pct = t.split('(').nth(1).unwrap().trim_end_matches("%)");
                pct.parse::<f64>().unwrap()
            });
        let (width, pct) = widths
            .zip(shares)
            .fold((0.0, 0.0), |m, x| if x.1 > m.1 { x } else { m });
        width / pct
    };
    let (sa, sb) = (px_per_share(ca), px_per_share(cb));
    assert!(
        (sa - sb).abs() / sa < 0.02,
        "bars scaled apart: {sa} vs {sb} px per %"
    );
}

// A page shared with others names its captures by file name: no local directory in it
// (the Comparison section printed both full paths).
#[test]
fn a_two_capture_page_names_files_not_local_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("private").join("matches");
    std::fs::create_dir_all(&dir).unwrap();
    let sample = crate::common::shipped_capture("sample.pcapng");
    let (a, b) = (dir.join("night-a.pcapng"), dir.join("night-b.pcapng"));
    std::fs::copy(&sample, &a).unwrap();
    std::fs::copy(&sample, &b).unwrap();
    let page = tmp.path().join("r.html");
    let run = crate::common::bcwire(&[
        "-q",
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("night-a.pcapng") && html.contains("night-b.pcapng"));
    assert!(
        !html.contains(dir.to_str().unwrap()),
        "the page holds the local directory {}",
        dir.display()
    );
}

/// Rate charts end where the capture ends, as the ship charts do, and the column the
/// capture ends in is divided by the time it measured: on the sample (59.50 s long)
/// the last second holds 11 client messages in 0.50 s, a rate of ~22/s like the 19 and
/// 20 before it, not a drop to 11/s. Computed from `decode --format jsonl`.
// Catches: axes ending at 60 s (a whole column) while ship charts end at 59.5 s, and
// the last column drawn at 11 msg/s.
#[test]
fn rate_charts_end_with_the_capture_and_rate_its_last_part_by_its_span() {
    let cap = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/sample.pcapng");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["decode", "--format", "jsonl", cap])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut per_second: std::collections::BTreeMap<i64, f64> = Default::default();
    let (mut t0, mut end) = (None, 0.0f64);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" {
            continue;
        }
        let t = r["time"].as_f64().unwrap() - *t0.get_or_insert(r["time"].as_f64().unwrap());
        end = end.max(t);
        if r["direction"] != "c2s" {
            continue;
        }
        for m in r["messages"].as_array().into_iter().flatten() {
            if m.get("opcode").is_some() && m["retransmission"] != true {
                *per_second.entry(t.floor() as i64).or_default() += 1.0;
            }
        }
    }
    let last = end.floor() as i64;
    let want_last = per_second[&last] / (end - end.floor());
    let want_before = per_second[&(last - 1)];

    let page_path = std::env::temp_dir().join("bcwire_rate_end.html");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["-q", "report", cap, "-o"])
        .arg(&page_path)
        .status()
        .unwrap();
    assert!(status.success());
    let page = std::fs::read_to_string(&page_path).unwrap();
    let time_of = |chart: &str| -> Vec<f64> {
        let at = page.find(&format!("data-chart=\"{chart}\"")).unwrap();
        let tag = &page[at..at + page[at..].find('>').unwrap()];
        let t = tag.split("data-time=\"").nth(1).unwrap();
        t[..t.find('"').unwrap()]
            .split(' ')
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let rates = time_of("a-rates-c2s");
    let ship = time_of("a-ship-0");
    assert!((rates[3] - end).abs() < 0.06, "axis ends at {}", rates[3]);
    // A ship chart spans its life: it ends at the same pixel, at the life's end (at the
    // latest the capture's).
    let life_end: f64 = {
        let at = page.find("data-chart=\"a-ship-0\"").unwrap();
        let t = page[at..].split("data-end=\"").nth(1).unwrap();
        t[..t.find('"').unwrap()].parse().unwrap()
    };
    assert!(
        (ship[3] - life_end).abs() < 0.001,
        "ship axis ends at {}",
        ship[3]
    );
    assert!(ship[3] <= rates[3] + 0.001, "a life beyond the capture");
    assert_eq!(rates[1], ship[1], "at the same pixel");
    // The top of the stack: one step per column, "M|L x,y H x1".
    let svg = &page[page.find("data-chart=\"a-rates-c2s\"").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    let top = svg.rsplit("<path data-series=").next().unwrap();
    let d = top.split(" d=\"").nth(1).unwrap();
    let d = &d[..d.find('"').unwrap()];
    let steps: Vec<(f64, f64)> = d
        .trim_end_matches('Z')
        .split(['M', 'L'])
        .filter(|s| s.contains('H'))
        .map(|s| {
            let (xy, x1) = s.split_once('H').unwrap();
            let y = xy.split(',').nth(1).unwrap().parse().unwrap();
            (y, x1.parse().unwrap())
        })
        .collect();
    let n = (last + 1) as usize;
    let bottom = rates[5];
    let (y_last, x_last) = steps[n - 1];
    let (y_before, _) = steps[n - 2];
    assert_eq!(x_last, rates[1], "the last column ends at the axis end");
    let drawn = (bottom - y_last) / (bottom - y_before);
    let want = want_last / want_before;
    assert!(
        (drawn - want).abs() < 0.03,
        "last column drawn at {drawn:.3} of the one before, want {want:.3}"
    );
}
