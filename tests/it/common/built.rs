//! Captures built in a test, frame by frame, and the records the pipeline makes of
//! them: the shared part of the test modules that generate their own hard cases.

use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Endian, TsResolution};
use bcwire::net::build::{frame_udp, BuildOptions};
use bcwire::pipeline::record::{GamePacket, PacketBody, PacketRecord};
use bcwire::pipeline::summary::CaptureSummary;
use bcwire::pipeline::{Config, Control, Pipeline, Sink};
use bcwire::report::names::Names;
use bcwire::transport::cipher;
use bcwire::transport::packet::{emit_packet, DataMessage, FragmentHeader, MessageBody};
use std::io::Cursor;
use std::net::SocketAddr;

/// The first frame's time, in nanoseconds since the epoch (November 2023).
pub const T0: i64 = 1_700_000_000_000_000_000;

/// The game server, on BC's port.
pub fn server() -> SocketAddr {
    "10.0.0.1:22101".parse().expect("address")
}

/// Client `i`: a host and port of its own for each of the first 20,000.
pub fn client(i: u32) -> SocketAddr {
    SocketAddr::from((
        [10, 1, (i >> 8) as u8, i as u8],
        40_000 + (i % 20_000) as u16,
    ))
}

/// Builds an Ethernet pcap frame by frame, 10 ms apart.
pub struct Cap {
    w: CaptureWriter<Vec<u8>>,
    t: i64,
    ip_id: u32,
}

impl Cap {
    pub fn new() -> Cap {
        Cap {
            w: CaptureWriter::pcap(
                Vec::new(),
                link_type::ETHERNET,
                TsResolution::MICRO,
                Endian::Little,
                65_535,
            )
            .expect("pcap header"),
            t: T0,
            ip_id: 1,
        }
    }
    /// One frame as it is, 10 ms after the previous one.
    pub fn frame(&mut self, f: &[u8]) {
        self.t += 10_000_000;
        self.w
            .write_frame(0, self.t, f.len() as u32, f)
            .expect("frame");
    }
    /// The Ethernet frames of one UDP datagram (several when it is fragmented), each
    /// datagram with an IP id of its own.
    pub fn frames(&mut self, src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<Vec<u8>> {
        let opts = BuildOptions {
            ip_id: self.ip_id,
            ..BuildOptions::default()
        };
        self.ip_id += 1;
        frame_udp(link_type::ETHERNET, src, dst, payload, &opts).expect("frame_udp")
    }
    pub fn udp(&mut self, src: SocketAddr, dst: SocketAddr, payload: &[u8]) {
        for f in self.frames(src, dst, payload) {
            self.frame(&f);
        }
    }
    /// A BC datagram: `plain` is enciphered (byte 0 stays clear).
    pub fn bc(&mut self, src: SocketAddr, dst: SocketAddr, plain: &[u8]) {
        let mut d = plain.to_vec();
        cipher::encrypt(&mut d);
        self.udp(src, dst, &d);
    }
    pub fn bytes(self) -> Vec<u8> {
        self.w.into_inner()
    }
}

/// A 0x32 data message's header: reliable with `seq`, fragment `frag`.
pub fn data(seq: Option<u16>, frag: Option<FragmentHeader>, payload_len: usize) -> MessageBody {
    MessageBody::Data(DataMessage::new(seq, false, frag, payload_len).expect("fits"))
}

/// One datagram carrying `game` in a reliable 0x32 message.
pub fn game_datagram(peer: u8, seq: u16, game: &[u8]) -> Vec<u8> {
    let body = data(Some(seq), None, game.len());
    emit_packet(peer, &[(&body, game)]).expect("datagram")
}

/// A chat message (0x2C) from peer id 2 (an i32) with `text` (a str16).
pub fn chat(text: &str) -> Vec<u8> {
    let mut m = vec![0x2C, 2, 0, 0, 0];
    m.extend_from_slice(&(text.len() as u16).to_le_bytes());
    m.extend_from_slice(text.as_bytes());
    m
}

/// Every record the pipeline hands over.
struct Collect(Vec<PacketRecord>);

impl Sink for Collect {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        self.0.push(p.clone());
        Ok(Control::Continue)
    }
}

/// The capture's summary and every record of it, as the pipeline's default run makes
/// them.
pub fn run(bytes: &[u8]) -> (CaptureSummary, Vec<PacketRecord>) {
    let reader = CaptureReader::new(Cursor::new(bytes.to_vec())).expect("capture header");
    let mut sink = Collect(Vec::new());
    let s = Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .expect("pipeline");
    (s, sink.0)
}

/// The game datagram of a record (a GameSpy one fails the test).
pub fn game_of(p: &PacketRecord) -> &GamePacket {
    match &p.body {
        PacketBody::Game(g) => g,
        PacketBody::GameSpy { .. } => panic!("frame {} is GameSpy", p.frame),
    }
}
