//! Checksum and file-transfer layer (`opcodes.md` §8): 0x20 request, 0x21 response with
//! its hash tree, 0x22/0x23 failures, 0x25 file transfer. 0x27 and 0x28 are opcode-only.

use crate::game::reader::{DecodeResult, FieldReader};
use crate::game::writer::Writer;

/// Deepest directory nesting decoded; deeper trees are reported, not followed (a hostile
/// message could otherwise recurse without bound).
pub const MAX_TREE_DEPTH: usize = 32;

/// 0x20 ChecksumRequest (H→C).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksumRequest {
    /// 0, 1, 2, 3, then 0xFF.
    pub round: u8,
    pub directory: String,
    pub filter: String,
    pub recursive: bool,
}

impl ChecksumRequest {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<ChecksumRequest> {
        Ok(ChecksumRequest {
            round: f.hex8("round")?,
            directory: f.str16("directory")?,
            filter: f.str16("filter")?,
            recursive: f.bit("recursive")?,
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x20);
        w.u8(self.round)
            .str16(&self.directory)
            .str16(&self.filter)
            .bit(self.recursive);
        w.into_bytes()
    }
}

/// A directory's hashes: files, then subdirectory names, then each subtree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileTree {
    /// (name hash, content hash) per file.
    pub files: Vec<(u32, u32)>,
    /// (name hash, subtree) per subdirectory.
    pub subdirs: Vec<(u32, FileTree)>,
}

impl FileTree {
    fn parse(f: &mut FieldReader, depth: usize) -> DecodeResult<FileTree> {
        if depth > MAX_TREE_DEPTH {
            return Err(f.r.error(
                "file_tree",
                format!("directory nesting of at most {MAX_TREE_DEPTH} levels"),
            ));
        }
        let n = f.u16("file_count")? as usize;
        let first = f.fields.len();
        let start = f.r.pos();
        let mut files = Vec::with_capacity(n.min(f.r.remaining() / 8));
        for _ in 0..n {
            let (ff, fs) = (f.fields.len(), f.r.pos());
            let name = f.hex32("name_hash")?;
            let content = f.hex32("content_hash")?;
            f.group_from("file", ff, fs);
            files.push((name, content));
        }
        f.group_from("files", first, start);
        let n = f.u8("subdir_count")? as usize;
        let (first, start) = (f.fields.len(), f.r.pos());
        let mut names = Vec::with_capacity(n.min(f.r.remaining() / 4));
        for _ in 0..n {
            names.push(f.hex32("subdir_name_hash")?);
        }
        f.group_from("subdir_name_hashes", first, start);
        let (first, start) = (f.fields.len(), f.r.pos());
        let mut subdirs = Vec::with_capacity(names.len());
        for name in names {
            let (sf, ss) = (f.fields.len(), f.r.pos());
            let tree = FileTree::parse(f, depth + 1)?;
            f.group_from("subdir", sf, ss);
            subdirs.push((name, tree));
        }
        f.group_from("subdirs", first, start);
        Ok(FileTree { files, subdirs })
    }

    fn emit(&self, w: &mut Writer) {
        w.u16(self.files.len().min(u16::MAX as usize) as u16);
        for (name, content) in self.files.iter().take(u16::MAX as usize) {
            w.u32(*name).u32(*content);
        }
        let subdirs = &self.subdirs[..self.subdirs.len().min(255)];
        w.u8(subdirs.len() as u8);
        for (name, _) in subdirs {
            w.u32(*name);
        }
        for (_, tree) in subdirs {
            tree.emit(w);
        }
    }
}

/// 0x21 ChecksumResponse (C→H).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksumResponse {
    pub round: u8,
    /// Hash of the game version string, round 0 only.
    pub version_hash: Option<u32>,
    /// Hash of the directory's last path component.
    pub directory_hash: u32,
    pub tree: FileTree,
}

impl ChecksumResponse {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<ChecksumResponse> {
        let round = f.hex8("round")?;
        let version_hash = if round == 0 {
            Some(f.hex32("version_hash")?)
        } else {
            None
        };
        let directory_hash = f.hex32("directory_hash")?;
        let tree = FileTree::parse(f, 0)?;
        Ok(ChecksumResponse {
            round,
            version_hash,
            directory_hash,
            tree,
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x21);
        w.u8(self.round);
        if self.round == 0 {
            w.u32(self.version_hash.unwrap_or(0));
        }
        w.u32(self.directory_hash);
        self.tree.emit(&mut w);
        w.into_bytes()
    }
}

/// 0x22 VersionMismatch / 0x23 SystemChecksumFail (H→C): the failing file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksumFail {
    pub opcode: u8,
    pub file_name: String,
}

impl ChecksumFail {
    pub fn parse(opcode: u8, f: &mut FieldReader) -> DecodeResult<ChecksumFail> {
        Ok(ChecksumFail {
            opcode,
            file_name: f.str16("file_name")?,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(self.opcode);
        w.str16(&self.file_name);
        w.into_bytes()
    }
}

/// 0x25 FileTransfer (H→C): a file name and the file's bytes to the end of the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTransfer {
    pub file_name: String,
    pub contents: Vec<u8>,
}

impl FileTransfer {
    pub fn parse(f: &mut FieldReader) -> DecodeResult<FileTransfer> {
        let file_name = f.str16("file_name")?;
        let contents = f.rest("file_contents").to_vec();
        Ok(FileTransfer {
            file_name,
            contents,
        })
    }
    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(0x25);
        w.str16(&self.file_name).bytes(&self.contents);
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::diag::Code;
    use crate::game::field::Value;

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
            let r = ChecksumRequest::parse(&mut FieldReader::after_opcode(&bytes)).unwrap();
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
            let r = ChecksumResponse::parse(&mut FieldReader::after_opcode(&bytes)).unwrap();
            assert_eq!(r.emit(), bytes, "{s}");
        }
        let bytes = hex("210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700");
        let r = ChecksumResponse::parse(&mut FieldReader::after_opcode(&bytes)).unwrap();
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
        let back = ChecksumResponse::parse(&mut FieldReader::after_opcode(&bytes)).unwrap();
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
            ChecksumFail::parse(0x22, &mut FieldReader::after_opcode(&bytes)).unwrap(),
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
            FileTransfer::parse(&mut FieldReader::after_opcode(&bytes)).unwrap(),
            t
        );
        let m = decode_plain(&bytes);
        assert_clean(&m);
        assert_eq!(field(&m, "file_contents"), &Value::Bytes(vec![1, 2, 3]));
    }
}
