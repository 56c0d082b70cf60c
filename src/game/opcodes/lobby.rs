//! Connection and lobby opcodes: Settings (0x00), the opcode-only messages, BootPlayer
//! (0x04), single-object messages (0x14, 0x1D, 0x1E), UICollisionSetting (0x16),
//! DeletePlayerAnim (0x18), EnterSet (0x1F) and NewPlayerInGame (0x2A).

use crate::diag::Warning;
use crate::game::reader::{DecodeResult, FieldReader};
use crate::game::writer::Writer;

/// A message that is just its opcode: GameInit 0x01, HostMsg 0x13, FileTransferAck 0x27,
/// ChecksumComplete 0x28, RestartGame 0x39.
pub fn emit_bare(opcode: u8) -> Vec<u8> {
    vec![opcode]
}

/// 0x00 Settings (H→C).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Host game clock, seconds.
    pub game_time: f32,
    pub collision_damage: bool,
    pub friendly_fire: bool,
    /// Player slot assigned to the receiving client (0-based).
    pub player_slot: u8,
    /// Mission script module, e.g. `Multiplayer.Episode.Mission1.Mission1`.
    pub mission_script: String,
    pub checksum_correction: bool,
    /// Correction data (format unknown), only when `checksum_correction` is set.
    pub correction_data: Vec<u8>,
}

impl Settings {
    pub fn parse(f: &mut FieldReader, _w: &mut Vec<Warning>) -> DecodeResult<Settings> {
        let game_time = f.f32("game_time")?;
        let collision_damage = f.bit("collision_damage")?;
        let friendly_fire = f.bit("friendly_fire")?;
        let player_slot = f.u8("player_slot")?;
        let mission_script = f.str16("mission_script")?;
        // The third boolean lives in the packed byte after the game time.
        let checksum_correction = f.bit("checksum_correction_follows")?;
        let correction_data = if checksum_correction {
            f.rest("checksum_correction_data_unknown_format").to_vec()
        } else {
            Vec::new()
        };
        Ok(Settings {
            game_time,
            collision_damage,
            friendly_fire,
            player_slot,
            mission_script,
            checksum_correction,
            correction_data,
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x00);
        w.f32(self.game_time)
            .bit(self.collision_damage)
            .bit(self.friendly_fire)
            .u8(self.player_slot)
            .str16(&self.mission_script)
            .bit(self.checksum_correction);
        if self.checksum_correction {
            w.bytes(&self.correction_data);
        }
        w.into_bytes()
    }
}

/// 0x04 BootPlayer (H→C): a reason code whose table is disputed, so left unlabelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootPlayer {
    pub reason: u8,
}

