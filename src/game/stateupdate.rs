//! StateUpdate (opcode 0x1C) — placeholder contract, replaced by the full decoder.

/// Typed summary of one StateUpdate, used by statistics and position tracks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StateUpdate {
    pub object_id: u32,
    pub game_time: f32,
    pub flags: u8,
    /// First list index of the 0x20 subsystem block, when present.
    pub subsystem_start: Option<u8>,
}
