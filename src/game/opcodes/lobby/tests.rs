//! Tests of the lobby and object messages: typed round trips, and whole messages
//! decoded through the dispatcher (`opcodes::decode`) as the pipeline decodes them.
//! They sit in a file of their own because the dispatcher imports this family: inline,
//! they would make the family's file import its dispatcher.

use super::*;
use crate::diag::Code;
use crate::game::field::Value;
use crate::game::opcodes::test_util::*;
use crate::game::walk::TreeBuilder;

fn reparse<T>(bytes: &[u8], parse: impl Fn(&mut FieldReader) -> DecodeResult<T>) -> T {
    let mut tree = TreeBuilder::new();
    let mut f = FieldReader::after_opcode(bytes, &mut tree);
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
