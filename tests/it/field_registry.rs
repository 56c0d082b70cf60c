//! The field registry (`game::registry::GAME_FIELDS`) against what the decoders
//! produce: every field path decoded from the shipped captures, the shared real-peer
//! captures, synthetic sessions and a set of constructed messages (opcodes no capture
//! carries, non-stock and damaged forms) must have an entry of the same type that lists
//! the opcode it came with.
//!
//! The defect this catches: a decoder field added, renamed or retyped without its
//! registry entry, so that the table the display filter and `list fields` rely on no
//! longer names what the decoders produce. The static checks below catch an entry
//! added out of order, twice, with a name nobody can type, or without its vector
//! components and JSON twin.

use crate::common;
use bcwire::game::field::{Field, Value};
use bcwire::game::objects::ObjectRegistry;
use bcwire::game::opcodes::{self, DecodeContext};
use bcwire::game::registry::{lookup, FieldId, FieldType, GameField, GAME_FIELDS};
use bcwire::game::ships::ShipCatalog;
use bcwire::game::stateupdate;
use bcwire::pipeline::record::{PacketBody, PacketRecord, TransportInfo};
use bcwire::pipeline::{self, Config, Control, Pipeline, Sink};
use bcwire::report::names::Names;
use std::collections::{BTreeMap, BTreeSet};

/// Names whose value has another type under some opcode than the entry's, and that
/// other type. A naming rule to qualify them is still to come; until then each is one
/// entry, and these are the only mismatches allowed.
const TYPE_CLASHES: &[(&str, FieldType)] = &[
    // A non-stock 19-byte TorpedoFire carries a cv4 aim point instead of the cvb group.
    ("aim_point", FieldType::Vec3),
    // A start-warp event tail's destination vector, after the header's object.
    ("destination", FieldType::Vec3),
    // A player-list event tail's u8 (0x17); the transport peer-info / disconnect hex.
    ("peer_id", FieldType::Uint),
    ("peer_id", FieldType::Hex),
];

/// Entries no input of this test decodes: the fields of a transport boot (0x04), which
/// neither the captures nor the simulator contain (transport bodies come only from
/// captures).
const NOT_DECODED_HERE: &[&str] = &["boot_reason", "boot_reason_name", "slot"];

/// Where a field was decoded: a game message of an opcode, or a connection-management
/// message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    Opcode(u8),
    Transport,
}

/// Every (path, origin, type) decoded, with a place it was seen, and every opcode
/// decoded (with fields or without).
#[derive(Default)]
struct Seen {
    fields: BTreeMap<(String, Origin, &'static str), String>,
    /// Every (path, entry a field at that path carries), with a place it was seen.
    carried: BTreeMap<(String, Option<&'static str>), String>,
    opcodes: BTreeSet<u8>,
}

impl Seen {
    fn add(&mut self, fields: &[Field], origin: Origin, place: &str) {
        if let Origin::Opcode(op) = origin {
            self.opcodes.insert(op);
        }
        let mut out = Vec::new();
        paths(fields, "", &mut out);
        for (path, ty, id) in out {
            let carried = id.entry().map(|e| e.name);
            self.carried
                .entry((path.clone(), carried))
                .or_insert_with(|| place.to_string());
            self.fields
                .entry((path, origin, ty.as_str()))
                .or_insert_with(|| place.to_string());
        }
    }
}

/// Field paths with list elements unmarked: `subsystems[].condition_pct` is
/// `subsystems.condition_pct` (the walk of `commands::list`'s `fields_seen`).
fn paths(fields: &[Field], prefix: &str, out: &mut Vec<(String, FieldType, FieldId)>) {
    for f in fields {
        let path = format!("{prefix}{}", f.name);
        value_paths(&f.value, &path, out);
        out.push((path, FieldType::of(&f.value), f.id));
    }
}

fn value_paths(v: &Value, path: &str, out: &mut Vec<(String, FieldType, FieldId)>) {
    match v {
        Value::Group(children) => paths(children, &format!("{path}."), out),
        Value::List(items) => {
            for item in items {
                if let Value::Group(children) = item {
                    paths(children, &format!("{path}."), out);
                }
            }
        }
        _ => {}
    }
}

struct Collect<'a> {
    seen: &'a mut Seen,
    place: String,
}

impl Sink for Collect<'_> {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        let PacketBody::Game(g) = &p.body else {
            return Ok(Control::Continue);
        };
        let place = format!("{} frame {}", self.place, p.frame);
        for m in &g.messages {
            for game in m.game.iter().chain(m.assembled.iter().map(|a| &a.game)) {
                self.seen
                    .add(&game.fields, Origin::Opcode(game.opcode), &place);
            }
            if let TransportInfo::Low { fields, .. } = &m.transport {
                self.seen.add(fields, Origin::Transport, &place);
            }
        }
        Ok(Control::Continue)
    }
}

