//! Every ship life is counted: the report's Ships section, and the client ship lists of
//! `flows`, hold every ship created, including those still alive at the end and those
//! that exploded long before it. The creations are read here from `bcwire decode
//! --format jsonl` (each client's own ObjCreateTeam of a ship, not the host's copies).

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn run(args: &[&str]) -> String {
    let out = common::bcwire(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (session, owner slot) → object ids of the ships created, in capture order.
fn creations(cap: &Path) -> BTreeMap<(u64, u64), Vec<u64>> {
    let text = run(&[
        "decode",
        "--format",
        "jsonl",
        "-Y",
        "opcode == 0x03",
        &cap.to_string_lossy(),
    ]);
    let mut out: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" || r["direction"] != "c2s" {
            continue;
        }
        for m in r["messages"].as_array().into_iter().flatten() {
            let f = &m["fields"];
            if m["name"] != "ObjCreateTeam" || m["retransmission"] == true || f["species"].is_null()
            {
                continue;
            }
            out.entry((
                r["session"].as_u64().unwrap(),
                f["owner_slot"].as_u64().unwrap(),
            ))
            .or_default()
            .push(f["object_id"].as_u64().unwrap());
        }
    }
    out
}

/// Lives in the Ships section: the sum of its per-player headings "… — N ships".
fn page_lives(page: &str) -> usize {
    let ships = &page[page.find("<section id=\"ships\">").unwrap()..];
    let ships = &ships[..ships.find("</section>").unwrap()];
    ships
        .split("<h4 class=\"owner\">")
        .skip(1)
        .map(|h| {
            let h = &h[..h.find("</h4>").unwrap()];
            let n = h.rsplit(" — ").next().unwrap();
            n.split(' ').next().unwrap().parse::<usize>().unwrap()
        })
        .sum()
}

#[test]
fn every_life_is_counted_in_the_report_and_the_ship_lists() {
    // The 15-player hour: hundreds of ships explode, and some are alive at the end.
    let cap = tmp("lives_hour.pcapng");
    let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args([
            "-q",
            "synth",
            "--players",
            "15",
            "--packets",
            "1000000",
            "-o",
        ])
        .arg(&cap)
        .status()
        .unwrap();
    assert!(status.success());
    let want = creations(&cap);
    let total: usize = want.values().map(Vec::len).sum();
    assert!(total > 600, "{total} ships: too few to pass the old bound");

    // Catches lives left out of the Ships section (those alive at the end had
    // nothing charted and were dropped).
    let page = tmp("lives_hour.html");
    let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["-q", "report"])
        .arg(&cap)
        .arg("-o")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let page = std::fs::read_to_string(&page).unwrap();
    assert_eq!(page_lives(&page), total, "lives on the page");
    assert!(!page.contains("missing from the client ship lists"));

    // Catches the ship lists keeping only the most recently ended ships.
    let flows: Value =
        serde_json::from_str(&run(&["flows", "--format", "json", &cap.to_string_lossy()])).unwrap();
    let mut got: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
    let mut listed = BTreeSet::new();
    for s in flows["sessions"].as_array().unwrap() {
        for c in s["clients"].as_array().unwrap() {
            let Some(slot) = c["slot"].as_u64() else {
                continue;
            };
            let key = (s["index"].as_u64().unwrap(), slot);
            if !listed.insert(key) {
                continue;
            }
            for ship in c["ships"].as_array().unwrap() {
                let hex = ship
                    .as_str()
                    .unwrap()
                    .split(' ')
                    .find(|w| w.starts_with("0x"))
                    .unwrap()
                    .trim_end_matches(',');
                let id = u64::from_str_radix(&hex[2..], 16).unwrap();
                got.entry(key).or_default().push(id);
            }
        }
    }
    assert_eq!(got, want, "client ship lists of flows");
}
