//! Reader/writer tests: fixtures are written by the writer, by hand, and by `pcap-file`.

use super::*;
use crate::diag::Code;
use std::io::{Cursor, Read};

const T0: i64 = 1_795_339_104_607_468_123;

fn frames_of(bytes: Vec<u8>) -> (CaptureReader, Vec<Frame>) {
    let mut r = CaptureReader::new(Cursor::new(bytes)).expect("header");
    let mut out = Vec::new();
    while let Some(f) = r.next_frame() {
        out.push(f.expect("frame"));
    }
    (r, out)
}

fn sample_data(i: usize) -> Vec<u8> {
    (0..(10 + i * 7)).map(|b| (b * 31 + i) as u8).collect()
}

fn write_pcap(res: TsResolution, endian: Endian, n: usize) -> Vec<u8> {
    let mut w = CaptureWriter::pcap(Vec::new(), link_type::ETHERNET, res, endian, 65535).unwrap();
    for i in 0..n {
        let d = sample_data(i);
        w.write_frame(0, T0 + i as i64 * 1_001_001, d.len() as u32 + 3, &d)
            .unwrap();
    }
    w.into_inner()
}

#[test]
fn pcap_round_trip_all_variants() {
    for res in [TsResolution::MICRO, TsResolution::NANO] {
        for endian in [Endian::Little, Endian::Big] {
            let (r, frames) = frames_of(write_pcap(res, endian, 5));
            match r.format() {
                CaptureFormat::Pcap {
                    resolution,
                    endian: e,
                    ..
                } => {
                    assert_eq!((resolution, e), (res, endian));
                }
                other => panic!("wrong format {other}"),
            }
            assert_eq!(r.link_types(), &[link_type::ETHERNET]);
            assert_eq!(frames.len(), 5);
            for (i, f) in frames.iter().enumerate() {
                let exact = T0 + i as i64 * 1_001_001;
                let want = if res == TsResolution::MICRO {
                    exact - exact % 1000
                } else {
                    exact
                };
                assert_eq!(f.number, i as u64 + 1);
                assert_eq!(f.ts_ns, want, "{res:?} {endian:?}");
                assert_eq!(f.data, sample_data(i));
                assert_eq!(f.orig_len, f.data.len() as u32 + 3);
                assert_eq!(f.link_type, link_type::ETHERNET);
            }
            assert!(r.truncation().is_none());
        }
    }
}

/// A big-endian nanosecond pcap written byte by byte, independent of the writer.
#[test]
fn hand_written_big_endian_ns_pcap() {
    let mut b = vec![0xA1, 0xB2, 0x3C, 0x4D, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0];
    b.extend_from_slice(&[0, 0, 0xFF, 0xFF, 0, 0, 0, 101]); // snaplen, RAW
    b.extend_from_slice(&[0x6A, 0xFD, 0x3B, 0x60]); // 1795242848 s
    b.extend_from_slice(&[0x00, 0x00, 0x01, 0x2C]); // 300 ns
    b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 9]);
    b.extend_from_slice(&[0x45, 0x00]);
    let (r, frames) = frames_of(b);
    assert_eq!(r.format().to_string(), "pcap (ns, big-endian)");
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].ts_ns, 0x6AFD_3B60_i64 * 1_000_000_000 + 300);
    assert_eq!(frames[0].link_type, link_type::RAW);
    assert_eq!(frames[0].orig_len, 9);
    assert_eq!(frames[0].data, vec![0x45, 0x00]);
}

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// pcapng written by hand: one µs interface (no if_tsresol), one ns interface.
#[test]
fn hand_written_pcapng_microsecond_and_nanosecond_interfaces() {
    let mut b = Vec::new();
    // SHB, 28 bytes, no options.
    b.extend_from_slice(&[0x0A, 0x0D, 0x0D, 0x0A]);
    b.extend_from_slice(&le32(28));
    b.extend_from_slice(&[0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0]);
    b.extend_from_slice(&[0xFF; 8]);
    b.extend_from_slice(&le32(28));
    // IDB 0: Ethernet, default resolution (µs).
    b.extend_from_slice(&le32(1));
    b.extend_from_slice(&le32(20));
    b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 1, 0]);
    b.extend_from_slice(&le32(20));
    // IDB 1: RAW, if_tsresol = 9 (ns), then opt_endofopt.
    b.extend_from_slice(&le32(1));
    b.extend_from_slice(&le32(32));
    b.extend_from_slice(&[101, 0, 0, 0, 0, 0, 1, 0]);
    b.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&le32(32));
    let ts_us: u64 = 1_795_339_104_607_468;
    let ts_ns: u64 = 1_795_339_104_607_468_123;
    for (iface, ts) in [(0u32, ts_us), (1, ts_ns)] {
        b.extend_from_slice(&le32(6));
        b.extend_from_slice(&le32(36));
        b.extend_from_slice(&le32(iface));
        b.extend_from_slice(&le32((ts >> 32) as u32));
        b.extend_from_slice(&le32(ts as u32));
        b.extend_from_slice(&le32(3));
        b.extend_from_slice(&le32(3));
        b.extend_from_slice(&[0xAA, 0xBB, 0xCC, 0]);
        b.extend_from_slice(&le32(36));
    }
    let (r, frames) = frames_of(b);
    assert_eq!(r.format(), CaptureFormat::PcapNg);
    assert_eq!(r.link_types(), &[link_type::ETHERNET, link_type::RAW]);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].ts_ns, 1_795_339_104_607_468_000);
    assert_eq!(frames[1].ts_ns, 1_795_339_104_607_468_123);
    assert_eq!((frames[0].interface, frames[1].interface), (0, 1));
    assert_eq!((frames[0].link_type, frames[1].link_type), (1, 101));
    assert_eq!(frames[1].data, vec![0xAA, 0xBB, 0xCC]);
}

