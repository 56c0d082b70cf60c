//! What the transport says about each client of a session: assigned peer id, player
//! name, connect / disconnect / boot times, silences long enough to drop the peer.
//!
//! The caller feeds every game datagram ([`SessionFacts::on_datagram`]) and every
//! low-type message ([`SessionFacts::on_low`]) of a session with the client it
//! belongs to (e.g. the client's UDP endpoint) and the direction.

use super::low::{boot_ends_stay, LowBody, LowKind};
use super::packet::LowMessage;
use super::reliability::Seen;
use crate::diag::{Code, Direction, Warning};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;
use std::hash::Hash;

/// Stock peers drop a peer after 45 s of silence (README §5 timers).
pub const PEER_TIMEOUT_NS: i64 = 45_000_000_000;

/// Boots and silences kept per client; more are only counted.
pub const MAX_EVENTS_PER_CLIENT: usize = 64;

/// A gap in a client's own traffic longer than [`PEER_TIMEOUT_NS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Silence {
    /// Last datagram before the gap.
    pub after: Seen,
    /// First datagram after it (`None`: the capture ended).
    pub resumed: Option<Seen>,
    pub gap_ns: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientFacts {
    /// Peer id the host assigned in its connect reply.
    pub assigned_peer_id: Option<u8>,
    /// Player name from the client's peer-info message (or the host's echo).
    pub name: Option<String>,
    /// Peer id and IPv4 address inside the peer-info payload.
    pub info_peer_id: Option<u8>,
    pub ipv4: Option<[u8; 4]>,
    pub connect_request: Option<Seen>,
    pub connect_reply: Option<Seen>,
    pub disconnect: Option<Seen>,
    pub boots: Vec<Seen>,
    /// Reason byte of the latest boot that ended the client's stay (README §4.3);
    /// `None` for a boot whose body was not the stock two bytes.
    pub boot_reason: Option<u8>,
    pub silences: Vec<Silence>,
    /// Boots and silences not listed (beyond [`MAX_EVENTS_PER_CLIENT`]).
    pub events_not_listed: u64,
    pub first_seen: Option<Seen>,
    pub last_from_client: Option<Seen>,
    pub last_from_host: Option<Seen>,
    /// Set by [`SessionFacts::finish`]: no disconnect and silent for the timeout at
    /// the end of the capture.
    pub timed_out: bool,
    /// E.g. `peer_id_mismatch`: the client's byte 0 differs from its assigned id.
    pub warnings: Vec<Warning>,
    mismatched_ids: [u64; 4],
}

impl ClientFacts {
    /// A client silent since before `end_ns` - [`PEER_TIMEOUT_NS`] without a disconnect
    /// timed out.
    fn end(&mut self, end_ns: i64) {
        if self.disconnect.is_some() {
            return;
        }
        if let Some(last) = self.last_from_client {
            let gap = end_ns.saturating_sub(last.time_ns);
            if gap > PEER_TIMEOUT_NS {
                self.timed_out = true;
                ClientFacts::push_event(
                    &mut self.silences,
                    &mut self.events_not_listed,
                    Silence {
                        after: last,
                        resumed: None,
                        gap_ns: gap,
                    },
                );
            }
        }
    }

    fn push_event<T>(list: &mut Vec<T>, not_listed: &mut u64, v: T) {
        if list.len() < MAX_EVENTS_PER_CLIENT {
            list.push(v);
        } else {
            *not_listed += 1;
        }
    }
}

/// Facts for every client of one or more sessions, keyed by `C`.
#[derive(Debug)]
pub struct SessionFacts<C> {
    clients: HashMap<C, ClientFacts>,
    /// Bumped whenever a client's name is set, so printers may keep names until then.
    names_version: u64,
}

impl<C: Hash + Eq + Clone> Default for SessionFacts<C> {
    fn default() -> Self {
        SessionFacts::new()
    }
}

