//! From a captured frame to a UDP datagram: link header, IPv4/IPv6 (fragments
//! reassembled within [`Limits`]), UDP. Also the encoder that frames a UDP payload for a
//! link type ([`build`]).
//!
//! Link headers etherparse 0.21 does not know (Linux SLL2, BSD NULL/LOOP) are parsed in
//! [`link`]; everything from the network layer on is etherparse's.

pub mod build;
mod defrag;
mod link;
mod skip;

pub use defrag::{
    FragmentLeftover, FragmentReport, LeftoverReason, Limits, DEFAULT_MAX_AGE_NS,
    DEFAULT_MAX_BYTES_HELD, DEFAULT_MAX_FRAGMENTS_PER_DATAGRAM, DEFAULT_MAX_PENDING,
    MAX_LEFTOVERS_LISTED,
};
pub use skip::SkipReason;

use crate::capture::Frame;
use defrag::{Defragmenter, FragKey};
use etherparse::{IpNumber, IpSlice, Ipv6ExtensionSlice, UdpHeaderSlice, UdpSlice};
use std::net::{IpAddr, SocketAddr};

/// One UDP datagram, reassembled if it came in IP fragments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    /// Frame that completed the datagram (the only frame when not fragmented).
    pub frame: u64,
    /// Timestamp of that frame, ns since the epoch.
    pub ts_ns: i64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    /// UDP payload, cut to the UDP length field (link padding removed).
    pub payload: Vec<u8>,
    /// Frames of every IP fragment in arrival order; empty when not fragmented.
    pub fragment_frames: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetOutcome {
    Datagram(Datagram),
    /// An IP fragment was stored; the datagram completes with a later frame.
    FragmentHeld,
    Skipped(SkipReason),
}

/// Running counts for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    pub frames: u64,
    pub datagrams: u64,
    pub reassembled: u64,
    pub fragments: u64,
    pub skipped: u64,
}

/// Payload buffers kept for reuse: enough for the datagrams a caller holds at once
/// (the pipeline's batches in flight between its threads).
const MAX_SPARE_PAYLOADS: usize = 768;
/// Larger buffers are freed rather than kept, so the spares stay small (384 KiB at
/// most) and do not grow with the longest datagrams a long capture happens to have.
const MAX_SPARE_CAPACITY: usize = 512;
/// Room a new payload buffer is made with: game datagrams are mostly under 256 bytes,
/// so a reused buffer seldom has to grow for a longer datagram than its first one.
const NEW_PAYLOAD_CAPACITY: usize = 256;

/// Decodes frames one at a time; holds the fragment reassembly state.
#[derive(Debug)]
pub struct NetDecoder {
    defrag: Defragmenter,
    stats: NetStats,
    /// Payload buffers handed back by the caller, reused for the next datagrams (a
    /// caller may hold a few datagrams at once, see `pipeline`).
    spare: Vec<Vec<u8>>,
}

impl Default for NetDecoder {
    fn default() -> Self {
        NetDecoder::new(Limits::default())
    }
}

impl NetDecoder {
    pub fn new(limits: Limits) -> NetDecoder {
        NetDecoder {
            defrag: Defragmenter::new(limits),
            stats: NetStats::default(),
            spare: Vec::new(),
        }
    }

    pub fn stats(&self) -> NetStats {
        self.stats
    }

    /// Bytes currently held in unfinished reassemblies.
    pub fn bytes_held(&self) -> usize {
        self.defrag.bytes_held()
    }

    pub fn decode(&mut self, frame: &Frame) -> NetOutcome {
        self.stats.frames += 1;
        self.defrag.expire(frame.ts_ns);
        let outcome = self.decode_inner(frame);
        match &outcome {
            NetOutcome::Datagram(d) => {
                self.stats.datagrams += 1;
                if !d.fragment_frames.is_empty() {
                    self.stats.reassembled += 1;
                    self.stats.fragments += 1;
                }
            }
            NetOutcome::FragmentHeld => self.stats.fragments += 1,
            NetOutcome::Skipped(_) => self.stats.skipped += 1,
        }
        outcome
    }

    /// Takes back the payload buffers of finished datagrams, so that the next ones can
    /// reuse their allocations instead of making new ones; leaves `payloads` empty.
    /// The list is taken whole, in one copy, and a buffer is emptied only when it is
    /// reused: moving the buffers one at a time cost more than all the rest of it.
    pub fn recycle(&mut self, payloads: &mut Vec<Vec<u8>>) {
        payloads.retain(|p| p.capacity() <= MAX_SPARE_CAPACITY);
        self.spare.append(payloads);
        self.spare.truncate(MAX_SPARE_PAYLOADS);
    }