/// Two sections of different byte order; interfaces with binary resolution and offset;
/// a simple packet block and an unknown block in between.
#[test]
fn pcapng_sections_interfaces_resolutions_offsets() {
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    let eth = w.add_interface(1, 0, TsResolution::MICRO, 0).unwrap();
    let sll2 = w.add_interface(276, 0, TsResolution::NANO, 0).unwrap();
    w.write_frame(eth, T0, 4, &[1, 2, 3, 4]).unwrap();
    w.write_frame(sll2, T0 + 5, 2, &[5, 6]).unwrap();
    w.new_section(Endian::Big).unwrap();
    // 2^-10 s resolution, offset +100 s: the stored value is relative to the offset.
    let null = w.add_interface(0, 0, TsResolution(0x80 | 10), 100).unwrap();
    w.write_frame(null, 1_000_000_000 * 150 + 500_000_000, 1, &[9])
        .unwrap();
    let mut bytes = w.into_inner();
    // Unknown block type 0x0BAD (big-endian section), 16 bytes, then an SPB.
    bytes.extend_from_slice(&[0, 0, 0x0B, 0xAD, 0, 0, 0, 16, 1, 2, 3, 4, 0, 0, 0, 16]);
    bytes.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 20, 0, 0, 0, 3, 7, 7, 7, 0, 0, 0, 0, 20]);
    let (r, frames) = frames_of(bytes);
    assert_eq!(r.sections(), 2);
    assert_eq!(r.link_types(), &[1, 276, 0]);
    assert_eq!(frames.len(), 4);
    assert_eq!(frames[0].ts_ns, T0 - T0 % 1000);
    assert_eq!(frames[1].ts_ns, T0 + 5);
    assert_eq!(frames[2].ts_ns, 150_500_000_000);
    assert_eq!(frames[2].interface, 2, "file-wide interface index");
    assert_eq!(frames[2].link_type, 0);
    assert_eq!(frames[3].data, vec![7, 7, 7]);
    assert_eq!(
        frames[3].ts_ns, frames[2].ts_ns,
        "SPB keeps the previous timestamp"
    );
    assert_eq!(frames[3].number, 4);
}