impl<C: Hash + Eq + Clone> SessionFacts<C> {
    pub fn new() -> SessionFacts<C> {
        SessionFacts {
            clients: HashMap::default(),
            names_version: 0,
        }
    }

    /// Changes whenever a client's name is set.
    pub fn names_version(&self) -> u64 {
        self.names_version
    }

    pub fn client(&self, c: &C) -> Option<&ClientFacts> {
        self.clients.get(c)
    }

    /// Every game datagram: byte 0 (`peer_id`), direction, time.
    pub fn on_datagram(&mut self, c: &C, dir: Direction, peer_id: u8, time_ns: i64, frame: u64) {
        let f = self.clients.entry(c.clone()).or_default();
        let now = Seen { frame, time_ns };
        f.first_seen.get_or_insert(now);
        match dir {
            Direction::C2S => {
                if let Some(prev) = f.last_from_client {
                    let gap = time_ns.saturating_sub(prev.time_ns);
                    if gap > PEER_TIMEOUT_NS {
                        ClientFacts::push_event(
                            &mut f.silences,
                            &mut f.events_not_listed,
                            Silence {
                                after: prev,
                                resumed: Some(now),
                                gap_ns: gap,
                            },
                        );
                    }
                }
                f.last_from_client = Some(now);
                // 0xFF is the "not yet assigned" id of the first packets.
                if let Some(assigned) = f.assigned_peer_id {
                    let bit = 1u64 << (peer_id % 64);
                    let word = &mut f.mismatched_ids[usize::from(peer_id / 64)];
                    if peer_id != assigned && peer_id != 0xFF && *word & bit == 0 {
                        *word |= bit;
                        f.warnings.push(Warning::new(
                            Code::PeerIdMismatch,
                            Some(0),
                            format!(
                                "client sends peer id {peer_id:#04x} (frame {frame}); the host assigned {assigned:#04x}"
                            ),
                        ));
                    }
                }
            }
            Direction::S2C => f.last_from_host = Some(now),
        }
    }

    /// A connection-management message of a client's session; `name` is the player
    /// name a peer-info body carries, already decoded.
    pub fn on_low(
        &mut self,
        c: &C,
        dir: Direction,
        low: &LowMessage,
        name: Option<&str>,
        time_ns: i64,
        frame: u64,
    ) {
        let f = self.clients.entry(c.clone()).or_default();
        let now = Seen { frame, time_ns };
        match (low.kind, &low.body, dir) {
            (LowKind::Connect, LowBody::ConnectReply { assigned_peer_id }, Direction::S2C) => {
                f.assigned_peer_id = Some(*assigned_peer_id);
                f.connect_reply.get_or_insert(now);
            }
            (LowKind::Connect, _, Direction::C2S) => {
                f.connect_request.get_or_insert(now);
            }
            (LowKind::Connect, _, Direction::S2C) => {
                f.connect_reply.get_or_insert(now);
            }
            (
                LowKind::PeerInfo,
                LowBody::PeerInfo { peer_id, ipv4, .. },
                _,
                // The client's own message wins over the host's echo.
            ) if dir == Direction::C2S || f.name.is_none() => {
                f.name = name.map(str::to_string);
                self.names_version += 1;
                f.info_peer_id = Some(*peer_id);
                f.ipv4 = Some(*ipv4);
            }
            (LowKind::Disconnect | LowKind::ShortDisconnect, _, _) => {
                f.disconnect.get_or_insert(now);
            }
            (LowKind::Boot, body, _) => {
                let reason = match body {
                    LowBody::Boot { reason, .. } => Some(*reason),
                    _ => None,
                };
                // "Connection accepted" is a boot message that lets the client in.
                if boot_ends_stay(reason) {
                    f.boot_reason = reason;
                    ClientFacts::push_event(&mut f.boots, &mut f.events_not_listed, now);
                }
            }
            _ => {}
        }
    }

