//! StateUpdate (opcode 0x1C) — placeholder contract, replaced by the full decoder.

use super::field::{Field, Span, Value};
use super::message::GameMessage;
use super::ships::ShipCatalog;

/// Typed summary of one StateUpdate, used by statistics and position tracks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StateUpdate {
    pub object_id: u32,
    pub game_time: f32,
    pub flags: u8,
    /// First list index of the 0x20 subsystem block, when present.
    pub subsystem_start: Option<u8>,
}

/// Decode a whole StateUpdate message (opcode byte first). `species` is the ship class of
/// the object if the registry knows it.
pub fn decode(msg: &[u8], _species: Option<u16>, _catalog: &ShipCatalog) -> GameMessage {
    GameMessage {
        opcode: 0x1C,
        name: "StateUpdate",
        length: msg.len(),
        fields: vec![Field::new(
            "raw",
            Value::Bytes(msg.get(1..).unwrap_or_default().to_vec()),
            Span::new(1, msg.len()),
        )],
        warnings: Vec::new(),
        state_update: None,
    }
}
