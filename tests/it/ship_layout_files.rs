//! Layout files: the documented example loads and decodes; bad files are located.

use bcwire::diag::Code;
use bcwire::game::ships::ShipCatalog;
use bcwire::game::stateupdate::{decode, encode, SubsystemData};
use std::path::PathBuf;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/example-ships.json")
}

/// A file of its own holding `text`, removed when the value is dropped.
fn temp_file(name: &str, text: &str) -> tempfile::TempPath {
    let f = tempfile::Builder::new()
        .prefix("bcwire-")
        .suffix(&format!("-{name}"))
        .tempfile()
        .unwrap();
    std::fs::write(f.path(), text).unwrap();
    f.into_temp_path()
}

#[test]
fn example_file_adds_a_modded_class_over_stock() {
    let cat = ShipCatalog::load_file(example()).unwrap();
    assert_eq!(cat.classes().len(), 17);
    assert_eq!(cat.class_name(40), Some("Defiant (mod)"));
    assert_eq!(cat.class_name(41), Some("Defiant (mod)"));
    assert_eq!(cat.class_name(1), Some("Akira"));
    // A host block for the modded ship: start 3 = Pulse Phasers (4 children, power 100),
    // Torpedoes (2 children, power 90); both bits in one packed byte.
    let msg = [
        0x1C, 0x01, 0x00, 0x00, 0x40, 0x00, 0x00, 0x20, 0x41, 0x20, 0x03, 0xFF, 0xF0, 0xF1, 0xF2,
        0xF3, 0x43, 0x64, 0xFF, 0xFF, 0x80, 0x5A,
    ];
    let m = decode(&msg, Some(40), &cat);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    let su = m.state_update().unwrap();
    let Some(SubsystemData::Decoded(b)) = &su.subsystems else {
        panic!("{:?}", su.subsystems)
    };
    assert_eq!(b.records.len(), 2);
    assert_eq!(b.records[0].children[..], [0xF0, 0xF1, 0xF2, 0xF3]);
    assert_eq!(b.records[0].power_pct, Some(100));
    assert_eq!(b.records[1].children[..], [0xFF, 0x80]);
    assert_eq!(b.records[1].power_pct, Some(90));
    assert_eq!(encode(su), msg);
    // Without the file the same block is an unknown layout, kept raw.
    let m = decode(&msg, Some(40), &ShipCatalog::stock());
    assert_eq!(m.warnings[0].code, Code::NoLayout);
}

#[test]
fn replacing_a_stock_class_by_species() {
    let p = temp_file(
        "replace.json",
        r#"{"ships": [{"species_id": 1, "name": "Akira", "display_name": "Akira (refit)",
            "subsystems": [{"name": "Hull", "format": "base"}]}]}"#,
    );
    let cat = ShipCatalog::load_file(&p).unwrap();
    std::fs::remove_file(&p).ok();
    assert_eq!(cat.classes().len(), 16);
    assert_eq!(cat.class_name(1), Some("Akira (refit)"));
    assert_eq!(cat.class(1).unwrap().len(), 1);
}

#[test]
fn invalid_file_error_has_line_and_field() {
    let text = "{\n  \"ships\": [\n    {\n      \"species_id\": 40,\n      \"name\": \"Defiant\",\n      \"subsystems\": [\n        { \"name\": \"Hull\", \"format\": \"base\" },\n        { \"name\": \"Pulse Phasers\", \"format\": \"pulsed\" }\n      ]\n    }\n  ]\n}\n";
    let p = temp_file("bad.json", text);
    let e = ShipCatalog::load_file(&p).unwrap_err();
    std::fs::remove_file(&p).ok();
    assert_eq!((e.line, e.column), (8, 53));
    assert_eq!(e.field, "ships[0].subsystems[1].format");
    let shown = e.to_string();
    assert!(shown.contains(":8:"), "{shown}");
    assert!(shown.contains("ships[0].subsystems[1].format"), "{shown}");
    assert!(shown.contains("pulsed"), "{shown}");

    let e = ShipCatalog::load_file("/nonexistent/bcwire-ships.json").unwrap_err();
    assert_eq!(e.line, 0);
    assert!(e.to_string().contains("/nonexistent/bcwire-ships.json"));
}

#[test]
fn a_bad_file_merges_nothing() {
    let mut cat = ShipCatalog::stock();
    let text = r#"{"ships": [
        {"species_id": 40, "name": "A", "subsystems": [{"name": "Hull", "format": "base"}]},
        {"species_id": 40, "name": "B", "subsystems": [{"name": "Hull", "format": "base"}]}]}"#;
    let e = cat
        .merge_json(
            text,
            bcwire::game::ships::LayoutOrigin::File("x.json".into()),
        )
        .unwrap_err();
    assert_eq!(e.field, "ships[1].species_id");
    assert_eq!(e.line, 3);
    assert_eq!(cat.class_name(40), None);
}