/// Cutting a file at every byte yields exactly the complete frames and a truncation
/// report naming the cut record, never an error.
#[test]
fn truncated_files_yield_complete_frames_then_warn() {
    let pcap = write_pcap(TsResolution::MICRO, Endian::Little, 4);
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Big).unwrap();
    w.add_interface(1, 0, TsResolution::NANO, 0).unwrap();
    for i in 0..4 {
        w.write_frame(0, T0 + i, 0, &sample_data(i as usize))
            .unwrap();
    }
    let ng = w.into_inner();
    for (full, header_len) in [(pcap, 24usize), (ng, 28 + 32)] {
        // Ends of each complete record, found by reading the full file.
        let mut ends = vec![];
        let mut r = CaptureReader::new(Cursor::new(full.clone())).unwrap();
        let mut f = Frame::default();
        while r.read_into(&mut f).unwrap() {
            ends.push(r.bytes_read());
        }
        assert_eq!(ends.len(), 4);
        for cut in header_len..full.len() {
            let (r, frames) = frames_of(full[..cut].to_vec());
            let complete = ends.iter().filter(|&&e| e <= cut as u64).count();
            assert_eq!(frames.len(), complete, "cut at {cut}");
            let at_boundary = cut == header_len || ends.contains(&(cut as u64));
            match r.truncation() {
                None => assert!(at_boundary, "cut at {cut} not reported"),
                Some(t) => {
                    assert!(!at_boundary);
                    let start = if complete == 0 {
                        header_len as u64
                    } else {
                        ends[complete - 1]
                    };
                    assert_eq!(t.offset, start);
                    assert_eq!(t.available, cut as u64 - start);
                    assert_eq!(t.frames_complete, complete as u64);
                    if t.what != "block header" {
                        assert_eq!(t.frame, Some(complete as u64 + 1));
                    }
                    let w = t.to_warning();
                    assert_eq!(w.code, Code::TruncatedCapture);
                    assert_eq!(w.offset, Some(start as usize));
                }
            }
        }
    }
}

#[test]
fn header_cut_and_non_captures_are_errors() {
    let pcap = write_pcap(TsResolution::NANO, Endian::Big, 1);
    let e = CaptureReader::new(Cursor::new(pcap[..10].to_vec()))
        .err()
        .unwrap();
    assert!(matches!(
        e,
        CaptureError::HeaderCut {
            needed: 24,
            got: 10
        }
    ));
    let e = CaptureReader::new(Cursor::new(b"hello world, not a capture".to_vec()))
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "not a capture file: the first bytes 68 65 6C 6C are neither a pcap nor a pcapng magic number"
    );
    let e = CaptureReader::new(Cursor::new(Vec::new())).err().unwrap();
    assert_eq!(e.to_string(), "not a capture file: the input is empty");
}

