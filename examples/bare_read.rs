//! The "bare read loop" baseline for `scripts/bench.sh`: read a classic pcap with
//! `pcap-file`, slice each Ethernet frame with `etherparse` down to UDP, and count
//! datagrams and payload bytes. Nothing is decoded past UDP; no state is kept. This is
//! roughly the least any pcap tool must do per packet.
//!
//! ```text
//! cargo run --release --example bare_read -- FILE.pcap
//! cargo run --release --example bare_read -- --bcwire FILE.pcap
//! ```
//!
//! With `--bcwire` the same loop reads through bcwire's `CaptureReader` (pcap-file's
//! slice parsers over its own buffer) instead of pcap-file's `PcapReader`: the ratio
//! of the two is the cost of the capture layer (docs/performance.md).

use etherparse::{SlicedPacket, TransportSlice};
use pcap_file::pcap::PcapReader;
use std::io::BufReader;

/// UDP payload of an Ethernet frame, if it carries one.
fn udp_payload(frame: &[u8]) -> Option<&[u8]> {
    match SlicedPacket::from_ethernet(frame).ok()?.transport? {
        TransportSlice::Udp(u) => Some(u.payload()),
        _ => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (through_bcwire, path) = match args.as_slice() {
        [flag, path] if flag == "--bcwire" => (true, path.clone()),
        [path] => (false, path.clone()),
        _ => return Err("usage: bare_read [--bcwire] FILE.pcap".into()),
    };
    if through_bcwire {
        return bcwire_loop(&path);
    }
    let file = std::fs::File::open(&path)?;
    let mut reader = PcapReader::new(BufReader::with_capacity(1 << 16, file))?;
    let (mut frames, mut udp, mut bytes, mut checksum) = (0u64, 0u64, 0u64, 0u64);
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt?;
        frames += 1;
        if let Some(payload) = udp_payload(pkt.data()) {
            udp += 1;
            bytes += payload.len() as u64;
            // Touch the payload so the loop cannot skip reading it.
            checksum = checksum.wrapping_add(payload.first().copied().unwrap_or(0) as u64);
        }
    }
    println!("{frames} frames, {udp} UDP datagrams, {bytes} payload bytes ({checksum})");
    Ok(())
}

/// The same loop over bcwire's capture reader, one reused frame buffer.
fn bcwire_loop(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let mut reader = bcwire::capture::CaptureReader::open(path)?;
    let mut frame = bcwire::capture::Frame::default();
    let (mut frames, mut udp, mut bytes, mut checksum) = (0u64, 0u64, 0u64, 0u64);
    while reader.read_into(&mut frame)? {
        frames += 1;
        if let Some(payload) = udp_payload(&frame.data) {
            udp += 1;
            bytes += payload.len() as u64;
            checksum = checksum.wrapping_add(payload.first().copied().unwrap_or(0) as u64);
        }
    }
    println!("{frames} frames, {udp} UDP datagrams, {bytes} payload bytes ({checksum})");
    Ok(())
}