    /// All clients, in order of first appearance; `end_ns` is the capture's last
    /// timestamp (for timeouts at the end).
    pub fn finish(self, end_ns: i64) -> Vec<(C, ClientFacts)> {
        let mut out: Vec<(C, ClientFacts)> = self.clients.into_iter().collect();
        for (_, f) in &mut out {
            f.end(end_ns);
        }
        out.sort_by_key(|(_, f)| f.first_seen.map(|s| (s.frame, s.time_ns)));
        out
    }

    /// End one client (its session is over) as [`SessionFacts::finish`] would at
    /// `end_ns`, releasing its state.
    pub fn finish_client(&mut self, c: &C, end_ns: i64) -> Option<ClientFacts> {
        let mut f = self.clients.remove(c)?;
        f.end(end_ns);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::super::packet::parse;
    use super::*;

    const S: i64 = 1_000_000_000;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).unwrap())
            .collect()
    }

    fn feed(f: &mut SessionFacts<u16>, c: u16, dir: Direction, h: &str, t: i64, frame: u64) {
        let plain = hex(h);
        let p = parse(&plain);
        f.on_datagram(&c, dir, p.peer_id, t, frame);
        for m in &p.messages {
            if let crate::transport::packet::MessageBody::Low(low) = &m.body {
                let name = low.body.name(&plain);
                f.on_low(&c, dir, low, name.as_deref(), t, frame);
            }
        }
    }

    #[test]
    fn handshake_name_disconnect_and_timeout() {
        let mut f = SessionFacts::new();
        feed(
            &mut f,
            1,
            Direction::C2S,
            "FF 01 03 0F C0 00 00 C0 A8 01 14 D4 31 00 00 00 00",
            0,
            1,
        );
        feed(
            &mut f,
            1,
            Direction::S2C,
            "01 01 03 06 C0 00 00 03",
            S / 10,
            2,
        );
        feed(
            &mut f,
            1,
            Direction::C2S,
            "03 01 00 16 C0 01 00 03 C0 A8 01 14 50 00 69 00 63 00 61 00 72 00 64 00 00 00",
            S / 5,
            3,
        );
        // A client that sends the wrong id, once reported per value.
        feed(&mut f, 1, Direction::C2S, "02 01 01 00 00 00", S, 4);
        feed(&mut f, 1, Direction::C2S, "02 01 01 01 00 00", S, 5);
        feed(&mut f, 1, Direction::S2C, "01 01 04 05 C0 02 00", 2 * S, 6);
        feed(&mut f, 1, Direction::C2S, "03 01 06 02", 100 * S, 7);
        // A second client that goes silent.
        feed(
            &mut f,
            2,
            Direction::C2S,
            "FF 01 03 08 01 00 00 00 7F 00",
            3 * S,
            8,
        );
        let out = f.finish(200 * S);
        assert_eq!(out.len(), 2);
        let (c, a) = &out[0];
        assert_eq!(*c, 1);
        assert_eq!(a.assigned_peer_id, Some(3));
        assert_eq!(a.name.as_deref(), Some("Picard"));
        assert_eq!((a.info_peer_id, a.ipv4), (Some(3), Some([192, 168, 1, 20])));
        assert_eq!(a.connect_request.map(|s| s.frame), Some(1));
        assert_eq!(a.connect_reply.map(|s| s.frame), Some(2));
        assert_eq!(a.boots.iter().map(|s| s.frame).collect::<Vec<_>>(), [6]);
        assert_eq!(a.disconnect.map(|s| s.frame), Some(7));
        assert_eq!(
            a.warnings.iter().map(|w| w.code).collect::<Vec<_>>(),
            [Code::PeerIdMismatch]
        );
        // 1 s → 100 s without client traffic is a silence, but it came back.
        assert_eq!(a.silences.len(), 1);
        assert!(!a.timed_out);
        let (_, b) = &out[1];
        assert!(b.timed_out);
        assert_eq!(b.connect_request.map(|s| s.frame), Some(8));
        assert_eq!(b.assigned_peer_id, None);
    }
}
