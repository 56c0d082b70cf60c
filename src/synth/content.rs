//! Game messages of a session, built with the crate's typed encoders. Sizes follow
//! the captured ones in flows.md §1 (checksum replies of 26/22/851/46/273 transport
//! bytes, Settings of 51, …).

use super::rng::Rng;
use super::world::{sub, Ship};
use crate::game::compressed::cf16_encode;
use crate::game::opcodes::checksum::{ChecksumRequest, ChecksumResponse, FileTree};
use crate::game::opcodes::events::{self, EventHeader, EventMessage, EventTail};
use crate::game::opcodes::lobby::{
    self, DeletePlayerAnim, NewPlayerInGame, ObjectMessage, Settings,
};
use crate::game::opcodes::objects::{ObjCreate, ObjectBody, ObjectPrefix, ShipBody, CLASS_SHIP};
use crate::game::opcodes::script::{Chat, MissionInit, Score, ScoreChange};
use crate::game::opcodes::weapons::{AimPoint, BeamFire, Explosion, TorpedoFire};
use crate::game::stateupdate::{Delta, Dir3};

pub const MISSION: &str = "Multiplayer.Episode.Mission1.Mission1";
pub const SET_NAME: &str = "Multi1";
/// Reference hash of the game version string (opcodes.md §8).
pub const VERSION_HASH: u32 = 0x7E0C_E243;
/// Team byte of every captured free-for-all creation.
pub const TEAM: u8 = 2;

pub const NAMES: [&str; 16] = [
    "Cady2", "Picard", "Worf", "Riker", "Kira", "Sisko", "Janeway", "Dax", "Troi", "Data", "Odo",
    "Quark", "Garak", "Martok", "Tomalak", "Sela",
];

pub const CHAT: [&str; 10] = [
    "gl hf",
    "gg",
    "nice shot",
    "lag?",
    "brb",
    "one more round",
    "who has the warbird",
    "shields down!",
    "ouch",
    "rematch",
];

/// GameSpy `\status\` query (README §1; never encrypted).
pub fn gamespy_query() -> Vec<u8> {
    b"\\status\\".to_vec()
}

/// The host's GameSpy reply.
pub fn gamespy_reply(port: u16, players: usize, query_id: usize) -> Vec<u8> {
    format!(
        "\\gamename\\bcommander\\gamever\\60\\location\\0\\hostname\\bcwire synth\\hostport\\{port}\\mapname\\Multi1\\gametype\\Deathmatch\\numplayers\\{players}\\maxplayers\\8\\gamemode\\openplaying\\final\\\\queryid\\{query_id}.1"
    )
    .into_bytes()
}

/// The five checksum rounds in order (opcodes.md §8).
pub const ROUNDS: [u8; 5] = [0, 1, 2, 3, 0xFF];

pub fn checksum_request(round: u8) -> Vec<u8> {
    let (directory, filter, recursive) = match round {
        0 => ("scripts/", "App.pyc", false),
        1 => ("scripts/", "Autoexec.pyc", false),
        2 => ("scripts/ships", "*.pyc", true),
        3 => ("scripts/mainmenu", "*.pyc", false),
        _ => ("Scripts/Multiplayer", "*.pyc", true),
    };
    ChecksumRequest {
        round,
        directory: directory.into(),
        filter: filter.into(),
        recursive,
    }
    .emit()
}

fn tree(hashes: &mut Rng, files: usize, subdirs: &[usize]) -> FileTree {
    FileTree {
        files: (0..files).map(|_| (hashes.u32(), hashes.u32())).collect(),
        subdirs: subdirs
            .iter()
            .map(|&n| (hashes.u32(), tree(hashes, n, &[])))
            .collect(),
    }
}

/// A client's reply; the hashes are the same for every client (same installation).
/// Sizes: 21, 17, 832, 41 and 268 payload bytes, as captured.
pub fn checksum_reply(round: u8) -> Vec<u8> {
    let mut hashes = Rng::new(0xB0C0_0000 + u64::from(round));
    let directory_hash = hashes.u32();
    let tree = match round {
        0 | 1 => tree(&mut hashes, 1, &[]),
        // scripts/ships: 51 ship scripts and a hardpoints folder of 51.
        2 => FileTree {
            files: (0..51).map(|_| (hashes.u32(), hashes.u32())).collect(),
            subdirs: vec![(hashes.u32(), tree(&mut hashes, 51, &[]))],
        },
        3 => tree(&mut hashes, 4, &[]),
        // Scripts/Multiplayer: 9 files, one folder of 2 files and 4 folders.
        _ => FileTree {
            files: (0..9).map(|_| (hashes.u32(), hashes.u32())).collect(),
            subdirs: vec![(hashes.u32(), tree(&mut hashes, 2, &[4, 4, 4, 5]))],
        },
    };
    ChecksumResponse {
        round,
        version_hash: (round == 0).then_some(VERSION_HASH),
        directory_hash,
        tree,
    }
    .emit()
}