fn run(reader: bcwire::capture::CaptureReader, place: &str, seen: &mut Seen) {
    let mut sink = Collect {
        seen,
        place: place.to_string(),
    };
    Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .unwrap_or_else(|e| panic!("{place}: {e}"));
}

fn run_file(path: &std::path::Path, seen: &mut Seen) {
    let p = path.to_str().expect("utf-8 path");
    run(pipeline::open(p).unwrap(), p, seen);
}

fn run_synth(args: &bcwire::synth::SynthArgs, place: &str, seen: &mut Seen) {
    let (_, bytes) = bcwire::synth::generate(args, Vec::new()).unwrap();
    let reader = bcwire::capture::CaptureReader::new(std::io::Cursor::new(bytes)).unwrap();
    run(reader, place, seen);
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// An Akira creation captured in the openbc sessions (0x03, slot 0, team 2).
const AKIRA: &str = "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff";

/// Messages no capture is sure to carry: one per named opcode (the decoders' own clean
/// vectors) and the non-stock and damaged forms with fields of their own.
fn constructed() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "000c022b3e610025004d756c7469706c617965722e457069736f64652e4d697373696f6e312e4d697373696f6e31",
        "01",
        "0201 09800000 10000440 02 010203",
        AKIRA,
        "0402",
        "0601010000df008000000000401a000040",
        "06298100004e00800000000000ffffff3f0000000000001841",
        "0728810000d800800000000000050000400000000000000000",
        "0801010000da00800000000000050000 40",
        "090c010000dc00800000000000050000 40ffff0340",
        "0a04010000 6c008000 00000000 05000040 01",
        "0b01010000df008000 00000000 05000040",
        "0c02000000 00000000 00000000 00000000",
        "0d0c010000580080000000000005000040ffff0340",
        "0e02000000e2008000 00000000 05000040",
        "0f02000000e4008000 00000000 05000040",
        "102a810000ec0080000000000005000040 064d756c746932 0000803f 000000c0 00006040 00001041",
        "110c010000760080000000000005000040 07000040",
        "1205010000e0008000000000000500004000",
        "13",
        "14ffffff3f",
        "15248100005000800000000000ffff034001277711b89d472544",
        "1621",
        "1766080000f100800000000000ffffff3f02",
        "1805004361647932",
        "1910000040020100 7f00 ffff0340 7f000040",
        "1affff03400100007f02ffff0740",
        "1b05010000fe008000ffffff3f0500004003",
        "1d01000000",
        "1effff0340",
        "1fffffff3f060000004d756c74693100",
        "20000800736372697074732f07004170702e70796320",
        "210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700",
        "22 0700 4170702e707963",
        "23 0700 4170702e707963",
        "25 0500 612e707963 010203",
        "27",
        "28",
        "29ffff0740214365df54aa52e360",
        "2a20",
        "2c0100000002006767",
        "2d030000000200676f",
        "350801ffff",
        "3600000000020000000100000000",
        "3702000000000000000000000000000000",
        "3802000000",
        "39",
        "3f 02000000 01000000 00000000 0a000000 01",
        "40 01 03000000 1e000000",
        "41 04000000 00",
        // Settings with checksum-correction data (third packed bit set).
        "00 00004841 66 03 01004d 090807",
        // An opcode without a known layout; trailing bytes; a short Settings.
        "cd010203",
        "2800",
        "000c022b3e6100ff00",
        // Events: too short for the header; an undocumented class; a char event and a
        // subsystem-control event with opcodes that do not name their byte; an
        // object-pointer tail the opcode does not name; a player list in 0x17.
        "0801020304",
        "06 34120000 4e008000 00000000 00000000 0102",
        "0a 05010000 6c008000 00000000 05000040 01",
        "12 04010000 e0008000 00000000 05000040 01",
        "0c 0c010000 76008000 00000000 05000040 07000040",
        // TorpedoFire without a target, and with a non-stock 5-byte aim point.
        "19 10000040 02 04 7f0000",
        "19 10000040 02 01 7f0000 ffff0340 7f0000 0040",
        // Creations: an undocumented object class; a synthetic prefix; a species
        // without a layout (both below).
        "02 01 34120000 10000440 0102",
        // Mission init with a time limit; a score change with a killer and updates.
        "35 08 01 0a 58020000 0a",
        "36 02000000 01000000 0a000000 03000000 01000000 01 02000000 05000000",
        // StateUpdates of an unknown class: a raw block; an odd power block; bytes
        // after the last field; a header cut short.
        "1cffffff3fcccc4c3e2000ffffff20ffffffffffff20",
        "1c ffffff3f 00000000 80 01cc02",
        "1c ffffff3f 00000000 10 0000 ff",
        "1cffffff3f00",
    ]
    .iter()
    .map(|s| hex(s))
    .collect();
    let akira = hex(AKIRA);
    let mut synthetic = akira.clone();
    synthetic[3..7].copy_from_slice(&[1, 0, 0, 0]);
    v.push(synthetic);
    let mut no_layout = akira.clone();
    no_layout[11] = 20; // CommArray: a species without a stock layout
    v.push(no_layout);
    // The same ship created by 0x02 ObjCreate, which has no team byte.
    let mut objcreate = akira.clone();
    objcreate.remove(2);
    objcreate[0] = 0x02;
    v.push(objcreate);
    // Not here: a creation cut inside its subsystem blob. Its decoder leaves the records
    // read so far as `record` groups and the cut record's fields at the top level,
    // outside the naming rule (as do a checksum tree, a collision's contacts and a score
    // change's updates cut inside their repeated part).
    v
}

