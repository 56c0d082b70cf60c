//! Script messages of the stock multiplayer scripts (`opcodes.md` §9): chat 0x2C/0x2D,
//! MISSION_INIT 0x35, SCORE_CHANGE 0x36, SCORE 0x37, END_GAME 0x38, RESTART 0x39
//! (opcode only) and the team-mode messages 0x3F–0x41.

use crate::game::reader::{DecodeResult, FieldReader};
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
            sender_peer_id: f.i32("sender_peer_id")?,
            text: f.str16("text")?,
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
        let player_limit = f.u8("player_limit")?;
        let system = f.u8("system")?;
        if let Some(n) = system_name(system) {
            let span = f.last_span();
            f.label("system_name", n, span);
        }
        let time_limit = f.u8("time_limit_minutes")?;
        let end_time = if time_limit != 0xFF {
            Some(f.i32("end_time")?)
        } else {
            None
        };
        let frag_limit = f.u8("frag_limit")?;
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
        let killer_peer_id = f.i32("killer_peer_id")?;
        let killer_totals = if killer_peer_id != 0 {
            Some((f.i32("killer_kills")?, f.i32("killer_score")?))
        } else {
            None
        };
        let victim_peer_id = f.i32("victim_peer_id")?;
        let victim_deaths = f.i32("victim_deaths")?;
        let n = f.u8("update_count")? as usize;
        let (first, start) = (f.fields.len(), f.r.pos());
        let mut updates = Vec::with_capacity(n.min(f.r.remaining() / 8));
        for _ in 0..n {
            let (uf, us) = (f.fields.len(), f.r.pos());
            let peer = f.i32("peer_id")?;
            let score = f.i32("score")?;
            f.group_from("update", uf, us);
            updates.push((peer, score));
        }
        f.group_from("updates", first, start);
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
            peer_id: f.i32("peer_id")?,
            kills: f.i32("kills")?,
            deaths: f.i32("deaths")?,
            score: f.i32("score")?,
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
        let reason = f.i32("reason")?;
        if let Some(n) = end_reason_name(reason) {
            let span = f.last_span();
            f.label("reason_name", n, span);
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
            team: f.u8("team")?,
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
            team: f.u8("team")?,
            kills: f.i32("kills")?,
            score: f.i32("score")?,
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
            peer_id: f.i32("peer_id")?,
            team: f.u8("team")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x41);
        w.i32(self.peer_id).u8(self.team);
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::game::field::Value;

    fn fr(b: &[u8]) -> FieldReader<'_> {
        FieldReader::after_opcode(b)
    }

    // Captured (b2_valentines_replay frames 231, 384).
    #[test]
    fn chat_capture_vectors() {
        for (s, peer, text) in [
            ("2c0100000002006767", 1, "gg"),
            ("2c00000000050068656c6c6f", 0, "hello"),
        ] {
            let bytes = hex(s);
            assert_clean(&decode_plain(&bytes));
            let c = Chat::parse(0x2C, &mut fr(&bytes)).unwrap();
            assert_eq!((c.sender_peer_id, c.text.as_str()), (peer, text));
            assert_eq!(c.emit(), bytes);
        }
        // Constructed: team chat.
        let c = Chat {
            opcode: 0x2D,
            sender_peer_id: 3,
            text: "go".into(),
        };
        assert_eq!(c.emit(), hex("2d030000000200676f"));
        assert_clean(&decode_plain(&c.emit()));
    }

    // Captured (a_single_client frame 27) and constructed with a time limit.
    #[test]
    fn mission_init_vectors() {
        let bytes = hex("350801ffff");
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(field(&m, "system_name"), &Value::Text("Multi1".into()));
        let v = MissionInit::parse(&mut fr(&bytes)).unwrap();
        assert_eq!(v.emit(), bytes);
        let v = MissionInit {
            player_limit: 8,
            system: 9,
            time_limit: 10,
            end_time: Some(600),
            frag_limit: 20,
        };
        assert_eq!(v.emit(), hex("3508090a5802000014"));
        assert_eq!(MissionInit::parse(&mut fr(&v.emit())).unwrap(), v);
    }

    // Captured environment death (a_single_client frame 42, 14 bytes) and a constructed
    // weapon kill with damage shares.
    #[test]
    fn score_change_vectors() {
        let bytes = hex("3600000000020000000100000000");
        let m = decode_plain(&bytes);
        assert_clean(&m);
        let v = ScoreChange::parse(&mut fr(&bytes)).unwrap();
        assert_eq!(v.killer_totals, None);
        assert_eq!((v.victim_peer_id, v.victim_deaths), (2, 1));
        assert_eq!(v.emit(), bytes);
        let v = ScoreChange {
            killer_peer_id: 3,
            killer_totals: Some((4, 500)),
            victim_peer_id: 2,
            victim_deaths: 1,
            updates: vec![(4, 120)],
        };
        let bytes = v.emit();
        assert_eq!(bytes.len(), 1 + 20 + 1 + 8);
        assert_eq!(ScoreChange::parse(&mut fr(&bytes)).unwrap(), v);
        assert_clean(&decode_plain(&bytes));
    }

    // Captured (a_single_client frame 21) and constructed team messages.
    #[test]
    fn score_and_team_vectors() {
        let bytes = hex("3702000000000000000000000000000000");
        assert_clean(&decode_plain(&bytes));
        let s = Score::parse(&mut fr(&bytes)).unwrap();
        assert_eq!(s.peer_id, 2);
        assert_eq!(s.emit(), bytes);

        let e = EndGame { reason: 2 };
        assert_eq!(e.emit(), hex("3802000000"));
        let m = decode_plain(&e.emit());
        assert_eq!(field(&m, "reason_name"), &Value::Text("frag limit".into()));
        assert_eq!(EndGame::parse(&mut fr(&e.emit())).unwrap(), e);

        let si = ScoreInit {
            score: Score {
                peer_id: 2,
                kills: 1,
                deaths: 0,
                score: 10,
            },
            team: 1,
        };
        assert_eq!(si.emit(), hex("3f 02000000 01000000 00000000 0a000000 01"));
        assert_eq!(ScoreInit::parse(&mut fr(&si.emit())).unwrap(), si);
        let ts = TeamScore {
            team: 1,
            kills: 3,
            score: 30,
        };
        assert_eq!(ts.emit(), hex("40 01 03000000 1e000000"));
        assert_eq!(TeamScore::parse(&mut fr(&ts.emit())).unwrap(), ts);
        let tm = TeamMessage {
            peer_id: 4,
            team: 0,
        };
        assert_eq!(tm.emit(), hex("41 04000000 00"));
        assert_eq!(TeamMessage::parse(&mut fr(&tm.emit())).unwrap(), tm);
        for b in [si.emit(), ts.emit(), tm.emit()] {
            assert_clean(&decode_plain(&b));
        }
    }
}
