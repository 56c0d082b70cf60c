//! The "bare read loop" baseline for `scripts/bench.sh`: read a classic pcap with
//! `pcap-file`, slice each Ethernet frame with `etherparse` down to UDP, and count
//! datagrams and payload bytes. Nothing is decoded past UDP; no state is kept. This is
//! roughly the least any pcap tool must do per packet.
//!
//! ```text
//! cargo run --release --example bare_read -- FILE.pcap
//! ```

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
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: bare_read FILE.pcap")?;
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
