//! Checksum and file-transfer layer (`opcodes.md` §8): 0x20 request, 0x21 response with
//! its hash tree, 0x22/0x23 failures, 0x25 file transfer. 0x27 and 0x28 are opcode-only.

use crate::game::reader::{DecodeResult, FieldReader};
use crate::game::registry::field;
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
            round: f.hex8(field!("round"))?,
            directory: f.str16(field!("directory"))?,
            filter: f.str16(field!("filter"))?,
            recursive: f.bit(field!("recursive"))?,
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
        let n = f.u16(field!("file_count"))? as usize;
        let first = f.mark();
        let start = f.r.pos();
        let mut files = Vec::with_capacity(n.min(f.r.remaining() / 8));
        for _ in 0..n {
            let (ff, fs) = (f.mark(), f.r.pos());
            let name = f.hex32(field!("files.file.name_hash"))?;
            let content = f.hex32(field!("files.file.content_hash"))?;
            f.group_from(field!("files.file"), ff, fs);
            files.push((name, content));
        }
        f.group_from(field!("files"), first, start);
        let n = f.u8(field!("subdir_count"))? as usize;
        let (first, start) = (f.mark(), f.r.pos());
        let mut names = Vec::with_capacity(n.min(f.r.remaining() / 4));
        for _ in 0..n {
            names.push(f.hex32(field!("subdir_name_hashes.subdir_name_hash"))?);
        }
        f.group_from(field!("subdir_name_hashes"), first, start);
        let (first, start) = (f.mark(), f.r.pos());
        let mut subdirs = Vec::with_capacity(names.len());
        for name in names {
            let (sf, ss) = (f.mark(), f.r.pos());
            let tree = FileTree::parse(f, depth + 1)?;
            f.group_from(field!("subdirs.subdir"), sf, ss);
            subdirs.push((name, tree));
        }
        f.group_from(field!("subdirs"), first, start);
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
        let round = f.hex8(field!("round"))?;
        let version_hash = if round == 0 {
            Some(f.hex32(field!("version_hash"))?)
        } else {
            None
        };
        let directory_hash = f.hex32(field!("directory_hash"))?;
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
            file_name: f.str16(field!("file_name"))?,
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
        let file_name = f.str16(field!("file_name"))?;
        let contents = f.rest(field!("file_contents")).to_vec();
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
mod tests;
