//! Explosion (0x29) positions on the map. Whether a session's explosions are places or
//! directions is decided here from `bcwire decode --format jsonl` (every explosion's
//! position length and the span of the ships' StateUpdate positions), and the page
//! must follow: rings on the map for places; for directions no rings and a non-stock
//! finding in Problems that points at the session's first explosion.
//!
//! The directions come from a generated session whose explosion magnitudes are edited
//! to 1 (the shape a reimplementation sends); the same session unedited, and the shared
//! real captures, keep whatever the decode says they are.

use crate::capture_edit::PcapNg;
use crate::common;
use pcap_file::pcapng::Block;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A direction: length at most 1 (with room for the rounding of a packed direction),
/// among ships that move over tens of units.
const UNIT: f64 = 1.01;
const MOVED: f64 = 20.0;

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn decode(cap: &Path) -> Vec<Value> {
    let out = common::bcwire(&["decode", "--format", "jsonl", &cap.to_string_lossy()]);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Per session: the explosions' first frame, longest position, and the widest span of
/// one object's StateUpdate positions along an axis.
#[derive(Debug, Default)]
struct Session {
    first: Option<u64>,
    longest: f64,
    spans: BTreeMap<u64, ([f64; 3], [f64; 3])>,
}

impl Session {
    fn span(&self) -> f64 {
        self.spans
            .values()
            .flat_map(|(lo, hi)| (0..3).map(move |a| hi[a] - lo[a]))
            .fold(0.0, f64::max)
    }
    fn directions(&self) -> bool {
        self.first.is_some() && self.longest <= UNIT && self.span() >= MOVED
    }
}

fn vec3(v: &Value) -> Option<[f64; 3]> {
    let a = v.as_array()?;
    Some([
        a.first()?.as_f64()?,
        a.get(1)?.as_f64()?,
        a.get(2)?.as_f64()?,
    ])
}

fn oracle(records: &[Value]) -> BTreeMap<u64, Session> {
    let mut out: BTreeMap<u64, Session> = BTreeMap::new();
    for r in records {
        let Some(session) = r["session"].as_u64() else {
            continue;
        };
        for m in r["messages"].as_array().into_iter().flatten() {
            if m["retransmission"] == true {
                continue;
            }
            let f = &m["fields"];
            let Some(p) = vec3(&f["position"]) else {
                continue;
            };
            let s = out.entry(session).or_default();
            match m["name"].as_str() {
                Some("Explosion") => {
                    s.first.get_or_insert(r["frame"].as_u64().unwrap());
                    let len = p.iter().map(|v| v * v).sum::<f64>().sqrt();
                    s.longest = s.longest.max(len);
                }
                Some("StateUpdate") => {
                    let id = f["object_id"].as_u64().unwrap();
                    let e = s.spans.entry(id).or_insert(([f64::MAX; 3], [f64::MIN; 3]));
                    for (a, v) in p.into_iter().enumerate() {
                        e.0[a] = e.0[a].min(v);
                        e.1[a] = e.1[a].max(v);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn report(cap: &Path, name: &str) -> String {
    let page = tmp(&format!("{name}.html"));
    let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["-q", "report"])
        .arg(cap)
        .arg("-o")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read_to_string(&page).unwrap()
}

fn section<'p>(page: &'p str, id: &str) -> &'p str {
    let s = &page[page.find(&format!("<section id=\"{id}\">")).unwrap()..];
    &s[..s.find("</section>").unwrap()]
}

/// The page agrees with the decode: rings where some session's explosions are places,
/// a finding (session, first frame) for each session whose explosions are directions.
fn check(cap: &Path, name: &str) -> BTreeMap<u64, Session> {
    let sessions = oracle(&decode(cap));
    let page = report(cap, name);
    let map = section(&page, "map");
    let problems = section(&page, "problems");
    // Without any absolute ship position the map is of relative tracks, which carry
    // no absolute marks at all.
    let absolute = sessions.values().any(|s| !s.spans.is_empty());
    let placed = absolute
        && sessions
            .values()
            .any(|s| s.first.is_some() && !s.directions());
    assert_eq!(
        map.contains("data-marks=\"explosion\""),
        placed,
        "{name}: explosion rings drawn or not against the decode: {sessions:?}"
    );
    // The legend explains the ring only where rings are drawn.
    // Catches a legend naming explosions on a map that draws none.
    assert_eq!(
        map.contains("explosion (0x29)"),
        placed,
        "{name}: the legend's explosion entry against the rings drawn"
    );
    let rows: Vec<&str> = problems
        .split("<table class=\"findings\">")
        .nth(1)
        .map(|t| {
            t.split("</table>")
                .next()
                .unwrap()
                .split("<tr>")
                .skip(2)
                .collect()
        })
        .unwrap_or_default();
    let want: Vec<(u64, u64)> = sessions
        .iter()
        .filter(|(_, s)| s.directions())
        .map(|(&k, s)| (k, s.first.unwrap()))
        .collect();
    assert_eq!(rows.len(), want.len(), "{name}: findings {rows:?}");
    for (row, (session, first)) in rows.iter().zip(&want) {
        assert!(
            row.contains("<td class=\"kind non_stock\">non_stock</td>"),
            "{row}"
        );
        assert!(
            row.contains(&format!("<td class=\"n\">{session}</td>")),
            "{row}"
        );
        assert!(row.contains(&format!("--frame {first}</code>")), "{row}");
        assert!(map.contains(&format!("of session {session} are not drawn")));
    }
    sessions
}

/// A generated session, and a copy whose explosion magnitudes are 1: each explosion's
/// datagram deciphered, its cv4 magnitude set, enciphered again (the UDP checksum
/// cleared, which IPv4 allows).
fn generated() -> (PathBuf, PathBuf) {
    let cap = tmp("explosions.pcapng");
    let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args([
            "-q",
            "synth",
            "--players",
            "3",
            "--minutes",
            "2",
            "--seed",
            "5",
            "-o",
        ])
        .arg(&cap)
        .status()
        .unwrap();
    assert!(status.success());
    let mut edits: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for r in decode(&cap) {
        for m in r["messages"].as_array().into_iter().flatten() {
            if m["name"] == "Explosion" && m["fragment"].is_null() {
                let start = m["offset"].as_u64().unwrap() + m["length"].as_u64().unwrap()
                    - m["game_length"].as_u64().unwrap();
                // Opcode, object id, three direction bytes: then the magnitude.
                edits
                    .entry(r["frame"].as_u64().unwrap())
                    .or_default()
                    .push(start as usize + 1 + 4 + 3);
            }
        }
    }
    assert!(!edits.is_empty(), "the generated session has explosions");
    let one = bcwire::game::compressed::cf16_encode(1.0).to_le_bytes();
    let mut pcap = PcapNg::read(&cap);
    let frames = pcap.frames();
    for (frame, at) in &edits {
        let Block::EnhancedPacket(p) = &mut pcap.blocks[frames[*frame as usize - 1]] else {
            panic!("frame {frame} is not an enhanced packet block");
        };
        let mut data = p.data.to_vec();
        // Ethernet, then IPv4 with its header length, then UDP's eight bytes.
        let ip = 14;
        let udp = ip + usize::from(data[ip] & 0x0F) * 4;
        data[udp + 6..udp + 8].copy_from_slice(&[0, 0]);
        let payload = &mut data[udp + 8..];
        bcwire::transport::cipher::decrypt(payload);
        for &i in at {
            payload[i..i + 2].copy_from_slice(&one);
        }
        bcwire::transport::cipher::encrypt(payload);
        p.data = data.into();
    }
    let edited = tmp("explosions_directions.pcapng");
    pcap.write(&edited);
    (cap, edited)
}

#[test]
fn explosions_that_are_directions_are_listed_not_drawn() {
    let (stock, directions) = generated();
    let s = check(&stock, "explosions_stock");
    assert!(
        s.values().any(|s| s.first.is_some() && !s.directions()),
        "the generated session's explosions are places: {s:?}"
    );
    // Catches drawing every 0x29 position as a place (rings round the origin).
    let d = check(&directions, "explosions_directions");
    assert!(
        d.values().any(Session::directions),
        "the edit made directions: {d:?}"
    );
    for (name, folder) in common::shared_captures() {
        check(
            &folder.join(format!("{name}.pcapng")),
            &format!("explosions_{name}"),
        );
    }
}
