//! `bcwire diff` on a synthetic capture and copies of it with one StateUpdate changed:
//! a changed compared field is found and named, a changed game clock is not, unless
//! asked for; `--ignore` leaves a field out. The StateUpdate is one that `diff`
//! fingerprints from its typed value (a known ship layout, no warnings).

use crate::common::*;
use bcwire::game::stateupdate::{self, Cf16, SubsystemData};
use bcwire::pipeline::record::{PacketBody, PacketRecord};
use bcwire::pipeline::{Config, Control, Pipeline, Sink};
use bcwire::report::names::Names;
use bcwire::synth::{self, Format, SynthArgs};
use bcwire::transport::cipher;
use serde_json::Value;

/// The first delivered host StateUpdate with a speed and a decoded subsystem block.
#[derive(Default)]
struct Pick {
    found: Option<Picked>,
    /// Delivered game messages so far per (session, client, direction).
    counts: std::collections::HashMap<(usize, usize, &'static str), usize>,
}

struct Picked {
    plain: Vec<u8>,
    at: usize,
    len: usize,
    flow: (usize, usize, &'static str),
    index: usize,
    /// The ship class the pipeline decoded it with.
    species: u16,
}

impl Sink for Pick {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        let PacketBody::Game(g) = &p.body else {
            return Ok(Control::Continue);
        };
        let flow = (p.session, p.client, p.direction.as_str());
        for m in &g.messages {
            let Some(game) = m.delivered_game() else {
                continue;
            };
            let index = *self.counts.entry(flow).or_default();
            *self.counts.entry(flow).or_default() += 1;
            let Some(su) = game.state_update() else {
                continue;
            };
            let fits = su.speed.is_some()
                && matches!(su.subsystems, Some(SubsystemData::Decoded(_)))
                && game.warnings.is_empty()
                && m.assembled.is_none();
            if let (true, Some(species)) = (fits, su.species) {
                self.found = Some(Picked {
                    species,
                    plain: g.plain.clone(),
                    at: m.payload_offset.expect("payload"),
                    len: game.length,
                    flow,
                    index,
                });
                return Ok(Control::Stop);
            }
        }
        Ok(Control::Continue)
    }
}

/// A directory of the calling test's own: the tests of this crate run at once in one
/// process, and one removing a shared folder would pull files from under another. It is
/// removed when the returned guard drops, at the end of the test.
fn dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("bcwire-diff-fields-")
        .tempdir()
        .expect("temp dir")
}

/// `capture` with the datagram `plain` replaced by `changed` (same length), enciphered.
fn replace_datagram(capture: &[u8], plain: &[u8], changed: &[u8]) -> Vec<u8> {
    let mut old = plain.to_vec();
    cipher::encrypt(&mut old);
    let mut new = changed.to_vec();
    cipher::encrypt(&mut new);
    assert_eq!(old.len(), new.len());
    let hits: Vec<usize> = capture
        .windows(old.len())
        .enumerate()
        .filter(|(_, w)| *w == old.as_slice())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "the datagram is in the capture once");
    let mut out = capture.to_vec();
    out[hits[0]..hits[0] + new.len()].copy_from_slice(&new);
    out
}

fn diff_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["diff", "--format", "json"];
    all.extend_from_slice(args);
    let out = bcwire(&all);
    let json = serde_json::from_slice(&out.stdout).expect("JSON");
    (out.status.code().unwrap_or(-1), json)
}