#[test]
fn impossible_lengths_stop_with_a_located_error() {
    let mut pcap = write_pcap(TsResolution::MICRO, Endian::Little, 2);
    // Second record's captured length (record starts after 24 + 16 + 10 bytes).
    let rec = 24 + 16 + 10;
    pcap[rec + 8..rec + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut r = CaptureReader::new(Cursor::new(pcap)).unwrap();
    assert!(r.next_frame().unwrap().is_ok());
    let e = r.next_frame().unwrap().unwrap_err();
    assert!(e.is_fatal());
    assert!(
        matches!(e, CaptureError::Corrupt { offset, frame: Some(2), .. } if offset == rec as u64)
    );
    assert!(r.next_frame().is_none());
}

#[test]
fn bad_interface_id_skips_one_frame_and_goes_on() {
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    w.add_interface(1, 0, TsResolution::MICRO, 0).unwrap();
    w.write_frame(0, T0, 1, &[1]).unwrap();
    w.write_frame(0, T0, 1, &[2]).unwrap();
    let mut b = w.into_inner();
    let second_epb = b.len() - 36;
    b[second_epb + 8] = 7; // interface 7 does not exist
    let mut r = CaptureReader::new(Cursor::new(b)).unwrap();
    assert!(r.next_frame().unwrap().is_ok());
    let e = r.next_frame().unwrap().unwrap_err();
    assert!(!e.is_fatal());
    assert!(e.to_string().contains("(frame 2)"), "{e}");
    assert!(r.next_frame().is_none());
}

/// A source that hands out one byte per read, like a slow pipe on stdin.
struct Trickle(Cursor<Vec<u8>>);
impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn streams_from_a_reader_that_returns_short_reads() {
    let bytes = write_pcap(TsResolution::NANO, Endian::Little, 3);
    let mut r = CaptureReader::new(Trickle(Cursor::new(bytes))).unwrap();
    let n = std::iter::from_fn(|| r.next_frame())
        .filter(|f| f.is_ok())
        .count();
    assert_eq!(n, 3);
}

/// pcap-file (an independent implementation) reads what the writer wrote …
#[test]
fn pcap_file_reads_our_output() {
    use pcap_file::pcapng::{Block, PcapNgReader};
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    w.add_interface(1, 0, TsResolution::NANO, 0).unwrap();
    w.add_interface(1, 0, TsResolution::MICRO, 0).unwrap();
    w.write_frame(0, T0, 3, &[1, 2, 3]).unwrap();
    w.write_frame(1, T0, 3, &[1, 2, 3]).unwrap();
    let mut r = PcapNgReader::new(Cursor::new(w.into_inner())).unwrap();
    let mut ts = vec![];
    while let Some(b) = r.next_block() {
        if let (Block::EnhancedPacket(p), _) = b.unwrap() {
            ts.push(p.timestamp.as_nanos() as i64);
        }
    }
    assert_eq!(ts, vec![T0, T0 - T0 % 1000]);

    let bytes = write_pcap(TsResolution::NANO, Endian::Big, 2);
    let mut r = pcap_file::pcap::PcapReader::new(Cursor::new(bytes)).unwrap();
    let p = r.next_packet().unwrap().unwrap();
    assert_eq!(p.timestamp().as_nanos() as i64, T0);
}

/// … and we read what pcap-file wrote (ns and µs interfaces).
#[test]
fn we_read_pcap_file_output() {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
    use pcap_file::pcapng::blocks::interface_description::{
        InterfaceDescriptionBlock, InterfaceDescriptionOption, InterfaceTsResolution,
    };
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::DataLink;
    use std::borrow::Cow;
    use std::time::Duration;
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    let mut ns = InterfaceDescriptionBlock::new(DataLink::LINUX_SLL2, 0);
    ns.options.push(InterfaceDescriptionOption::IfTsResol(
        InterfaceTsResolution::NANO,
    ));
    w.write_pcapng_block(ns).unwrap();
    w.write_pcapng_block(InterfaceDescriptionBlock::new(DataLink::ETHERNET, 0))
        .unwrap();
    for iface in [0, 1] {
        let epb = EnhancedPacketBlock {
            interface_id: iface,
            timestamp: Duration::from_nanos(T0 as u64),
            original_len: 2,
            data: Cow::Borrowed(&[0xAB, 0xCD]),
            options: vec![],
        };
        w.write_pcapng_block(epb).unwrap();
    }
    let (r, frames) = frames_of(w.into_inner());
    assert_eq!(r.link_types(), &[276, 1]);
    assert_eq!(frames[0].ts_ns, T0);
    assert_eq!(frames[1].ts_ns, T0 - T0 % 1000);
    assert_eq!(frames[1].data, vec![0xAB, 0xCD]);
}

/// Every single-byte corruption of a small pcapng and a small pcap is read without
/// panicking and ends (errors are fine, hangs and panics are not).
#[test]
fn corrupted_bytes_never_panic() {
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    w.add_interface(1, 0, TsResolution::NANO, 5).unwrap();
    w.write_frame(0, T0, 3, &[1, 2, 3]).unwrap();
    w.write_frame(0, T0, 3, &[4, 5, 6]).unwrap();
    let ng = w.into_inner();
    let pcap = write_pcap(TsResolution::MICRO, Endian::Big, 2);
    for base in [ng, pcap] {
        for i in 0..base.len() {
            for v in [0x00, 0xFF, 0x80, 0x07] {
                let mut b = base.clone();
                b[i] = v;
                if let Ok(mut r) = CaptureReader::new(Cursor::new(b)) {
                    let mut n = 0;
                    while r.next_frame().is_some() {
                        n += 1;
                        assert!(n < 100);
                    }
                }
            }
        }
    }
}

/// A negative if_tsoffset moves timestamps back, down to before 1970; written by hand
/// so the reader is checked independently of the writer.
#[test]
fn negative_if_tsoffset_is_applied_even_before_1970() {
    let mut b = Vec::new();
    b.extend_from_slice(&[0x0A, 0x0D, 0x0D, 0x0A]);
    b.extend_from_slice(&le32(28));
    b.extend_from_slice(&[0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0]);
    b.extend_from_slice(&[0xFF; 8]);
    b.extend_from_slice(&le32(28));
    // IDB: Ethernet, if_tsresol 9 (ns), if_tsoffset -86400 s, end of options.
    b.extend_from_slice(&le32(1));
    b.extend_from_slice(&le32(44));
    b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]);
    b.extend_from_slice(&[14, 0, 8, 0]);
    b.extend_from_slice(&(-86_400i64).to_le_bytes());
    b.extend_from_slice(&[0, 0, 0, 0]);
    b.extend_from_slice(&le32(44));
    // Two packets: 1.5 s after the offset (so 1969-12-31), and T0 + 86400 s.
    for ts in [1_500_000_000u64, T0 as u64 + 86_400_000_000_000] {
        b.extend_from_slice(&le32(6));
        b.extend_from_slice(&le32(36));
        b.extend_from_slice(&le32(0));
        b.extend_from_slice(&le32((ts >> 32) as u32));
        b.extend_from_slice(&le32(ts as u32));
        b.extend_from_slice(&le32(2));
        b.extend_from_slice(&le32(2));
        b.extend_from_slice(&[0xAB, 0xCD, 0, 0]);
        b.extend_from_slice(&le32(36));
    }
    let (r, frames) = frames_of(b.clone());
    assert!(r.truncation().is_none());
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].ts_ns, -86_400_000_000_000 + 1_500_000_000);
    assert_eq!(frames[1].ts_ns, T0);
    // The writer produces the same timestamps through the same offset.
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    w.add_interface(1, 0, TsResolution::NANO, -86_400).unwrap();
    w.write_frame(0, frames[0].ts_ns, 2, &[0xAB, 0xCD]).unwrap();
    w.write_frame(0, T0, 2, &[0xAB, 0xCD]).unwrap();
    assert_eq!(
        w.into_inner(),
        b,
        "writer output equals the hand-written file"
    );
}

