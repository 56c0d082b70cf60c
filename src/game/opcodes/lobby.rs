//! Connection and lobby opcodes: Settings (0x00), the opcode-only messages, BootPlayer
//! (0x04), single-object messages (0x14, 0x1D, 0x1E), UICollisionSetting (0x16),
//! DeletePlayerAnim (0x18), EnterSet (0x1F) and NewPlayerInGame (0x2A).

use crate::diag::Warning;
use crate::game::reader::{DecodeResult, FieldReader};
use crate::game::registry::field;
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
        let game_time = f.f32(field!("game_time"))?;
        let collision_damage = f.bit(field!("collision_damage"))?;
        let friendly_fire = f.bit(field!("friendly_fire"))?;
        let player_slot = f.u8(field!("player_slot"))?;
        let mission_script = f.str16(field!("mission_script"))?;
        // The third boolean lives in the packed byte after the game time.
        let checksum_correction = f.bit(field!("checksum_correction_follows"))?;
        let correction_data = if checksum_correction {
            f.rest(field!("checksum_correction_data_unknown_format"))
                .to_vec()
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
            reason: f.u8(field!("reason_code"))?,
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
            object_id: f.object_id(field!("object_id"))?,
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
            collision_damage: f.bit(field!("collision_damage"))?,
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
            player_name: f.str16(field!("player_name"))?,
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
            object_id: f.object_id(field!("object_id"))?,
            set_name: f.str32z(field!("set_name"))?,
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
            unknown_flag: f.bit(field!("unknown_flag"))?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x2A);
        w.bit(self.unknown_flag);
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests;
