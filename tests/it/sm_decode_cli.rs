//! `bcwire sm decode` through the built binary: Harvestable bodies, headers of unknown
//! types and hex twins, with packets laid out by hand from seed 002 and the
//! PacketLogger layouts (see docs/scrap-mechanic.md).

use crate::common::bcwire;

/// Packet layer: `[0x16][tick 1]` then raw sub-updates `[size be u16][data]`.
const PACKET: &str = concat!(
    "16 00000001 ",
    // CreateHarvestable: controller 0, id 7, world 0xffff, uuid index 3,
    // position (1, 2, 3), rotation W Z Y X (1, 0, 0, 0), halves 1.0 and -2.0.
    "002c 25 00 00000007 ffff 0003 3f800000 40000000 40400000 ",
    "3f800000 00000000 00000000 00000000 3c00 c000 ",
    // UpdateHarvestable: colour 0x000000ff, seated character 1.
    "000f 65 00000007 000000ff 00000001 ",
    // UpdateTool: player 1.
    "000b 68 00000006 00000001 ",
    // Update type 4, object type 4, id 5, one body byte.
    "0008 84 00000005 aa",
);

#[test]
fn harvestables_unknown_headers_and_hex_twins_through_the_binary() {
    let out = bcwire(&["sm", "decode", "--layer", "packet", PACKET]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        text.contains("CreateHarvestable controller 0 id 7"),
        "{text}"
    );
    assert!(
        text.contains("world_id = 65535  [not in seed 002]"),
        "{text}"
    );
    assert!(text.contains("unknown_2 = -2  [not in seed 002]"), "{text}");
    assert!(text.contains("seated_character_id = 1 (0x00000001)  [not in seed 002]"));
    assert!(text.contains("player_id = 0x00000001\n"), "{text}");
    assert!(text.contains("type 4 / object type 4 id 5\n"), "{text}");
    // Only the unknown update type is a problem.
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("sub-update #3 at offset 75, update byte 0: update_type_unknown"),
        "{err}"
    );

    let out = bcwire(&[
        "sm", "decode", "--layer", "packet", "--format", "json", PACKET,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let subs = &j["packets"][0]["streams"][0]["sub_updates"];
    let create = &subs[0]["update"];
    assert_eq!(create["name"], "create_harvestable");
    assert_eq!(create["fields"]["position"]["z"], 3.0);
    assert_eq!(create["fields"]["unknown_1"], 1.0);
    assert_eq!(create["undocumented_fields"].as_array().unwrap().len(), 6);
    let update = &subs[1]["update"]["fields"];
    assert_eq!(update["color"]["raw_hex"], "0x000000FF");
    assert_eq!(update["seated_character_id_hex"], "0x00000001");
    assert_eq!(subs[2]["update"]["fields"]["player_id_hex"], "0x00000001");
    assert_eq!(
        subs[2]["update"]["undocumented_fields"],
        serde_json::json!([])
    );
    let unknown = &subs[3]["update"];
    assert_eq!(unknown["header_ok"], false);
    assert_eq!(unknown["object_id"], 5);
    assert_eq!(unknown["fields"]["undecoded"], "aa");
}
