//! Tests of the checksum and file-transfer messages (0x20 … 0x28): typed round trips,
//! and whole messages decoded through the dispatcher (`opcodes::decode`) as the
//! pipeline decodes them. They sit in a file of their own because the dispatcher
//! imports this family: inline, they would make the family's file import its
//! dispatcher.

use super::*;
use crate::diag::Code;
use crate::game::field::Value;
use crate::game::opcodes::test_util::*;
use crate::game::walk::TreeBuilder;

// Captured (a_single_client frames 5-18): the five requests.
#[test]
fn request_capture_vectors() {
    let cases = [
        (
            "20000800736372697074732f07004170702e70796320",
            0x00,
            "scripts/",
            "App.pyc",
            false,
        ),
        (
            "20010800736372697074732f0c004175746f657865632e70796320",
            0x01,
            "scripts/",
            "Autoexec.pyc",
            false,
        ),
        (
            "20020d00736372697074732f736869707305002a2e70796321",
            0x02,
            "scripts/ships",
            "*.pyc",
            true,
        ),
        (
            "20031000736372697074732f6d61696e6d656e7505002a2e70796320",
            0x03,
            "scripts/mainmenu",
            "*.pyc",
            false,
        ),
        (
            "20ff1300536372697074732f4d756c7469706c6179657205002a2e70796321",
            0xFF,
            "Scripts/Multiplayer",
            "*.pyc",
            true,
        ),
    ];
    for (s, round, dir, filter, rec) in cases {
        let bytes = hex(s);
        let m = decode_plain(&bytes);
        assert_clean(&m);
        let r = ChecksumRequest::parse(&mut FieldReader::after_opcode(
            &bytes,
            &mut TreeBuilder::new(),
        ))
        .unwrap();
        let want = ChecksumRequest {
            round,
            directory: dir.into(),
            filter: filter.into(),
            recursive: rec,
        };
        assert_eq!(r, want);
        assert_eq!(want.emit(), bytes);
    }
}

// Captured (a_single_client frames 8-20): the replies, incl. a nested tree.
#[test]
fn response_capture_vectors() {
    for s in [
        "21002fcbaf4d2fcbaf4d010077b63e375951550900",
        "21012fcbaf4d0100a1e6018550190c3100",
        "210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700",
        "21030af07b3f01005fb41bffd0b1859000",
        "21ff00000000000000",
    ] {
        let bytes = hex(s);
        let m = decode_plain(&bytes);
        assert_clean(&m);
        let r = ChecksumResponse::parse(&mut FieldReader::after_opcode(
            &bytes,
            &mut TreeBuilder::new(),
        ))
        .unwrap();
        assert_eq!(r.emit(), bytes, "{s}");
    }
    let bytes = hex("210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700");
    let r = ChecksumResponse::parse(&mut FieldReader::after_opcode(
        &bytes,
        &mut TreeBuilder::new(),
    ))
    .unwrap();
    assert_eq!(r.version_hash, None);
    assert_eq!(r.tree.files.len(), 1);
    assert_eq!(r.tree.subdirs.len(), 1);
    assert_eq!(r.tree.subdirs[0].0, 0xC51A_8DA4);
    assert_eq!(r.tree.subdirs[0].1.files, vec![(0xE467_91C4, 0x47C1_55EF)]);
    let m = decode_plain(&bytes);
    assert!(matches!(field(&m, "subdirs"), Value::Group(g) if g.len() == 1));
}

// Constructed: a round-0 reply with the stock version hash and two levels of subdirs.
#[test]
fn response_constructed_round_trip() {
    let leaf = FileTree {
        files: vec![(5, 6)],
        subdirs: vec![],
    };
    let r = ChecksumResponse {
        round: 0,
        version_hash: Some(0x7E0C_E243),
        directory_hash: 1,
        tree: FileTree {
            files: vec![(2, 3)],
            subdirs: vec![(7, leaf.clone()), (8, FileTree::default())],
        },
    };
    let bytes = r.emit();
    assert_eq!(&bytes[..6], &hex("210043e20c7e"));
    let back = ChecksumResponse::parse(&mut FieldReader::after_opcode(
        &bytes,
        &mut TreeBuilder::new(),
    ))
    .unwrap();
    assert_eq!(back, r);
    assert_clean(&decode_plain(&bytes));
}

#[test]
fn deep_or_short_trees_are_errors() {
    // Each level: no files, one subdir name, then the subtree.
    let mut bytes = hex("210100000000");
    for _ in 0..40 {
        bytes.extend_from_slice(&hex("0000 01 00000000"));
    }
    let m = decode_plain(&bytes);
    assert!(has_warning(&m, Code::DecodeError));
    let m = decode_plain(&hex("21010000000005000100"));
    assert!(has_warning(&m, Code::DecodeError));
}

// Constructed: failure and file-transfer messages (never captured).
#[test]
fn fail_and_transfer_constructed() {
    let f = ChecksumFail {
        opcode: 0x22,
        file_name: "App.pyc".into(),
    };
    let bytes = f.emit();
    assert_eq!(bytes, hex("22 0700 4170702e707963"));
    assert_eq!(
        ChecksumFail::parse(
            0x22,
            &mut FieldReader::after_opcode(&bytes, &mut TreeBuilder::new())
        )
        .unwrap(),
        f
    );
    assert_clean(&decode_plain(&bytes));
    let t = FileTransfer {
        file_name: "a.pyc".into(),
        contents: vec![1, 2, 3],
    };
    let bytes = t.emit();
    assert_eq!(bytes, hex("25 0500 612e707963 010203"));
    assert_eq!(
        FileTransfer::parse(&mut FieldReader::after_opcode(
            &bytes,
            &mut TreeBuilder::new()
        ))
        .unwrap(),
        t
    );
    let m = decode_plain(&bytes);
    assert_clean(&m);
    assert_eq!(field(&m, "file_contents"), &Value::Bytes(vec![1, 2, 3]));
}
