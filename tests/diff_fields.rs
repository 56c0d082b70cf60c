//! `bcwire diff` on a synthetic capture and copies of it with one StateUpdate changed:
//! a changed compared field is found and named, a changed game clock is not, unless
//! asked for; `--ignore` leaves a field out. The StateUpdate is one that `diff`
//! fingerprints from its typed value (a known ship layout, no warnings).

mod common;

use bcwire::game::stateupdate::{self, Cf16, SubsystemData};
use bcwire::pipeline::record::{PacketBody, PacketRecord};
use bcwire::pipeline::{Config, Control, Pipeline, Sink};
use bcwire::report::names::Names;
use bcwire::synth::{self, Format, SynthArgs};
use bcwire::transport::cipher;
use common::*;
use serde_json::Value;
use std::path::PathBuf;

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
            let Some(su) = game.state_update.as_deref() else {
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

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("bcwire-diff-fields-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
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
    args.reorder = 0.0;
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
        .state_update
        .unwrap();
    assert_eq!(stateupdate::encode(&su), msg, "the StateUpdate round-trips");
    su.speed = su.speed.map(|s| Cf16(s.0 ^ 0x0001));
    let faster = stateupdate::encode(&su);
    assert_eq!(faster.len(), msg.len());
    let mut speed = p.plain.clone();
    speed[p.at..p.at + p.len].copy_from_slice(&faster);

    let d = dir();
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
    let _ = std::fs::remove_dir_all(&d);
}
