//! StateUpdates of the third-party captures (`shared/captures/openbc`): every one decodes
//! without losing a byte, and the stock-compatible blocks decode with the Akira layout.

use crate::common;

use bcwire::diag::Code;
use bcwire::game::ships::ShipCatalog;
use bcwire::game::stateupdate::{decode, encode};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

/// The shared folder, through the common helper (which fails instead of skipping when
/// `BCWIRE_REQUIRE_SHARED` is set, and records the test for `.ci/run`).
fn shared_dir() -> Option<PathBuf> {
    common::shared_dir()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// (direction, payload) of every 0x1C game message in a capture's ground truth.
fn state_updates(name: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let path = shared_dir()?
        .join("captures/openbc")
        .join(name)
        .join(format!("{name}.frames.jsonl.gz"));
    let file = std::fs::File::open(path).ok()?;
    let mut out = Vec::new();
    for line in BufReader::new(flate2::read::GzDecoder::new(file)).lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        let dir = v["dir"].as_str().unwrap_or("").to_string();
        for m in v["msgs"].as_array().into_iter().flatten() {
            if let Some(p) = m["payload_hex"].as_str() {
                if p.len() >= 2 && p[..2].eq_ignore_ascii_case("1c") {
                    out.push((dir.clone(), hex(p)));
                }
            }
        }
    }
    Some(out)
}

#[test]
fn captured_state_updates_decode_without_losing_bytes() {
    let cat = ShipCatalog::stock();
    let mut total = 0;
    for name in ["a_single_client", "b2_valentines_replay"] {
        let Some(msgs) = state_updates(name) else {
            eprintln!("note: shared captures not found, skipping");
            return;
        };
        let (mut fit, mut raw) = (0, 0);
        for (_dir, msg) in &msgs {
            for species in [None, Some(1), Some(5)] {
                let m = decode(msg, species, &cat);
                let mut covered = vec![false; msg.len()];
                for f in &m.fields {
                    for b in f.span.start..f.span.end() {
                        if let Some(c) = covered.get_mut(b as usize) {
                            *c = true;
                        }
                    }
                }
                assert!(covered.iter().skip(1).all(|c| *c), "{msg:02x?}");
                let su = m.state_update().unwrap();
                // Whatever was decoded (typed or raw) is written back byte for byte,
                // unless the message was cut short inside a field.
                if !m.warnings.iter().any(|w| w.code == Code::DecodeError) {
                    assert_eq!(encode(su), *msg, "{species:?} {:?}", m.warnings);
                }
                if species == Some(1) {
                    if m.warnings.is_empty() {
                        fit += 1;
                    } else {
                        raw += 1;
                    }
                }
            }
        }
        eprintln!(
            "{name}: {} StateUpdates, {fit} read cleanly as Akira, {raw} not",
            msgs.len()
        );
        total += msgs.len();
    }
    assert!(total > 100);
}

#[test]
fn a_stock_compatible_captured_block_and_a_non_stock_one() {
    let Some(msgs) = state_updates("a_single_client") else {
        eprintln!("note: shared captures not found, skipping");
        return;
    };
    let cat = ShipCatalog::stock();
    // Phasers (start 5) and Warp Engines: both power bits share the 0x40 byte.
    let phasers = hex("1cffffff3f8616993e2005ffffffffffffffffff40ffffff");
    assert!(msgs.iter().any(|(_, m)| *m == phasers));
    let m = decode(&phasers, Some(1), &cat);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    // From index 0 the third-party server writes a one-byte shield record and a fresh
    // packed byte per powered record: the stock Akira list cannot read it.
    let first = hex("1cffffff3fcccc4c3e2000ffffff20ffffffffffff20");
    let m = decode(&first, Some(1), &cat);
    assert_eq!(m.warnings[0].code, Code::LayoutMismatch, "{:?}", m.warnings);
}
