//! Serialized engine events (`opcodes.md` §4): PythonEvent 0x06 / 0x0D, the event
//! forwards 0x07–0x12 and 0x1B, CollisionEffect 0x15 and DeletePlayerUI 0x17.
//!
//! Every one starts with the 16-byte event header (class id, event type, source,
//! destination); the class id selects the tail.

use super::common::non_stock;
use crate::diag::{Code, Warning};
use crate::game::reader::{CvbMembers, DecodeResult, FieldReader};
use crate::game::registry::field;
use crate::game::registry::FieldName;
use crate::game::writer::Writer;

pub const CLASS_BASE: u32 = 0x0002;
pub const CLASS_SUBSYSTEM: u32 = 0x0101;
pub const CLASS_SUBSYSTEM_CONTROL: u32 = 0x0104;
pub const CLASS_CHAR: u32 = 0x0105;
pub const CLASS_OBJECT_POINTER: u32 = 0x010C;
pub const CLASS_PLAYER_LIST: u32 = 0x0866;
pub const CLASS_COLLISION: u32 = 0x8124;
pub const CLASS_START_FIRING: u32 = 0x8128;
pub const CLASS_OBJECT_EXPLODING: u32 = 0x8129;
pub const CLASS_START_WARP: u32 = 0x812A;

/// Event type code of "object exploding" (class 0x8129).
pub const EVENT_OBJECT_EXPLODING: u32 = 0x0080_004E;

/// Size of the event header after the opcode byte.
pub const HEADER_LEN: usize = 16;

/// Readable name of an event class id.
pub fn class_name(class_id: u32) -> Option<&'static str> {
    Some(match class_id {
        CLASS_BASE => "base event",
        CLASS_SUBSYSTEM => "subsystem event",
        CLASS_SUBSYSTEM_CONTROL => "subsystem-control event",
        CLASS_CHAR => "char event",
        CLASS_OBJECT_POINTER => "object-pointer event",
        CLASS_PLAYER_LIST => "player-list event",
        CLASS_COLLISION => "collision event",
        CLASS_START_FIRING => "start-firing event",
        CLASS_OBJECT_EXPLODING => "object-exploding event",
        CLASS_START_WARP => "start-warp event",
        _ => return None,
    })
}

/// Readable name of an event type code (`opcodes.md` §4.2).
pub fn event_type_name(code: u32) -> Option<&'static str> {
    Some(match code {
        0x0080_004E => "object exploding",
        0x0080_0050 => "collision effect",
        0x0080_0058 => "target changed",
        0x0080_006C => "subsystem status changed",
        0x0080_0074 => "repair completed",
        0x0080_0075 => "repair cannot be completed",
        0x0080_0076 => "repair priority raised",
        0x0080_007C => "weapon fired",
        0x0080_007D => "tractor beam started firing",
        0x0080_007F => "tractor beam stopped firing",
        0x0080_0081 => "phaser started firing",
        0x0080_0083 => "phaser stopped firing",
        0x0080_00D7 => "start firing (receiver)",
        0x0080_00D8 => "start firing (sender)",
        0x0080_00D9 => "stop firing (receiver)",
        0x0080_00DA => "stop firing (sender)",
        0x0080_00DB => "stop firing at target (receiver)",
        0x0080_00DC => "stop firing at target (sender)",
        0x0080_00DF => "add to repair list",
        0x0080_00E0 => "set phaser level",
        0x0080_00E2 => "start cloaking (sender)",
        0x0080_00E3 => "start cloaking (receiver)",
        0x0080_00E4 => "stop cloaking (sender)",
        0x0080_00E5 => "stop cloaking (receiver)",
        0x0080_00EC => "start warp (sender)",
        0x0080_00ED => "start warp (receiver)",
        0x0080_00F1 => "new player in game",
        0x0080_00FD => "torpedo type changed (receiver)",
        0x0080_00FE => "torpedo type changed (sender)",
        0x0006_0005 => "player deleted",
        _ => return None,
    })
}

/// The class stock peers use for an opcode (None: any class is normal there).
fn stock_class(opcode: u8) -> Option<u32> {
    Some(match opcode {
        0x07 => CLASS_START_FIRING,
        0x08 => CLASS_SUBSYSTEM,
        0x0A => CLASS_SUBSYSTEM_CONTROL,
        0x10 => CLASS_START_WARP,
        0x11 => CLASS_OBJECT_POINTER,
        0x12 | 0x1B => CLASS_CHAR,
        0x15 => CLASS_COLLISION,
        0x17 => CLASS_PLAYER_LIST,
        _ => return None,
    })
}

