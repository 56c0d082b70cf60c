//! The typed StateUpdate (opcode 0x1C, `stateupdate.md`) and its encoder: one ship's
//! movement and systems state as [`super::stateupdate`] decodes it. Compressed values
//! keep their raw wire form so that [`encode`] reproduces the decoded bytes exactly.

use super::compressed::{cf16_decode, cf16_encode, cv3_decode, cv3_encode};
use super::field::Field;
use super::subsys::{write_block, write_power_block, PowerSetting, SubsystemBlock};
use super::writer::Writer;
use std::borrow::Cow;

pub const OPCODE: u8 = 0x1C;

/// Dirty-flag bits (§2).
pub mod flag {
    pub const POSITION: u8 = 0x01;
    pub const DELTA: u8 = 0x02;
    pub const FORWARD: u8 = 0x04;
    pub const UP: u8 = 0x08;
    pub const SPEED: u8 = 0x10;
    pub const SUBSYSTEMS: u8 = 0x20;
    pub const CLOAK: u8 = 0x40;
    pub const POWER: u8 = 0x80;
}

/// A `cv3` direction in wire form (three `s8`, component = byte / 127).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dir3(pub [u8; 3]);

impl Dir3 {
    pub fn vector(self) -> [f32; 3] {
        cv3_decode(self.0)
    }
    /// Normalise and quantise the way the stock writer does.
    pub fn from_vector(v: [f32; 3]) -> Dir3 {
        Dir3(cv3_encode(v))
    }
}

/// A `cf16` value in wire form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cf16(pub u16);

impl Cf16 {
    pub fn value(self) -> f32 {
        cf16_decode(self.0)
    }
    pub fn from_value(v: f32) -> Cf16 {
        Cf16(cf16_encode(v))
    }
}

/// A `cv4` position delta in wire form: direction bytes and a `cf16` magnitude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Delta {
    pub dir: Dir3,
    pub magnitude: Cf16,
}

impl Delta {
    /// Decoded offset: direction × magnitude (the direction is not re-normalised).
    pub fn vector(self) -> [f32; 3] {
        let d = self.dir.vector();
        let m = self.magnitude.value();
        [d[0] * m, d[1] * m, d[2] * m]
    }
    pub fn from_vector(v: [f32; 3]) -> Delta {
        let m = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        Delta {
            dir: Dir3::from_vector(v),
            magnitude: Cf16::from_value(m),
        }
    }
}

/// The 0x20 block, split into records when the ship's layout is known and fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubsystemData {
    Decoded(SubsystemBlock),
    /// Unknown class or a layout that does not fit: the bytes after the start index,
    /// plus the booleans the block stored in a packed byte opened before it (by the
    /// hash flag or cloak bit) — needed to write the same bytes back.
    Raw {
        start: u8,
        shared_bits: Vec<bool>,
        bytes: Vec<u8>,
    },
}

impl SubsystemData {
    pub fn start(&self) -> u8 {
        match self {
            SubsystemData::Decoded(b) => b.start,
            SubsystemData::Raw { start, .. } => *start,
        }
    }
}

/// Typed StateUpdate, used by statistics, position tracks and the encoder.
///
/// A field is present exactly when its flag is set (and the message was long enough).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StateUpdate {
    /// The ship class whose layout named the 0x20 and 0x80 blocks, as the decoder was
    /// given it (from the object registry, not from the bytes; not written by
    /// [`encode`]). `None` when the object's class was unknown.
    pub species: Option<u16>,
    pub object_id: u32,
    pub game_time: f32,
    pub flags: u8,
    /// First list index of the 0x20 subsystem block, when present.
    pub subsystem_start: Option<u8>,
    /// 0x01: absolute position.
    pub position: Option<[f32; 3]>,
    /// 0x01: the integrity hash, when its presence bit is 1.
    pub integrity_hash: Option<u16>,
    /// 0x02: offset from the sender's last absolute position of this ship.
    pub delta: Option<Delta>,
    /// 0x04 / 0x08: model axes +Y and +Z.
    pub forward: Option<Dir3>,
    pub up: Option<Dir3>,
    /// 0x10: speed; negative while reversing.
    pub speed: Option<Cf16>,
    /// 0x40: cloak bit (1 = cloaking, the better-supported reading).
    pub cloak: Option<bool>,
    /// 0x20: subsystem block.
    pub subsystems: Option<SubsystemData>,
    /// 0x80: power / weapon pairs.
    pub power: Option<Vec<PowerSetting>>,
    /// What the field tree of an update that warned shows beyond the values above,
    /// kept by a decode that builds no whole tree but is written as if it had
    /// ([`FieldTrees::TypedStateUpdates`](super::opcodes::FieldTrees::TypedStateUpdates)):
    /// `Some` exactly for an update that warned there, `None` otherwise.
    pub shown: Option<Box<Shown>>,
}

