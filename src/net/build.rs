//! Encoder: frames a UDP payload as link-layer frames, fragmenting at an MTU.
//!
//! Written byte by byte (not with etherparse) so that decoding tests check two
//! independent implementations against each other.

use crate::capture::link_type;
use std::fmt;
use std::net::{IpAddr, SocketAddr};

const IPV4_HEADER_LEN: usize = 20;
const IPV6_HEADER_LEN: usize = 40;
const IPV6_FRAGMENT_HEADER_LEN: usize = 8;
const UDP_HEADER_LEN: usize = 8;
const PROTO_UDP: u8 = 17;
const PROTO_IPV6_FRAGMENT: u8 = 44;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88A8;
/// ARPHRD_LOOPBACK, what Linux reports for `lo` in cooked captures.
const ARPHRD_LOOPBACK: u16 = 772;
/// IPv6 family number written on NULL/LOOP links (the BSD value).
const AF_INET6_BSD: u32 = 24;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// Largest IP packet (header included); larger datagrams are fragmented. IPv4 and
    /// IPv6 both fragment (IPv6 with a fragment extension header, as the sender would).
    pub mtu: usize,
    /// IPv4 identification / IPv6 fragment identification.
    pub ip_id: u32,
    pub ttl: u8,
    /// 802.1Q tags (Ethernet only), outermost first; with two tags the outer one is
    /// written with the 802.1ad ether type (QinQ).
    pub vlan_ids: Vec<u16>,
    /// NULL links: write the family big-endian (as a big-endian host would).
    pub null_big_endian: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            mtu: 1500,
            ip_id: 1,
            ttl: 64,
            vlan_ids: Vec::new(),
            null_big_endian: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    UnsupportedLinkType(u32),
    MixedAddressFamilies,
    /// The link type carries only the other IP version.
    WrongIpVersion(u32),
    PayloadTooLong(usize),
    MtuTooSmall(usize),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnsupportedLinkType(t) => {
                write!(f, "cannot build frames for link type {t}")
            }
            BuildError::MixedAddressFamilies => {
                f.write_str("source and destination IP versions differ")
            }
            BuildError::WrongIpVersion(t) => {
                write!(f, "link type {t} cannot carry this IP version")
            }
            BuildError::PayloadTooLong(n) => write!(f, "UDP payload of {n} bytes exceeds 65507"),
            BuildError::MtuTooSmall(m) => write!(f, "MTU {m} leaves no room for fragment data"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Frames `payload` sent from `src` to `dst` for `link`: one frame, or one per IP
/// fragment when the packet exceeds `opts.mtu`.
pub fn frame_udp(
    link: u32,
    src: SocketAddr,
    dst: SocketAddr,
    payload: &[u8],
    opts: &BuildOptions,
) -> Result<Vec<Vec<u8>>, BuildError> {
    let udp = udp_datagram(src, dst, payload)?;
    let packets = match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => ipv4_packets(s.octets(), d.octets(), &udp, opts)?,
        (IpAddr::V6(s), IpAddr::V6(d)) => ipv6_packets(s.octets(), d.octets(), &udp, opts)?,
        _ => return Err(BuildError::MixedAddressFamilies),
    };
    let v6 = src.is_ipv6();
    packets
        .into_iter()
        .map(|ip| link_frame(link, v6, ip, opts))
        .collect()
}

/// UDP header (checksum over the pseudo header) + payload.
fn udp_datagram(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Result<Vec<u8>, BuildError> {
    let len = UDP_HEADER_LEN + payload.len();
    if len > 65_515 {
        return Err(BuildError::PayloadTooLong(payload.len()));
    }
    let mut udp = Vec::with_capacity(len);
    udp.extend_from_slice(&src.port().to_be_bytes());
    udp.extend_from_slice(&dst.port().to_be_bytes());
    udp.extend_from_slice(&(len as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(payload);
    let mut sum = 0u32;
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            sum = add_words(sum, &s.octets());
            sum = add_words(sum, &d.octets());
            sum += u32::from(PROTO_UDP) + len as u32;
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            sum = add_words(sum, &s.octets());
            sum = add_words(sum, &d.octets());
            sum += u32::from(PROTO_UDP) + len as u32;
        }
        _ => return Err(BuildError::MixedAddressFamilies),
    }
    let mut c = fold(add_words(sum, &udp));
    if c == 0 {
        c = 0xFFFF; // 0 means "no checksum" in UDP
    }
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    Ok(udp)
}

fn ipv4_packets(
    src: [u8; 4],
    dst: [u8; 4],
    udp: &[u8],
    opts: &BuildOptions,
) -> Result<Vec<Vec<u8>>, BuildError> {
    let chunk = if IPV4_HEADER_LEN + udp.len() <= opts.mtu {
        udp.len()
    } else {
        opts.mtu.saturating_sub(IPV4_HEADER_LEN) & !7
    };
    if chunk == 0 {
        return Err(BuildError::MtuTooSmall(opts.mtu));
    }
    let mut out = Vec::new();
    for (i, piece) in udp.chunks(chunk).enumerate() {
        let offset = i * chunk;
        let more = offset + piece.len() < udp.len();
        let total = (IPV4_HEADER_LEN + piece.len()) as u16;
        let flags_frag = ((offset / 8) as u16) | if more { 0x2000 } else { 0 };
        let mut p = Vec::with_capacity(total as usize);
        p.extend_from_slice(&[0x45, 0]);
        p.extend_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&(opts.ip_id as u16).to_be_bytes());
        p.extend_from_slice(&flags_frag.to_be_bytes());
        p.extend_from_slice(&[opts.ttl, PROTO_UDP, 0, 0]);
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        let c = fold(add_words(0, &p));
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p.extend_from_slice(piece);
        out.push(p);
    }
    Ok(out)
}

