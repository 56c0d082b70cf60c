//! Ties the layers together: input bytes at a chosen layer → packet buffer → update
//! streams → sub-updates → decoded updates, with the controller table for `--stateful`.

use super::delta::{self, SubUpdate};
use super::packet::{self, Inner, COMPOUND, NETWORK_UPDATE};
use super::state::ControllerTable;
use super::update::{self, Update, CREATE, REMOVE};
use crate::diag::{Code, Warning};

/// Which layer the input bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Layer {
    /// `[id][LZ4 raw block]` as sent.
    Wire,
    /// `[id][tick][sub-updates…]` (or a compound packet), already decompressed.
    Packet,
    /// `[tick][sub-updates…]`: a NetworkUpdate without its id byte.
    Payload,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Wire => "wire",
            Layer::Packet => "packet",
            Layer::Payload => "payload",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub layer: Layer,
    /// Cap on the decompressed size of one packet (wire layer).
    pub max_output: usize,
    /// Learn controller types from Creates across all packets fed to one decoder.
    pub stateful: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            layer: Layer::Wire,
            max_output: packet::DEFAULT_MAX_OUTPUT,
            stateful: false,
        }
    }
}

/// A sub-update with its decoded contents.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedSub {
    pub sub: SubUpdate,
    pub update: Update,
}

/// One `[tick][sub-updates]` stream (packet 21/22, or one inside a compound packet),
/// or an inner packet of another kind that is only framed.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// Offset of the packet id byte in the packet buffer (`None` at the payload layer).
    pub id_offset: Option<usize>,
    pub packet_id: u8,
    /// Data bytes after the id byte.
    pub len: usize,
    pub tick: Option<u32>,
    pub subs: Vec<DecodedSub>,
    /// Bytes left unframed after a framing error: `(offset, len)`.
    pub undecoded: Option<(usize, usize)>,
    pub warnings: Vec<Warning>,
}

impl Stream {
    pub fn is_update_stream(&self) -> bool {
        packet::is_update_stream(self.packet_id)
    }
}

/// Everything decoded from one input packet.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketReport {
    pub layer: Layer,
    pub input_len: usize,
    /// The outer packet id (`None` at the payload layer or when the input is empty).
    pub packet_id: Option<u8>,
    /// Size of the packet buffer (`[id][body]`) after LZ4, at the wire layer.
    pub decompressed_len: Option<usize>,
    pub streams: Vec<Stream>,
    /// Packet-level problems (LZ4, id, compound framing).
    pub warnings: Vec<Warning>,
}

