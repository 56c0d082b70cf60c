//! Captures edited frame by frame with pcap-file (not bcwire), and frames read back with
//! a small link/IPv4/UDP parser written here from the header layouts, for tests that
//! derive what bcwire must report from the edit they made or the raw headers they read.
#![allow(dead_code)]

use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
use pcap_file::pcapng::{Block, PcapNgReader, PcapNgWriter};
use std::path::Path;
use std::time::Duration;

/// A pcapng file as blocks, with the positions of its packet blocks: frame `n`
/// (1-based, as bcwire numbers them) is `blocks[frames[n - 1]]`.
pub struct PcapNg {
    section: SectionHeaderBlock<'static>,
    pub blocks: Vec<Block<'static>>,
}

/// One packet as read: its time, link type and link-layer bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub time: Duration,
    pub linktype: u32,
    pub data: Vec<u8>,
}

fn is_packet(b: &Block) -> bool {
    matches!(
        b,
        Block::EnhancedPacket(_) | Block::SimplePacket(_) | Block::Packet(_)
    )
}

impl PcapNg {
    pub fn read(path: &Path) -> PcapNg {
        let file = std::fs::File::open(path).expect("capture");
        let mut r = PcapNgReader::new(file).expect("pcapng section header");
        let section = r.section().clone();
        let mut blocks = Vec::new();
        while let Some(b) = r.next_block() {
            blocks.push(b.expect("pcapng block").0.into_owned());
        }
        PcapNg { section, blocks }
    }

    pub fn write(&self, path: &Path) {
        let file = std::fs::File::create(path).expect("create capture");
        let mut w = PcapNgWriter::with_section_header(file, self.section.clone())
            .expect("write section header");
        for b in &self.blocks {
            w.write_block(b).expect("write block");
        }
    }

    /// Block positions of the packets, in file order.
    pub fn frames(&self) -> Vec<usize> {
        (0..self.blocks.len())
            .filter(|&i| is_packet(&self.blocks[i]))
            .collect()
    }

    /// Frame `n` (1-based) removed.
    pub fn delete_frame(&mut self, n: usize) {
        let i = self.frames()[n - 1];
        self.blocks.remove(i);
    }

    /// Frame `n` (1-based) written twice in a row: the same datagram received again.
    pub fn duplicate_frame(&mut self, n: usize) {
        let i = self.frames()[n - 1];
        let copy = self.blocks[i].clone();
        self.blocks.insert(i + 1, copy);
    }

    /// The contents of frames `n` and `m` exchanged, each place keeping its
    /// timestamp, so the capture stays in time order.
    pub fn swap_frames(&mut self, n: usize, m: usize) {
        let f = self.frames();
        let (i, j) = (f[n - 1], f[m - 1]);
        let (Block::EnhancedPacket(a), Block::EnhancedPacket(b)) =
            (self.blocks[i].clone(), self.blocks[j].clone())
        else {
            panic!("frames {n} and {m} are not enhanced packet blocks");
        };
        let mut a2 = b.clone();
        a2.timestamp = a.timestamp;
        a2.interface_id = a.interface_id;
        let mut b2 = a;
        b2.timestamp = b.timestamp;
        b2.interface_id = b.interface_id;
        self.blocks[i] = Block::EnhancedPacket(a2);
        self.blocks[j] = Block::EnhancedPacket(b2);
    }

    /// Frame `n`'s bytes replaced by frame `m`'s (its own time kept).
    pub fn replace_frame_data(&mut self, n: usize, m: usize) {
        let f = self.frames();
        let Block::EnhancedPacket(src) = self.blocks[f[m - 1]].clone() else {
            panic!("frame {m} is not an enhanced packet block");
        };
        let Block::EnhancedPacket(dst) = &mut self.blocks[f[n - 1]] else {
            panic!("frame {n} is not an enhanced packet block");
        };
        dst.data = src.data;
        dst.original_len = src.original_len;
    }

    /// Every packet with its link type (from its interface).
    pub fn packets(&self) -> Vec<Packet> {
        let mut linktypes: Vec<u32> = Vec::new();
        let mut out = Vec::new();
        for b in &self.blocks {
            match b {
                Block::SectionHeader(_) => linktypes.clear(),
                Block::InterfaceDescription(idb) => linktypes.push(u32::from(idb.linktype)),
                Block::EnhancedPacket(p) => out.push(Packet {
                    time: p.timestamp,
                    linktype: linktypes[p.interface_id as usize],
                    data: p.data.to_vec(),
                }),
                Block::SimplePacket(p) => out.push(Packet {
                    time: Duration::ZERO,
                    linktype: linktypes[0],
                    data: p.data.to_vec(),
                }),
                _ => {}
            }
        }
        out
    }
}

/// What the IPv4 and UDP headers of one frame say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Udp {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub ident: u16,
    /// Fragment offset in bytes, and the more-fragments flag.
    pub frag_offset: usize,
    pub more_fragments: bool,
    /// UDP ports, in the fragment at offset 0 only.
    pub ports: Option<(u16, u16)>,
}

/// The IPv4 header of a frame of link type 1 (Ethernet, optionally one 802.1Q tag) or
/// 0 (BSD loopback: a 4-byte address family in host order, 2 = IPv4), and its UDP
/// ports where this fragment holds the UDP header; None for anything else.
pub fn ipv4_udp(p: &Packet) -> Option<Ipv4Udp> {
    let d = &p.data;
    let ip = match p.linktype {
        1 => {
            let mut off = 12;
            let mut ethertype = u16::from_be_bytes([*d.get(off)?, *d.get(off + 1)?]);
            if ethertype == 0x8100 {
                off += 4;
                ethertype = u16::from_be_bytes([*d.get(off)?, *d.get(off + 1)?]);
            }
            if ethertype != 0x0800 {
                return None;
            }
            &d[off + 2..]
        }
        0 => {
            let family = u32::from_le_bytes(d.get(..4)?.try_into().ok()?);
            let family_be = u32::from_be_bytes(d.get(..4)?.try_into().ok()?);
            if family != 2 && family_be != 2 {
                return None;
            }
            &d[4..]
        }
        _ => return None,
    };
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 17 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0F) * 4;
    let flags_frag = u16::from_be_bytes([ip[6], ip[7]]);
    let frag_offset = usize::from(flags_frag & 0x1FFF) * 8;
    let ports = (frag_offset == 0 && ip.len() >= ihl + 4).then(|| {
        (
            u16::from_be_bytes([ip[ihl], ip[ihl + 1]]),
            u16::from_be_bytes([ip[ihl + 2], ip[ihl + 3]]),
        )
    });
    Some(Ipv4Udp {
        src: ip[12..16].try_into().unwrap(),
        dst: ip[16..20].try_into().unwrap(),
        ident: u16::from_be_bytes([ip[4], ip[5]]),
        frag_offset,
        more_fragments: flags_frag & 0x2000 != 0,
        ports,
    })
}