fn ipv6_packets(
    src: [u8; 16],
    dst: [u8; 16],
    udp: &[u8],
    opts: &BuildOptions,
) -> Result<Vec<Vec<u8>>, BuildError> {
    let header = |payload_len: usize, next: u8| {
        let mut p = Vec::with_capacity(IPV6_HEADER_LEN + payload_len);
        p.extend_from_slice(&[0x60, 0, 0, 0]);
        p.extend_from_slice(&(payload_len as u16).to_be_bytes());
        p.extend_from_slice(&[next, opts.ttl]);
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p
    };
    if IPV6_HEADER_LEN + udp.len() <= opts.mtu {
        let mut p = header(udp.len(), PROTO_UDP);
        p.extend_from_slice(udp);
        return Ok(vec![p]);
    }
    let chunk = opts
        .mtu
        .saturating_sub(IPV6_HEADER_LEN + IPV6_FRAGMENT_HEADER_LEN)
        & !7;
    if chunk == 0 {
        return Err(BuildError::MtuTooSmall(opts.mtu));
    }
    let mut out = Vec::new();
    for (i, piece) in udp.chunks(chunk).enumerate() {
        let offset = i * chunk;
        let more = offset + piece.len() < udp.len();
        let mut p = header(IPV6_FRAGMENT_HEADER_LEN + piece.len(), PROTO_IPV6_FRAGMENT);
        p.extend_from_slice(&[PROTO_UDP, 0]);
        p.extend_from_slice(&((offset as u16) | u16::from(more)).to_be_bytes());
        p.extend_from_slice(&opts.ip_id.to_be_bytes());
        p.extend_from_slice(piece);
        out.push(p);
    }
    Ok(out)
}

fn link_frame(
    link: u32,
    v6: bool,
    ip: Vec<u8>,
    opts: &BuildOptions,
) -> Result<Vec<u8>, BuildError> {
    let ether_type = if v6 { ETHERTYPE_IPV6 } else { ETHERTYPE_IPV4 };
    let mut f = Vec::with_capacity(ip.len() + 24);
    match link {
        link_type::ETHERNET => {
            f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01]);
            for (i, id) in opts.vlan_ids.iter().enumerate() {
                let tpid = if i == 0 && opts.vlan_ids.len() > 1 {
                    ETHERTYPE_QINQ
                } else {
                    ETHERTYPE_VLAN
                };
                f.extend_from_slice(&tpid.to_be_bytes());
                f.extend_from_slice(&(id & 0x0FFF).to_be_bytes());
            }
            f.extend_from_slice(&ether_type.to_be_bytes());
        }
        link_type::LINUX_SLL => {
            f.extend_from_slice(&0u16.to_be_bytes()); // packet type: to us
            f.extend_from_slice(&ARPHRD_LOOPBACK.to_be_bytes());
            f.extend_from_slice(&6u16.to_be_bytes());
            f.extend_from_slice(&[0; 8]);
            f.extend_from_slice(&ether_type.to_be_bytes());
        }
        link_type::LINUX_SLL2 => {
            f.extend_from_slice(&ether_type.to_be_bytes());
            f.extend_from_slice(&[0, 0]);
            f.extend_from_slice(&1u32.to_be_bytes()); // interface index
            f.extend_from_slice(&ARPHRD_LOOPBACK.to_be_bytes());
            f.extend_from_slice(&[0, 6]); // packet type, address length
            f.extend_from_slice(&[0; 8]);
        }
        link_type::NULL | link_type::LOOP => {
            let family = if v6 { AF_INET6_BSD } else { 2 };
            let big = link == link_type::LOOP || opts.null_big_endian;
            f.extend_from_slice(&if big {
                family.to_be_bytes()
            } else {
                family.to_le_bytes()
            });
        }
        link_type::RAW => {}
        link_type::IPV4 if !v6 => {}
        link_type::IPV6 if v6 => {}
        link_type::IPV4 | link_type::IPV6 => return Err(BuildError::WrongIpVersion(link)),
        other => return Err(BuildError::UnsupportedLinkType(other)),
    }
    f.extend_from_slice(&ip);
    Ok(f)
}

fn add_words(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        sum = sum.wrapping_add(u32::from(u16::from_be_bytes([w[0], w[1]])));
    }
    if let [last] = chunks.remainder() {
        sum = sum.wrapping_add(u32::from(*last) << 8);
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}
