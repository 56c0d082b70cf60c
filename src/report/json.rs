//! The JSON contract (`docs/json.md`): its version and the helpers its records share.
//! Every record is written by [`super::json_stream`].

use crate::game::GameMessage;

/// Version of the JSON contract; bumped only when a name or shape changes incompatibly.
/// 2: keys in the contract's (or the wire's) order, repeated names and StateUpdate
/// subsystems as arrays, `info` always an object with a `files` array.
pub const SCHEMA_VERSION: u32 = 2;

pub fn time_seconds(ts_ns: i64) -> f64 {
    ts_ns as f64 / 1e9
}

/// The object a game message is about, for names ("Galaxy (Bot1, slot 1)").
pub fn object_of(g: &GameMessage) -> Option<u32> {
    g.object_id()
}
