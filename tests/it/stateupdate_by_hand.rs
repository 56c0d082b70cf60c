//! StateUpdate values decoded by hand from primitives.md (§2 packed bits, §3 cf16, §4
//! cv3, §5 cv4) and stateupdate.md (§1 header, §2–3 flags and field order, §6 power
//! pairs), for the flag bits the seed examples do not cover: position delta (0x02),
//! cloak (0x40) alone and sharing the hash flag's byte, and power pairs after a cloak
//! bit; and the real flags-0x1E StateUpdates of b2_valentines_replay, decoded here from
//! the ground truth's plaintext and compared with bcwire's JSON.

use crate::common;
use bcwire::diag::Code;
use bcwire::game::field::Value;
use bcwire::game::ships::ShipCatalog;
use bcwire::game::stateupdate::decode;
use bcwire::game::GameMessage;

/// primitives.md §3.1, step by step in f32.
fn cf16(raw: u16) -> f32 {
    let mantissa = f32::from(raw & 0x0FFF);
    let scale = (raw >> 12) & 7;
    let (mut lo, mut hi) = (0.0f32, 0.001f32);
    for _ in 0..scale {
        lo = hi;
        hi *= 10.0;
    }
    let v = lo + (hi - lo) * mantissa / 4095.0;
    if raw & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

/// primitives.md §4: three s8 / 127.
fn cv3(b: &[u8]) -> [f32; 3] {
    [0, 1, 2].map(|i| f32::from(b[i] as i8) / 127.0)
}

/// primitives.md §5: direction × cf16 magnitude.
fn cv4(b: &[u8]) -> [f32; 3] {
    let m = cf16(u16::from_le_bytes([b[3], b[4]]));
    cv3(b).map(|c| c * m)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1e-3)
}

fn vec3(m: &GameMessage, name: &str) -> [f32; 3] {
    match m.fields.iter().find(|f| f.name == name).map(|f| &f.value) {
        Some(Value::Vec3(v)) => *v,
        v => panic!("{name}: {v:?}"),
    }
}

fn float(m: &GameMessage, name: &str) -> f64 {
    match m.fields.iter().find(|f| f.name == name).map(|f| &f.value) {
        Some(Value::Float(v)) => *v,
        v => panic!("{name}: {v:?}"),
    }
}

fn assert_vec(got: [f32; 3], want: [f32; 3], what: &str) {
    assert!(
        got.iter()
            .zip(want)
            .all(|(g, w)| close(f64::from(*g), f64::from(w))),
        "{what}: {got:?} != {want:?}"
    );
}

// Flags 0x02 alone: after the 10-byte header, one cv4 (5 bytes) and nothing else.
// `7F 81 00` is (+1, −1, 0); magnitude 0x4757 is scale 4, mantissa 1879, which
// primitives.md §3.2 lists as 5.1297.
// Catches: the cf16 divisor 4096 instead of 4095.
#[test]
fn delta_alone() {
    let msg = [
        0x1C, 0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0xC0, 0x3F, 0x02, 0x7F, 0x81, 0x00, 0x57, 0x47,
    ];
    let m = decode(&msg, None, &ShipCatalog::stock());
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let su = m.state_update().unwrap();
    assert_eq!(
        (su.object_id, su.game_time, su.flags),
        (0x4000_0001, 1.5, 0x02)
    );
    assert!((cf16(0x4757) - 5.1297).abs() < 1e-4);
    assert_vec(vec3(&m, "delta"), cv4(&msg[10..15]), "delta");
    let listed = [5.1297, -5.1297, 0.0];
    assert!(
        vec3(&m, "delta")
            .iter()
            .zip(listed)
            .all(|(g, w)| (g - w).abs() < 1e-4),
        "delta as listed"
    );
    assert_eq!(
        (su.position, su.forward, su.speed, su.cloak),
        (None, None, None, None)
    );
}

// Flags 0x52: delta, speed, cloak — in that order (§3: 0x40 after 0x10). Delta
// `00 00 81` × cf16 0x0FFF (scale 0, mantissa 4095: exactly 0.001) = (0, 0, −0.001);
// speed 0xCBC3 is negative, scale 4, mantissa 3011 (§3.2: 7.6176); the cloak bit opens
// its own packed byte, `20` = one boolean, false.
// Catches: the sign bit of cf16 ignored, and the cf16 divisor 4096.
#[test]
fn delta_speed_and_a_cloak_bit_of_its_own() {
    let msg = [
        0x1C, 0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0x80, 0x3F, 0x52, 0x00, 0x00, 0x81, 0xFF, 0x0F,
        0xC3, 0xCB, 0x20,
    ];
    let m = decode(&msg, None, &ShipCatalog::stock());
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let su = m.state_update().unwrap();
    assert_vec(vec3(&m, "delta"), [0.0, 0.0, -0.001], "delta");
    assert!(close(float(&m, "speed"), f64::from(cf16(0xCBC3))));
    assert!((float(&m, "speed") + 7.6176).abs() < 1e-4);
    assert_eq!(su.cloak, Some(false));
}