fn differing_fields(j: &Value) -> Vec<String> {
    j["field_differences"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["differences"].as_array().unwrap().clone())
        .map(|d| d["field"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_changed_field_is_found_and_a_changed_clock_is_not() {
    let mut args = SynthArgs::new("unused");
    args.players = 2;
    args.seed = 4;
    args.packets = Some(1_500);
    args.format = Some(Format::Pcap);
    args.duplicate = 0.0;
    args.reorder = Some(0.0);
    let (_, capture) = synth::generate(&args, Vec::new()).unwrap();
    let reader =
        bcwire::capture::CaptureReader::new(std::io::Cursor::new(capture.clone())).unwrap();
    let mut pick = Pick::default();
    Pipeline::new(Config::default())
        .run(reader, &mut pick)
        .unwrap();
    let p = pick
        .found
        .expect("a host StateUpdate with speed and subsystems");
    let msg = &p.plain[p.at..p.at + p.len];

    // Another game clock (bytes 5..9 after the opcode and object id).
    let mut clock = p.plain.clone();
    let t = f32::from_le_bytes(msg[5..9].try_into().unwrap());
    clock[p.at + 5..p.at + 9].copy_from_slice(&(t + 1.5).to_le_bytes());
    // Another speed, re-encoded with the same layout (same length).
    let catalog = bcwire::game::ships::ShipCatalog::stock();
    let mut su = *stateupdate::decode(msg, Some(p.species), &catalog)
        .take_state_update()
        .unwrap();
    assert_eq!(stateupdate::encode(&su), msg, "the StateUpdate round-trips");
    su.speed = su.speed.map(|s| Cf16(s.0 ^ 0x0001));
    let faster = stateupdate::encode(&su);
    assert_eq!(faster.len(), msg.len());
    let mut speed = p.plain.clone();
    speed[p.at..p.at + p.len].copy_from_slice(&faster);

    let guard = dir();
    let d = guard.path();
    let a = d.join("a.pcap");
    let b_clock = d.join("b_clock.pcap");
    let b_speed = d.join("b_speed.pcap");
    std::fs::write(&a, &capture).unwrap();
    std::fs::write(&b_clock, replace_datagram(&capture, &p.plain, &clock)).unwrap();
    std::fs::write(&b_speed, replace_datagram(&capture, &p.plain, &speed)).unwrap();
    let (a, b_clock, b_speed) = (
        a.to_str().unwrap(),
        b_clock.to_str().unwrap(),
        b_speed.to_str().unwrap(),
    );

    // The clock is volatile: equivalent, unless volatile fields are compared.
    let (code, j) = diff_json(&[a, b_clock]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["same"], true);
    let (code, j) = diff_json(&["--include-volatile", a, b_clock]);
    assert_eq!(code, 1);
    assert_eq!(differing_fields(&j), ["game_time"]);

    // The speed is compared: one unmatched StateUpdate each way, its position in its
    // flow, and the field named.
    let (code, j) = diff_json(&[a, b_speed]);
    assert_eq!(code, 1, "{j}");
    let unmatched = j["unmatched"].as_array().unwrap();
    assert_eq!(unmatched.len(), 1, "{unmatched:?}");
    assert_eq!(unmatched[0]["opcode"], 0x1C);
    assert_eq!(unmatched[0]["only_in_a"], 1);
    assert_eq!(unmatched[0]["only_in_b"], 1);
    assert_eq!(unmatched[0]["direction"], p.flow.2);
    let div = j["divergences"].as_array().unwrap();
    assert_eq!(div.len(), 1, "{div:?}");
    assert_eq!(div[0]["index"], p.index);
    assert_eq!(div[0]["flow"]["session"], p.flow.0);
    assert_eq!(div[0]["flow"]["client"], p.flow.1);
    assert_eq!(differing_fields(&j), ["speed"]);

    // Left out by name: equivalent again.
    let (code, j) = diff_json(&["--ignore", "speed", a, b_speed]);
    assert_eq!(code, 0, "{j}");

    // A capture against itself.
    let (code, j) = diff_json(&[a, a]);
    assert_eq!(code, 0, "{j}");
}

/// `captures/sample.pcapng` with frame `drop` left out, as a classic pcap.
fn without_frame(drop: u64) -> Vec<u8> {
    use bcwire::capture::writer::CaptureWriter;
    use bcwire::capture::{Endian, TsResolution};
    let path = format!("{}/captures/sample.pcapng", env!("CARGO_MANIFEST_DIR"));
    let reader = bcwire::capture::CaptureReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut w = None;
    for f in reader {
        let f = f.unwrap();
        let w = w.get_or_insert_with(|| {
            CaptureWriter::pcap(
                Vec::new(),
                f.link_type,
                TsResolution::MICRO,
                Endian::Little,
                65535,
            )
            .unwrap()
        });
        if f.number != drop {
            w.write_frame(0, f.ts_ns, f.orig_len, &f.data).unwrap();
        }
    }
    w.unwrap().into_inner()
}

#[test]
fn a_lost_message_is_reported_alone_and_the_rest_still_aligns() {
    let sample = format!("{}/captures/sample.pcapng", env!("CARGO_MANIFEST_DIR"));
    let guard = dir();
    let d = guard.path().join("lost");
    std::fs::create_dir_all(&d).unwrap();
    // Frames carrying one delivered StateUpdate each, early, middle and late in a flow.
    for frame in [300u64, 800, 2500] {
        let b = d.join(format!("minus{frame}.pcap"));
        std::fs::write(&b, without_frame(frame)).unwrap();
        let (code, j) = diff_json(&[&sample, b.to_str().unwrap()]);
        assert_eq!(code, 1, "frame {frame}");
        let unmatched = j["unmatched"].as_array().unwrap();
        let lost: u64 = unmatched
            .iter()
            .map(|u| u["only_in_a"].as_u64().unwrap())
            .sum();
        let extra: u64 = unmatched
            .iter()
            .map(|u| u["only_in_b"].as_u64().unwrap())
            .sum();
        assert!(lost >= 1 && extra == 0, "frame {frame}: {unmatched:?}");
        // Nothing after the lost message is reported as different.
        assert_eq!(
            j["field_differences"],
            serde_json::json!([]),
            "frame {frame}"
        );
        for div in j["divergences"].as_array().unwrap() {
            assert!(div["b_opcode"].is_null(), "frame {frame}: {div}");
        }
    }
}

#[test]
fn quiet_diff_answers_with_the_exit_status_alone() {
    let sample = format!("{}/captures/sample.pcapng", env!("CARGO_MANIFEST_DIR"));
    let other = format!("{}/captures/duel-sll2.pcap", env!("CARGO_MANIFEST_DIR"));
    let same = bcwire(&["diff", "-q", &sample, &sample]);
    assert_eq!(same.status.code(), Some(0));
    assert!(same.stdout.is_empty() && same.stderr.is_empty());
    let differ = bcwire(&["diff", "-q", &sample, &other]);
    assert_eq!(differ.status.code(), Some(1));
    assert!(differ.stdout.is_empty() && differ.stderr.is_empty());
    let trouble = bcwire(&["diff", "-q", &sample, "/no/such/capture.pcap"]);
    assert_eq!(trouble.status.code(), Some(2));
}

#[test]
fn ignore_takes_printed_paths_and_patterns_and_refuses_malformed_ones() {
    let sample = format!("{}/captures/sample.pcapng", env!("CARGO_MANIFEST_DIR"));
    let other = format!("{}/captures/duel-sll2.pcap", env!("CARGO_MANIFEST_DIR"));
    let (_, j) = diff_json(&[&sample, &other]);
    let printed = differing_fields(&j);
    assert!(!printed.is_empty());
    // Every path diff prints is accepted by --ignore and leaves that path out.
    for path in printed.iter().take(5) {
        let (_, j) = diff_json(&["--ignore", path, &sample, &other]);
        assert!(!differing_fields(&j).contains(path), "{path}");
    }
    // Subsystems are matched by key: their paths name the key, never a display name.
    for p in &printed {
        if let Some(rest) = p.strip_prefix("subsystems[") {
            let key = &rest[..rest.find(']').unwrap()];
            assert!(
                key.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{p}"
            );
        }
    }
    let (_, j) = diff_json(&["--ignore", "subsystems[*]", &sample, &other]);
    assert!(differing_fields(&j)
        .iter()
        .all(|p| !p.starts_with("subsystems[")));
    let bad = bcwire(&["diff", "--ignore", "subsystems[", &sample, &other]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a field path"));
}

/// Every delivered StateUpdate of a capture with its ship class.
#[derive(Default)]
struct StateUpdates(Vec<(u16, bcwire::game::GameMessage)>);

impl Sink for StateUpdates {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        if let PacketBody::Game(g) = &p.body {
            for m in &g.messages {
                if let Some(game) = m.delivered_game() {
                    if let Some(species) = game.state_update().and_then(|s| s.species) {
                        self.0.push((species, game.clone()));
                    }
                }
            }
        }
        Ok(Control::Continue)
    }
}

/// The keys of a StateUpdate's subsystem records.
fn keys(g: &bcwire::game::GameMessage) -> Vec<String> {
    let p: bcwire::game::path::FieldPath = "subsystems[*].key".parse().unwrap();
    p.resolve(&g.fields)
        .iter()
        .map(|v| match v.as_ref() {
            bcwire::game::Value::Text(t) => t.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn same_class_with_other_subsystem_blocks_compares_records_by_key() {
    let path = format!("{}/captures/sample.pcapng", env!("CARGO_MANIFEST_DIR"));
    let mut all = StateUpdates::default();
    Pipeline::new(Config::default())
        .run(bcwire::pipeline::open(&path).unwrap(), &mut all)
        .unwrap();
    let cmp = bcwire::report::diff::Comparison::new(false, &[]).unwrap();
    let mut pairs = 0;
    for (k, (sa, a)) in all.0.iter().enumerate() {
        let ka = keys(a);
        let Some((_, b)) = all.0[k + 1..].iter().find(|(sb, b)| {
            let kb = keys(b);
            sb == sa && kb != ka && kb.iter().any(|x| ka.contains(x))
        }) else {
            continue;
        };
        let kb = keys(b);
        for d in cmp.field_differences(a, b) {
            let Some(rest) = d.path.strip_prefix("subsystems[") else {
                continue;
            };
            let key = &rest[..rest.find(']').unwrap()];
            // A record only one side has is absent on the other; a record both have
            // is compared with itself, whatever its place in the block (a value of
            // it may still be absent on one side: power data sent or not).
            let (in_a, in_b) = (ka.iter().any(|x| x == key), kb.iter().any(|x| x == key));
            assert!(in_a || in_b, "{d:?}");
            if !in_a {
                assert!(d.a.is_none(), "{d:?}");
            }
            if !in_b {
                assert!(d.b.is_none(), "{d:?}");
            }
            if let (Some(x), Some(y)) = (&d.a, &d.b) {
                assert!(in_a && in_b);
                assert_ne!(x, y, "{d:?}");
            }
        }
        pairs += 1;
        if pairs == 20 {
            break;
        }
    }
    assert!(pairs > 0, "the sample has blocks of one class that differ");
}

#[test]
fn the_two_shared_captures_diff_by_path() {
    let caps = shared_captures();
    if caps.len() < 2 {
        return;
    }
    let a = caps[0].1.join(format!("{}.pcapng", caps[0].0));
    let b = caps[1].1.join(format!("{}.pcapng", caps[1].0));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, j) = diff_json(&[a, b]);
    assert_eq!(code, 1);
    let fields = differing_fields(&j);
    assert!(!fields.is_empty());
    for f in &fields {
        // Every printed path parses, and names no display name.
        let p: bcwire::game::path::FieldPath = f.parse().unwrap();
        assert_eq!(p.to_string(), *f);
        assert!(!f.contains(' '), "{f}");
    }
    // And --ignore accepts it.
    let (_, again) = diff_json(&["--ignore", &fields[0], a, b]);
    assert!(!differing_fields(&again).contains(&fields[0]));
    // Each capture against itself: the same.
    for c in [a, b] {
        let (code, j) = diff_json(&[c, c]);
        assert_eq!(code, 0, "{j}");
    }
}

#[test]
fn a_list_element_one_side_lacks_is_one_row() {
    use bcwire::game::field::{Field, Span, Value};
    use bcwire::game::registry::field_name;
    let pair = |key: &'static str, v: u64| {
        Value::Group(vec![
            Field::new(
                field_name("power_block.index"),
                Value::Uint(v),
                Span::default(),
            ),
            Field::new(
                field_name("power_block.key"),
                Value::Text(key.into()),
                Span::default(),
            ),
            Field::new(
                field_name("power_block.value"),
                Value::Uint(204),
                Span::default(),
            ),
        ])
    };
    let msg = |items: Vec<Value>| bcwire::game::GameMessage {
        opcode: 0x1C,
        name: "StateUpdate",
        length: 0,
        fields: vec![Field::new(
            field_name("power_block"),
            Value::List(items),
            Span::default(),
        )],
        warnings: Vec::new(),
        body: None,
    };
    let a = msg(vec![pair("torpedoes", 2), pair("repair", 3)]);
    let b = msg(vec![pair("torpedoes", 2), pair("sensors", 5)]);
    let cmp = bcwire::report::diff::Comparison::new(false, &[]).unwrap();
    let d = cmp.field_differences(&a, &b);
    let rows: Vec<(&str, bool, bool)> = d
        .iter()
        .map(|d| (d.path.as_str(), d.a.is_some(), d.b.is_some()))
        .collect();
    assert_eq!(
        rows,
        [
            ("power_block[repair]", true, false),
            ("power_block[sensors]", false, true)
        ]
    );
}

/// Delivered game messages per (direction, opcode) among the JSON Lines records of
/// `input`, counted by the test where `keep(record, message)` says so.
fn counts_from_records(
    input: &str,
    keep: &dyn Fn(&Value, &Value) -> bool,
) -> std::collections::BTreeMap<(String, u64), u64> {
    let out = bcwire(&["decode", "--format", "jsonl", input]);
    assert!(out.status.success());
    let mut counts = std::collections::BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" {
            continue;
        }
        for m in r["messages"].as_array().into_iter().flatten() {
            if m["retransmission"] == true || !keep(&r, m) {
                continue;
            }
            let op = m["opcode"]
                .as_u64()
                .or_else(|| m["assembled"]["opcode"].as_u64());
            if let Some(op) = op {
                let d = r["direction"].as_str().unwrap().to_string();
                *counts.entry((d, op)).or_default() += 1;
            }
        }
    }
    counts
}

/// `diff --format json`'s opcode rows of one side.
fn side_counts(j: &Value, side: &str) -> std::collections::BTreeMap<(String, u64), u64> {
    j["opcodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r[side].as_u64().unwrap() > 0)
        .map(|r| {
            (
                (
                    r["direction"].as_str().unwrap().to_string(),
                    r["opcode"].as_u64().unwrap(),
                ),
                r[side].as_u64().unwrap(),
            )
        })
        .collect()
}

// The selection applies to both captures: a capture cut down to one player compares
// equal with the full one under `--client` of that player, different without it; a
// `-Y` selection counts exactly the messages the records hold.
// Catches: diff ignoring the selection (the cut capture's missing players make it
// differ), or applying it to one side only.
#[test]
fn diff_takes_the_selection_for_both_captures() {
    let sample = shipped_capture("sample.pcapng");
    let sample = sample.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let worf = tmp.path().join("worf.pcapng");
    let worf = worf.to_str().unwrap();
    let cut = bcwire(&["-q", "decode", "--client", "Worf", "-w", worf, sample]);
    assert!(cut.status.success());

    let (code, _) = diff_json(&[sample, worf]);
    assert_eq!(code, 1, "the other players' flows are only in A");
    let (code, j) = diff_json(&["--client", "Worf", sample, worf]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["same"], true);
    // A client one capture lacks: that side has none of its flows.
    let run = bcwire(&["diff", "--client", "Cady2", sample, worf]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no client"));

    let expr = "direction == c2s and opcode == StateUpdate";
    let (code, j) = diff_json(&["-Y", expr, sample, sample]);
    assert_eq!(code, 0);
    let want = counts_from_records(sample, &|r, m| {
        r["direction"] == "c2s" && m["opcode"] == 0x1C
    });
    assert!(!want.is_empty());
    assert_eq!(side_counts(&j, "a"), want);
    assert_eq!(side_counts(&j, "b"), want);
}

// `--max-differences N` shows N field differences in all and counts the rest of the
// messages it examined. The oracle: the same messages' differences with a budget
// large enough to show them all.
// Catches: the budget counted in messages (N messages of many fields each shown), or
// the differences beyond it dropped without a count.
#[test]
fn max_differences_counts_field_differences_and_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.pcapng"), tmp.path().join("b.pcapng"));
    for (path, seed) in [(&a, "1"), (&b, "2")] {
        let run = bcwire(&[
            "synth",
            "--seed",
            seed,
            "--minutes",
            "0.5",
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(run.status.success());
    }
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let shown = |j: &Value| -> Vec<(String, u64, String)> {
        j["field_differences"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| {
                let flow = m["flow"].to_string();
                let index = m["index"].as_u64().unwrap();
                m["differences"].as_array().unwrap().iter().map(move |d| {
                    (
                        flow.clone(),
                        index,
                        d["field"].as_str().unwrap().to_string(),
                    )
                })
            })
            .collect()
    };
    let (code, small) = diff_json(&["--max-differences", "3", a, b]);
    assert_eq!(code, 1);
    let few = shown(&small);
    assert_eq!(few.len(), 3, "{few:?}");
    let more = small["more_field_differences"].as_u64().unwrap();
    assert!(more > 0);
    // The messages the small budget examined, with every difference shown.
    let (_, large) = diff_json(&["--max-differences", "100000", a, b]);
    let all = shown(&large);
    let examined: std::collections::BTreeSet<(String, u64)> = small["field_differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["flow"].to_string(), m["index"].as_u64().unwrap()))
        .collect();
    assert_eq!(all[..3], few[..], "the first differences, in order");
    assert!(large["more_field_differences"] == 0);
    let on_examined = all
        .iter()
        .filter(|(f, i, _)| examined.contains(&(f.clone(), *i)))
        .count() as u64;
    assert!(
        3 + more >= on_examined,
        "{more} more, {on_examined} on the examined messages"
    );
    // The table says it too.
    let table = bcwire(&["diff", "--max-differences", "3", a, b]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&format!("{more} more field differences not shown")),
        "{text}"
    );
}
