//! A lean run (what `stats` and `info` ask for) yields the same records as a full run,
//! fields aside: same messages, opcodes, lengths, warnings and StateUpdate values.

use crate::common;

use bcwire::game::walk::EntrySet;
use bcwire::pipeline::record::{PacketBody, PacketRecord, TransportInfo};
use bcwire::pipeline::{self, Config, Control, FieldTrees, Pipeline, Sink};
use bcwire::report::names::Names;

struct Collect {
    detail: FieldTrees,
    records: Vec<String>,
}

impl Sink for Collect {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        let mut p = p.clone();
        if self.detail == FieldTrees::All {
            strip_fields(&mut p);
        }
        self.records.push(format!("{p:?}"));
        Ok(Control::Continue)
    }
    fn field_trees(&self) -> FieldTrees {
        self.detail
    }
}

/// What a lean run leaves out: fields of game messages (their typed bodies stay), and
/// of connection-management messages.
fn strip_fields(p: &mut PacketRecord) {
    let PacketBody::Game(g) = &mut p.body else {
        return;
    };
    for m in &mut g.messages {
        for game in m
            .game
            .iter_mut()
            .chain(m.assembled.iter_mut().map(|a| &mut a.game))
        {
            game.fields.clear();
        }
        if let TransportInfo::Low { fields, .. } = &mut m.transport {
            fields.clear();
        }
    }
}

fn run(path: &str, detail: FieldTrees) -> (Vec<String>, String) {
    let mut sink = Collect {
        detail,
        records: Vec::new(),
    };
    let reader = pipeline::open(path).unwrap();
    let summary = Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .unwrap();
    (sink.records, format!("{summary:?}"))
}

#[test]
fn lean_records_equal_full_records_without_fields() {
    let mut compared = 0;
    for (name, folder) in common::shared_captures() {
        for ext in ["pcap", "pcapng"] {
            let path = folder.join(format!("{name}.{ext}"));
            let path = path.to_str().unwrap();
            let (full, full_summary) = run(path, FieldTrees::All);
            let (lean, lean_summary) = run(path, FieldTrees::None);
            assert_eq!(full.len(), lean.len(), "{path}");
            for (a, b) in full.iter().zip(&lean) {
                assert_eq!(a, b, "{path}");
            }
            assert_eq!(full_summary, lean_summary, "{path}");
            compared += full.len();
        }
    }
    if common::shared_dir().is_some() {
        assert!(compared > 100, "records compared: {compared}");
    }
}

/// Each record as `decode --format jsonl` writes it, and how many StateUpdates came
/// without a whole field tree (one opens with its object id).
struct WriteJson {
    detail: FieldTrees,
    writer: bcwire::report::json_stream::PacketWriter,
    lines: Vec<String>,
    typed: usize,
}

impl Sink for WriteJson {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> anyhow::Result<Control> {
        if let PacketBody::Game(g) = &p.body {
            self.typed += g
                .messages
                .iter()
                .filter_map(|m| m.game.as_ref())
                .filter(|g| {
                    g.state_update().is_some() && !g.fields.iter().any(|f| f.name == "object_id")
                })
                .count();
        }
        let mut line = Vec::new();
        let client = names.client_name(p.session, p.client);
        self.writer.write_packet(
            &mut line,
            p,
            true,
            client.as_deref(),
            &|id| names.describe_object(p.session, id).map(Into::into),
            &|_| true,
        );
        self.lines.push(String::from_utf8(line).unwrap());
        Ok(Control::Continue)
    }
    fn field_trees(&self) -> FieldTrees {
        self.detail
    }
}

fn json_lines(path: &str, detail: FieldTrees) -> (Vec<String>, usize) {
    let mut sink = WriteJson {
        detail,
        writer: Default::default(),
        lines: Vec::new(),
        typed: 0,
    };
    let reader = pipeline::open(path).unwrap();
    Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .unwrap();
    (sink.lines, sink.typed)
}

/// JSON written from typed StateUpdates (what `decode --format jsonl` asks for) is the
/// JSON written from their field trees, on the shipped and the real captures.
#[test]
fn json_from_typed_state_updates_equals_json_from_field_trees() {
    let paths: Vec<String> = common::every_capture("pcap")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut typed_total = 0;
    // What `decode --format jsonl` asks for, alone and with a `-Y` that reads a few
    // StateUpdate fields.
    let selection = EntrySet::of(["speed", "subsystems"]).unwrap();
    let asked = [
        FieldTrees::TYPED_STATE_UPDATES,
        FieldTrees::TypedStateUpdates(selection),
    ];
    for path in &paths {
        let (full, none) = json_lines(path, FieldTrees::All);
        assert_eq!(none, 0, "{path}: a full run keeps every tree");
        for trees in asked {
            let (typed, typed_count) = json_lines(path, trees);
            assert_eq!(full.len(), typed.len(), "{path}");
            for (a, b) in full.iter().zip(&typed) {
                assert_eq!(a, b, "{path} {trees:?}");
            }
            typed_total += typed_count;
        }
    }
    assert!(
        typed_total > 100,
        "StateUpdates written from typed values: {typed_total}"
    );
}

/// Each record's Debug text, the full run's with only the top-level fields of `names`
/// kept (`None`: as the run made it).
struct Select {
    detail: FieldTrees,
    names: Option<&'static [&'static str]>,
    records: Vec<String>,
}

impl Sink for Select {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        let mut p = p.clone();
        if let (Some(names), PacketBody::Game(g)) = (self.names, &mut p.body) {
            for m in &mut g.messages {
                for game in m
                    .game
                    .iter_mut()
                    .chain(m.assembled.iter_mut().map(|a| &mut a.game))
                {
                    game.fields.retain(|f| names.contains(&f.name.as_ref()));
                }
            }
        }
        self.records.push(format!("{p:?}"));
        Ok(Control::Continue)
    }
    fn field_trees(&self) -> FieldTrees {
        self.detail
    }
}

fn run_select(
    path: &str,
    detail: FieldTrees,
    names: Option<&'static [&'static str]>,
) -> Vec<String> {
    let mut sink = Select {
        detail,
        names,
        records: Vec::new(),
    };
    let reader = pipeline::open(path).unwrap();
    Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .unwrap();
    sink.records
}

/// A run that asks for a few top-level fields by name (what `decode --fields` asks
/// for) yields the full run's records with every other top-level field left out: the
/// same values, spans and order, subtrees whole, on the shipped and the real captures.
#[test]
fn selected_fields_are_the_full_trees_fields_of_those_names() {
    const SETS: [&[&str]; 4] = [
        &["position", "subsystems"],
        &["damage", "force", "contacts"],
        &["player_name", "flags", "torpedo_type_name"],
        &["undecoded", "trailing", "power_block", "files"],
    ];
    let paths: Vec<String> = common::every_capture("pcapng")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut kept = 0;
    for path in &paths {
        for names in SETS {
            let set = EntrySet::of(names.iter().copied()).expect("registry names");
            let full = run_select(path, FieldTrees::All, Some(names));
            let only = run_select(path, FieldTrees::Only(set), None);
            assert_eq!(full.len(), only.len(), "{path}");
            for (a, b) in full.iter().zip(&only) {
                assert_eq!(a, b, "{path} {names:?}");
            }
            kept += only.iter().filter(|r| r.contains("Field {")).count();
        }
    }
    assert!(kept > 100, "records with a selected field: {kept}");
}
