//! The pipeline may read ahead (deciphering game datagrams in groups) and may do so on
//! a thread of its own. Every way must give the same records and summary, and a sink
//! that stops early must see exactly the records it would have seen one frame at a
//! time, with only the frames up to its last record counted.

use crate::common;

use bcwire::pipeline::record::PacketRecord;
use bcwire::pipeline::{self, Config, Control, FieldTrees, Pipeline, Sink};
use bcwire::report::names::Names;

struct StopAfter {
    limit: usize,
    records: Vec<(u64, String)>,
}

impl Sink for StopAfter {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        self.records.push((p.frame, format!("{p:?}")));
        Ok(if self.records.len() >= self.limit {
            Control::Stop
        } else {
            Control::Continue
        })
    }
    fn field_trees(&self) -> FieldTrees {
        FieldTrees::All
    }
}

/// One frame at a time, grouped on this thread, grouped on a reading thread.
const MODES: [(bool, bool); 3] = [(false, false), (true, false), (true, true)];

fn run(
    path: &str,
    limit: usize,
    (read_ahead, front_thread): (bool, bool),
) -> (Vec<(u64, String)>, String, u64) {
    let mut sink = StopAfter {
        limit,
        records: Vec::new(),
    };
    let config = Config {
        read_ahead,
        front_thread,
        ..Config::default()
    };
    let reader = pipeline::open(path).unwrap();
    let summary = Pipeline::new(config).run(reader, &mut sink).unwrap();
    let frames = summary.frames;
    (sink.records, format!("{summary:?}"), frames)
}

fn inputs() -> Vec<String> {
    let mut paths: Vec<String> = ["sample.pcapng", "mtu400-null.pcapng", "duel-sll2.pcap"]
        .iter()
        .map(|f| format!("captures/{f}"))
        .collect();
    for name in ["a_single_client", "b2_valentines_replay"] {
        if let Some(p) = common::shared_file(&format!("captures/openbc/{name}/{name}.pcapng")) {
            paths.push(p.to_string_lossy().into_owned());
        }
    }
    paths
}

#[test]
fn every_mode_gives_the_same_records_and_summary() {
    for path in inputs() {
        let one_by_one = run(&path, usize::MAX, MODES[0]);
        assert!(
            one_by_one.0.len() > 20,
            "{path}: {} records",
            one_by_one.0.len()
        );
        for mode in &MODES[1..] {
            let other = run(&path, usize::MAX, *mode);
            assert_eq!(other.0, one_by_one.0, "{path} {mode:?} records");
            assert_eq!(other.1, one_by_one.1, "{path} {mode:?} summary");
        }
    }
}

#[test]
fn stopping_at_any_record_sees_a_prefix_and_counts_frames_up_to_it() {
    for path in ["captures/sample.pcapng", "captures/mtu400-null.pcapng"] {
        let (all, _, frames) = run(path, usize::MAX, MODES[0]);
        assert!(frames >= all.len() as u64);
        for mode in MODES {
            for limit in 1..=20 {
                let (seen, _, counted) = run(path, limit, mode);
                assert_eq!(seen.len(), limit, "{path} {mode:?} limit {limit}");
                assert_eq!(seen[..], all[..limit], "{path} {mode:?} limit {limit}");
                // Every frame up to the last record's was handled, none after it.
                assert_eq!(counted, seen[limit - 1].0, "{path} {mode:?} limit {limit}");
            }
        }
    }
}