/// Decode [`constructed`] and some StateUpdates of a known class (the Akira).
fn decode_constructed(seen: &mut Seen) {
    let registry = ObjectRegistry::default();
    let catalog = ShipCatalog::stock();
    let ctx = DecodeContext::new(&registry, &catalog);
    for msg in constructed() {
        let m = opcodes::decode(&msg, &ctx);
        seen.add(&m.fields, Origin::Opcode(m.opcode), "constructed message");
    }
    // Seed 001 examples 1 (client power block) and 2 (host subsystem block), then a
    // block the Akira layout does not read.
    for s in [
        "1CFFFFFF3F0080E1419D0000B042000084C2000092C22137FB0B684630BB5E000001CC02CC04CC",
        "1CFFFFFF3F00A01B422008FF60FFFFFFFFFFFFFFFFFFFFFFFF",
        "1CFFFFFF3F00A01B42200BFF",
    ] {
        let m = stateupdate::decode(&hex(s), Some(1), &catalog);
        seen.add(
            &m.fields,
            Origin::Opcode(m.opcode),
            "constructed StateUpdate",
        );
    }
}

fn allowed_type(entry: &GameField, ty: &str) -> bool {
    entry.ty.as_str() == ty
        || TYPE_CLASHES
            .iter()
            .any(|(n, t)| *n == entry.name && t.as_str() == ty)
}

/// Every field decoded from the shipped and shared captures, two synthetic sessions
/// and the constructed messages; decoded once for the tests that read it.
fn seen_everywhere() -> &'static Seen {
    static SEEN: std::sync::OnceLock<Seen> = std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let mut seen = Seen::default();
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
        let mut files: Vec<_> = std::fs::read_dir(&shipped)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .collect();
        files.sort();
        assert!(files.len() >= 3, "shipped captures: {files:?}");
        for f in &files {
            run_file(f, &mut seen);
        }
        let shared = common::shared_captures();
        for (name, folder) in &shared {
            run_file(&folder.join(format!("{name}.pcapng")), &mut seen);
        }
        // The session `bcwire list fields` decodes, and the stock-battle preset (0x15
        // collisions, the measured message mix).
        let mut args = bcwire::synth::SynthArgs::new("-");
        args.players = 4;
        args.minutes = Some(2.0);
        run_synth(&args, "synthetic session", &mut seen);
        let mut battle = bcwire::synth::SynthArgs::new("-");
        battle.preset = Some(bcwire::synth::Preset::StockBattle);
        battle.minutes = Some(1.0);
        battle.loss = 0.02;
        run_synth(&battle, "synth --preset stock-battle", &mut seen);
        decode_constructed(&mut seen);
        seen
    })
}

