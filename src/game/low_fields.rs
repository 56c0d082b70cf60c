//! The fields of a connection-management message body (connect, peer info,
//! disconnect, boot), as the decoded fields of game messages are written: the transport
//! stream reads these bodies (the player name included) and hands them down typed;
//! this names them and locates them for the records and the detail tree.

use crate::game::field::{Field, Span, Value};
use crate::game::registry::field;
use crate::transport::low::{boot_reason_name, LowBody};
use crate::transport::stream::LowFacts;

/// Fields of a connection-management message body (spans relative to the body).
pub fn low_fields(low: &LowFacts) -> Vec<Field> {
    let payload = low.payload.clone();
    let base = payload.start;
    let rel = |r: std::ops::Range<usize>| {
        Span::new(r.start.saturating_sub(base), r.end.saturating_sub(base))
    };
    let ip = |a: [u8; 4]| Value::Text(std::net::Ipv4Addr::from(a).to_string());
    match low.body {
        LowBody::PeerInfo {
            peer_id,
            ipv4,
            name,
            ..
        } => vec![
            Field::new(
                field!("peer_id"),
                Value::Hex(*peer_id as u64),
                rel(base..base + 1),
            ),
            Field::new(field!("address"), ip(*ipv4), rel(base + 1..base + 5)),
            Field::new(
                field!("name"),
                Value::Text(low.name.clone().unwrap_or_default()),
                rel(name.clone()),
            ),
        ],
        LowBody::ConnectRequest {
            ipv4,
            port_bytes,
            tail,
        } => vec![
            Field::new(field!("address"), ip(*ipv4), rel(base..base + 4)),
            Field::new(
                field!("port_bytes"),
                Value::Bytes(port_bytes.to_vec()),
                rel(base + 4..base + 6),
            ),
            Field::new(
                field!("tail"),
                Value::Bytes(tail.to_vec()),
                rel(base + 6..base + 10),
            ),
        ],
        LowBody::ConnectReply { assigned_peer_id } => vec![Field::new(
            field!("assigned_peer_id"),
            Value::Hex(*assigned_peer_id as u64),
            rel(base..base + 1),
        )],
        LowBody::Disconnect { peer_id, ipv4 } => vec![
            Field::new(
                field!("peer_id"),
                Value::Hex(*peer_id as u64),
                rel(base..base + 1),
            ),
            Field::new(field!("address"), ip(*ipv4), rel(base + 1..base + 5)),
        ],
        LowBody::Boot { reason, slot } => {
            let mut v = vec![Field::new(
                field!("boot_reason"),
                Value::Uint(u64::from(*reason)),
                rel(base..base + 1),
            )];
            if let Some(name) = boot_reason_name(*reason) {
                v.push(Field::new(
                    field!("boot_reason_name"),
                    Value::Text(name.to_string()),
                    rel(base..base + 1),
                ));
            }
            v.push(Field::new(
                field!("slot"),
                Value::Uint(u64::from(*slot)),
                rel(base + 1..base + 2),
            ));
            v
        }
        LowBody::Raw => {
            if low.raw.is_empty() {
                Vec::new()
            } else {
                vec![Field::new(
                    field!("raw"),
                    Value::Bytes(low.raw.to_vec()),
                    rel(payload),
                )]
            }
        }
    }
}