/// Records longer than the snap length are read whole, with a located note.
#[test]
fn records_over_the_snap_length_are_read_and_noted() {
    let data: Vec<u8> = (0..40).collect();
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::RAW,
        TsResolution::MICRO,
        Endian::Big,
        16,
    )
    .unwrap();
    w.write_frame(0, T0, 10, &data[..10]).unwrap();
    w.write_frame(0, T0, 40, &data).unwrap();
    let pcap = w.into_inner();
    let mut ng = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    ng.add_interface(1, 16, TsResolution::MICRO, 0).unwrap();
    ng.write_frame(0, T0, 10, &data[..10]).unwrap();
    ng.write_frame(0, T0, 40, &data).unwrap();
    let ng = ng.into_inner();
    // Offsets of the second record: pcap 24 + 16 + 10; pcapng 28 + 20 + 44.
    for (bytes, second) in [(pcap, 50usize), (ng, 92)] {
        let mut r = CaptureReader::new(Cursor::new(bytes)).unwrap();
        let first = r.next_frame().unwrap().unwrap();
        assert_eq!(first.data.len(), 10);
        assert!(!r.has_notes());
        let f = r.next_frame().unwrap().unwrap();
        assert_eq!(f.data, data, "read whole, past the snap length");
        let notes = r.take_notes();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].code, Code::RecordOverSnaplen);
        assert_eq!(notes[0].offset, Some(second));
        assert!(
            notes[0].message.contains("frame 2: 40 bytes captured")
                && notes[0].message.contains("snap length 16"),
            "{}",
            notes[0].message
        );
        assert!(r.next_frame().is_none());
    }
}