#[test]
fn every_field_carries_the_entry_its_position_names() {
    // The entry a field carries (set where it was decoded) is the one its place in
    // the tree names: what readers that compare entries rely on.
    let seen = seen_everywhere();
    let wrong: Vec<String> = seen
        .carried
        .iter()
        .filter(|((path, carried), _)| lookup(path).map(|e| e.name) != *carried)
        .map(|((path, carried), place)| format!("{path} ({place}) carries {carried:?}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "fields with another entry:\n{}",
        wrong.join("\n")
    );
    assert!(seen.carried.len() >= seen.fields.len() / 2);
}

#[test]
fn every_decoded_field_has_a_registry_entry() {
    let seen = seen_everywhere();
    let shared = common::shared_captures();
    let mut problems = Vec::new();
    for ((path, origin, ty), place) in &seen.fields {
        let Some(entry) = lookup(path) else {
            problems.push(format!(
                "{path} ({ty}, {origin:?}, {place}): no registry entry"
            ));
            continue;
        };
        if !allowed_type(entry, ty) {
            problems.push(format!(
                "{path} ({origin:?}, {place}): decoded as {ty}, registered as {}",
                entry.ty.as_str()
            ));
        }
        match origin {
            Origin::Opcode(op) if !entry.opcodes.contains(op) => problems.push(format!(
                "{path} ({place}): opcode 0x{op:02X} not among {:02X?}",
                entry.opcodes
            )),
            Origin::Transport if !entry.description.contains("Transport: ") => {
                problems.push(format!(
                    "{path} ({place}): a transport field without a \"Transport: \" description"
                ))
            }
            _ => {}
        }
    }
    assert!(
        problems.is_empty(),
        "decoded fields the registry does not describe:\n{}",
        problems.join("\n")
    );

    // And the other way: every entry names a field some input decodes, but for the
    // JSON twins, the vector components (not fields of their own) and these.
    let decoded: BTreeSet<&str> = seen
        .fields
        .keys()
        .filter_map(|(p, _, _)| lookup(p).map(|e| e.name))
        .collect();
    let component = |name: &str| {
        name.rsplit_once('.').is_some_and(|(parent, c)| {
            ["x", "y", "z"].contains(&c) && GAME_FIELDS.iter().any(|f| f.name == parent)
        }) && !name.starts_with("orientation.")
    };
    let unseen: Vec<&str> = GAME_FIELDS
        .iter()
        .map(|f| f.name)
        .filter(|n| !decoded.contains(n) && !component(n))
        .filter(|n| !entry(n).description.contains("(JSON twin)"))
        .collect();
    assert_eq!(unseen, NOT_DECODED_HERE, "entries no input decodes");

    // The inputs reach what they are here for: every named opcode and the transport.
    for (op, name) in opcodes::opcode_names() {
        assert!(seen.opcodes.contains(&op), "no {name} (0x{op:02X}) decoded");
    }
    assert!(seen
        .fields
        .keys()
        .any(|(p, o, _)| *o == Origin::Transport && p == "address"));
    if !shared.is_empty() {
        assert!(seen.fields.len() > 300, "{} paths", seen.fields.len());
    }
}

fn entry(name: &str) -> &'static GameField {
    GAME_FIELDS
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no entry {name}"))
}

#[test]
fn the_table_is_sorted_unique_and_typeable() {
    for w in GAME_FIELDS.windows(2) {
        assert!(
            w[0].name < w[1].name,
            "out of order or repeated: {} then {}",
            w[0].name,
            w[1].name
        );
    }
    for f in GAME_FIELDS {
        let name_ok = !f.name.is_empty()
            && f.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
            && f.name.split('.').all(|seg| !seg.is_empty());
        assert!(name_ok, "name {:?}", f.name);
        assert!(
            !f.description.is_empty() && !f.description.contains('\n'),
            "{}: one-line description",
            f.name
        );
        assert!(
            f.opcodes.windows(2).all(|w| w[0] < w[1]),
            "{}: opcodes not sorted",
            f.name
        );
        // Connection-management fields have no opcode, and say so.
        assert_eq!(
            f.opcodes.is_empty(),
            f.description.starts_with("Transport: "),
            "{}: opcodes {:02X?}, description {:?}",
            f.name,
            f.opcodes,
            f.description
        );
        assert_eq!(lookup(f.name).map(|e| e.name), Some(f.name));
    }
}

