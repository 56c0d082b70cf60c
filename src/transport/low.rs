//! Payloads of the connection-management ("low type") messages, README §4.3.
//!
//! The payload is what follows the header (type, flags/length, seq when reliable). The
//! decoded body refers back into the datagram by range; nothing is copied.

use crate::diag::{Code, Warning};
use std::ops::Range;

/// Which low type a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LowKind {
    /// 0x00: peer info / keepalive `[peer id][IPv4][UTF-16LE name 00 00]`.
    PeerInfo,
    /// 0x02: named "connect" by one analysis, never captured; payload kept raw.
    Type02,
    /// 0x03: client connect request (10 bytes) or host connect reply (1 byte).
    Connect,
    /// 0x04: boot (host → client); payload unknown, kept raw.
    Boot,
    /// 0x05: disconnect `[peer id][IPv4]`.
    Disconnect,
    /// 0x06: disconnect as sent by third-party peers (`06 02`); not a stock type.
    ShortDisconnect,
}

impl LowKind {
    pub fn from_type(t: u8) -> Option<LowKind> {
        Some(match t {
            0x00 => LowKind::PeerInfo,
            0x02 => LowKind::Type02,
            0x03 => LowKind::Connect,
            0x04 => LowKind::Boot,
            0x05 => LowKind::Disconnect,
            0x06 => LowKind::ShortDisconnect,
            _ => return None,
        })
    }

    pub fn type_byte(self) -> u8 {
        match self {
            LowKind::PeerInfo => 0x00,
            LowKind::Type02 => 0x02,
            LowKind::Connect => 0x03,
            LowKind::Boot => 0x04,
            LowKind::Disconnect => 0x05,
            LowKind::ShortDisconnect => 0x06,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LowKind::PeerInfo => "peer_info",
            LowKind::Type02 => "low_02",
            LowKind::Connect => "connect",
            LowKind::Boot => "boot",
            LowKind::Disconnect => "disconnect",
            LowKind::ShortDisconnect => "disconnect_06",
        }
    }

    /// Whether stock peers send this type at all.
    pub fn is_stock(self) -> bool {
        self != LowKind::ShortDisconnect
    }
}

/// Decoded payload of a low-type message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LowBody {
    PeerInfo {
        peer_id: u8,
        ipv4: [u8; 4],
        /// UTF-16LE name bytes, without the `00 00` terminator (datagram offsets).
        name: Range<usize>,
        /// Whether a `00 00` terminator ended the name; when false the name ran to the
        /// end of the message.
        terminated: bool,
    },
    ConnectRequest {
        ipv4: [u8; 4],
        /// Probably the client's UDP port; byte order unverified (README §4.3).
        port_bytes: [u8; 2],
        tail: [u8; 4],
    },
    ConnectReply {
        assigned_peer_id: u8,
    },
    Disconnect {
        peer_id: u8,
        ipv4: [u8; 4],
    },
    /// A host's boot (README §4.3): why, and the player slot it concerns.
    Boot {
        reason: u8,
        slot: u8,
    },
    /// Layout unknown or not the stock shape: the payload range is all there is.
    Raw,
}

impl LowBody {
    /// The player name of a peer-info body, read from the decrypted datagram `plain`.
    pub fn name(&self, plain: &[u8]) -> Option<String> {
        match self {
            LowBody::PeerInfo { name, .. } => plain.get(name.clone()).map(utf16le_to_string),
            _ => None,
        }
    }
}

pub const CONNECT_REQUEST_LEN: usize = 10;
pub const CONNECT_REPLY_LEN: usize = 1;
pub const DISCONNECT_LEN: usize = 5;
pub const BOOT_LEN: usize = 2;

/// The boot reasons of README §4.3, by their byte.
pub fn boot_reason_name(reason: u8) -> Option<&'static str> {
    Some(match reason {
        1 => "timeout",
        2 => "rejected",
        3 => "server_full",
        4 => "kicked",
        5 => "connection_accepted",
        _ => return None,
    })
}

/// Whether a boot with this reason ends the client's stay: all but "connection
/// accepted" (and unknown reasons, which are taken as leaving, as the type says).
pub fn boot_ends_stay(reason: Option<u8>) -> bool {
    reason != Some(5)
}
const PEER_INFO_FIXED: usize = 5;

fn four(b: &[u8]) -> [u8; 4] {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    a
}

