//! Script messages of the stock multiplayer scripts (`opcodes.md` §9): chat 0x2C/0x2D,
//! MISSION_INIT 0x35, SCORE_CHANGE 0x36, SCORE 0x37, END_GAME 0x38, RESTART 0x39
//! (opcode only) and the team-mode messages 0x3F–0x41.

use crate::game::reader::{DecodeResult, FieldReader};
use crate::game::registry::field;
use crate::game::writer::Writer;

/// SpeciesToSystem names (1-based, `opcodes.md` §7.3).
pub fn system_name(index: u8) -> Option<&'static str> {
    const NAMES: [&str; 10] = [
        "(unknown)",
        "Multi1",
        "Multi2",
        "Multi3",
        "Multi4",
        "Multi5",
        "Multi6",
        "Multi7",
        "Albirea",
        "Poseidon",
    ];
    NAMES.get(index as usize).copied()
}

/// END_GAME reason names.
pub fn end_reason_name(reason: i32) -> Option<&'static str> {
    Some(match reason {
        0 => "game over",
        1 => "time up",
        2 => "frag limit",
        3 => "score limit",
        4 => "starbase dead",
        5 => "Borg dead",
        6 => "Enterprise dead",
        _ => return None,
    })
}

/// 0x2C CHAT_MESSAGE / 0x2D TEAM_CHAT_MESSAGE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    pub opcode: u8,
    pub sender_peer_id: i32,
    pub text: String,
}

impl Chat {
    pub fn parse(opcode: u8, f: &mut FieldReader) -> DecodeResult<Chat> {
        Ok(Chat {
            opcode,
            sender_peer_id: f.i32(field!("sender_peer_id"))?,
            text: f.str16(field!("text"))?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(self.opcode);
        w.i32(self.sender_peer_id).str16(&self.text);
        w.into_bytes()
    }
}

/// 0x35 MISSION_INIT_MESSAGE (H→C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissionInit {
    pub player_limit: u8,
    /// SpeciesToSystem index.
    pub system: u8,
    /// Minutes; 0xFF = none.
    pub time_limit: u8,
    /// End time on the game clock; present only when there is a time limit.
    pub end_time: Option<i32>,
    /// 0xFF = none.
    pub frag_limit: u8,
}

impl MissionInit {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<MissionInit> {
        let player_limit = f.u8(field!("player_limit"))?;
        let system = f.u8(field!("system"))?;
        if let Some(n) = system_name(system) {
            let span = f.last_span();
            f.label(field!("system_name"), n, span);
        }
        let time_limit = f.u8(field!("time_limit_minutes"))?;
        let end_time = if time_limit != 0xFF {
            Some(f.i32(field!("end_time"))?)
        } else {
            None
        };
        let frag_limit = f.u8(field!("frag_limit"))?;
        Ok(MissionInit {
            player_limit,
            system,
            time_limit,
            end_time,
            frag_limit,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x35);
        w.u8(self.player_limit).u8(self.system).u8(self.time_limit);
        if self.time_limit != 0xFF {
            w.i32(self.end_time.unwrap_or(0));
        }
        w.u8(self.frag_limit);
        w.into_bytes()
    }
}

/// 0x36 SCORE_CHANGE_MESSAGE (H→C).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoreChange {
    /// 0 = no killer (environment, self-destruct).
    pub killer_peer_id: i32,
    /// (kills, score) of the killer, present only when there is one.
    pub killer_totals: Option<(i32, i32)>,
    pub victim_peer_id: i32,
    pub victim_deaths: i32,
    /// Damage-share updates: (peer id, score).
    pub updates: Vec<(i32, i32)>,
}

impl ScoreChange {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<ScoreChange> {
        let killer_peer_id = f.i32(field!("killer_peer_id"))?;
        let killer_totals = if killer_peer_id != 0 {
            Some((
                f.i32(field!("killer_kills"))?,
                f.i32(field!("killer_score"))?,
            ))
        } else {
            None
        };
        let victim_peer_id = f.i32(field!("victim_peer_id"))?;
        let victim_deaths = f.i32(field!("victim_deaths"))?;
        let n = f.u8(field!("update_count"))? as usize;
        let (first, start) = (f.mark(), f.r.pos());
        let mut updates = Vec::with_capacity(n.min(f.r.remaining() / 8));
        for _ in 0..n {
            let (uf, us) = (f.mark(), f.r.pos());
            let peer = f.i32(field!("updates.update.peer_id"))?;
            let score = f.i32(field!("updates.update.score"))?;
            f.group_from(field!("updates.update"), uf, us);
            updates.push((peer, score));
        }
        f.group_from(field!("updates"), first, start);
        Ok(ScoreChange {
            killer_peer_id,
            killer_totals,
            victim_peer_id,
            victim_deaths,
            updates,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x36);
        w.i32(self.killer_peer_id);
        if self.killer_peer_id != 0 {
            let (k, s) = self.killer_totals.unwrap_or((0, 0));
            w.i32(k).i32(s);
        }
        w.i32(self.victim_peer_id).i32(self.victim_deaths);
        let updates = &self.updates[..self.updates.len().min(255)];
        w.u8(updates.len() as u8);
        for (p, s) in updates {
            w.i32(*p).i32(*s);
        }
        w.into_bytes()
    }
}

/// 0x37 SCORE_MESSAGE (H→C): one player's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    pub peer_id: i32,
    pub kills: i32,
    pub deaths: i32,
    pub score: i32,
}

impl Score {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<Score> {
        Ok(Score {
            peer_id: f.i32(field!("peer_id"))?,
            kills: f.i32(field!("kills"))?,
            deaths: f.i32(field!("deaths"))?,
            score: f.i32(field!("score"))?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x37);
        w.i32(self.peer_id)
            .i32(self.kills)
            .i32(self.deaths)
            .i32(self.score);
        w.into_bytes()
    }
}

/// 0x38 END_GAME_MESSAGE (H→C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndGame {
    pub reason: i32,
}

impl EndGame {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<EndGame> {
        let reason = f.i32(field!("reason"))?;
        if let Some(n) = end_reason_name(reason) {
            let span = f.last_span();
            f.label(field!("reason_name"), n, span);
        }
        Ok(EndGame { reason })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x38);
        w.i32(self.reason);
        w.into_bytes()
    }
}

/// 0x3F SCORE_INIT_MESSAGE (team modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreInit {
    pub score: Score,
    pub team: u8,
}

impl ScoreInit {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<ScoreInit> {
        let score = Score::parse(f)?;
        Ok(ScoreInit {
            score,
            team: f.u8(field!("team"))?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut b = self.score.emit();
        b[0] = 0x3F;
        b.push(self.team);
        b
    }
}

/// 0x40 TEAM_SCORE_MESSAGE (team modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamScore {
    pub team: u8,
    pub kills: i32,
    pub score: i32,
}

impl TeamScore {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<TeamScore> {
        Ok(TeamScore {
            team: f.u8(field!("team"))?,
            kills: f.i32(field!("kills"))?,
            score: f.i32(field!("score"))?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x40);
        w.u8(self.team).i32(self.kills).i32(self.score);
        w.into_bytes()
    }
}

/// 0x41 TEAM_MESSAGE (team modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamMessage {
    pub peer_id: i32,
    pub team: u8,
}

impl TeamMessage {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<TeamMessage> {
        Ok(TeamMessage {
            peer_id: f.i32(field!("peer_id"))?,
            team: f.u8(field!("team"))?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x41);
        w.i32(self.peer_id).u8(self.team);
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests;
