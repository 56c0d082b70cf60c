//! Transport layer: cipher → packet header → transport messages → reliability and
//! fragment reassembly (`protocol/README.md` §3–5, `cipher.md`, `variants.md`).
//!
//! Every piece is a value or a small state machine fed one item at a time:
//! [`cipher`] works in place on one datagram, [`packet`] parses and emits one decrypted
//! datagram, [`reliability::Tracker`] follows sequence numbers and ACKs per stream,
//! [`reassembly::Reassembler`] joins fragments, [`facts::SessionFacts`] collects what the
//! connection-management messages say about each client.

pub mod cipher;
pub mod facts;
pub mod hash;
pub mod low;
pub mod packet;
pub mod reassembly;
pub mod reliability;

pub use packet::{
    parse, Ack, Counter, DataMessage, FragmentHeader, LowMessage, Message, MessageBody, Packet,
};
