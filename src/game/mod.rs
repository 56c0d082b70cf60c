//! Game layer: opcode decoders, object registry, ship layouts and StateUpdate.

pub mod class_layout;
pub mod compressed;
pub mod dirty;
pub mod field;
pub mod field_match;
pub mod layout_file;
pub mod low_fields;
pub mod message;
pub mod objects;
pub mod opcodes;
pub mod path;
pub mod phases;
pub mod qualified;
pub mod reader;
pub mod registry;
pub mod relay;
pub mod ship_log;
pub mod ships;
pub mod stateupdate;
pub mod subsys;
pub mod track;
pub mod update;
pub mod walk;
pub mod writer;

pub use field::{Field, Span, Value};
pub use message::GameMessage;
pub use reader::{DecodeError, DecodeResult, FieldReader, Reader};
pub use writer::Writer;
