//! What the family decoders share: the `non_stock` warning and the encoder of bytes as
//! they came. It sits below the families and the dispatcher in `mod.rs`, which uses
//! them, so that no family has to import its dispatcher.

use crate::diag::{Code, Warning};

/// Encoder for opcodes without a known layout (0x05, 0x24, 0x26, unknown script
/// messages) and for replaying bytes as they are: the opcode, then the body.
pub fn emit_raw(opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + body.len());
    v.push(opcode);
    v.extend_from_slice(body);
    v
}

/// A `non_stock` warning: the bytes are readable but differ from what stock peers send.
pub(crate) fn non_stock(offset: usize, message: impl Into<String>) -> Warning {
    Warning::new(Code::NonStock, Some(offset), message.into())
}