impl BootPlayer {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<BootPlayer> {
        Ok(BootPlayer {
            reason: f.u8("reason_code")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        vec![0x04, self.reason]
    }
}

/// 0x14 DestroyObject, 0x1D ObjNotFound, 0x1E RequestObject: `[op][objref]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectMessage {
    pub opcode: u8,
    pub object_id: u32,
}

impl ObjectMessage {
    pub fn parse(opcode: u8, f: &mut FieldReader) -> DecodeResult<ObjectMessage> {
        Ok(ObjectMessage {
            opcode,
            object_id: f.object_id("object_id")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(self.opcode);
        w.u32(self.object_id);
        w.into_bytes()
    }
}

/// 0x16 UICollisionSetting (H→C): one packed boolean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UiCollisionSetting {
    pub collision_damage: bool,
}

impl UiCollisionSetting {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<UiCollisionSetting> {
        Ok(UiCollisionSetting {
            collision_damage: f.bit("collision_damage")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x16);
        w.bit(self.collision_damage);
        w.into_bytes()
    }
}

/// 0x18 DeletePlayerAnim (H→C): "player has left".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletePlayerAnim {
    pub player_name: String,
}

impl DeletePlayerAnim {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<DeletePlayerAnim> {
        Ok(DeletePlayerAnim {
            player_name: f.str16("player_name")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x18);
        w.str16(&self.player_name);
        w.into_bytes()
    }
}

/// 0x1F EnterSet (H→C): object moves into a set (`str32z` name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnterSet {
    pub object_id: u32,
    pub set_name: String,
}

impl EnterSet {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<EnterSet> {
        Ok(EnterSet {
            object_id: f.object_id("object_id")?,
            set_name: f.str32z("set_name")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x1F);
        w.u32(self.object_id).str32z(&self.set_name);
        w.into_bytes()
    }
}

/// 0x2A NewPlayerInGame (C→H): one packed boolean of unknown meaning (false in captures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewPlayerInGame {
    pub unknown_flag: bool,
}

impl NewPlayerInGame {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<NewPlayerInGame> {
        Ok(NewPlayerInGame {
            unknown_flag: f.bit("unknown_flag")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x2A);
        w.bit(self.unknown_flag);
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::diag::Code;
    use crate::game::field::Value;

    fn reparse<T>(bytes: &[u8], parse: impl Fn(&mut FieldReader) -> DecodeResult<T>) -> T {
        let mut f = FieldReader::after_opcode(bytes);
        let v = parse(&mut f).expect("parse");
        assert!(f.r.is_empty(), "bytes left over");
        v
    }

    // Captured (a_single_client frame 21): Settings with the 37-character mission.
    #[test]
    fn settings_capture_vector() {
        let bytes = hex("000c022b3e610025004d756c7469706c617965722e457069736f64652e4d697373696f6e312e4d697373696f6e31");
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(field(&m, "player_slot"), &Value::Uint(0));
        assert_eq!(field(&m, "collision_damage"), &Value::Bool(true));
        assert_eq!(field(&m, "friendly_fire"), &Value::Bool(false));
        assert_eq!(
            field(&m, "mission_script"),
            &Value::Text("Multiplayer.Episode.Mission1.Mission1".into())
        );
        let s = reparse(&bytes, |f| Settings::parse(f, &mut Vec::new()));
        assert_eq!(s.emit(), bytes);
    }

    #[test]
    fn settings_round_trip_with_correction_data() {
        let s = Settings {
            game_time: 12.5,
            collision_damage: false,
            friendly_fire: true,
            player_slot: 3,
            mission_script: "M".into(),
            checksum_correction: true,
            correction_data: vec![9, 8, 7],
        };
        let bytes = s.emit();
        assert_eq!(bytes[5], 0x66); // three bits: 0, 1, 1
        assert_eq!(reparse(&bytes, |f| Settings::parse(f, &mut Vec::new())), s);
        assert!(decode_plain(&bytes).warnings.is_empty());
    }

    // Captured: 0x28, 0x01, 0x13 are their opcode alone; 0x2A carries one false bit.
    #[test]
    fn bare_and_flag_capture_vectors() {
        for op in [0x01u8, 0x13, 0x27, 0x28, 0x39] {
            assert_eq!(emit_bare(op), vec![op]);
            assert_clean(&decode_plain(&[op]));
        }
        let m = decode_plain(&[0x28, 0x00]);
        assert!(has_warning(&m, Code::TrailingBytes));
        let bytes = hex("2a20");
        let v = reparse(&bytes, NewPlayerInGame::parse);
        assert!(!v.unknown_flag);
        assert_eq!(v.emit(), bytes);
        assert_clean(&decode_plain(&bytes));
    }

    // Captured: b2_valentines_replay frame 254 (0x14) and 0x18 "Cady2".
    #[test]
    fn object_and_name_capture_vectors() {
        let bytes = hex("14ffffff3f");
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(field(&m, "object_id"), &Value::ObjectId(0x3FFF_FFFF));
        assert_eq!(
            reparse(&bytes, |f| ObjectMessage::parse(0x14, f)).emit(),
            bytes
        );
        let bytes = hex("1805004361647932");
        let v = reparse(&bytes, DeletePlayerAnim::parse);
        assert_eq!(v.player_name, "Cady2");
        assert_eq!(v.emit(), bytes);
        assert_clean(&decode_plain(&bytes));
    }

    // Constructed vectors for opcodes never captured.
    #[test]
    fn constructed_vectors() {
        let v = ObjectMessage {
            opcode: 0x1E,
            object_id: 0x4003_FFFF,
        };
        assert_eq!(v.emit(), hex("1effff0340"));
        assert_eq!(reparse(&v.emit(), |f| ObjectMessage::parse(0x1E, f)), v);
        assert_eq!(
            ObjectMessage {
                opcode: 0x1D,
                object_id: 1
            }
            .emit(),
            hex("1d01000000")
        );
        assert_eq!(BootPlayer { reason: 2 }.emit(), hex("0402"));
        assert_eq!(reparse(&hex("0402"), BootPlayer::parse).reason, 2);
        let u = UiCollisionSetting {
            collision_damage: true,
        };
        assert_eq!(u.emit(), hex("1621"));
        assert_eq!(reparse(&u.emit(), UiCollisionSetting::parse), u);
        let e = EnterSet {
            object_id: 0x3FFF_FFFF,
            set_name: "Multi1".into(),
        };
        let bytes = hex("1fffffff3f060000004d756c74693100");
        assert_eq!(e.emit(), bytes);
        assert_eq!(reparse(&bytes, EnterSet::parse), e);
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(field(&m, "set_name"), &Value::Text("Multi1".into()));
    }

    #[test]
    fn short_settings_is_a_located_error() {
        let m = decode_plain(&hex("000c022b3e6100ff00"));
        assert!(has_warning(&m, Code::DecodeError));
        assert_eq!(m.warnings[0].offset, Some(7));
        assert_eq!(field(&m, "player_slot"), &Value::Uint(0));
        assert_eq!(field(&m, "undecoded"), &Value::Bytes(vec![0xff, 0x00]));
    }
}