#[test]
fn vectors_have_components_and_ids_have_json_twins() {
    let vec3 = |f: &GameField| {
        f.ty == FieldType::Vec3
            || TYPE_CLASHES
                .iter()
                .any(|(n, t)| *n == f.name && *t == FieldType::Vec3)
    };
    let hexish = |f: &GameField| {
        matches!(f.ty, FieldType::Hex | FieldType::ObjectId)
            || TYPE_CLASHES
                .iter()
                .any(|(n, t)| *n == f.name && *t == FieldType::Hex)
    };
    for f in GAME_FIELDS {
        if vec3(f) {
            for c in ["x", "y", "z"] {
                let comp = entry(&format!("{}.{c}", f.name));
                assert_eq!(comp.ty, FieldType::Float, "{}", comp.name);
                if f.ty == FieldType::Vec3 {
                    assert_eq!(comp.unit, f.unit, "{}", comp.name);
                }
            }
        }
        if hexish(f) {
            let twin = entry(&format!("{}_hex", f.name));
            assert_eq!(twin.ty, FieldType::Text, "{}", twin.name);
            assert!(twin.description.contains("(JSON twin)"), "{}", twin.name);
        }
        if f.description.contains("(JSON twin)") {
            let base = f.name.strip_suffix("_hex").expect("a twin ends in _hex");
            assert!(hexish(entry(base)), "{} twins {base}", f.name);
        }
    }
}

#[test]
fn catch_all_fields_list_the_opcodes_they_can_come_with() {
    let known: Vec<u8> = opcodes::opcode_names().map(|(op, _)| op).collect();
    assert_eq!(entry("trailing").opcodes, &known[..]);
    let unknown: Vec<u8> = (0..=255u8).filter(|op| !known.contains(op)).collect();
    assert_eq!(entry("byte_count").opcodes, &unknown[..]);
    assert_eq!(entry("raw").opcodes, &unknown[..]);
}

/// Every name `bcwire list fields --format json` prints is accepted, as printed, by
/// `-Y` and by `--fields` (exit 0, no warning), and `--fields` gives the same value for
/// it in CSV as in JSON Lines, message by message (hex-based facts as `0x` text in CSV,
/// as numbers in JSON; several values `;`-joined in CSV, an array in JSON).
// Catches: a listed name that one option refuses or reads differently (`client` an index
// in one and a name in the other, `opcode` 32 in one and 0x20 in the other, a `_hex`
// twin that comes out empty).
#[test]
fn every_listed_name_works_in_both_options_with_one_value() {
    let list = common::bcwire_json(&["list", "fields", "--format", "json"]);
    let entries = list.as_array().expect("a list");
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let hex: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| e["type"] == "hex" && e["kind"] == "fact")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // Values that are one JSON array or object by themselves (a vector, a list, a group).
    // (A name that is also a record fact is the fact: facts are read first.)
    let facts: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| e["kind"] == "fact")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let whole: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| matches!(e["type"].as_str(), Some("vec3" | "list" | "group")))
        .map(|e| e["name"].as_str().unwrap())
        .filter(|n| !facts.contains(n))
        .collect();
    let list_like: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| matches!(e["type"].as_str(), Some("vec3" | "list")))
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let sample = common::shipped_capture("sample.pcapng");
    let sample = sample.to_str().unwrap();

    // -Y: every name in one expression, each a test of existence.
    let expr = names.join(" or ");
    let y = common::bcwire(&["-q", "decode", "-Y", &expr, sample]);
    let err = String::from_utf8_lossy(&y.stderr);
    assert_eq!(y.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");

    // --fields: every name as a column, CSV against JSON Lines.
    let cols = names.join(",");
    let run = |format: &str| {
        let o = common::bcwire(&["decode", "--format", format, "--fields", &cols, sample]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(!err.contains("warning"), "{err}");
        String::from_utf8(o.stdout).unwrap()
    };
    let csv = run("csv");
    let jsonl = run("jsonl");
    let records = csv_records(&csv);
    let mut rows = records.iter();
    let header = rows.next().expect("a header");
    assert_eq!(header.iter().map(String::as_str).collect::<Vec<_>>(), names);
    let mut compared = 0usize;
    let mut held: std::collections::HashSet<&str> = Default::default();
    for (cells, line) in rows.zip(jsonl.lines()) {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        for (k, name) in names.iter().enumerate() {
            let v = &rec[*name];
            if !v.is_null() {
                held.insert(name);
            }
            // One vector, list or group is one value; an array of them is several.
            let one_value = match v {
                serde_json::Value::Object(_) => true,
                // A list (of anything) or a vector; a repeated one is an array of arrays.
                serde_json::Value::Array(items) => {
                    list_like.contains(name) && !items.iter().any(|i| i.is_array())
                }
                _ => false,
            };
            let want = if whole.contains(name) && one_value {
                v.to_string()
            } else {
                csv_text(v, hex.contains(name))
            };
            let got = &cells[k];
            let same = match (got.parse::<f64>(), v.as_f64()) {
                // The CSV writes times with six decimals.
                (Ok(a), Some(b)) if !hex.contains(name) => (a - b).abs() < 5e-7 * b.abs().max(1.0),
                _ => *got == want,
            };
            if !same {
                // Where the two texts part, with some context.
                let at = got
                    .chars()
                    .zip(want.chars())
                    .take_while(|(a, b)| a == b)
                    .count();
                let near = |t: &str| {
                    t.chars()
                        .skip(at.saturating_sub(40))
                        .take(80)
                        .collect::<String>()
                };
                panic!(
                    "{name}: CSV and JSON Lines part at character {at}: CSV …{}… JSON …{}…",
                    near(got),
                    near(&want)
                );
            }
            compared += 1;
        }
    }
    assert_eq!(records.len() - 1, jsonl.lines().count());
    assert!(compared > 1000);
    // The sample holds most names; those it lacks are of opcodes it never sends.
    assert!(
        held.len() * 2 > names.len(),
        "{} of {} held",
        held.len(),
        names.len()
    );
}

/// A JSON Lines value as the CSV writes it.
fn csv_text(v: &serde_json::Value, hex: bool) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if hex => hex_text(n.as_u64().unwrap()),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| match i {
                serde_json::Value::Array(_) | serde_json::Value::Object(_) => i.to_string(),
                i => csv_text(i, hex),
            })
            .collect::<Vec<_>>()
            .join(";"),
        other => other.to_string(),
    }
}

