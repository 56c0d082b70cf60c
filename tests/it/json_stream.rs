//! The JSON writer of `decode --format jsonl` on every record of the real-peer captures
//! and of synthetic sessions: a fresh writer per record and one writer for the whole run
//! (with its cached key layouts and f32 texts) write the same text; that text parses,
//! holds each message's fields as `serde_json`'s rendering of the field tree
//! (`fields_to_json`, the reference) and its names in the contract's order; and the
//! filtered form is the full one less the messages left out.

use crate::common;

use bcwire::game::field::fields_to_json;
use bcwire::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use bcwire::pipeline::{self, Config, Control, Pipeline, Sink};
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

const PACKET_KEYS: &[&str] = &[
    "type",
    "file",
    "frame",
    "time",
    "time_ns",
    "src",
    "dst",
    "direction",
    "session",
    "client",
    "client_name",
    "udp_length",
    "kind",
    "text",
    "peer_id",
    "msg_count",
    "plain_hex",
    "messages",
    "warnings",
];

/// The keys of `j` appear in the order of `order`.
fn in_order(j: &Json, order: &[&str]) {
    let at: Vec<usize> = j
        .as_object()
        .unwrap()
        .keys()
        .map(|k| {
            order
                .iter()
                .position(|o| o == k)
                .unwrap_or_else(|| panic!("{k}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
}

impl Sink for Compare {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> anyhow::Result<Control> {
        let describe = |id: u32| names.describe_object(p.session, id).map(std::rc::Rc::from);
        let client = names.client_name(p.session, p.client);
        for hex in [false, true] {
            let mut fresh = Vec::new();
            write_packet(&mut fresh, p, hex, client.as_deref(), &describe, &|_| true);
            let mut out = Vec::new();
            self.writer
                .write_packet(&mut out, p, hex, client.as_deref(), &describe, &|_| true);
            assert_eq!(out, fresh, "frame {}", p.frame);
        }
        let mut out = Vec::new();
        self.writer
            .write_packet(&mut out, p, false, client.as_deref(), &describe, &|_| true);
        let mut j: Json = serde_json::from_slice(&out)?;
        in_order(&j, PACKET_KEYS);
        if let (Some(Json::Array(msgs)), PacketBody::Game(g)) = (j.get_mut("messages"), &p.body) {
            for (mj, m) in msgs.iter().zip(&g.messages) {
                if let Some(game) = &m.game {
                    assert_eq!(
                        mj["fields"],
                        fields_to_json(&game.fields),
                        "frame {}",
                        p.frame
                    );
                }
                if let Some(a) = &m.assembled {
                    assert_eq!(mj["assembled"]["fields"], fields_to_json(&a.game.fields));
                }
            }
            // The filtered form drops messages from the array.
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
            serde_json::from_slice::<Json>(&out)?,
            j,
            "frame {}",
            p.frame
        );
        self.records += 1;
        Ok(Control::Continue)
    }
}

#[test]
fn streamed_records_hold_the_reference_fields() {
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
fn streamed_synthetic_records_hold_the_reference_fields() {
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
