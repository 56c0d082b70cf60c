//! Captures generated here, for every link type and container format, go through
//! capture → net → flow and come out as the datagrams that were put in.

use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Endian, TsResolution};
use bcwire::diag::Direction;
use bcwire::flow::{PayloadKind, SessionTable};
use bcwire::net::build::{frame_udp, BuildOptions};
use bcwire::net::{NetDecoder, NetOutcome};
use std::io::Cursor;
use std::net::SocketAddr;

const T0: i64 = 1_700_000_000_123_456_789;

struct Sent {
    src: SocketAddr,
    dst: SocketAddr,
    payload: Vec<u8>,
    dir: Direction,
}

/// A short exchange: GameSpy query and reply, connect, a fragmented host datagram.
fn exchange(v6: bool) -> Vec<Sent> {
    let (server, client, query): (SocketAddr, SocketAddr, SocketAddr) = if v6 {
        (
            "[2001:db8::1]:22101".parse().unwrap(),
            "[2001:db8::2]:40000".parse().unwrap(),
            "[2001:db8::3]:40001".parse().unwrap(),
        )
    } else {
        (
            "192.168.1.1:22101".parse().unwrap(),
            "192.168.1.2:40000".parse().unwrap(),
            "192.168.1.3:40001".parse().unwrap(),
        )
    };
    let big: Vec<u8> = std::iter::once(0x01)
        .chain((0..1400).map(|i| i as u8))
        .collect();
    vec![
        Sent {
            src: query,
            dst: server,
            payload: b"\\status\\".to_vec(),
            dir: Direction::C2S,
        },
        Sent {
            src: server,
            dst: query,
            payload: b"\\gamename\\bcommander\\final\\".to_vec(),
            dir: Direction::S2C,
        },
        Sent {
            src: client,
            dst: server,
            payload: vec![0xFF, 0x01, 0x03, 0x08],
            dir: Direction::C2S,
        },
        Sent {
            src: server,
            dst: client,
            payload: big,
            dir: Direction::S2C,
        },
        Sent {
            src: client,
            dst: server,
            payload: vec![0x02, 0x01, 0x01],
            dir: Direction::C2S,
        },
    ]
}

/// Frames for the exchange; the fragments of each datagram are written in reverse.
fn frames(link: u32, sent: &[Sent], ip_id: u32) -> Vec<Vec<u8>> {
    let mut out = vec![];
    for (i, s) in sent.iter().enumerate() {
        let opts = BuildOptions {
            mtu: 576,
            ip_id: ip_id + i as u32,
            ..BuildOptions::default()
        };
        let mut f = frame_udp(link, s.src, s.dst, &s.payload, &opts).unwrap();
        f.reverse();
        out.extend(f);
    }
    out
}

enum Container {
    Pcap(TsResolution, Endian),
    PcapNg(TsResolution, Endian),
}

fn write(container: &Container, link: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let ts = |i: usize| T0 + i as i64 * 1_000_000;
    match container {
        Container::Pcap(res, endian) => {
            let mut w = CaptureWriter::pcap(Vec::new(), link, *res, *endian, 65535).unwrap();
            for (i, f) in frames.iter().enumerate() {
                w.write_frame(0, ts(i), f.len() as u32, f).unwrap();
            }
            w.into_inner()
        }
        Container::PcapNg(res, endian) => {
            let mut w = CaptureWriter::pcapng(Vec::new(), *endian).unwrap();
            w.add_interface(link as u16, 0, *res, 0).unwrap();
            for (i, f) in frames.iter().enumerate() {
                w.write_frame(0, ts(i), f.len() as u32, f).unwrap();
            }
            w.into_inner()
        }
    }
}