/// The parts of a StateUpdate's field tree that its typed values do not say: each
/// comes with a warning (a failed read, a raw subsystem block, bytes left over).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Shown {
    /// The field whose read failed and ended the values early, if one did (a failed
    /// read of the integrity hash leaves its presence bit shown).
    pub failed: Option<Cow<'static, str>>,
    /// A raw subsystem block's fields as the tree has them: its start, its bytes and
    /// the classes whose layouts read it exactly.
    pub raw_block: Vec<Field>,
    /// The bytes kept raw at the end (`undecoded`, `power_block_trailing` or
    /// `trailing`): at most one, since each runs to the end of the message.
    pub rest: Option<Field>,
}

impl StateUpdate {
    /// Back to [`StateUpdate::default`] in place, for reuse. A recycled update's lists
    /// went to the pool already: a field that owns something is dropped only where
    /// it is still set, so the reset of a recycled one is a few stores (assigning a
    /// whole default value ran the drop of each such field and showed in a profile).
    #[inline]
    pub fn clear(&mut self) {
        // Every field named, so that a new one cannot be left out.
        let StateUpdate {
            species,
            object_id,
            game_time,
            flags,
            subsystem_start,
            position,
            integrity_hash,
            delta,
            forward,
            up,
            speed,
            cloak,
            subsystems,
            power,
            shown,
        } = self;
        *species = None;
        *object_id = 0;
        *game_time = 0.0;
        *flags = 0;
        *subsystem_start = None;
        *position = None;
        *integrity_hash = None;
        *delta = None;
        *forward = None;
        *up = None;
        *speed = None;
        *cloak = None;
        if subsystems.is_some() {
            *subsystems = None;
        }
        if power.is_some() {
            *power = None;
        }
        if shown.is_some() {
            *shown = None;
        }
    }

    /// Right axis (+X) = forward × up, when both are present.
    pub fn right(&self) -> Option<[f32; 3]> {
        Some(Self::right_of(self.forward?, self.up?))
    }

    /// Right axis (+X) of a forward and an up direction.
    pub fn right_of(forward: Dir3, up: Dir3) -> [f32; 3] {
        cross(forward.vector(), up.vector())
    }

    /// Booleans already in the open packed byte when the 0x20 block starts.
    pub fn bits_before_subsystems(&self) -> u8 {
        (self.flags & flag::POSITION != 0) as u8 + (self.flags & flag::CLOAK != 0) as u8
    }
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Write a StateUpdate. Each field whose flag is set is written (a missing value as
/// zeros); the hash is written when `integrity_hash` is set. Decoding the result with
/// the same class layout gives the same value back.
pub fn encode(su: &StateUpdate) -> Vec<u8> {
    let mut w = Writer::with_opcode(OPCODE);
    w.u32(su.object_id).f32(su.game_time).u8(su.flags);
    let flags = su.flags;
    if flags & flag::POSITION != 0 {
        let p = su.position.unwrap_or_default();
        w.f32(p[0]).f32(p[1]).f32(p[2]);
        w.bit(su.integrity_hash.is_some());
        if let Some(h) = su.integrity_hash {
            w.u16(h);
        }
    }
    if flags & flag::DELTA != 0 {
        let d = su.delta.unwrap_or_default();
        w.bytes(&d.dir.0).u16(d.magnitude.0);
    }
    if flags & flag::FORWARD != 0 {
        w.bytes(&su.forward.unwrap_or_default().0);
    }
    if flags & flag::UP != 0 {
        w.bytes(&su.up.unwrap_or_default().0);
    }
    if flags & flag::SPEED != 0 {
        w.u16(su.speed.unwrap_or_default().0);
    }
    if flags & flag::CLOAK != 0 {
        w.bit(su.cloak.unwrap_or(false));
    }
    if flags & flag::SUBSYSTEMS != 0 {
        match &su.subsystems {
            Some(SubsystemData::Decoded(b)) => write_block(&mut w, b),
            Some(SubsystemData::Raw {
                start,
                shared_bits,
                bytes,
            }) => {
                w.u8(*start);
                for b in shared_bits {
                    w.bit(*b);
                }
                w.bytes(bytes);
            }
            None => {
                w.u8(su.subsystem_start.unwrap_or(0));
            }
        }
    }
    if flags & flag::POWER != 0 {
        write_power_block(&mut w, su.power.as_deref().unwrap_or_default());
    }
    w.into_bytes()
}