/// Names, the writing application and packet comments go out through pcap-file and
/// come back: pcap-file's own reader sees them, and so does ours (comments).
#[test]
fn pcapng_metadata_and_comments_round_trip() {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
    use pcap_file::pcapng::blocks::opt_common::CommonOption;
    use pcap_file::pcapng::blocks::section_header::SectionHeaderOption;
    use pcap_file::pcapng::{Block, PcapNgReader};
    let appl = writer::user_application();
    assert!(appl.starts_with("bcwire "));
    let mut w = CaptureWriter::pcapng_with(Vec::new(), Endian::Big, Some(&appl)).unwrap();
    let info = writer::InterfaceInfo {
        name: Some("eth0".into()),
        description: Some("ETHERNET, read from x.pcap".into()),
    };
    w.add_interface_with(1, 0, TsResolution::NANO, 0, &info)
        .unwrap();
    w.write_frame_with(0, T0, 3, &[1, 2, 3], Some("C→S ChatMessage 'hi'"))
        .unwrap();
    w.write_frame(0, T0 + 1, 3, &[4, 5, 6]).unwrap();
    let bytes = w.into_inner();

    let (_, frames) = frames_of(bytes.clone());
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].comments, ["C→S ChatMessage 'hi'"]);
    assert_eq!(frames[0].data, vec![1, 2, 3]);
    assert_eq!(frames[0].ts_ns, T0);
    assert!(frames[1].comments.is_empty());
    assert_eq!(frames[1].data, vec![4, 5, 6]);

    let mut r = PcapNgReader::new(Cursor::new(bytes)).unwrap();
    assert!(r
        .section()
        .options
        .contains(&SectionHeaderOption::UserApplication(appl.clone().into())));
    let mut comments = vec![];
    while let Some(b) = r.next_block() {
        match b.unwrap().0 {
            Block::InterfaceDescription(i) => {
                assert!(i
                    .options
                    .contains(&InterfaceDescriptionOption::IfName("eth0".into())));
                assert!(i
                    .options
                    .contains(&InterfaceDescriptionOption::IfDescription(
                        "ETHERNET, read from x.pcap".into()
                    )));
            }
            Block::EnhancedPacket(p) => comments.push(p.options.iter().find_map(|o| match o {
                EnhancedPacketOption::Common(CommonOption::Comment(c)) => Some(c.to_string()),
                _ => None,
            })),
            _ => {}
        }
    }
    assert_eq!(
        comments,
        vec![Some("C→S ChatMessage 'hi'".to_string()), None]
    );
}

/// A frame whose captured length exceeds its original length (pcap-file's typed
/// block refuses it) and one before 1970 are still written, and read back as written.
#[test]
fn frames_pcap_file_would_refuse_are_written_as_read() {
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    w.add_interface(1, 0, TsResolution::MICRO, -10).unwrap();
    w.write_frame_with(0, T0, 1, &[9, 9, 9], Some("short orig"))
        .unwrap();
    w.write_frame(0, -3_000_000, 3, &[7, 7, 7]).unwrap();
    let (r, frames) = frames_of(w.into_inner());
    assert!(r.truncation().is_none());
    assert_eq!(frames.len(), 2);
    assert_eq!((frames[0].orig_len, frames[0].data.len()), (1, 3));
    assert_eq!(frames[0].ts_ns, T0 - T0 % 1000);
    assert_eq!(frames[1].ts_ns, -3_000_000);
}

/// Why the reader takes the five fixed fields of a packet block from pcap-file's raw
/// block instead of its typed one: the typed parser refuses both frames above (a
/// captured length over the original length, and a time the interface's negative
/// offset moves before 1970), which real files hold. When pcap-file accepts them this
/// test fails, and the reader can take the typed block.
#[test]
fn pcap_file_typed_packet_blocks_refuse_what_the_reader_keeps() {
    use pcap_file::pcapng::{Block, PcapNgParser};
    let write = |ts_ns: i64, orig_len: u32| {
        let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
        w.add_interface(1, 0, TsResolution::MICRO, -10).unwrap();
        w.write_frame(0, ts_ns, orig_len, &[7, 7, 7]).unwrap();
        w.into_inner()
    };
    for (what, bytes) in [
        ("captured length over the original", write(T0, 1)),
        ("time before 1970", write(-3_000_000, 3)),
    ] {
        // The reader keeps the frame…
        let (r, frames) = frames_of(bytes.clone());
        assert!(r.truncation().is_none(), "{what}");
        assert_eq!(frames.len(), 1, "{what}");
        // …which pcap-file's typed parser refuses, after the header blocks it takes.
        let (mut rest, mut parser) = PcapNgParser::new(&bytes).unwrap();
        let mut outcome = Vec::new();
        while !rest.is_empty() {
            match parser.next_block(rest) {
                Ok((r, block)) => {
                    outcome.push(matches!(block, Block::EnhancedPacket(_)));
                    rest = r;
                }
                Err(_) => {
                    outcome.push(false);
                    break;
                }
            }
        }
        assert_eq!(
            outcome,
            vec![false, false],
            "{what}: IDB, then a refused EPB"
        );
    }
}