/// `0x` and the natural width (2, 4, 8 or 16 digits), as bcwire prints hex numbers.
fn hex_text(n: u64) -> String {
    match n {
        0..=0xFF => format!("0x{n:02X}"),
        0x100..=0xFFFF => format!("0x{n:04X}"),
        0x1_0000..=0xFFFF_FFFF => format!("0x{n:08X}"),
        _ => format!("0x{n:016X}"),
    }
}

/// The records of RFC 4180 CSV text (a quoted field may hold a line break).
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            ('\n', false) => {
                fields.push(std::mem::take(&mut cur));
                records.push(std::mem::take(&mut fields));
            }
            (c, _) => cur.push(c),
        }
    }
    if !cur.is_empty() || !fields.is_empty() {
        fields.push(cur);
        records.push(fields);
    }
    records
}

/// The serialized events' opcodes, from the protocol reference's opcode table.
const EVENT_OPCODES_BY_HAND: &[u64] = &[
    0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15, 0x17, 0x1B,
];

/// The value a qualified name should read in one message of the full JSON Lines
/// record, worked out from the record alone: the field of the message's own game
/// message (else the one it completes, else a connection-management body) when the
/// message is of the qualifier's kind.
fn qualified_oracle(m: &serde_json::Value, name: &str) -> serde_json::Value {
    let (qualifier, path) = name.split_once('.').unwrap();
    let (fields, in_scope) = if let Some(op) = m["opcode"].as_u64() {
        let in_scope = match qualifier {
            "event" => EVENT_OPCODES_BY_HAND.contains(&op),
            q => m["name"].as_str().unwrap().to_ascii_lowercase() == q,
        };
        (&m["fields"], in_scope)
    } else if let Some(a) = m.get("assembled").filter(|a| !a.is_null()) {
        let op = a["opcode"].as_u64().unwrap();
        let in_scope = match qualifier {
            "event" => EVENT_OPCODES_BY_HAND.contains(&op),
            q => a["name"].as_str().unwrap().to_ascii_lowercase() == q,
        };
        (&a["fields"], in_scope)
    } else {
        (&m["fields"], m["transport_name"] == qualifier)
    };
    if in_scope {
        fields[path].clone()
    } else {
        serde_json::Value::Null
    }
}

