//! A lean run (what `stats` and `info` ask for) yields the same records as a full run,
//! fields aside: same messages, opcodes, lengths, warnings and StateUpdate values.

mod common;

use bcwire::pipeline::record::{PacketBody, PacketRecord, TransportInfo};
use bcwire::pipeline::{self, Config, Control, Detail, Pipeline, Sink};
use bcwire::report::names::Names;

struct Collect {
    detail: Detail,
    records: Vec<String>,
}

impl Sink for Collect {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        let mut p = p.clone();
        if self.detail == Detail::Full {
            strip_fields(&mut p);
        }
        self.records.push(format!("{p:?}"));
        Ok(Control::Continue)
    }
    fn detail(&self) -> Detail {
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

fn run(path: &str, detail: Detail) -> (Vec<String>, String) {
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
            let (full, full_summary) = run(path, Detail::Full);
            let (lean, lean_summary) = run(path, Detail::Lean);
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