// Flags 0xC0 from a client: a cloak bit (own byte `21`: one boolean, true), then the
// power block of §6 to the end: (1, 0xCC) Shield Generator, (4, 0x80) Impulse Engines,
// (5, 0xFF) Phasers of the Akira list, all powered entries.
// Catches: the power block read before the cloak bit (flag-bit order, which §3 says
// cannot work: `21` would be taken as a list index).
#[test]
fn cloak_then_power_pairs() {
    let msg = [
        0x1C, 0xFF, 0xFF, 0x03, 0x40, 0x00, 0x00, 0x20, 0x41, 0xC0, 0x21, 0x01, 0xCC, 0x04, 0x80,
        0x05, 0xFF,
    ];
    let m = decode(&msg, Some(1), &ShipCatalog::stock());
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let su = m.state_update().unwrap();
    assert_eq!((su.object_id, su.game_time), (0x4003_FFFF, 10.0));
    assert_eq!(su.cloak, Some(true));
    let pairs: Vec<(u8, u8)> = su
        .power
        .as_deref()
        .unwrap()
        .iter()
        .map(|p| (p.index, p.value))
        .collect();
    assert_eq!(pairs, [(1, 0xCC), (4, 0x80), (5, 0xFF)]);
}

// Flags 0x41 (§3): position, then one packed byte holding the hash flag (bit 0 = 0, no
// hash follows) and the cloak bit (bit 1 = 1) with count 2: `42`. No other byte.
// Catches: a bit reader that opens a new packed byte for every bit (it looks for a
// second byte for the cloak and finds none).
#[test]
fn cloak_bit_shares_the_hash_flags_byte() {
    let msg = [
        0x1C, 0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x41, 0x00, 0x00, 0xB0, 0x42, 0x00,
        0x00, 0x84, 0xC2, 0x00, 0x00, 0x92, 0xC2, 0x42,
    ];
    let m = decode(&msg, None, &ShipCatalog::stock());
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let su = m.state_update().unwrap();
    assert_eq!(su.position, Some([88.0, -66.0, -73.0]));
    assert_eq!(su.integrity_hash, None);
    assert_eq!(su.cloak, Some(true));
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

// The captured flags-0x1E StateUpdates (delta, forward, up, speed): delta, forward and
// up decoded here from the ground truth's payload bytes at offsets 10, 15 and 18 equal
// bcwire's JSON values for the same frame. These messages are 22 bytes, one short of the
// 23 the layout needs (the speed's cf16 has one byte): bcwire must then give no speed
// and say so at offset 21 rather than invent a value.
// Catches: a wrong cf16 decoder (divisor 4096) in the captured delta magnitudes.
#[test]
fn captured_delta_forward_up_speed_updates() {
    let Some(folder) = common::shared_dir() else {
        return;
    };
    let name = "b2_valentines_replay";
    let folder = folder.join("captures/openbc").join(name);
    // (frame, payload) of each flags-0x1E StateUpdate, in capture order.
    let mut truth: Vec<(u64, Vec<u8>)> = Vec::new();
    for f in common::ground_truth(&folder, name) {
        for m in f["msgs"].as_array().map(Vec::as_slice).unwrap_or_default() {
            if let Some(p) = m["payload_hex"].as_str() {
                let p = hex(p);
                if p.len() >= 10 && p[0] == 0x1C && p[9] == 0x1E {
                    truth.push((f["frame"].as_u64().unwrap(), p));
                }
            }
        }
    }
    assert!(truth.len() >= 3, "{}", truth.len());
    let capture = folder.join(format!("{name}.pcapng"));
    let out = common::bcwire(&["decode", capture.to_str().unwrap(), "--format", "jsonl"]);
    assert!(out.status.success());
    let mut got: Vec<(u64, serde_json::Value)> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        for m in r["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if m["opcode"] == 0x1C && m["fields"]["flags"] == 0x1E {
                got.push((r["frame"].as_u64().unwrap(), m.clone()));
            }
        }
    }
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        truth.iter().map(|t| t.0).collect::<Vec<_>>()
    );
    let json_vec = |v: &serde_json::Value| -> [f32; 3] {
        let a = v.as_array().unwrap_or_else(|| panic!("{v}"));
        [0, 1, 2].map(|i| a[i].as_f64().unwrap() as f32)
    };
    for ((frame, p), (_, m)) in truth.iter().zip(&got) {
        let f = &m["fields"];
        assert_vec(json_vec(&f["delta"]), cv4(&p[10..15]), "delta");
        assert_vec(json_vec(&f["forward"]), cv3(&p[15..18]), "forward");
        assert_vec(json_vec(&f["up"]), cv3(&p[18..21]), "up");
        if p.len() >= 23 {
            let s = cf16(u16::from_le_bytes([p[21], p[22]]));
            assert!(close(f["speed"].as_f64().unwrap(), f64::from(s)), "{frame}");
        } else {
            assert!(f.get("speed").is_none(), "frame {frame}: {f}");
            let w = m["warnings"].as_array().unwrap();
            assert!(
                w.iter()
                    .any(|w| w["code"] == Code::DecodeError.as_str() && w["offset"] == 21),
                "frame {frame}: {w:?}"
            );
        }
    }
}
