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