/// gzip, Zstandard and LZ4 frames are recognised from their magic bytes and read as
/// the capture they hold, frame for frame, with the offsets of the decompressed file.
#[test]
fn compressed_inputs_read_like_the_original() {
    use std::io::Write;
    let plain = write_pcap(TsResolution::NANO, Endian::Little, 20);
    let (_, want) = frames_of(plain.clone());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(&plain[..], 3).unwrap();
    let mut lz = lz4_flex::frame::FrameEncoder::new(Vec::new());
    lz.write_all(&plain).unwrap();
    let lz = lz.finish().unwrap();
    for (bytes, kind) in [
        (gz, Compression::Gzip),
        (zst, Compression::Zstd),
        (lz, Compression::Lz4),
    ] {
        let compressed_len = bytes.len() as u64;
        let (r, got) = frames_of(bytes.clone());
        assert_eq!(r.compression(), Some(kind));
        assert_eq!(got, want, "{kind}");
        assert_eq!(r.bytes_read(), plain.len() as u64);
        assert_eq!(r.compressed_bytes_read(), compressed_len, "{kind}");
        // Cut short: the complete frames, then a located truncation or an I/O error
        // from the decompressor, never a panic.
        let cut = bytes[..bytes.len() * 2 / 3].to_vec();
        if let Ok(mut r) = CaptureReader::new(Cursor::new(cut)) {
            while let Some(f) = r.next_frame() {
                if f.is_err() {
                    break;
                }
            }
        }
    }
    // A compressed non-capture is refused with the decompressed first bytes.
    let zst = zstd::encode_all(&b"hello world"[..], 3).unwrap();
    let e = CaptureReader::new(Cursor::new(zst)).err().unwrap();
    assert!(e.to_string().contains("68 65 6C 6C"), "{e}");
}

/// A cut file read one byte at a time reports the same truncation as read at once:
/// the buffer is refilled before the cut is judged.
#[test]
fn truncation_is_the_same_through_short_reads() {
    let pcap = write_pcap(TsResolution::MICRO, Endian::Little, 3);
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Big).unwrap();
    w.add_interface(1, 0, TsResolution::NANO, 0).unwrap();
    for i in 0..3 {
        w.write_frame(0, T0 + i, 0, &sample_data(i as usize))
            .unwrap();
    }
    let ng = w.into_inner();
    for full in [pcap, ng] {
        for cut in (30..full.len()).step_by(3) {
            let bytes = full[..cut].to_vec();
            let (whole, a) = frames_of(bytes.clone());
            let mut r = CaptureReader::new(Trickle(Cursor::new(bytes))).unwrap();
            let b: Vec<Frame> = std::iter::from_fn(|| r.next_frame())
                .map(|f| f.unwrap())
                .collect();
            assert_eq!(a, b, "cut at {cut}");
            assert_eq!(whole.truncation(), r.truncation(), "cut at {cut}");
        }
    }
}