// Catches: a qualified name that reads its field in messages of another opcode
// (`stateupdate.flags` giving a TorpedoFire's flags), misses a message it should read
// (a connection-management body, a reassembled message), or a `-Y` test on it that
// keeps other messages.
#[test]
fn qualified_names_read_only_their_messages() {
    let names = [
        "stateupdate.flags",
        "torpedofire.flags",
        "beamfire.flags",
        "score.peer_id",
        "peer_info.name",
        "peer_info.peer_id",
        "chatmessage.text",
        "event.class_id",
        "objcreateteam.class_id",
        "stateupdate.game_time",
        "settings.game_time",
    ];
    let mut inputs = vec![common::shipped_capture("sample.pcapng")];
    inputs.extend(common::shared_file(
        "captures/openbc/b2_valentines_replay/b2_valentines_replay.pcapng",
    ));
    let mut held = std::collections::BTreeMap::<&str, usize>::new();
    for input in &inputs {
        let input = input.to_str().unwrap();
        let full = common::bcwire(&["decode", "--format", "jsonl", input]);
        assert!(full.status.success());
        let messages: Vec<serde_json::Value> = String::from_utf8(full.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "packet")
            // A datagram without messages (GameSpy's) is one row of its own.
            .flat_map(|r| match r["messages"].as_array() {
                Some(m) if !m.is_empty() => m.clone(),
                _ => vec![serde_json::Value::Null],
            })
            .collect();
        let cols = format!("frame,{}", names.join(","));
        let sel = common::bcwire(&["decode", "--format", "jsonl", "--fields", &cols, input]);
        assert!(
            sel.status.success(),
            "{}",
            String::from_utf8_lossy(&sel.stderr)
        );
        let rows: Vec<serde_json::Value> = String::from_utf8(sel.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), messages.len(), "{input}: one row per message");
        for (row, m) in rows.iter().zip(&messages) {
            for name in names {
                let want = qualified_oracle(m, name);
                assert_eq!(row[name], want, "{input} frame {}: {name}", row["frame"]);
                if !want.is_null() {
                    *held.entry(name).or_default() += 1;
                }
            }
        }
        // `-Y NAME` keeps exactly the messages that hold it.
        for name in names {
            let want = messages
                .iter()
                .filter(|m| !qualified_oracle(m, name).is_null())
                .count();
            let y = common::bcwire(&["decode", "--format", "jsonl", "-Y", name, input]);
            assert!(y.status.success(), "{}", String::from_utf8_lossy(&y.stderr));
            let got: usize = String::from_utf8(y.stdout)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|r| r["type"] == "packet")
                .map(|r| r["messages"].as_array().map_or(0, Vec::len))
                .sum();
            assert_eq!(got, want, "{input}: -Y {name}");
        }
    }
    // The inputs hold every one of these names somewhere, so no check above is empty.
    for name in names {
        assert!(
            held.get(name).copied().unwrap_or(0) > 0,
            "no message holds {name}"
        );
    }
}

/// The files that write records, columns or filters from decoded values: a fact's or
/// a field's name comes to them from the facts table or the registry.
const WRITERS: &[&str] = &[
    "src/report/json_stream.rs",
    "src/report/json_state_update.rs",
    "src/report/fingerprint.rs",
    "src/report/parquet.rs",
    "src/report/select.rs",
    "src/report/decode.rs",
    "src/pipeline/display.rs",
];

/// Literals in those files that are spelt like a name but are something else, each
/// with its reason.
const NOT_NAMES: &[(&str, &str)] = &[
    // A warning object's own key: the byte offset of the problem, not `offset` the fact.
    ("src/report/json_stream.rs", "offset"),
    // The contract's `assembled.length`: the completed game message's length.
    ("src/report/json_stream.rs", "length"),
    // The input's name under several inputs (a decoded checksum tree's leaf is `file`).
    ("src/report/json_stream.rs", "file"),
    ("src/report/select.rs", "file"),
    // The contract's `fragment.index` and `ack.flags`: transport header values.
    ("src/report/json_stream.rs", "index"),
    ("src/report/json_stream.rs", "flags"),
    // The table's word for a keepalive message.
    ("src/report/decode.rs", "keepalive"),
];

/// Every string literal of a file's code (tests and comments left out).
fn code_literals(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('"') {
            // A byte or raw string prefix does not matter: only plain names are wanted.
            let after = &rest[start + 1..];
            let Some(end) = after.find('"') else { break };
            out.push(after[..end].to_string());
            rest = &after[end + 1..];
        }
    }
    out
}

// Catches: a record fact or a decoded field spelt again in a writer, where a rename in
// the table would leave that writer behind (the JSON writers, Parquet and the CSV
// header spelt `frame`, `game_time` and `condition_pct` on their own).
#[test]
fn writers_take_names_from_the_tables() {
    let facts: BTreeSet<&str> = bcwire::pipeline::facts::FACTS
        .iter()
        .map(|f| f.name)
        .collect();
    let fields: BTreeSet<&str> = GAME_FIELDS
        .iter()
        .flat_map(|f| [f.name, f.name.rsplit('.').next().unwrap()])
        .collect();
    let mut spelt = Vec::new();
    for file in WRITERS {
        let text =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
                .unwrap();
        for lit in code_literals(&text) {
            let is_name = facts.contains(lit.as_str()) || fields.contains(lit.as_str());
            if is_name && !NOT_NAMES.contains(&(*file, lit.as_str())) {
                spelt.push(format!("{file}: \"{lit}\""));
            }
        }
    }
    spelt.sort();
    spelt.dedup();
    assert!(
        spelt.is_empty(),
        "names spelt outside the tables:\n{}",
        spelt.join("\n")
    );
}