/// Decode the payload `payload` (datagram offsets) of a `kind` message. A payload that
/// does not have the stock shape decodes as [`LowBody::Raw`] with a warning.
pub fn decode_body(
    kind: LowKind,
    plain: &[u8],
    payload: Range<usize>,
) -> (LowBody, Option<Warning>) {
    let at = payload.start;
    let Some(p) = plain.get(payload.clone()) else {
        return (LowBody::Raw, None);
    };
    match kind {
        LowKind::PeerInfo => decode_peer_info(p, at),
        LowKind::Connect => match p.len() {
            CONNECT_REQUEST_LEN => {
                let mut port_bytes = [0u8; 2];
                port_bytes.copy_from_slice(&p[4..6]);
                let body = LowBody::ConnectRequest {
                    ipv4: four(p),
                    port_bytes,
                    tail: four(&p[6..]),
                };
                (body, None)
            }
            CONNECT_REPLY_LEN => (
                LowBody::ConnectReply {
                    assigned_peer_id: p[0],
                },
                None,
            ),
            n => (
                LowBody::Raw,
                Some(Warning::new(
                    Code::NonStock,
                    Some(at),
                    format!(
                        "connect payload of {n} byte(s); stock sends a {CONNECT_REQUEST_LEN}-byte request or a {CONNECT_REPLY_LEN}-byte reply"
                    ),
                )),
            ),
        },
        LowKind::Disconnect => {
            if p.len() == DISCONNECT_LEN {
                let body = LowBody::Disconnect {
                    peer_id: p[0],
                    ipv4: four(&p[1..]),
                };
                (body, None)
            } else {
                (
                    LowBody::Raw,
                    Some(Warning::new(
                        Code::NonStock,
                        Some(at),
                        format!(
                            "disconnect payload of {} byte(s); stock sends {DISCONNECT_LEN} (peer id + IPv4)",
                            p.len()
                        ),
                    )),
                )
            }
        }
        LowKind::Boot => {
            if p.len() != BOOT_LEN {
                return (
                    LowBody::Raw,
                    Some(Warning::new(
                        Code::NonStock,
                        Some(at),
                        format!(
                            "boot payload of {} byte(s); stock sends {BOOT_LEN} (reason + player slot)",
                            p.len()
                        ),
                    )),
                );
            }
            let body = LowBody::Boot {
                reason: p[0],
                slot: p[1],
            };
            let w = boot_reason_name(p[0]).is_none().then(|| {
                Warning::new(
                    Code::NonStock,
                    Some(at),
                    format!("boot reason {} is none of the stock reasons 1–5", p[0]),
                )
            });
            (body, w)
        }
        LowKind::Type02 | LowKind::ShortDisconnect => (LowBody::Raw, None),
    }
}

fn decode_peer_info(p: &[u8], at: usize) -> (LowBody, Option<Warning>) {
    if p.len() < PEER_INFO_FIXED {
        let w = Warning::new(
            Code::MalformedBody,
            Some(at),
            format!(
                "peer info needs at least {PEER_INFO_FIXED} bytes (peer id + IPv4), got {}",
                p.len()
            ),
        );
        return (LowBody::Raw, Some(w));
    }
    let name_bytes = &p[PEER_INFO_FIXED..];
    let name_start = at + PEER_INFO_FIXED;
    // The terminator is a zero UTF-16 code unit, so look on even offsets only.
    let term = name_bytes
        .chunks_exact(2)
        .position(|u| u == [0, 0])
        .map(|i| i * 2);
    let (name, terminated, warning) = match term {
        Some(t) => {
            let after = name_bytes.len() - (t + 2);
            let w = (after > 0).then(|| {
                Warning::new(
                    Code::MalformedBody,
                    Some(name_start + t + 2),
                    format!("{after} byte(s) after the peer-info name terminator"),
                )
            });
            (name_start..name_start + t, true, w)
        }
        None => (
            name_start..name_start + name_bytes.len(),
            false,
            Some(Warning::new(
                Code::MalformedBody,
                Some(name_start),
                "peer-info name has no 00 00 terminator",
            )),
        ),
    };
    let body = LowBody::PeerInfo {
        peer_id: p[0],
        ipv4: four(&p[1..]),
        name,
        terminated,
    };
    (body, warning)
}