/// Options pcap-file refuses (a shb_hardware and an if_name that are not UTF-8, a
/// non-zero reserved field) cost the options, not the section or the interface: frames
/// on later interfaces keep their link type, and packet comments still come through.
#[test]
fn blocks_with_refused_options_are_kept_without_them() {
    let opt = |code: u16, value: &[u8]| {
        let mut o = code.to_le_bytes().to_vec();
        o.extend_from_slice(&(value.len() as u16).to_le_bytes());
        o.extend_from_slice(value);
        while !o.len().is_multiple_of(4) {
            o.push(0);
        }
        o
    };
    let block = |t: u32, body: &[u8]| {
        let total = (body.len() + 12) as u32;
        let mut b = le32(t).to_vec();
        b.extend_from_slice(&le32(total));
        b.extend_from_slice(body);
        b.extend_from_slice(&le32(total));
        b
    };
    let epb = |iface: u32, data: &[u8], comment: Option<&str>| {
        let mut body = le32(iface).to_vec();
        body.extend_from_slice(&le32(0));
        body.extend_from_slice(&le32(1_000_000));
        body.extend_from_slice(&le32(data.len() as u32));
        body.extend_from_slice(&le32(data.len() as u32));
        body.extend_from_slice(data);
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        if let Some(c) = comment {
            body.extend_from_slice(&opt(1, c.as_bytes()));
            body.extend_from_slice(&[0; 4]);
        }
        block(6, &body)
    };
    // Section header with shb_hardware 0xFF 0xFE (not UTF-8).
    let mut shb = vec![0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0];
    shb.extend_from_slice(&[0xFF; 8]);
    shb.extend_from_slice(&opt(2, &[0xFF, 0xFE]));
    shb.extend_from_slice(&[0; 4]);
    let mut b = block(0x0A0D_0D0A, &shb);
    // Interface 0: RAW, if_name not UTF-8. Interface 1: Ethernet, reserved field 1.
    let mut idb0 = vec![101, 0, 0, 0, 0, 0, 0, 0];
    idb0.extend_from_slice(&opt(2, &[0xC3, 0x28]));
    idb0.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&block(1, &idb0));
    b.extend_from_slice(&block(1, &[1, 0, 1, 0, 0, 0, 0, 0]));
    // Interface 2: Ethernet, sound.
    b.extend_from_slice(&block(1, &[1, 0, 0, 0, 0, 0, 0, 0]));
    b.extend_from_slice(&epb(0, &[0x45, 1, 2], None));
    b.extend_from_slice(&epb(2, &[9, 9], Some("kept")));

    let mut r = CaptureReader::new(Cursor::new(b)).expect("the section is read");
    let notes = r.take_notes();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].code, Code::CaptureBlockMalformed);
    assert!(
        notes[0].message.contains("without its options"),
        "{notes:?}"
    );
    let mut frames = vec![];
    let mut errors = vec![];
    while let Some(f) = r.next_frame() {
        match f {
            Ok(f) => frames.push(f),
            Err(e) => {
                assert!(!e.is_fatal(), "{e}");
                errors.push(e.to_string());
            }
        }
    }
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("byte 40") && errors[0].contains("interface is kept"),
        "{errors:?}"
    );
    assert!(errors[1].contains("reserved"), "{errors:?}");
    assert_eq!(frames.len(), 2);
    assert_eq!((frames[0].link_type, frames[0].interface), (101, 0));
    assert_eq!((frames[1].link_type, frames[1].interface), (1, 2));
    assert_eq!(frames[1].comments, ["kept"]);
    assert_eq!(r.link_types(), &[101, 1]);
}

/// A compressed stream too short to hold a capture header is refused as a cut header
/// or a non-capture, never read as something else.
#[test]
fn tiny_compressed_inputs_are_refused() {
    use std::io::Write;
    for plain in [
        &b""[..],
        &[0xD4, 0xC3][..],
        &[0xD4, 0xC3, 0xB2, 0xA1, 2, 0][..],
    ] {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(plain).unwrap();
        let e = CaptureReader::new(Cursor::new(gz.finish().unwrap()))
            .err()
            .expect("refused");
        if plain.len() >= 4 {
            assert!(
                matches!(e, CaptureError::HeaderCut { needed: 24, got: 6 }),
                "{e}"
            );
        } else {
            assert!(matches!(e, CaptureError::NotACapture { .. }), "{e}");
        }
    }
    // Two bytes of gzip magic and nothing more.
    assert!(CaptureReader::new(Cursor::new(vec![0x1F, 0x8B])).is_err());
}