pub fn settings(game_time: f32, slot: u8) -> Vec<u8> {
    Settings {
        game_time,
        collision_damage: true,
        friendly_fire: false,
        player_slot: slot,
        mission_script: MISSION.into(),
        checksum_correction: false,
        correction_data: Vec::new(),
    }
    .emit()
}

pub fn bare(opcode: u8) -> Vec<u8> {
    lobby::emit_bare(opcode)
}

pub fn new_player_in_game() -> Vec<u8> {
    NewPlayerInGame {
        unknown_flag: false,
    }
    .emit()
}

pub fn mission_init() -> Vec<u8> {
    MissionInit {
        player_limit: 8,
        system: 1,
        time_limit: 0xFF,
        end_time: None,
        frag_limit: 0xFF,
    }
    .emit()
}

fn event(
    opcode: u8,
    class_id: u32,
    event_type: u32,
    source: u32,
    destination: u32,
    tail: EventTail,
) -> Vec<u8> {
    EventMessage::new(
        opcode,
        EventHeader {
            class_id,
            event_type,
            source,
            destination,
        },
        tail,
    )
    .emit()
}

/// 0x17 for a joining player (captured form) or a player who left (0x00060005).
pub fn player_list(joined: bool, peer_id: u8) -> Vec<u8> {
    let code = if joined { 0x0080_00F1 } else { 0x0006_0005 };
    event(
        0x17,
        events::CLASS_PLAYER_LIST,
        code,
        0,
        0x3FFF_FFFF,
        EventTail::Byte(peer_id),
    )
}

pub fn score(peer_id: u8, kills: i32, deaths: i32, score: i32) -> Vec<u8> {
    Score {
        peer_id: peer_id.into(),
        kills,
        deaths,
        score,
    }
    .emit()
}

/// 0x03 ObjCreateTeam for a freshly spawned ship.
pub fn create_ship(ship: &Ship, slot: u8, name: &str) -> Vec<u8> {
    ObjCreate {
        opcode: 0x03,
        owner_slot: slot,
        team: Some(TEAM),
        prefix: ObjectPrefix::ClassId(CLASS_SHIP),
        object_id: ship.id,
        body: ObjectBody::Ship(ShipBody {
            species: ship.species,
            position: ship.pos,
            orientation: ship.quaternion(),
            velocity: ([0; 3], 0.0),
            player_name: name.into(),
            set_name: SET_NAME.into(),
            subsystems: ship.creation_blob(),
        }),
    }
    .emit()
}

/// 0x07 StartFiring (sender code 0xD8; destination = the weapon system).
pub fn start_firing(weapon_system: u32) -> Vec<u8> {
    event(
        0x07,
        events::CLASS_START_FIRING,
        0x0080_00D8,
        0,
        weapon_system,
        EventTail::StartFiring([0; 8]),
    )
}

/// 0x08 StopFiring.
pub fn stop_firing(weapon_system: u32) -> Vec<u8> {
    event(
        0x08,
        events::CLASS_SUBSYSTEM,
        0x0080_00DA,
        0,
        weapon_system,
        EventTail::None,
    )
}

fn direction(from: &Ship, to: &Ship) -> [u8; 3] {
    Dir3::from_vector(sub(to.pos, from.pos)).0
}

pub fn beam_fire(emitter: u32, from: &Ship, to: &Ship) -> Vec<u8> {
    BeamFire {
        emitter,
        unknown_byte: 0x02,
        direction: direction(from, to),
        flags: 0x03,
        target: Some(to.id),
    }
    .emit()
}

/// SpeciesToTorp index a class fires (by faction; opcodes.md §7.2).
pub fn torpedo_type(ship: &Ship) -> u8 {
    match ship.class.faction.as_str() {
        "Klingon" => 6,
        "Romulan" => 12,
        "Cardassian" => 5,
        "Kessok" => 7,
        _ => 2,
    }
}

pub fn torpedo_fire(launcher: u32, from: &Ship, to: &Ship, rng: &mut Rng) -> Vec<u8> {
    let aim = Dir3::from_vector([
        rng.range(-1.0, 1.0) as f32,
        rng.range(-1.0, 1.0) as f32,
        rng.range(-1.0, 1.0) as f32,
    ])
    .0;
    TorpedoFire {
        launcher,
        torpedo_type: torpedo_type(from),
        flags: 0x01,
        direction: direction(from, to),
        target: Some((
            to.id,
            AimPoint::Cvb([aim[0], aim[1], aim[2], rng.below(200) as u8 + 20]),
        )),
    }
    .emit()
}