#[test]
fn every_link_type_in_every_container() {
    let links = [
        link_type::ETHERNET,
        link_type::LINUX_SLL,
        link_type::LINUX_SLL2,
        link_type::NULL,
        link_type::LOOP,
        link_type::RAW,
        link_type::IPV4,
        link_type::IPV6,
    ];
    let containers = [
        Container::Pcap(TsResolution::MICRO, Endian::Little),
        Container::Pcap(TsResolution::MICRO, Endian::Big),
        Container::Pcap(TsResolution::NANO, Endian::Little),
        Container::Pcap(TsResolution::NANO, Endian::Big),
        Container::PcapNg(TsResolution::MICRO, Endian::Big),
        Container::PcapNg(TsResolution::NANO, Endian::Little),
    ];
    for link in links {
        for v6 in [false, true] {
            if (link == link_type::IPV4 && v6) || (link == link_type::IPV6 && !v6) {
                continue;
            }
            let sent = exchange(v6);
            let frames = frames(link, &sent, 100);
            assert!(frames.len() > sent.len(), "the big datagram is fragmented");
            for c in &containers {
                let bytes = write(c, link, &frames);
                let mut reader = CaptureReader::new(Cursor::new(bytes)).unwrap();
                let mut net = NetDecoder::default();
                let mut flow = SessionTable::new(22101);
                let mut got = vec![];
                while let Some(frame) = reader.next_frame() {
                    match net.decode(&frame.unwrap()) {
                        NetOutcome::Datagram(d) => {
                            let c = flow.classify(&d).unwrap();
                            got.push((d, c));
                        }
                        NetOutcome::FragmentHeld => {}
                        NetOutcome::Skipped(r) => panic!("link {link}: {r}"),
                    }
                }
                assert_eq!(got.len(), sent.len(), "link {link} v6 {v6}");
                for ((d, c), s) in got.iter().zip(&sent) {
                    assert_eq!((d.src, d.dst, &d.payload), (s.src, s.dst, &s.payload));
                    assert_eq!(c.direction, s.dir);
                    assert_eq!(c.session, 0);
                }
                assert_eq!(got[0].1.kind, PayloadKind::GameSpy);
                assert_eq!(got[3].1.kind, PayloadKind::Bc { peer_id: 1 });
                assert_eq!(got[3].0.fragment_frames.len(), 3);
                assert!(net.finish().leftovers.is_empty());
                assert_eq!(reader.link_types(), &[link]);
            }
        }
    }
}

/// Two interfaces (Ethernet µs, SLL2 ns) each carrying its own server at once.
#[test]
fn pcapng_two_interfaces_two_servers() {
    let mut w = CaptureWriter::pcapng(Vec::new(), Endian::Little).unwrap();
    let eth = w.add_interface(1, 0, TsResolution::MICRO, 0).unwrap();
    let sll2 = w.add_interface(276, 0, TsResolution::NANO, 0).unwrap();
    let a = exchange(false);
    let b = exchange(true);
    let fa = frames(link_type::ETHERNET, &a, 1);
    let fb = frames(link_type::LINUX_SLL2, &b, 50);
    let mut n = 0;
    for i in 0..fa.len().max(fb.len()) {
        for (iface, list) in [(eth, &fa), (sll2, &fb)] {
            if let Some(f) = list.get(i) {
                w.write_frame(iface, T0 + n * 1_000_001, f.len() as u32, f)
                    .unwrap();
                n += 1;
            }
        }
    }
    let mut reader = CaptureReader::new(Cursor::new(w.into_inner())).unwrap();
    let mut net = NetDecoder::default();
    let mut flow = SessionTable::new(22101);
    while let Some(frame) = reader.next_frame() {
        let frame = frame.unwrap();
        // µs interface loses the sub-µs digits, the ns one keeps them.
        let exact = T0 + (frame.number as i64 - 1) * 1_000_001;
        let want = if frame.interface == 0 {
            exact - exact % 1000
        } else {
            exact
        };
        assert_eq!(frame.ts_ns, want);
        if let NetOutcome::Datagram(d) = net.decode(&frame) {
            flow.classify(&d).unwrap();
        }
    }
    let sessions = flow.sessions();
    assert_eq!(sessions.len(), 2);
    assert!(sessions[0].server.is_ipv4() && sessions[1].server.is_ipv6());
    for s in sessions {
        assert_eq!(s.counters.bc, [2, 1]);
        assert_eq!(s.counters.gamespy, [1, 1]);
        assert_eq!(s.game_clients().count(), 1);
    }
}

/// A capture cut inside its last frame: all earlier datagrams come out and the cut is
/// a warning naming the byte offset and frame number.
#[test]
fn truncated_capture_through_the_pipeline() {
    let sent = exchange(false);
    let frames = frames(link_type::ETHERNET, &sent, 1);
    let bytes = write(
        &Container::Pcap(TsResolution::MICRO, Endian::Little),
        link_type::ETHERNET,
        &frames,
    );
    let cut = bytes.len() - 5;
    let mut reader = CaptureReader::new(Cursor::new(bytes[..cut].to_vec())).unwrap();
    let mut net = NetDecoder::default();
    let mut datagrams = 0;
    while let Some(frame) = reader.next_frame() {
        if let NetOutcome::Datagram(_) = net.decode(&frame.unwrap()) {
            datagrams += 1;
        }
    }
    assert_eq!(datagrams, sent.len() - 1);
    let t = reader.truncation().expect("cut reported");
    let last_len = frames.last().unwrap().len();
    assert_eq!(t.offset, (cut + 5 - 16 - last_len) as u64);
    assert_eq!(t.frame, Some(frames.len() as u64));
    let w = t.to_warning();
    assert!(
        w.to_string().contains(&format!("frame {}", frames.len())),
        "{w}"
    );
}