/// A capture of one client sending every [`constructed`] message (the Akira creation
/// first, so that StateUpdates of its object read the Akira layout, then seed 001's
/// StateUpdates of it), and the host booting it (transport type 0x04), built with the
/// library's frame and datagram writers and enciphered as the game does.
fn every_opcode_capture() -> Vec<u8> {
    use bcwire::capture::{link_type, CaptureWriter, Endian, TsResolution};
    use bcwire::net::build::{frame_udp, BuildOptions};
    use bcwire::transport::cipher;
    use bcwire::transport::packet::{emit_packet, DataMessage, MessageBody};
    let server: std::net::SocketAddr = "10.0.0.1:22101".parse().unwrap();
    let client: std::net::SocketAddr = "10.0.0.2:40000".parse().unwrap();
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .unwrap();
    let mut t = 1_700_000_000_000_000_000i64;
    let mut ip_id = 1;
    let mut send = |src, dst, plain: &[u8]| {
        let mut d = plain.to_vec();
        cipher::encrypt(&mut d);
        let opts = BuildOptions {
            ip_id,
            ..BuildOptions::default()
        };
        ip_id += 1;
        for f in frame_udp(link_type::ETHERNET, src, dst, &d, &opts).unwrap() {
            t += 10_000_000;
            w.write_frame(0, t, f.len() as u32, &f).unwrap();
        }
    };
    let mut messages = vec![hex(AKIRA)];
    messages.extend(
        [
            "1CFFFFFF3F0080E1419D0000B042000084C2000092C22137FB0B684630BB5E000001CC02CC04CC",
            "1CFFFFFF3F00A01B422008FF60FFFFFFFFFFFFFFFFFFFFFFFF",
            "1CFFFFFF3F00A01B42200BFF",
        ]
        .map(hex),
    );
    messages.extend(constructed());
    for (seq, game) in messages.iter().enumerate() {
        let body =
            MessageBody::Data(DataMessage::new(Some(seq as u16), false, None, game.len()).unwrap());
        send(client, server, &emit_packet(2, &[(&body, game)]).unwrap());
    }
    // A reliable boot: type 0x04, flags and length 0x8007 (reliable, 7 bytes in all),
    // seq 0, reason 3 (server full), slot 1.
    send(server, client, &hex("01 01 04 0780 0000 03 01"));
    w.into_inner()
}

// Every name `bcwire list fields` lists is held by some message of the shipped
// captures, the shared real captures or a capture of every opcode's messages (the
// stock forms and the non-stock and damaged ones with fields of their own): a listed
// name no input holds is a name nobody can have tested.
// Catches: a registry entry or qualified name whose field no decoder writes under that
// name (a rename in a decoder, a qualifier that names no message carrying it).
#[test]
fn every_listed_name_is_held_by_some_message() {
    let list = common::bcwire_json(&["list", "fields", "--format", "json"]);
    let names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let built = tmp.path().join("every-opcode.pcap");
    std::fs::write(&built, every_opcode_capture()).unwrap();
    let mut inputs: Vec<std::path::PathBuf> =
        std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .collect();
    for (name, folder) in common::shared_captures() {
        inputs.push(folder.join(format!("{name}.pcapng")));
    }
    inputs.push(built);
    let cols = names.join(",");
    let mut held = std::collections::BTreeSet::new();
    for input in &inputs {
        let out = common::bcwire(&[
            "decode",
            "--format",
            "jsonl",
            "--fields",
            &cols,
            input.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            for (k, v) in r.as_object().unwrap() {
                if !v.is_null() {
                    held.insert(k.clone());
                }
            }
        }
    }
    // The one entry that stands for names the ship layouts give (each child's key).
    let stand_ins = ["subsystems.children_pct.child"];
    let unheld: Vec<&String> = names
        .iter()
        .filter(|n| !held.contains(*n) && !stand_ins.contains(&n.as_str()))
        .collect();
    assert!(unheld.is_empty(), "listed names no input holds: {unheld:?}");
}

// The opcodes a decoded message may end in trailing bytes are the dispatcher's known
// opcodes, every one of them (the registry's own list of them, checked here since the
// registry does not import the dispatcher).
// Catches: an opcode given a decoder without its registry entries, or the other way.
#[test]
fn trailing_bytes_entry_lists_every_known_opcode() {
    let known: Vec<u8> = opcodes::opcode_names().map(|(op, _)| op).collect();
    assert_eq!(lookup("trailing").unwrap().opcodes, &known[..]);
}