    /// Ends the capture: every unfinished reassembly becomes a leftover, together with
    /// those dropped earlier (expired, evicted, refused).
    pub fn finish(&mut self) -> FragmentReport {
        self.defrag.finish()
    }

    fn decode_inner(&mut self, frame: &Frame) -> NetOutcome {
        let ip = match link::ip_packet(frame.link_type, &frame.data) {
            Ok(ip) => ip,
            Err(reason) => return NetOutcome::Skipped(reason),
        };
        // Only the IP layer is sliced here: a broken TCP header must read "not UDP".
        let sliced = match IpSlice::from_slice(ip) {
            Ok(s) => s,
            Err(e) => return NetOutcome::Skipped(SkipReason::Malformed(e.to_string())),
        };
        let (src_ip, dst_ip, frag, payload) = match &sliced {
            IpSlice::Ipv4(v4) => {
                let h = v4.header();
                let frag = h.is_fragmenting_payload().then(|| FragInfo {
                    id: u32::from(h.identification()),
                    offset: h.fragments_offset(),
                    more: h.more_fragments(),
                });
                (
                    IpAddr::V4(h.source_addr()),
                    IpAddr::V4(h.destination_addr()),
                    frag,
                    v4.payload(),
                )
            }
            IpSlice::Ipv6(v6) => {
                let h = v6.header();
                let frag = v6
                    .extensions()
                    .clone()
                    .into_iter()
                    .find_map(|ext| match ext {
                        Ipv6ExtensionSlice::Fragment(fs) if fs.is_fragmenting_payload() => {
                            Some(FragInfo {
                                id: fs.identification(),
                                offset: fs.fragment_offset(),
                                more: fs.more_fragments(),
                            })
                        }
                        _ => None,
                    });
                (
                    IpAddr::V6(h.source_addr()),
                    IpAddr::V6(h.destination_addr()),
                    frag,
                    v6.payload(),
                )
            }
        };
        if payload.ip_number != IpNumber::UDP {
            return NetOutcome::Skipped(SkipReason::NotUdp {
                protocol: payload.ip_number.0,
            });
        }
        if let Some(fi) = frag {
            let key = FragKey {
                src: src_ip,
                dst: dst_ip,
                id: fi.id,
            };
            return match self.defrag.add(
                key,
                fi.offset,
                fi.more,
                payload.payload,
                frame.number,
                frame.ts_ns,
            ) {
                Err(reason) => NetOutcome::Skipped(reason),
                Ok(None) => NetOutcome::FragmentHeld,
                Ok(Some((udp, frames))) => {
                    let outcome = udp_from_bytes(&udp, src_ip, dst_ip, frame, frames);
                    self.defrag.recycle(udp);
                    outcome
                }
            };
        }
        match UdpSlice::from_slice(payload.payload) {
            Ok(udp) => NetOutcome::Datagram(Datagram {
                payload: self.payload_buffer(udp.payload()),
                frame: frame.number,
                ts_ns: frame.ts_ns,
                src: SocketAddr::new(src_ip, udp.source_port()),
                dst: SocketAddr::new(dst_ip, udp.destination_port()),
                fragment_frames: Vec::new(),
            }),
            Err(e) => NetOutcome::Skipped(SkipReason::Malformed(e.to_string())),
        }
    }

    /// A copy of `payload` in a spare buffer.
    fn payload_buffer(&mut self, payload: &[u8]) -> Vec<u8> {
        let mut buf = self
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(NEW_PAYLOAD_CAPACITY));
        buf.clear();
        buf.extend_from_slice(payload);
        buf
    }
}

struct FragInfo {
    id: u32,
    offset: etherparse::IpFragOffset,
    more: bool,
}

/// Reads the UDP header of a reassembled datagram.
fn udp_from_bytes(
    udp: &[u8],
    src_ip: IpAddr,
    dst_ip: IpAddr,
    frame: &Frame,
    fragment_frames: Vec<u64>,
) -> NetOutcome {
    let header = match UdpHeaderSlice::from_slice(udp) {
        Ok(h) => h,
        Err(e) => return NetOutcome::Skipped(SkipReason::Malformed(e.to_string())),
    };
    let len = usize::from(header.length());
    let Some(payload) = udp.get(8..len).filter(|_| len >= 8) else {
        return NetOutcome::Skipped(SkipReason::Malformed(format!(
            "UDP length {len} does not fit the {} reassembled bytes",
            udp.len()
        )));
    };
    NetOutcome::Datagram(Datagram {
        frame: frame.number,
        ts_ns: frame.ts_ns,
        src: SocketAddr::new(src_ip, header.source_port()),
        dst: SocketAddr::new(dst_ip, header.destination_port()),
        payload: payload.to_vec(),
        fragment_frames,
    })
}

#[cfg(test)]
mod tests;
