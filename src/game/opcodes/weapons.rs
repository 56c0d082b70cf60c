//! Weapons and effects (`opcodes.md` §5): TorpedoFire 0x19, BeamFire 0x1A, Explosion 0x29.

use super::events::torpedo_name;
use super::non_stock;
use crate::diag::{Code, Warning};
use crate::game::reader::{DecodeResult, FieldReader};
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
        let launcher = f.object_id("launcher")?;
        let torpedo_type = f.u8("torpedo_type")?;
        if let Some(n) = torpedo_name(torpedo_type) {
            let span = f.last_span();
            f.label("torpedo_type_name", n, span);
        }
        let flags = f.hex8("flags")?;
        let direction = f.cv3_raw("direction")?;
        let target = if flags & TORPEDO_NO_TARGET != 0 {
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
            let id = f.object_id("target")?;
            let aim = if f.r.remaining() == 5 {
                w.push(non_stock(
                    at + 4,
                    "aim point is 5 bytes (cv4, 19-byte message); stock TorpedoFire carries a \
                     4-byte cvb (18 bytes)",
                ));
                let (dir, mag) = f.cv4_raw("aim_point")?;
                AimPoint::Cv4(dir, mag)
            } else {
                AimPoint::Cvb(f.cvb("aim_point")?)
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
        let emitter = f.object_id("emitter")?;
        let unknown_byte = f.hex8("unknown_byte5")?;
        let direction = f.cv3_raw("direction")?;
        let flags = f.hex8("flags")?;
        // The length decides whether a target follows (the flag bit is disputed).
        let target = if f.r.remaining() >= 4 {
            Some(f.object_id("target")?)
        } else {
            None
        };
        let span = f.last_span();
        f.label(
            "target_flag_bits",
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
            object_id: f.object_id("object_id")?,
            position: f.cv4_raw("position")?,
            damage: f.cf16_raw("damage")?,
            radius: f.cf16_raw("radius")?,
        })
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
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::game::compressed::cf16_decode;
    use crate::game::field::Value;

    fn fr(bytes: &[u8]) -> FieldReader<'_> {
        FieldReader::after_opcode(bytes)
    }

    // Constructed: the stock 18-byte form (flags 0x01, target, 4-byte cvb) and the
    // 10-byte form without target (flags 0x05).
    #[test]
    fn torpedo_constructed_stock_forms() {
        let t = TorpedoFire {
            launcher: 0x4000_0010,
            torpedo_type: 2,
            flags: 0x01,
            direction: [0, 0x7F, 0],
            target: Some((0x4003_FFFF, AimPoint::Cvb([0x7F, 0, 0, 0x40]))),
        };
        let bytes = t.emit();
        assert_eq!(bytes, hex("1910000040020100 7f00 ffff0340 7f000040"));
        assert_eq!(bytes.len(), 18);
        let mut w = Vec::new();
        assert_eq!(TorpedoFire::parse(&mut fr(&bytes), &mut w).unwrap(), t);
        assert!(w.is_empty());
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(field(&m, "target"), &Value::ObjectId(0x4003_FFFF));
        assert_eq!(
            field(&m, "torpedo_type_name"),
            &Value::Text("PhotonTorpedo".into())
        );

        let t = TorpedoFire {
            flags: 0x05,
            target: None,
            ..t
        };
        let bytes = t.emit();
        assert_eq!(bytes.len(), 10);
        assert_eq!(TorpedoFire::parse(&mut fr(&bytes), &mut w).unwrap(), t);
        assert_clean(&decode_plain(&bytes));
    }

    // Captured from a reimplementation replaying stock payloads: 19 bytes, cv4 aim point.
    #[test]
    fn torpedo_19_byte_capture_is_non_stock() {
        let bytes = hex("19ffff0340060200007fffff07406b4015bc58");
        let m = decode_plain(&bytes);
        assert!(has_warning(&m, Code::NonStock));
        assert!(!has_warning(&m, Code::DecodeError));
        assert_eq!(field(&m, "target"), &Value::ObjectId(0x4007_FFFF));
        let mut w = Vec::new();
        let t = TorpedoFire::parse(&mut fr(&bytes), &mut w).unwrap();
        assert_eq!(t.emit(), bytes);
    }

    #[test]
    fn torpedo_no_target_flag_with_bytes_is_reported() {
        let m = decode_plain(&hex("1910000040020500 7f00 ffff0340 7f000040"));
        assert!(has_warning(&m, Code::LengthMismatch));
        assert!(has_warning(&m, Code::TrailingBytes));
        let m = decode_plain(&hex("1910000040020100 7f00 ffff"));
        assert!(has_warning(&m, Code::DecodeError));
    }

    // Captured (b2_valentines_replay frames 145, 180).
    #[test]
    fn beam_capture_vectors() {
        for s in [
            "1affff03400100007f02ffff0740",
            "1affff0740017f000002ffff0340",
        ] {
            let bytes = hex(s);
            let m = decode_plain(&bytes);
            assert_clean(&m);
            let b = BeamFire::parse(&mut fr(&bytes), &mut Vec::new()).unwrap();
            assert!(b.target.is_some());
            assert_eq!(b.emit(), bytes);
        }
    }

    // Constructed: BeamFire without target (10 bytes).
    #[test]
    fn beam_constructed_without_target() {
        let b = BeamFire {
            emitter: 0x4000_0003,
            unknown_byte: 2,
            direction: [0x81, 0, 0],
            flags: 0,
            target: None,
        };
        let bytes = b.emit();
        assert_eq!(bytes, hex("1a03000040028100 0000"));
        assert_eq!(
            BeamFire::parse(&mut fr(&bytes), &mut Vec::new()).unwrap(),
            b
        );
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(
            field(&m, "target_flag_bits"),
            &Value::Text("no target, bits 0 and 1 clear".into())
        );
    }

    // Captured (b2_valentines_replay frame 167).
    #[test]
    fn explosion_capture_vector() {
        let bytes = hex("29ffff0740214365df54aa52e360");
        let m = decode_plain(&bytes);
        assert_clean(&m);
        let e = Explosion::parse(&mut fr(&bytes)).unwrap();
        assert_eq!(e.object_id, 0x4007_FFFF);
        assert_eq!(e.damage, 0x52AA);
        assert_eq!(e.emit(), bytes);
        match field(&m, "damage") {
            Value::Float(v) => assert!((*v - cf16_decode(0x52AA) as f64).abs() < 1e-6),
            v => panic!("{v:?}"),
        }
    }

    // primitives.md §3.2: the captured explosion pair (50.0, 5997.8); constructed bytes.
    #[test]
    fn explosion_reference_values() {
        let e = Explosion {
            object_id: 0x3FFF_FFFF,
            position: ([0, 0x7F, 0], 0x571B),
            damage: 0x571B,
            radius: 0x78E2,
        };
        let bytes = e.emit();
        assert_eq!(bytes.len(), 14);
        let m = decode_plain(&bytes);
        assert_clean(&m);
        match (field(&m, "damage"), field(&m, "radius")) {
            (Value::Float(d), Value::Float(r)) => {
                assert!((d - 49.978).abs() < 0.01 && (r - 5997.8).abs() < 0.1)
            }
            v => panic!("{v:?}"),
        }
        assert_eq!(Explosion::parse(&mut fr(&bytes)).unwrap(), e);
    }
}
