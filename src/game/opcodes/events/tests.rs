//! Tests of the event messages: typed round trips, and whole messages decoded through
//! the dispatcher (`opcodes::decode`) as the pipeline decodes them. They sit in a file
//! of their own because the dispatcher imports this family: inline, they would make the
//! family's file import its dispatcher.

use super::*;
use crate::game::field::Value;
use crate::game::opcodes::test_util::*;
use crate::game::walk::TreeBuilder;

fn parse(bytes: &[u8]) -> (EventMessage, Vec<Warning>) {
    let mut tree = TreeBuilder::new();
    let mut f = FieldReader::after_opcode(bytes, &mut tree);
    let mut w = Vec::new();
    let m = EventMessage::parse(bytes[0], &mut f, &mut w).expect("parse");
    assert!(f.r.is_empty());
    (m, w)
}

/// Captured bytes: decode cleanly, re-emit byte for byte.
fn capture_vector(s: &str) -> EventMessage {
    let bytes = hex(s);
    let m = decode_plain(&bytes);
    assert_clean(&m);
    let (e, w) = parse(&bytes);
    assert!(w.is_empty());
    assert_eq!(e.emit(), bytes);
    e
}

#[test]
fn python_event_repair_capture() {
    let e = capture_vector("0601010000df008000000000401a000040");
    let ev = e.event().unwrap();
    assert_eq!(ev.header.class_id, CLASS_SUBSYSTEM);
    assert_eq!(ev.header.source, 0x4000_0000);
    assert_eq!(ev.header.destination, 0x4000_001A);
    let m = decode_plain(&hex("0601010000df008000000000401a000040"));
    assert_eq!(
        field(&m, "event_name"),
        &Value::Text("add to repair list".into())
    );
}

#[test]
fn object_exploding_capture() {
    let e = capture_vector("06298100004e00800000000000ffffff3f0000000000001841");
    assert_eq!(
        e.event().unwrap().tail,
        EventTail::ObjectExploding {
            killer_peer_id: 0,
            duration: 9.5
        }
    );
}

#[test]
fn forwards_capture() {
    let e = capture_vector("0728810000d800800000000000050000400000000000000000");
    assert_eq!(e.event().unwrap().tail, EventTail::StartFiring([0; 8]));
    let e = capture_vector("1205010000e0008000000000000500004000");
    assert_eq!(e.event().unwrap().tail, EventTail::Byte(0));
    let m = decode_plain(&hex("1205010000e0008000000000000500004000"));
    assert_eq!(field(&m, "phaser_level_name"), &Value::Text("low".into()));
    let e = capture_vector("1766080000f100800000000000ffffff3f02");
    assert_eq!(e.event().unwrap().tail, EventTail::Byte(2));
}

#[test]
fn collision_capture() {
    let e = capture_vector("15248100005000800000000000ffff034001277711b89d472544");
    let ev = e.event().unwrap();
    assert_eq!(ev.header.destination, 0x4003_FFFF);
    match &ev.tail {
        EventTail::Collision { contacts, force } => {
            assert_eq!(contacts, &vec![[0x27, 0x77, 0x11, 0xB8]]);
            assert!((force - 661.1).abs() < 0.1, "{force}");
        }
        t => panic!("{t:?}"),
    }
    let m = decode_plain(&hex("15248100005000800000000000ffff034001277711b89d472544"));
    assert_eq!(field(&m, "reporting_ship"), &Value::ObjectId(0x4003_FFFF));
}