/// 0x06 class 0x010C weapon notification (0x7C fired, 0x81/0x83 phaser start/stop).
pub fn weapon_event(code: u32, ship: u32, target: u32, weapon: u32) -> Vec<u8> {
    event(
        0x06,
        events::CLASS_OBJECT_POINTER,
        code,
        ship,
        target,
        EventTail::Object(weapon),
    )
}

/// 0x06 class 0x0101 "add to repair list" for a damaged subsystem.
pub fn repair_event(damaged: u32, repair: u32) -> Vec<u8> {
    event(
        0x06,
        events::CLASS_SUBSYSTEM,
        0x0080_00DF,
        damaged,
        repair,
        EventTail::None,
    )
}

/// 0x15 CollisionEffect from the reporting ship's client: one or two contact points
/// (ship-relative `cvb`) and the force (opcodes.md §4.5).
pub fn collision_effect(ship: &Ship, other: &Ship, rng: &mut Rng, force: f32) -> Vec<u8> {
    let towards = sub(other.pos, ship.pos);
    let contacts = (0..1 + rng.below(2))
        .map(|_| {
            let d = Dir3::from_vector([
                towards[0] + rng.range(-20.0, 20.0) as f32,
                towards[1] + rng.range(-20.0, 20.0) as f32,
                towards[2] + rng.range(-20.0, 20.0) as f32,
            ])
            .0;
            [d[0], d[1], d[2], rng.below(60) as u8 + 10]
        })
        .collect();
    event(
        0x15,
        events::CLASS_COLLISION,
        0x0080_0050,
        other.id,
        ship.id,
        EventTail::Collision { contacts, force },
    )
}

/// 0x06 object exploding: source = killer's ship, destination = victim, 9.5 s.
pub fn object_exploding(killer_ship: u32, victim: u32, killer_peer: u8) -> Vec<u8> {
    event(
        0x06,
        events::CLASS_OBJECT_EXPLODING,
        events::EVENT_OBJECT_EXPLODING,
        killer_ship,
        victim,
        EventTail::ObjectExploding {
            killer_peer_id: killer_peer.into(),
            duration: 9.5,
        },
    )
}

pub fn explosion(ship: &Ship) -> Vec<u8> {
    let d = Delta::from_vector(ship.pos);
    Explosion {
        object_id: ship.id,
        position: (d.dir.0, d.magnitude.0),
        damage: cf16_encode(50.0),
        radius: cf16_encode(5997.8),
    }
    .emit()
}

pub fn score_change(
    killer_peer: u8,
    kills: i32,
    score: i32,
    victim_peer: u8,
    deaths: i32,
) -> Vec<u8> {
    ScoreChange {
        killer_peer_id: killer_peer.into(),
        killer_totals: Some((kills, score)),
        victim_peer_id: victim_peer.into(),
        victim_deaths: deaths,
        updates: Vec::new(),
    }
    .emit()
}

pub fn chat(peer_id: u8, text: &str) -> Vec<u8> {
    Chat {
        opcode: 0x2C,
        sender_peer_id: peer_id.into(),
        text: text.into(),
    }
    .emit()
}

pub fn destroy_object(id: u32) -> Vec<u8> {
    ObjectMessage {
        opcode: 0x14,
        object_id: id,
    }
    .emit()
}

pub fn delete_player_anim(name: &str) -> Vec<u8> {
    DeletePlayerAnim {
        player_name: name.into(),
    }
    .emit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_messages_have_the_captured_sizes() {
        // Transport sizes in flows.md §1 [C] minus the 5-byte reliable header.
        let req: Vec<usize> = ROUNDS
            .iter()
            .map(|&r| checksum_request(r).len() + 5)
            .collect();
        assert_eq!(req, vec![27, 32, 30, 33, 36]);
        let rep: Vec<usize> = ROUNDS.iter().map(|&r| checksum_reply(r).len()).collect();
        assert_eq!(rep, vec![21, 17, 832, 41, 268]);
        assert_eq!(checksum_reply(2), checksum_reply(2), "same installation");
    }

    #[test]
    fn lobby_messages_have_the_captured_sizes() {
        assert_eq!(settings(12.5, 0).len() + 5, 51);
        assert_eq!(new_player_in_game().len() + 5, 7);
        assert_eq!(mission_init().len(), 5);
        assert_eq!(player_list(true, 2).len(), 18);
        assert_eq!(score(2, 0, 0, 0).len(), 17);
    }
}