/// UTF-16LE bytes to a string; unpaired surrogates become U+FFFD, an odd last byte is
/// ignored.
pub fn utf16le_to_string(bytes: &[u8]) -> String {
    let units = bytes
        .chunks_exact(2)
        .map(|u| u16::from_le_bytes([u[0], u[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Payload of a peer-info message (encoder side).
pub fn peer_info_payload(peer_id: u8, ipv4: [u8; 4], name: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(PEER_INFO_FIXED + 2 * name.len() + 2);
    v.push(peer_id);
    v.extend_from_slice(&ipv4);
    for u in name.encode_utf16() {
        v.extend_from_slice(&u.to_le_bytes());
    }
    v.extend_from_slice(&[0, 0]);
    v
}

/// Payload of a client connect request (encoder side).
pub fn connect_request_payload(ipv4: [u8; 4], port_bytes: [u8; 2], tail: [u8; 4]) -> [u8; 10] {
    let mut a = [0u8; CONNECT_REQUEST_LEN];
    a[..4].copy_from_slice(&ipv4);
    a[4..6].copy_from_slice(&port_bytes);
    a[6..].copy_from_slice(&tail);
    a
}

/// Payload of a boot (encoder side).
pub fn boot_payload(reason: u8, slot: u8) -> [u8; BOOT_LEN] {
    [reason, slot]
}

/// Payload of a disconnect (encoder side).
pub fn disconnect_payload(peer_id: u8, ipv4: [u8; 4]) -> [u8; 5] {
    let mut a = [0u8; DISCONNECT_LEN];
    a[0] = peer_id;
    a[1..].copy_from_slice(&ipv4);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_reason_and_slot_decode_and_odd_boots_are_flagged() {
        // A stock host kicking the player in slot 1 (README §4.3): reason 4.
        let p = boot_payload(4, 1);
        assert_eq!(
            decode_body(LowKind::Boot, &p, 0..2),
            (LowBody::Boot { reason: 4, slot: 1 }, None)
        );
        assert_eq!(boot_reason_name(4), Some("kicked"));
        assert_eq!(boot_reason_name(5), Some("connection_accepted"));
        assert!(!boot_ends_stay(Some(5)) && boot_ends_stay(Some(1)) && boot_ends_stay(None));
        let (body, w) = decode_body(LowKind::Boot, &[9, 0], 0..2);
        assert_eq!(body, LowBody::Boot { reason: 9, slot: 0 });
        let w = w.unwrap();
        assert_eq!((w.code, w.offset), (Code::NonStock, Some(0)));
        // Wrong length: raw, located at the payload.
        let plain = [0xC0, 0, 0, 0, 0, 4, 1, 7];
        let (body, w) = decode_body(LowKind::Boot, &plain, 5..8);
        assert_eq!(body, LowBody::Raw);
        assert_eq!(w.unwrap().offset, Some(5));
    }

    #[test]
    fn peer_info_payload_decodes_back() {
        let p = peer_info_payload(2, [192, 168, 1, 20], "Picard");
        let (body, w) = decode_body(LowKind::PeerInfo, &p, 0..p.len());
        assert!(w.is_none());
        match body {
            LowBody::PeerInfo {
                peer_id,
                ipv4,
                name,
                terminated,
            } => {
                assert_eq!((peer_id, ipv4, terminated), (2, [192, 168, 1, 20], true));
                assert_eq!(utf16le_to_string(&p[name]), "Picard");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn peer_info_without_terminator_or_with_extra_bytes_warns() {
        let p = [2, 1, 2, 3, 4, b'A', 0];
        let (_, w) = decode_body(LowKind::PeerInfo, &p, 0..p.len());
        assert_eq!(
            w.map(|w| (w.code, w.offset)),
            Some((Code::MalformedBody, Some(5)))
        );
        let p = [2, 1, 2, 3, 4, b'A', 0, 0, 0, 9];
        let (_, w) = decode_body(LowKind::PeerInfo, &p, 0..p.len());
        assert_eq!(w.map(|w| w.offset), Some(Some(9)));
        let p = [2, 1, 2];
        let (b, w) = decode_body(LowKind::PeerInfo, &p, 0..3);
        assert_eq!(b, LowBody::Raw);
        assert!(w.is_some());
    }

    #[test]
    fn connect_shapes() {
        let req = connect_request_payload([192, 168, 1, 20], [0xD4, 0x31], [0; 4]);
        let (b, w) = decode_body(LowKind::Connect, &req, 0..10);
        assert!(w.is_none());
        assert!(matches!(
            b,
            LowBody::ConnectRequest {
                ipv4: [192, 168, 1, 20],
                port_bytes: [0xD4, 0x31],
                ..
            }
        ));
        let (b, _) = decode_body(LowKind::Connect, &[3], 0..1);
        assert_eq!(
            b,
            LowBody::ConnectReply {
                assigned_peer_id: 3
            }
        );
        let (b, w) = decode_body(LowKind::Connect, &[0, 0, 0, 0x7F, 0], 0..5);
        assert_eq!(b, LowBody::Raw);
        assert_eq!(w.map(|w| w.code), Some(Code::NonStock));
        let d = disconnect_payload(2, [127, 0, 0, 1]);
        let (b, _) = decode_body(LowKind::Disconnect, &d, 0..5);
        assert_eq!(
            b,
            LowBody::Disconnect {
                peer_id: 2,
                ipv4: [127, 0, 0, 1]
            }
        );
    }
}
