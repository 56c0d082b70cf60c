//! Tests of the weapon messages: typed round trips, and whole messages decoded through
//! the dispatcher (`opcodes::decode`) as the pipeline decodes them. They sit in a file
//! of their own because the dispatcher imports this family: inline, they would make the
//! family's file import its dispatcher.

use super::*;
use crate::game::compressed::cf16_decode;
use crate::game::field::Value;
use crate::game::opcodes::test_util::*;

fn fr(bytes: &[u8]) -> FieldReader<'_, 'static> {
    FieldReader::after_opcode_lean(bytes)
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
    // Flag bit 2 clear: a target follows; the value spans the flags byte (offset 6).
    let bit = m.fields.iter().find(|f| f.name == "no_target").unwrap();
    assert_eq!(
        (&bit.value, bit.span.start, bit.span.end()),
        (&Value::Bool(false), 6, 7)
    );

    let t = TorpedoFire {
        flags: 0x05,
        target: None,
        ..t
    };
    let bytes = t.emit();
    assert_eq!(bytes.len(), 10);
    assert_eq!(TorpedoFire::parse(&mut fr(&bytes), &mut w).unwrap(), t);
    let m = decode_plain(&bytes);
    assert_clean(&m);
    assert_eq!(field(&m, "no_target"), &Value::Bool(true));
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