/// Name of a SpeciesToTorp index (`opcodes.md` §7.2).
pub fn torpedo_name(index: u8) -> Option<&'static str> {
    const NAMES: [&str; 16] = [
        "(unknown)",
        "Disruptor",
        "PhotonTorpedo",
        "QuantumTorpedo",
        "AntimatterTorpedo",
        "CardassianTorpedo",
        "KlingonTorpedo",
        "PositronTorpedo",
        "PulseDisruptor",
        "FusionBolt",
        "CardassianDisruptor",
        "KessokDisruptor",
        "PhasedPlasma",
        "Positron2",
        "PhotonTorpedo2",
        "RomulanCannon",
    ];
    NAMES.get(index as usize).copied()
}

/// The 16-byte event header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventHeader {
    pub class_id: u32,
    pub event_type: u32,
    pub source: u32,
    pub destination: u32,
}

/// The class-specific part after the header.
#[derive(Debug, Clone, PartialEq)]
pub enum EventTail {
    /// Classes 0x0002 and 0x0101.
    None,
    /// Classes 0x0104, 0x0105, 0x0866: one byte (state, level, torpedo type, peer id).
    Byte(u8),
    /// Class 0x010C: a third object.
    Object(u32),
    /// Class 0x8124: contact points (`cvb`, ship-relative) and the collision force.
    Collision { contacts: Vec<[u8; 4]>, force: f32 },
    /// Class 0x8128: 8 bytes of unknown meaning (zero in captures).
    StartFiring([u8; 8]),
    /// Class 0x8129.
    ObjectExploding { killer_peer_id: i32, duration: f32 },
    /// Class 0x812A.
    StartWarp {
        set_name: String,
        destination: [f32; 3],
        speed: f32,
    },
    /// An unknown class: the tail length is unknown, so the rest is kept raw.
    Unknown(Vec<u8>),
    /// A known class whose tail ends early: its bytes as they came (the message also
    /// carries a `decode_error`).
    Undecoded(Vec<u8>),
}

/// A serialized event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub header: EventHeader,
    pub tail: EventTail,
}

/// The body of an event-carrying opcode.
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    Event(Event),
    /// Fewer bytes than the event header stock peers always send (non-stock senders).
    TooShort(Vec<u8>),
}

/// One message of opcode 0x06–0x12, 0x15, 0x17 or 0x1B.
#[derive(Debug, Clone, PartialEq)]
pub struct EventMessage {
    pub opcode: u8,
    pub body: EventBody,
}

/// Field names of the header objects where an opcode gives them a specific meaning.
fn object_names(opcode: u8) -> (FieldName, FieldName) {
    match opcode {
        0x15 => (field!("other_object"), field!("reporting_ship")),
        _ => (field!("source"), field!("destination")),
    }
}

/// Field name of a class 0x0104 / 0x0105 / 0x0866 byte.
fn byte_name(opcode: u8, class_id: u32) -> FieldName {
    match (class_id, opcode) {
        (CLASS_PLAYER_LIST, _) => field!("peer_id"),
        (CLASS_SUBSYSTEM_CONTROL, 0x0A) => field!("state"),
        (CLASS_CHAR, 0x12) => field!("phaser_level"),
        (CLASS_CHAR, 0x1B) => field!("torpedo_type"),
        _ => field!("value"),
    }
}

/// Field name of a class 0x010C third object.
fn object_tail_name(opcode: u8, event_type: u32) -> FieldName {
    match (opcode, event_type) {
        (0x11, _) => field!("subsystem_moved_to_front"),
        (0x09, _) => field!("target"),
        (_, 0x0080_0058) => field!("previous_target"),
        (0x06, _) => field!("weapon_subsystem"),
        _ => field!("third_object"),
    }
}