impl PacketReport {
    /// Whether any part of the packet decoded: a sub-update with a valid header, or a
    /// tick followed by a cleanly framed (possibly empty) stream.
    pub fn decoded_something(&self) -> bool {
        self.streams.iter().any(|s| {
            s.subs.iter().any(|d| d.update.header_ok)
                || (s.tick.is_some() && s.subs.is_empty() && s.warnings.is_empty())
        })
    }
    /// Every warning in the packet, whatever level it came from.
    pub fn warning_count(&self) -> usize {
        self.warnings.len()
            + self
                .streams
                .iter()
                .map(|s| {
                    s.warnings.len()
                        + s.subs
                            .iter()
                            .map(|d| d.update.warnings.len())
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// Decoder for a sequence of packets; holds the controller table and LZ4 buffer.
#[derive(Debug, Default)]
pub struct Decoder {
    opts: Options,
    table: ControllerTable,
    buf: Vec<u8>,
    overflow_reported: bool,
}

impl Decoder {
    pub fn new(opts: Options) -> Decoder {
        let mut opts = opts;
        opts.max_output = opts.max_output.min(packet::MAX_OUTPUT_LIMIT);
        Decoder {
            opts,
            ..Decoder::default()
        }
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Decode one input packet at the configured layer. Never panics on input.
    pub fn decode(&mut self, input: &[u8]) -> PacketReport {
        let mut report = PacketReport {
            layer: self.opts.layer,
            input_len: input.len(),
            packet_id: None,
            decompressed_len: None,
            streams: Vec::new(),
            warnings: Vec::new(),
        };
        let mut buf = std::mem::take(&mut self.buf);
        let packet: &[u8] = match self.opts.layer {
            Layer::Payload => {
                let s = self.stream(input, 0, None, NETWORK_UPDATE);
                report.streams.push(s);
                self.buf = buf;
                return report;
            }
            Layer::Packet => input,
            Layer::Wire => match packet::decompress(input, self.opts.max_output, &mut buf) {
                Ok(n) => {
                    report.decompressed_len = Some(n);
                    buf.get(..n).unwrap_or(&[])
                }
                Err(w) => {
                    report.packet_id = input.first().copied();
                    report.warnings.push(w);
                    self.buf = buf;
                    return report;
                }
            },
        };
        self.packet(packet, &mut report);
        self.buf = buf;
        report
    }

    fn packet(&mut self, packet: &[u8], report: &mut PacketReport) {
        let Some((&id, body)) = packet.split_first() else {
            report.warnings.push(Warning::new(
                Code::InputEmpty,
                Some(0),
                "empty input: expected a packet id byte",
            ));
            return;
        };
        report.packet_id = Some(id);
        if let Err(w) = packet::check_id(id) {
            report.warnings.push(w);
            return;
        }
        if id != COMPOUND {
            let s = self.stream(body, 1, Some(0), id);
            report.streams.push(s);
            return;
        }
        let (inners, err) = packet::split_compound(body, 1);
        for Inner { offset, id, data } in inners {
            let bytes = packet.get(data.clone()).unwrap_or(&[]);
            if packet::is_update_stream(id) {
                let s = self.stream(bytes, data.start, Some(offset + 4), id);
                report.streams.push(s);
            } else {
                // Other packet kinds are framed only; their bytes are reported as such.
                report.streams.push(Stream {
                    id_offset: Some(offset + 4),
                    packet_id: id,
                    len: bytes.len(),
                    tick: None,
                    subs: Vec::new(),
                    undecoded: (!bytes.is_empty()).then_some((data.start, bytes.len())),
                    warnings: Vec::new(),
                });
            }
        }
        report.warnings.extend(err);
    }

    /// Decode `[tick][sub-updates]`; `base` is the offset of `data[0]` in the packet.
    fn stream(&mut self, data: &[u8], base: usize, id_offset: Option<usize>, id: u8) -> Stream {
        let mut s = Stream {
            id_offset,
            packet_id: id,
            len: data.len(),
            tick: None,
            subs: Vec::new(),
            undecoded: None,
            warnings: Vec::new(),
        };
        let Some(tick) = data.get(..4) else {
            s.warnings.push(Warning::new(
                Code::TickTruncated,
                Some(base),
                format!("expected a 4-byte tick, {} byte(s) left", data.len()),
            ));
            s.undecoded = (!data.is_empty()).then_some((base, data.len()));
            return s;
        };
        s.tick = Some(u32::from_be_bytes([tick[0], tick[1], tick[2], tick[3]]));
        let split = delta::split(&data[4..], base + 4);
        s.warnings = split.warnings;
        s.undecoded = split.undecoded;
        s.subs.reserve(split.updates.len());
        for sub in split.updates {
            let update = if self.opts.stateful {
                let table = &self.table;
                let u = update::decode(&sub.data, &|t, id| table.get(t, id));
                self.learn(&u, &mut s.warnings, sub.offset);
                u
            } else {
                update::decode(&sub.data, &|_, _| None)
            };
            s.subs.push(DecodedSub { sub, update });
        }
        s
    }

    fn learn(&mut self, u: &Update, warnings: &mut Vec<Warning>, offset: usize) {
        let (Some(id), true) = (u.object_id, u.header_ok) else {
            return;
        };
        if u.update_type == REMOVE {
            self.table.forget(u.object_type, id);
            return;
        }
        let Some(c) = u.controller_type.filter(|_| u.update_type == CREATE) else {
            return;
        };
        let learned = self.table.learn(u.object_type, id, c);
        if !learned && !self.overflow_reported {
            self.overflow_reported = true;
            warnings.push(Warning::new(
                Code::StateTableFull,
                Some(offset),
                format!(
                    "controller table holds {} objects; later Creates are not learned",
                    super::state::MAX_ENTRIES
                ),
            ));
        }
    }
}
