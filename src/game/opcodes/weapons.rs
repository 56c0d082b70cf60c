//! Weapons and effects (`opcodes.md` §5): TorpedoFire 0x19, BeamFire 0x1A, Explosion 0x29.

use super::common::non_stock;
use super::events::torpedo_name;
use crate::diag::{Code, Warning};
use crate::game::compressed::{cf16_decode, cv3_decode};
use crate::game::field::Value;
use crate::game::reader::{CvbMembers, DecodeResult, FieldReader};
use crate::game::registry::field;
use crate::game::writer::Writer;

/// TorpedoFire flag bit 2: no target follows.
pub const TORPEDO_NO_TARGET: u8 = 0x04;

/// Aim point on the target of a torpedo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AimPoint {
    /// Stock: 4-byte `cvb` (18-byte message).
    Cvb([u8; 4]),
    /// Seen from a reimplementation: 5-byte `cv4` (19-byte message).
    Cv4([u8; 3], u16),
}

/// 0x19 TorpedoFire (C→H→C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TorpedoFire {
    /// Torpedo tube subsystem that fired.
    pub launcher: u32,
    /// Disputed: SpeciesToTorp index, or a constant 2.
    pub torpedo_type: u8,
    pub flags: u8,
    /// Launch direction (`cv3` bytes).
    pub direction: [u8; 3],
    pub target: Option<(u32, AimPoint)>,
}

impl TorpedoFire {
    pub fn parse(f: &mut FieldReader, w: &mut Vec<Warning>) -> DecodeResult<TorpedoFire> {
        let launcher = f.object_id(field!("launcher"))?;
        let torpedo_type = f.u8(field!("torpedo_type"))?;
        if let Some(n) = torpedo_name(torpedo_type) {
            let span = f.last_span();
            f.label(field!("torpedo_type_name"), n, span);
        }
        let flags = f.hex8(field!("flags"))?;
        let no_target = flags & TORPEDO_NO_TARGET != 0;
        if f.keeps_fields() {
            // The bit the dissector rule reads (`opcodes.md` 0x19), as a value of its
            // own: the other flag bits are of unknown meaning.
            let span = f.last_span();
            f.push_value(field!("no_target"), Value::Bool(no_target), span);
        }
        let direction = f.cv3_raw(field!("direction"))?;
        let target = if no_target {
            if f.r.remaining() > 0 {
                w.push(Warning::new(
                    Code::LengthMismatch,
                    Some(f.r.pos()),
                    format!(
                        "flags {flags:#04x} say no target (bit 2) but {} byte(s) follow",
                        f.r.remaining()
                    ),
                ));
            }
            None
        } else {
            let at = f.r.pos();
            let id = f.object_id(field!("target"))?;
            let aim = if f.r.remaining() == 5 {
                w.push(non_stock(
                    at + 4,
                    "aim point is 5 bytes (cv4, 19-byte message); stock TorpedoFire carries a \
                     4-byte cvb (18 bytes)",
                ));
                let (dir, mag) = f.cv4_raw(field!("aim_point"))?;
                AimPoint::Cv4(dir, mag)
            } else {
                AimPoint::Cvb(f.cvb(
                    field!("aim_point"),
                    CvbMembers {
                        direction: field!("aim_point.direction"),
                        magnitude_raw: field!("aim_point.magnitude_raw"),
                    },
                )?)
            };
            Some((id, aim))
        };
        Ok(TorpedoFire {
            launcher,
            torpedo_type,
            flags,
            direction,
            target,
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x19);
        w.u32(self.launcher)
            .u8(self.torpedo_type)
            .u8(self.flags)
            .bytes(&self.direction);
        if let Some((id, aim)) = &self.target {
            w.u32(*id);
            match aim {
                AimPoint::Cvb(b) => w.bytes(b),
                AimPoint::Cv4(d, m) => w.bytes(d).u16(*m),
            };
        }
        w.into_bytes()
    }
}

/// 0x1A BeamFire (C→H→C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeamFire {
    /// Phaser / beam emitter that fired.
    pub emitter: u32,
    /// Unknown; 0x02 in stock observations.
    pub unknown_byte: u8,
    /// Direction to the hit point (`cv3` bytes).
    pub direction: [u8; 3],
    pub flags: u8,
    pub target: Option<u32>,
}

/// Which target bits a BeamFire had, for the record (the sources disagree on the bit).
fn beam_flag_note(flags: u8, has_target: bool) -> &'static str {
    match (flags & 3, has_target) {
        (0, true) => "target present, neither bit 0 nor bit 1 set",
        (1, true) => "target present with bit 0 set",
        (2, true) => "target present with bit 1 set",
        (3, true) => "target present with bits 0 and 1 set",
        (0, false) => "no target, bits 0 and 1 clear",
        (_, false) => "no target although bit 0 or 1 is set",
        _ => "",
    }
}

impl BeamFire {
    pub fn parse(f: &mut FieldReader, _w: &mut Vec<Warning>) -> DecodeResult<BeamFire> {
        let emitter = f.object_id(field!("emitter"))?;
        let unknown_byte = f.hex8(field!("unknown_byte5"))?;
        let direction = f.cv3_raw(field!("direction"))?;
        let flags = f.hex8(field!("flags"))?;
        // The length decides whether a target follows (the flag bit is disputed).
        let target = if f.r.remaining() >= 4 {
            Some(f.object_id(field!("target"))?)
        } else {
            None
        };
        let span = f.last_span();
        f.label(
            field!("target_flag_bits"),
            beam_flag_note(flags, target.is_some()),
            span,
        );
        Ok(BeamFire {
            emitter,
            unknown_byte,
            direction,
            flags,
            target,
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x1A);
        w.u32(self.emitter)
            .u8(self.unknown_byte)
            .bytes(&self.direction)
            .u8(self.flags);
        if let Some(t) = self.target {
            w.u32(t);
        }
        w.into_bytes()
    }
}

/// 0x29 Explosion (H→C). The order damage-then-radius is medium confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explosion {
    pub object_id: u32,
    /// `cv4`: direction bytes and raw cf16 magnitude.
    pub position: ([u8; 3], u16),
    /// Raw cf16 values.
    pub damage: u16,
    pub radius: u16,
}

impl Explosion {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<Explosion> {
        Ok(Explosion {
            object_id: f.object_id(field!("object_id"))?,
            position: f.cv4_raw(field!("position"))?,
            damage: f.cf16_raw(field!("damage"))?,
            radius: f.cf16_raw(field!("radius"))?,
        })
    }

    /// The position as a vector (what the `position` field shows).
    pub fn position_vector(&self) -> [f32; 3] {
        let d = cv3_decode(self.position.0);
        let m = cf16_decode(self.position.1);
        [d[0] * m, d[1] * m, d[2] * m]
    }

    /// The damage as a number (what the `damage` field shows).
    pub fn damage_value(&self) -> f32 {
        cf16_decode(self.damage)
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x29);
        w.u32(self.object_id)
            .bytes(&self.position.0)
            .u16(self.position.1)
            .u16(self.damage)
            .u16(self.radius);
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests;
