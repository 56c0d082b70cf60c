//! A message record's transport facts, written from what its stream said of the
//! message ([`Arrival`]): the record builder copies typed values and has the game layer
//! name the fields of a connection-management body; it reads no transport bytes.

use super::record::{FragmentRef, MessageRecord, TransportInfo};
use crate::game::low_fields::low_fields;
use crate::game::opcodes::FieldTrees;
use crate::transport::stream::{Arrival, Content, Copy, Header};

impl MessageRecord {
    /// Write the transport facts of `a` into this blank record (fields of a
    /// connection-management body only when `trees` asks for any); hands back what the
    /// message carries for the game layer.
    ///
    /// Read where it lies: the arrival was built in the caller's frame and lent to its
    /// stream, and passing it on by value copied the whole value once more per message.
    /// Everything it owns is released here ([`Arrival::release`]), so that the caller
    /// can forget the remains rather than run their out-of-line drop per message.
    #[inline]
    pub fn take_arrival<'a>(&mut self, a: &mut Arrival<'a>, trees: FieldTrees) -> Content<'a> {
        self.transport_type = a.type_byte;
        // Most messages have none: skip the out-of-line copy.
        if !a.walk_warnings.is_empty() {
            self.warnings.extend_from_slice(a.walk_warnings);
        }
        if !a.warnings.is_empty() {
            self.warnings.append(&mut a.warnings);
        }
        self.order = a.order;
        match a.copy {
            Copy::New => {}
            Copy::Resend { first_frame } => {
                self.retransmission = true;
                self.original_frame = Some(first_frame);
            }
            Copy::Keepalive { first_frame } => {
                self.keepalive = true;
                self.original_frame = Some(first_frame);
            }
        }
        self.payload_offset = a.payload_offset;
        self.transport = match &a.header {
            &Header::Data {
                flags_len,
                reliable,
                ordered,
                seq,
                fragment,
            } => TransportInfo::Data {
                flags_len,
                reliable,
                ordered,
                seq,
                fragment: fragment.map(|f| FragmentRef {
                    index: f.index,
                    total: f.total,
                }),
            },
            &Header::Ack {
                seq,
                flags,
                fragment_index,
                matched,
            } => TransportInfo::Ack {
                seq,
                flags,
                fragment_index,
                acked_frame: matched.acked_frame,
                delay_ns: matched.delay_ns,
                duplicate: matched.duplicate,
            },
            Header::Low(low) => TransportInfo::Low {
                name: low.kind.name(),
                reliable: low.reliable,
                seq: low.seq,
                fields: if trees.builds_none() {
                    Vec::new()
                } else {
                    low_fields(low)
                },
            },
            Header::Unknown => TransportInfo::Unknown,
        };
        a.release()
    }
}