impl EventHeader {
    pub fn parse(opcode: u8, f: &mut FieldReader) -> DecodeResult<EventHeader> {
        let (src, dst) = object_names(opcode);
        let class_id = f.hex32(field!("class_id"))?;
        if let Some(n) = class_name(class_id) {
            let span = f.last_span();
            f.label(field!("class_name"), n, span);
        }
        let event_type = f.hex32(field!("event_type"))?;
        if let Some(n) = event_type_name(event_type) {
            let span = f.last_span();
            f.label(field!("event_name"), n, span);
        }
        Ok(EventHeader {
            class_id,
            event_type,
            source: f.object_id(src)?,
            destination: f.object_id(dst)?,
        })
    }

    pub fn emit(&self, w: &mut Writer) {
        w.u32(self.class_id)
            .u32(self.event_type)
            .u32(self.source)
            .u32(self.destination);
    }
}

impl EventTail {
    pub fn parse(opcode: u8, header: &EventHeader, f: &mut FieldReader) -> DecodeResult<Self> {
        Ok(match header.class_id {
            CLASS_BASE | CLASS_SUBSYSTEM => EventTail::None,
            CLASS_SUBSYSTEM_CONTROL | CLASS_CHAR | CLASS_PLAYER_LIST => {
                let v = f.u8(byte_name(opcode, header.class_id))?;
                let span = f.last_span();
                match (header.class_id, opcode) {
                    (CLASS_CHAR, 0x12) => {
                        if let Some(n) = ["low", "medium", "high"].get(v as usize) {
                            f.label(field!("phaser_level_name"), n, span);
                        }
                    }
                    (CLASS_CHAR, 0x1B) => {
                        if let Some(n) = torpedo_name(v) {
                            f.label(field!("torpedo_type_name"), n, span);
                        }
                    }
                    _ => {}
                }
                EventTail::Byte(v)
            }
            CLASS_OBJECT_POINTER => {
                EventTail::Object(f.object_id(object_tail_name(opcode, header.event_type))?)
            }
            CLASS_COLLISION => {
                let n = f.u8(field!("contact_count"))? as usize;
                let first = f.mark();
                let start = f.r.pos();
                // Bounded by the bytes present, not by the count byte.
                let mut contacts = Vec::with_capacity(n.min(f.r.remaining() / 4));
                for _ in 0..n {
                    contacts.push(f.cvb(
                        field!("contacts.contact"),
                        CvbMembers {
                            direction: field!("contacts.contact.direction"),
                            magnitude_raw: field!("contacts.contact.magnitude_raw"),
                        },
                    )?);
                }
                f.group_from(field!("contacts"), first, start);
                let force = f.f32(field!("force"))?;
                EventTail::Collision { contacts, force }
            }
            CLASS_START_FIRING => {
                let b = f.bytes(field!("unknown_tail"), 8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                EventTail::StartFiring(a)
            }
            CLASS_OBJECT_EXPLODING => EventTail::ObjectExploding {
                killer_peer_id: f.i32(field!("killer_peer_id"))?,
                duration: f.f32(field!("effect_duration"))?,
            },
            CLASS_START_WARP => EventTail::StartWarp {
                set_name: f.str8(field!("set_name"))?,
                destination: f.vec3_f32(field!("destination"))?,
                speed: f.f32(field!("speed"))?,
            },
            _ => EventTail::Unknown(f.rest(field!("unknown_class_tail")).to_vec()),
        })
    }

    pub fn emit(&self, w: &mut Writer) {
        match self {
            EventTail::None => {}
            EventTail::Byte(v) => {
                w.u8(*v);
            }
            EventTail::Object(id) => {
                w.u32(*id);
            }
            EventTail::Collision { contacts, force } => {
                w.u8(contacts.len().min(255) as u8);
                for c in contacts.iter().take(255) {
                    w.bytes(c);
                }
                w.f32(*force);
            }
            EventTail::StartFiring(b) => {
                w.bytes(b);
            }
            EventTail::ObjectExploding {
                killer_peer_id,
                duration,
            } => {
                w.i32(*killer_peer_id).f32(*duration);
            }
            EventTail::StartWarp {
                set_name,
                destination,
                speed,
            } => {
                w.str8(set_name)
                    .f32(destination[0])
                    .f32(destination[1])
                    .f32(destination[2])
                    .f32(*speed);
            }
            EventTail::Unknown(b) | EventTail::Undecoded(b) => {
                w.bytes(b);
            }
        }
    }
}

impl EventMessage {
    pub fn parse(opcode: u8, f: &mut FieldReader, w: &mut Vec<Warning>) -> DecodeResult<Self> {
        match Self::parse_keeping(opcode, f, w) {
            (Some(m), Ok(())) => Ok(m),
            (_, Err(e)) => Err(e),
            (None, Ok(())) => unreachable!("a parse without a value reports its error"),
        }
    }

