//! The typed body of a game message: one variant per message kind, each the value its
//! family decoder parsed. It is made in the same pass that records the fields for
//! `show`, and everything after the decoders (registry, phases, statistics, diff,
//! report, filters) reads it instead of bytes or field names.

use super::checksum::{ChecksumFail, ChecksumRequest, ChecksumResponse, FileTransfer};
use super::common::emit_raw;
use super::events::EventMessage;
use super::lobby::{
    emit_bare, BootPlayer, DeletePlayerAnim, EnterSet, NewPlayerInGame, ObjectMessage, Settings,
    UiCollisionSetting,
};
use super::objects::ObjCreate;
use super::op;
use super::script::{
    Chat, EndGame, MissionInit, Score, ScoreChange, ScoreInit, TeamMessage, TeamScore,
};
use super::weapons::{BeamFire, Explosion, TorpedoFire};
use crate::game::update::{self, StateUpdate};

/// What a game message says, typed. A message whose decoder failed part-way has no
/// body, except where the part read names an object (creations and events), which keep
/// what they read plus the rest of the bytes as they came.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A message that is its opcode alone (GameInit, HostMsg, FileTransferAck,
    /// ChecksumComplete, RestartGame).
    Bare(u8),
    Settings(Settings),
    /// Boxed: the largest and one of the rarest bodies would otherwise make every
    /// message as large as a creation.
    ObjCreate(Box<ObjCreate>),
    BootPlayer(BootPlayer),
    /// 0x06–0x12, 0x15, 0x17, 0x1B: an event.
    Event(EventMessage),
    /// 0x14 DestroyObject, 0x1D ObjNotFound, 0x1E RequestObject.
    Object(ObjectMessage),
    UiCollisionSetting(UiCollisionSetting),
    DeletePlayerAnim(DeletePlayerAnim),
    TorpedoFire(TorpedoFire),
    BeamFire(BeamFire),
    StateUpdate(Box<StateUpdate>),
    EnterSet(EnterSet),
    ChecksumRequest(ChecksumRequest),
    ChecksumResponse(ChecksumResponse),
    /// 0x22 VersionMismatch, 0x23 SystemChecksumFail.
    ChecksumFail(ChecksumFail),
    FileTransfer(FileTransfer),
    Explosion(Explosion),
    NewPlayerInGame(NewPlayerInGame),
    /// 0x2C ChatMessage, 0x2D TeamChatMessage.
    Chat(Chat),
    MissionInit(MissionInit),
    ScoreChange(ScoreChange),
    Score(Score),
    EndGame(EndGame),
    ScoreInit(ScoreInit),
    TeamScore(TeamScore),
    TeamMessage(TeamMessage),
    /// An opcode without a known layout: its body as it came.
    Unknown {
        opcode: u8,
        body: Vec<u8>,
    },
}

impl Body {
    /// The exact bytes of the message, opcode first.
    pub fn emit(&self) -> Vec<u8> {
        match self {
            Body::Bare(op) => emit_bare(*op),
            Body::Settings(b) => b.emit(),
            Body::ObjCreate(b) => b.emit(),
            Body::BootPlayer(b) => b.emit(),
            Body::Event(b) => b.emit(),
            Body::Object(b) => b.emit(),
            Body::UiCollisionSetting(b) => b.emit(),
            Body::DeletePlayerAnim(b) => b.emit(),
            Body::TorpedoFire(b) => b.emit(),
            Body::BeamFire(b) => b.emit(),
            Body::StateUpdate(b) => update::encode(b),
            Body::EnterSet(b) => b.emit(),
            Body::ChecksumRequest(b) => b.emit(),
            Body::ChecksumResponse(b) => b.emit(),
            Body::ChecksumFail(b) => b.emit(),
            Body::FileTransfer(b) => b.emit(),
            Body::Explosion(b) => b.emit(),
            Body::NewPlayerInGame(b) => b.emit(),
            Body::Chat(b) => b.emit(),
            Body::MissionInit(b) => b.emit(),
            Body::ScoreChange(b) => b.emit(),
            Body::Score(b) => b.emit(),
            Body::EndGame(b) => b.emit(),
            Body::ScoreInit(b) => b.emit(),
            Body::TeamScore(b) => b.emit(),
            Body::TeamMessage(b) => b.emit(),
            Body::Unknown { opcode, body } => emit_raw(*opcode, body),
        }
    }

    /// The object a message is about, where it names one: the created, destroyed,
    /// updated, exploding or entering object, the firing launcher or emitter, or an
    /// event's source (the first object id on the wire).
    pub fn object_id(&self) -> Option<u32> {
        match self {
            Body::ObjCreate(c) => Some(c.object_id),
            Body::Object(o) => Some(o.object_id),
            Body::StateUpdate(su) => Some(su.object_id),
            Body::Event(e) => e.header().map(|h| h.source),
            Body::Explosion(x) => Some(x.object_id),
            Body::EnterSet(x) => Some(x.object_id),
            Body::TorpedoFire(x) => Some(x.launcher),
            Body::BeamFire(x) => Some(x.emitter),
            _ => None,
        }
    }

    /// The id of the object a stock ObjectExploding event (0x06, class 0x8129) names.
    pub fn exploding_object(&self) -> Option<u32> {
        match self {
            Body::Event(e) if e.opcode == op::PYTHON_EVENT => e.exploding_object(),
            _ => None,
        }
    }
}
