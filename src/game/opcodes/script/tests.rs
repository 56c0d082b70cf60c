//! Tests of the script messages: typed round trips, and whole messages decoded through
//! the dispatcher (`opcodes::decode`) as the pipeline decodes them. They sit in a file
//! of their own because the dispatcher imports this family: inline, they would make the
//! family's file import its dispatcher.

use super::*;
use crate::game::field::Value;
use crate::game::opcodes::test_util::*;

fn fr(b: &[u8]) -> FieldReader<'_, 'static> {
    FieldReader::after_opcode_lean(b)
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
