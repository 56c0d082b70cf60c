//! A decoded game message (the payload of one complete 0x32 transport message).

use super::field::Field;
use super::stateupdate::StateUpdate;
use crate::diag::Warning;

/// One game message, decoded as far as the bytes allow.
///
/// `fields` covers every byte of the message: what is understood is typed, what is not is
/// a labelled `Value::Bytes` field, and a decode failure leaves a `decode_error` warning
/// plus the undecoded remainder as raw bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct GameMessage {
    pub opcode: u8,
    /// Human name of the opcode ("StateUpdate", "ChecksumRequest", "Unknown").
    pub name: &'static str,
    /// Bytes of the game message, opcode byte included.
    pub length: usize,
    pub fields: Vec<Field>,
    pub warnings: Vec<Warning>,
    /// Typed StateUpdate data for statistics and tracks (opcode 0x1C only).
    pub state_update: Option<Box<StateUpdate>>,
}