    /// [`Self::parse`], but a tail that ends early still gives the message (with the
    /// tail's bytes kept as they came) next to the error, so the header's objects are
    /// known to the registry and phases.
    pub fn parse_keeping(
        opcode: u8,
        f: &mut FieldReader,
        w: &mut Vec<Warning>,
    ) -> (Option<Self>, DecodeResult<()>) {
        match Self::parse_header(opcode, f, w) {
            Ok(Ok(m)) => (Some(m), Ok(())),
            Ok(Err(header)) => {
                let tail_at = f.r.pos();
                match EventTail::parse(opcode, &header, f) {
                    Ok(tail) => (Some(EventMessage::new(opcode, header, tail)), Ok(())),
                    Err(e) => {
                        let rest = f.r.buffer().get(tail_at..).unwrap_or_default().to_vec();
                        let m = EventMessage::new(opcode, header, EventTail::Undecoded(rest));
                        (Some(m), Err(e))
                    }
                }
            }
            Err(e) => (None, Err(e)),
        }
    }

    /// The header, or the whole message when the body is too short for one.
    fn parse_header(
        opcode: u8,
        f: &mut FieldReader,
        w: &mut Vec<Warning>,
    ) -> DecodeResult<Result<Self, EventHeader>> {
        let at = f.r.pos();
        if f.r.remaining() < HEADER_LEN {
            // Stock peers always send the full header; some reimplementations send a
            // shorter ad-hoc body. Nothing of it can be read without guessing.
            let n = f.r.remaining();
            w.push(non_stock(
                at,
                format!(
                    "{n}-byte body is shorter than the {HEADER_LEN}-byte event header stock \
                     peers send; shown raw"
                ),
            ));
            let raw = f.rest(field!("non_stock_body")).to_vec();
            return Ok(Ok(EventMessage {
                opcode,
                body: EventBody::TooShort(raw),
            }));
        }
        let header = EventHeader::parse(opcode, f)?;
        if let Some(stock) = stock_class(opcode) {
            if header.class_id != stock {
                w.push(non_stock(
                    at,
                    format!(
                        "event class {:#06x}; stock peers send class {stock:#06x} with this opcode",
                        header.class_id
                    ),
                ));
            }
        }
        if class_name(header.class_id).is_none() {
            w.push(Warning::new(
                Code::UnknownClass,
                Some(at),
                format!(
                    "event class {:#06x} is not documented; tail shown raw",
                    header.class_id
                ),
            ));
        }
        Ok(Err(header))
    }

    /// The event header, when the body holds one.
    pub fn header(&self) -> Option<&EventHeader> {
        match &self.body {
            EventBody::Event(e) => Some(&e.header),
            EventBody::TooShort(_) => None,
        }
    }

    /// The object a stock ObjectExploding event names (its destination).
    pub fn exploding_object(&self) -> Option<u32> {
        self.header()
            .filter(|h| {
                h.class_id == CLASS_OBJECT_EXPLODING && h.event_type == EVENT_OBJECT_EXPLODING
            })
            .map(|h| h.destination)
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(self.opcode);
        match &self.body {
            EventBody::Event(e) => {
                e.header.emit(&mut w);
                e.tail.emit(&mut w);
            }
            EventBody::TooShort(raw) => {
                w.bytes(raw);
            }
        }
        w.into_bytes()
    }

    /// Convenience constructor for a well-formed event message.
    pub fn new(opcode: u8, header: EventHeader, tail: EventTail) -> EventMessage {
        EventMessage {
            opcode,
            body: EventBody::Event(Event { header, tail }),
        }
    }

    /// The collision force of a CollisionEffect (class 0x8124) event.
    pub fn collision_force(&self) -> Option<f32> {
        match self.event()?.tail {
            EventTail::Collision { force, .. } => Some(force),
            _ => None,
        }
    }

    pub fn event(&self) -> Option<&Event> {
        match &self.body {
            EventBody::Event(e) => Some(e),
            EventBody::TooShort(_) => None,
        }
    }
}

#[cfg(test)]
mod tests;
