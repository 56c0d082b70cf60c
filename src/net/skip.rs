//! Why a frame did not produce a datagram: the reasons the link, IP and UDP stages
//! give, shared by them and printed in the capture's problems.

use std::fmt;

/// Why a frame did not produce a datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    UnsupportedLinkType(u32),
    /// The link header is shorter than the link type requires.
    LinkHeaderCut {
        link_type: u32,
        needed: usize,
        got: usize,
    },
    /// Ethernet/SLL protocol that is not IPv4 or IPv6 (ARP, LLDP, …).
    NotIp {
        ether_type: u16,
    },
    /// NULL/LOOP address family that is not an IP family.
    NotIpFamily(u32),
    /// A RAW IPv4/IPv6 link type whose packet has the other IP version.
    WrongIpVersion {
        link_type: u32,
        version: u8,
    },
    /// The headers do not parse (etherparse's description).
    Malformed(String),
    NotUdp {
        protocol: u8,
    },
    /// A fragment the reassembler refused (overlap conflict, too big, …).
    BadFragment(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::UnsupportedLinkType(t) => write!(
                f,
                "unsupported link type {t} ({})",
                crate::capture::link_type::name(*t)
            ),
            SkipReason::LinkHeaderCut {
                link_type,
                needed,
                got,
            } => write!(
                f,
                "{} header needs {needed} bytes, frame has {got}",
                crate::capture::link_type::name(*link_type)
            ),
            SkipReason::NotIp { ether_type } => {
                write!(f, "not IP (ether type {ether_type:#06x})")
            }
            SkipReason::NotIpFamily(af) => write!(f, "not IP (address family {af})"),
            SkipReason::WrongIpVersion { link_type, version } => write!(
                f,
                "IP version {version} on link type {link_type} ({})",
                crate::capture::link_type::name(*link_type)
            ),
            SkipReason::Malformed(what) => write!(f, "bad IP/UDP header: {what}"),
            SkipReason::NotUdp { protocol } => write!(f, "not UDP (IP protocol {protocol})"),
            SkipReason::BadFragment(what) => write!(f, "IP fragment refused: {what}"),
        }
    }
}