// Constructed: the stock shapes of forwards never seen in the captures at hand.
#[test]
fn constructed_round_trips() {
    let h = |class_id, event_type| EventHeader {
        class_id,
        event_type,
        source: 0x3FFF_FFFF,
        destination: 0x4000_0005,
    };
    let cases = [
        EventMessage::new(0x08, h(CLASS_SUBSYSTEM, 0x0080_00DA), EventTail::None),
        EventMessage::new(
            0x0A,
            h(CLASS_SUBSYSTEM_CONTROL, 0x0080_006C),
            EventTail::Byte(1),
        ),
        EventMessage::new(
            0x0D,
            h(CLASS_OBJECT_POINTER, 0x0080_0058),
            EventTail::Object(0x4003_FFFF),
        ),
        EventMessage::new(
            0x11,
            h(CLASS_OBJECT_POINTER, 0x0080_0076),
            EventTail::Object(0x4000_0007),
        ),
        EventMessage::new(0x1B, h(CLASS_CHAR, 0x0080_00FE), EventTail::Byte(3)),
        EventMessage::new(
            0x10,
            h(CLASS_START_WARP, 0x0080_00EC),
            EventTail::StartWarp {
                set_name: "Multi2".into(),
                destination: [1.0, -2.0, 3.5],
                speed: 9.0,
            },
        ),
        EventMessage::new(0x0E, h(CLASS_BASE, 0x0080_00E2), EventTail::None),
        EventMessage::new(
            0x09,
            h(CLASS_OBJECT_POINTER, 0x0080_00DC),
            EventTail::Object(0x4003_FFFF),
        ),
        EventMessage::new(
            0x15,
            h(CLASS_COLLISION, 0x0080_0050),
            EventTail::Collision {
                contacts: vec![[1, 2, 3, 4], [0x7F, 0, 0, 9]],
                force: 12.0,
            },
        ),
    ];
    // StartWarp: 17 + str8 (1 + 6) + 4 × f32 = 40 (opcodes.md's "22 + name" does not add up).
    let sizes = [17, 18, 21, 21, 18, 34 + 6, 17, 21, 22 + 8];
    for (m, size) in cases.iter().zip(sizes) {
        let bytes = m.emit();
        assert_eq!(bytes.len(), size, "{m:?}");
        let (back, w) = parse(&bytes);
        assert_eq!(&back, m);
        assert!(w.is_empty(), "{w:?}");
        assert_clean(&decode_plain(&bytes));
    }
    // Constructed byte vector: 0x1B photon -> quantum.
    assert_eq!(cases[4].emit(), hex("1b05010000fe008000ffffff3f0500004003"));
}

// Captured from a reimplementation (b2_valentines_replay): short bodies are flagged
// non_stock and kept raw, never a decode error.
#[test]
fn non_stock_short_bodies() {
    for s in [
        "0828810000d8008000",
        "0affffff3f0500d042",
        "0bffffff3f0500",
        "11ffffff3f0501",
    ] {
        let bytes = hex(s);
        let m = decode_plain(&bytes);
        assert!(has_warning(&m, Code::NonStock), "{s}");
        assert!(!has_warning(&m, Code::DecodeError), "{s}");
        assert_eq!(
            field(&m, "non_stock_body"),
            &Value::Bytes(bytes[1..].to_vec())
        );
        let (e, _) = parse(&bytes);
        assert_eq!(e.emit(), bytes);
    }
}

#[test]
fn unknown_class_keeps_tail_raw_and_wrong_class_is_flagged() {
    let bytes = hex("0677770000010080000000000000000000aabbcc");
    let m = decode_plain(&bytes);
    assert!(has_warning(&m, Code::UnknownClass));
    assert_eq!(
        field(&m, "unknown_class_tail"),
        &Value::Bytes(vec![0xaa, 0xbb, 0xcc])
    );
    let bytes = hex("0801010000da00800000000000050000400000");
    let m = decode_plain(&bytes);
    assert!(!has_warning(&m, Code::NonStock));
    assert!(has_warning(&m, Code::TrailingBytes));
    let bytes = hex("0805010000da0080000000000005000040ff");
    assert!(has_warning(&decode_plain(&bytes), Code::NonStock));
}

#[test]
fn collision_count_past_the_end_is_a_decode_error() {
    let m = decode_plain(&hex("15248100005000800000000000ffff034009277711b8"));
    assert!(has_warning(&m, Code::DecodeError));
    assert_eq!(field(&m, "contact_count"), &Value::Uint(9));
}
