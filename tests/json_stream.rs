//! The streaming JSON writer of `decode --format jsonl` writes exactly what serializing
//! the `serde_json::Value` of `packet_json` writes, for every record of the real-peer
//! captures and of synthetic sessions, with and without hex, and with a message filter;
//! both a fresh writer per record and one writer for the whole run (as `decode` keeps,
//! with its cached key layouts and f32 texts).

mod common;

use bcwire::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use bcwire::pipeline::{self, Config, Control, Pipeline, Sink};
use bcwire::report::json::packet_json;
use bcwire::report::json_stream::{write_packet, PacketWriter};
use bcwire::report::names::Names;
use serde_json::Value as Json;

#[derive(Default)]
struct Compare {
    records: usize,
    messages: usize,
    writer: PacketWriter,
}

/// Keep every other message (by offset), to exercise the filtered form.
fn every_other(m: &MessageRecord) -> bool {
    m.offset.is_multiple_of(2)
}

impl Sink for Compare {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> anyhow::Result<Control> {
        let describe = |id: u32| names.describe_object(p.session, id);
        let client = names.client_name(p.session, p.client);
        for hex in [false, true] {
            let expected =
                serde_json::to_string(&packet_json(p, hex, client.as_deref(), &describe))?;
            let mut out = Vec::new();
            write_packet(&mut out, p, hex, client.as_deref(), &describe, &|_| true);
            assert_eq!(String::from_utf8(out)?, expected, "frame {}", p.frame);
            let mut out = Vec::new();
            self.writer
                .write_packet(&mut out, p, hex, client.as_deref(), &describe, &|_| true);
            assert_eq!(String::from_utf8(out)?, expected, "frame {}", p.frame);
        }
        // The filtered form drops messages from the array, as DecodeSink did.
        let mut j = packet_json(p, false, client.as_deref(), &describe);
        if let (Some(Json::Array(msgs)), PacketBody::Game(g)) = (j.get_mut("messages"), &p.body) {
            let kept: Vec<Json> = msgs
                .drain(..)
                .zip(&g.messages)
                .filter(|(_, m)| every_other(m))
                .map(|(j, _)| j)
                .collect();
            *msgs = kept;
            self.messages += g.messages.len();
        }
        let mut out = Vec::new();
        self.writer.write_packet(
            &mut out,
            p,
            false,
            client.as_deref(),
            &describe,
            &every_other,
        );
        assert_eq!(
            String::from_utf8(out)?,
            serde_json::to_string(&j)?,
            "frame {}",
            p.frame
        );
        self.records += 1;
        Ok(Control::Continue)
    }
}

#[test]
fn streamed_records_equal_serialized_values() {
    let mut sink = Compare::default();
    for (name, folder) in common::shared_captures() {
        for ext in ["pcap", "pcapng"] {
            let path = folder.join(format!("{name}.{ext}"));
            let reader = pipeline::open(path.to_str().unwrap()).unwrap();
            Pipeline::new(Config::default())
                .run(reader, &mut sink)
                .unwrap();
        }
    }
    if common::shared_dir().is_some() {
        assert!(sink.records > 100 && sink.messages > 100);
    }
}

#[test]
fn streamed_synthetic_records_equal_serialized_values() {
    for seed in [7, 11] {
        let mut args = bcwire::synth::SynthArgs::new("unused");
        args.players = 3;
        args.packets = Some(3_000);
        args.seed = seed;
        let (_, pcap) = bcwire::synth::generate(&args, Vec::new()).unwrap();
        let reader = bcwire::capture::CaptureReader::new(std::io::Cursor::new(pcap)).unwrap();
        let mut sink = Compare::default();
        Pipeline::new(Config::default())
            .run(reader, &mut sink)
            .unwrap();
        assert!(sink.records > 2_500 && sink.messages > 3_000, "seed {seed}");
    }
}
