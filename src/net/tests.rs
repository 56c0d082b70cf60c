//! Decoder tests against frames from the encoder and frames written by hand.

use super::build::{frame_udp, BuildOptions};
use super::*;
use crate::capture::link_type;

const ALL_LINKS: [u32; 8] = [
    link_type::ETHERNET,
    link_type::LINUX_SLL,
    link_type::LINUX_SLL2,
    link_type::NULL,
    link_type::LOOP,
    link_type::RAW,
    link_type::IPV4,
    link_type::IPV6,
];

fn v4() -> (SocketAddr, SocketAddr) {
    (
        "127.0.0.1:48771".parse().unwrap(),
        "10.0.0.5:22101".parse().unwrap(),
    )
}
fn v6() -> (SocketAddr, SocketAddr) {
    (
        "[fe80::1]:48771".parse().unwrap(),
        "[2001:db8::5]:22101".parse().unwrap(),
    )
}

fn frame(number: u64, link: u32, data: Vec<u8>) -> Frame {
    Frame {
        number,
        ts_ns: number as i64 * 1_000_000,
        interface: 0,
        link_type: link,
        orig_len: data.len() as u32,
        data,
        comments: Vec::new(),
        ts_digits: 6,
    }
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

fn expect_datagram(o: NetOutcome) -> Datagram {
    match o {
        NetOutcome::Datagram(d) => d,
        other => panic!("expected a datagram, got {other:?}"),
    }
}

#[test]
fn every_link_type_and_ip_version_round_trips() {
    for link in ALL_LINKS {
        for (src, dst) in [v4(), v6()] {
            let opts = BuildOptions::default();
            let built = frame_udp(link, src, dst, &payload(100), &opts);
            let wrong = (link == link_type::IPV4 && src.is_ipv6())
                || (link == link_type::IPV6 && src.is_ipv4());
            if wrong {
                assert!(built.is_err());
                continue;
            }
            let frames = built.unwrap();
            assert_eq!(frames.len(), 1);
            let mut dec = NetDecoder::default();
            let d = expect_datagram(dec.decode(&frame(1, link, frames[0].clone())));
            assert_eq!((d.src, d.dst), (src, dst), "link {link}");
            assert_eq!(d.payload, payload(100));
            assert!(d.fragment_frames.is_empty());
        }
    }
}

#[test]
fn udp_checksums_match_etherparse() {
    use etherparse::{Ipv4Header, UdpHeader};
    let (src, dst) = v4();
    let data = payload(33);
    let f = frame_udp(link_type::RAW, src, dst, &data, &BuildOptions::default()).unwrap();
    let ours = u16::from_be_bytes([f[0][26], f[0][27]]);
    let ip = Ipv4Header::new(
        41,
        64,
        etherparse::IpNumber::UDP,
        [127, 0, 0, 1],
        [10, 0, 0, 5],
    )
    .unwrap();
    let theirs = UdpHeader::with_ipv4_checksum(48771, 22101, &ip, &data).unwrap();
    assert_eq!(ours, theirs.checksum);
    let (ip_hdr, _) = Ipv4Header::from_slice(&f[0]).unwrap();
    assert_eq!(ip_hdr.header_checksum, ip_hdr.calc_header_checksum());
}

/// Fragments arrive reversed, with one duplicated: reassembly still yields the datagram
/// and lists every contributing frame.
#[test]
fn out_of_order_fragments_reassemble() {
    for (src, dst) in [v4(), v6()] {
        let opts = BuildOptions {
            mtu: 576,
            ip_id: 0x1234,
            ..BuildOptions::default()
        };
        let data = payload(1400);
        let frames = frame_udp(link_type::ETHERNET, src, dst, &data, &opts).unwrap();
        assert_eq!(frames.len(), 3);
        let mut dec = NetDecoder::default();
        let order = [2usize, 0, 0, 1];
        let mut outcomes = vec![];
        for (n, &i) in order.iter().enumerate() {
            outcomes.push(dec.decode(&frame(n as u64 + 1, link_type::ETHERNET, frames[i].clone())));
        }
        assert!(outcomes[..3].iter().all(|o| *o == NetOutcome::FragmentHeld));
        let d = expect_datagram(outcomes.pop().unwrap());
        assert_eq!(d.payload, data);
        assert_eq!(d.fragment_frames, vec![1, 2, 3, 4]);
        assert_eq!(d.frame, 4);
        assert_eq!((d.src, d.dst), (src, dst));
        assert_eq!(dec.bytes_held(), 0);
        assert_eq!(dec.finish(), FragmentReport::default());
    }
}

#[test]
fn missing_fragment_is_reported_at_the_end() {
    let (src, dst) = v4();
    let opts = BuildOptions {
        mtu: 300,
        ..BuildOptions::default()
    };
    let frames = frame_udp(link_type::RAW, src, dst, &payload(600), &opts).unwrap();
    assert_eq!(frames.len(), 3);
    let mut dec = NetDecoder::default();
    dec.decode(&frame(7, link_type::RAW, frames[0].clone()));
    dec.decode(&frame(9, link_type::RAW, frames[2].clone()));
    assert!(dec.bytes_held() > 0);
    let report = dec.finish();
    assert_eq!(report.leftovers.len(), 1);
    let l = &report.leftovers[0];
    assert_eq!(l.frames, vec![7, 9]);
    assert_eq!(l.reason, LeftoverReason::Incomplete);
    assert_eq!(l.bytes, frames[0].len() + frames[2].len() - 40);
    assert!(l.to_string().contains("incomplete at end of capture"));
}

#[test]
fn old_fragments_expire_and_memory_stays_bounded() {
    let (src, dst) = v4();
    let limits = Limits {
        max_bytes_held: 2000,
        max_pending: 3,
        max_age_ns: 1_000_000_000,
        ..Limits::default()
    };
    let mut dec = NetDecoder::new(limits);
    // Ten orphan first-fragments (different ids), 100 ms apart.
    for id in 0..10u32 {
        let opts = BuildOptions {
            mtu: 500,
            ip_id: id,
            ..BuildOptions::default()
        };
        let frames = frame_udp(link_type::RAW, src, dst, &payload(900), &opts).unwrap();
        let mut f = frame(u64::from(id) + 1, link_type::RAW, frames[0].clone());
        f.ts_ns = i64::from(id) * 100_000_000;
        assert_eq!(dec.decode(&f), NetOutcome::FragmentHeld);
        assert!(dec.bytes_held() <= 2000, "held {}", dec.bytes_held());
    }
    // A frame 5 s later expires whatever is left.
    let later = frame_udp(
        link_type::RAW,
        src,
        dst,
        &payload(5),
        &BuildOptions::default(),
    )
    .unwrap();
    let mut f = frame(11, link_type::RAW, later[0].clone());
    f.ts_ns = 5_000_000_000;
    expect_datagram(dec.decode(&f));
    assert_eq!(dec.bytes_held(), 0);
    let report = dec.finish();
    assert_eq!(report.leftovers.len(), 10);
    assert!(report
        .leftovers
        .iter()
        .any(|l| l.reason == LeftoverReason::Evicted));
    assert!(report
        .leftovers
        .iter()
        .any(|l| l.reason == LeftoverReason::Expired));
    assert!(report
        .leftovers
        .iter()
        .all(|l| l.reason != LeftoverReason::Incomplete));
}

/// 802.1Q and QinQ, written by hand rather than by the encoder.
#[test]
fn hand_written_vlan_and_qinq_frames() {
    let (src, dst) = v4();
    let raw = frame_udp(
        link_type::RAW,
        src,
        dst,
        b"\xFF\x01hi",
        &BuildOptions::default(),
    )
    .unwrap();
    let macs = [0xAAu8; 12];
    let mut single = macs.to_vec();
    single.extend_from_slice(&[0x81, 0x00, 0x00, 0x64, 0x08, 0x00]);
    single.extend_from_slice(&raw[0]);
    let mut double = macs.to_vec();
    double.extend_from_slice(&[0x88, 0xA8, 0x00, 0x0A, 0x81, 0x00, 0x00, 0x14, 0x08, 0x00]);
    double.extend_from_slice(&raw[0]);
    // Ethernet minimum-size padding after the IP packet must not reach the payload.
    double.extend_from_slice(&[0; 12]);
    for data in [single, double] {
        let d = expect_datagram(NetDecoder::default().decode(&frame(1, link_type::ETHERNET, data)));
        assert_eq!(d.payload, b"\xFF\x01hi");
        assert_eq!(d.dst.port(), 22101);
    }
    // The encoder's QinQ frames decode too.
    let opts = BuildOptions {
        vlan_ids: vec![10, 20],
        ..BuildOptions::default()
    };
    let f = frame_udp(link_type::ETHERNET, src, dst, b"x", &opts).unwrap();
    assert_eq!(&f[0][12..14], &[0x88, 0xA8]);
    expect_datagram(NetDecoder::default().decode(&frame(1, link_type::ETHERNET, f[0].clone())));
}

#[test]
fn null_family_in_either_byte_order() {
    let (src, dst) = v6();
    for big in [false, true] {
        let opts = BuildOptions {
            null_big_endian: big,
            ..BuildOptions::default()
        };
        let f = frame_udp(link_type::NULL, src, dst, b"abc", &opts).unwrap();
        let fam = if big { [0, 0, 0, 24] } else { [24, 0, 0, 0] };
        assert_eq!(&f[0][..4], &fam);
        let d =
            expect_datagram(NetDecoder::default().decode(&frame(1, link_type::NULL, f[0].clone())));
        assert_eq!(d.payload, b"abc");
    }
    // macOS AF_INET6 = 30, big-endian on LOOP, IPv4 AF_INET = 2 little-endian on NULL.
    let (s4, d4) = v4();
    let raw6 = frame_udp(link_type::RAW, src, dst, b"m", &BuildOptions::default()).unwrap();
    let mut f = vec![0, 0, 0, 30];
    f.extend_from_slice(&raw6[0]);
    expect_datagram(NetDecoder::default().decode(&frame(1, link_type::LOOP, f)));
    let raw4 = frame_udp(link_type::RAW, s4, d4, b"m", &BuildOptions::default()).unwrap();
    let mut f = vec![2, 0, 0, 0];
    f.extend_from_slice(&raw4[0]);
    expect_datagram(NetDecoder::default().decode(&frame(1, link_type::NULL, f)));
}

#[test]
fn frames_that_are_not_udp_say_why() {
    let (src, dst) = v4();
    let mut dec = NetDecoder::default();
    let raw = frame_udp(link_type::RAW, src, dst, b"abc", &BuildOptions::default()).unwrap();
    let cases: Vec<(u32, Vec<u8>, &str)> = vec![
        (147, vec![0; 40], "unsupported link type 147"),
        (
            link_type::LINUX_SLL2,
            vec![0; 10],
            "LINUX_SLL2 header needs 20 bytes, frame has 10",
        ),
        (
            link_type::NULL,
            vec![7, 0, 0, 0, 0x45],
            "not IP (address family 7)",
        ),
        (
            link_type::IPV6,
            raw[0].clone(),
            "IP version 4 on link type 229",
        ),
        (
            link_type::ETHERNET,
            {
                let mut e = vec![0; 12];
                e.extend_from_slice(&[0x08, 0x06]);
                e.extend_from_slice(&[0; 28]);
                e
            },
            "not IP",
        ),
        (
            link_type::RAW,
            {
                let mut t = raw[0].clone();
                t[9] = 6; // TCP
                t
            },
            "not UDP (IP protocol 6)",
        ),
        (link_type::RAW, raw[0][..24].to_vec(), "bad IP/UDP header"),
    ];
    for (link, data, want) in cases {
        match dec.decode(&frame(1, link, data)) {
            NetOutcome::Skipped(r) => assert!(r.to_string().starts_with(want), "{r} / {want}"),
            other => panic!("{want}: got {other:?}"),
        }
    }
    assert_eq!(dec.stats().skipped, 7);
}

/// Every prefix of every kind of frame decodes to something without panicking.
#[test]
fn cut_frames_never_panic() {
    for link in ALL_LINKS {
        for (src, dst) in [v4(), v6()] {
            let opts = BuildOptions {
                mtu: 200,
                vlan_ids: vec![1, 2],
                ..BuildOptions::default()
            };
            let Ok(frames) = frame_udp(link, src, dst, &payload(300), &opts) else {
                continue;
            };
            let mut dec = NetDecoder::default();
            for f in &frames {
                for cut in 0..f.len() {
                    let _ = dec.decode(&frame(1, link, f[..cut].to_vec()));
                }
            }
            let _ = dec.finish();
        }
    }
}
