//! A decoded game message (the payload of one complete 0x32 transport message).

use super::field::Field;
use super::opcodes::Body;
use super::update::StateUpdate;
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
    /// What the message says, typed; `None` when its decoder failed before the part
    /// that identifies it (see [`Body`]).
    pub body: Option<Body>,
}

impl GameMessage {
    /// The object the message is about (see [`Body::object_id`]).
    pub fn object_id(&self) -> Option<u32> {
        self.body.as_ref().and_then(Body::object_id)
    }

    /// The typed StateUpdate (opcode 0x1C, header readable).
    pub fn state_update(&self) -> Option<&StateUpdate> {
        match &self.body {
            Some(Body::StateUpdate(su)) => Some(su),
            _ => None,
        }
    }

    pub fn state_update_mut(&mut self) -> Option<&mut StateUpdate> {
        match &mut self.body {
            Some(Body::StateUpdate(su)) => Some(su),
            _ => None,
        }
    }

    /// Take the StateUpdate's box out (to reuse its allocation for a later message).
    pub fn take_state_update(&mut self) -> Option<Box<StateUpdate>> {
        match self.body.take() {
            Some(Body::StateUpdate(su)) => Some(su),
            other => {
                self.body = other;
                None
            }
        }
    }
}

/// Every object id a game message names, in wire order: a StateUpdate's object and every
/// field holding an object id, at any depth (what `--object` and `-Y object_ids` test).
pub fn mentioned_objects(g: &GameMessage, out: &mut Vec<u32>) {
    fn walk(fields: &[super::field::Field], out: &mut Vec<u32>) {
        for f in fields {
            match &f.value {
                super::field::Value::ObjectId(v) => out.push(*v),
                super::field::Value::Group(c) => walk(c, out),
                super::field::Value::List(items) => {
                    for i in items {
                        if let super::field::Value::Group(c) = i {
                            walk(c, out);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(s) = g.state_update() {
        out.push(s.object_id);
    }
    walk(&g.fields, out);
}
