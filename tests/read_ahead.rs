//! Game datagrams are read a few at a time and deciphered together: a sink that stops
//! early must still see exactly the records it would have seen one datagram at a time,
//! and the summary must count only the frames handled before the stop.

use bcwire::pipeline::record::PacketRecord;
use bcwire::pipeline::{self, Config, Control, Detail, Pipeline, Sink};
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
    fn detail(&self) -> Detail {
        Detail::Full
    }
}

fn run(path: &str, limit: usize) -> (Vec<(u64, String)>, u64) {
    let mut sink = StopAfter {
        limit,
        records: Vec::new(),
    };
    let reader = pipeline::open(path).unwrap();
    let summary = Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .unwrap();
    (sink.records, summary.frames)
}

#[test]
fn stopping_at_any_record_sees_a_prefix_and_counts_frames_up_to_it() {
    for path in ["captures/sample.pcapng", "captures/mtu400-null.pcapng"] {
        let (all, frames) = run(path, usize::MAX);
        assert!(all.len() > 20, "{path}: {} records", all.len());
        assert!(frames >= all.len() as u64);
        for limit in 1..=20 {
            let (seen, counted) = run(path, limit);
            assert_eq!(seen.len(), limit, "{path} limit {limit}");
            assert_eq!(seen[..], all[..limit], "{path} limit {limit}");
            // Every frame up to the last record's was handled, none after it.
            assert_eq!(counted, seen[limit - 1].0, "{path} limit {limit}");
        }
    }
}
