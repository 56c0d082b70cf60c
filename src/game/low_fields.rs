//! The fields of a connection-management message body (connect, peer info,
//! disconnect, boot), as the decoded fields of game messages are written: the transport
//! layer reads these bodies, and this turns them into named, located fields for the
//! records and the detail tree.

use crate::game::field::{Field, Span, Value};
use crate::transport::low::{boot_reason_name, utf16le_to_string, LowBody};

/// Fields of a connection-management message body (spans relative to the message).
pub fn low_fields(body: &LowBody, payload: std::ops::Range<usize>, plain: &[u8]) -> Vec<Field> {
    let base = payload.start;
    let rel = |r: std::ops::Range<usize>| {
        Span::new(r.start.saturating_sub(base), r.end.saturating_sub(base))
    };
    let ip = |a: [u8; 4]| Value::Text(std::net::Ipv4Addr::from(a).to_string());
    match body {
        LowBody::PeerInfo {
            peer_id,
            ipv4,
            name,
            ..
        } => vec![
            Field::new("peer_id", Value::Hex(*peer_id as u64), rel(base..base + 1)),
            Field::new("address", ip(*ipv4), rel(base + 1..base + 5)),
            Field::new(
                "name",
                Value::Text(
                    plain
                        .get(name.clone())
                        .map(utf16le_to_string)
                        .unwrap_or_default(),
                ),
                rel(name.clone()),
            ),
        ],
        LowBody::ConnectRequest {
            ipv4,
            port_bytes,
            tail,
        } => vec![
            Field::new("address", ip(*ipv4), rel(base..base + 4)),
            Field::new(
                "port_bytes",
                Value::Bytes(port_bytes.to_vec()),
                rel(base + 4..base + 6),
            ),
            Field::new(
                "tail",
                Value::Bytes(tail.to_vec()),
                rel(base + 6..base + 10),
            ),
        ],
        LowBody::ConnectReply { assigned_peer_id } => vec![Field::new(
            "assigned_peer_id",
            Value::Hex(*assigned_peer_id as u64),
            rel(base..base + 1),
        )],
        LowBody::Disconnect { peer_id, ipv4 } => vec![
            Field::new("peer_id", Value::Hex(*peer_id as u64), rel(base..base + 1)),
            Field::new("address", ip(*ipv4), rel(base + 1..base + 5)),
        ],
        LowBody::Boot { reason, slot } => {
            let mut v = vec![Field::new(
                "boot_reason",
                Value::Uint(u64::from(*reason)),
                rel(base..base + 1),
            )];
            if let Some(name) = boot_reason_name(*reason) {
                v.push(Field::new(
                    "boot_reason_name",
                    Value::Text(name.to_string()),
                    rel(base..base + 1),
                ));
            }
            v.push(Field::new(
                "slot",
                Value::Uint(u64::from(*slot)),
                rel(base + 1..base + 2),
            ));
            v
        }
        LowBody::Raw => {
            let raw = plain.get(payload.clone()).unwrap_or_default();
            if raw.is_empty() {
                Vec::new()
            } else {
                vec![Field::new("raw", Value::Bytes(raw.to_vec()), rel(payload))]
            }
        }
    }
}
