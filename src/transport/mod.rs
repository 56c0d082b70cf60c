//! Transport layer: cipher → packet header → transport messages → reliability and
//! fragment reassembly (`protocol/README.md` §3–5, `cipher.md`, `variants.md`).
//!
//! Every piece is a value or a small state machine fed one item at a time:
//! [`cipher`] works in place on one datagram, [`packet`] parses and emits one decrypted
//! datagram, [`reliability::Tracker`] follows sequence numbers and ACKs per stream,
//! [`reassembly::Reassembler`] joins fragments, [`facts::SessionFacts`] collects what the
//! connection-management messages say about each client.
//!
//! [`stream::Streams`] wires these per UDP payload of a flow (stream key = session,
//! client, direction) and says of each message whether it is new, a resend or a
//! keepalive, and what it carries:
//!
//! 1. [`cipher::decrypt_datagram`] (GameSpy text is left alone), then [`packet::parse`].
//! 2. For each message: a reliable one ([`reliability::SeqKey::of_message`]) goes to
//!    [`reliability::Tracker::on_message`] on its own stream; only
//!    [`reliability::Delivery::New`] messages are delivered. An ACK goes to
//!    [`reliability::Tracker::on_ack`] with the key of the *opposite* direction.
//! 3. A delivered fragment goes to [`reassembly::Reassembler::push`]; a complete set
//!    is a game message like an unfragmented payload.
//! 4. Low-type messages and every datagram feed [`facts::SessionFacts`].
//! 5. At the end, `finish()` on each reports unacknowledged messages, incomplete
//!    fragment sets and per-client facts.

pub mod cipher;
pub mod facts;
pub mod hash;
pub mod low;
pub mod packet;
pub mod reassembly;
pub mod reliability;
pub mod stream;

pub use facts::SessionFacts;
pub use packet::{
    emit_message, emit_packet, parse, parse_into, Ack, Counter, DataMessage, FragmentHeader,
    LowMessage, Message, MessageBody, Packet,
};
pub use reassembly::{Limits, Reassembler};
pub use reliability::Tracker;
