//! Link-layer headers: Ethernet (802.1Q/802.1ad tags), Linux SLL and SLL2, BSD
//! NULL/LOOP, raw IP. Each is a fixed header plus a protocol field, read here; the IP
//! packet behind it goes to etherparse.

use super::skip::SkipReason;
use crate::capture::link_type;

/// Linux cooked capture v2 header length.
pub(crate) const SLL2_LEN: usize = 20;
/// BSD loopback header: the address family as a 4-byte integer.
pub(crate) const NULL_LEN: usize = 4;

/// Address families that carry IPv4/IPv6 on NULL/LOOP links. IPv6's number differs per
/// system: 24 NetBSD/OpenBSD, 28 FreeBSD, 30 macOS, 10 Linux.
pub(crate) const AF_INET: u32 = 2;
pub(crate) const AF_INET6_VALUES: [u32; 4] = [24, 28, 30, 10];

/// Ethernet header without tags.
pub(crate) const ETHERNET_LEN: usize = 14;
/// Linux cooked capture v1 header length.
pub(crate) const SLL_LEN: usize = 16;
/// VLAN tags skipped before giving up (QinQ uses two; more is not a real frame).
pub(crate) const MAX_VLAN_TAGS: usize = 4;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;
/// 802.1Q, 802.1ad (QinQ) and the pre-standard 0x9100 tag.
const VLAN_TPIDS: [u16; 3] = [0x8100, 0x88A8, 0x9100];

/// Strips the link header; returns the IP packet. The IP version itself is checked by
/// the IP parser.
pub(crate) fn ip_packet(link: u32, data: &[u8]) -> Result<&[u8], SkipReason> {
    match link {
        link_type::ETHERNET => {
            let mut ether_type = be16(data, 12).ok_or(cut(link, ETHERNET_LEN, data.len()))?;
            let mut at = ETHERNET_LEN;
            let mut tags = 0;
            while VLAN_TPIDS.contains(&ether_type) && tags < MAX_VLAN_TAGS {
                ether_type = be16(data, at + 2).ok_or(cut(link, at + 4, data.len()))?;
                at += 4;
                tags += 1;
            }
            ip_ether_type(ether_type)?;
            // In bounds: the ether type at `at - 2..at` was just read with `be16`.
            Ok(&data[at..])
        }
        link_type::LINUX_SLL => {
            // etherparse refuses ARPHRD_LOOPBACK, the hardware type of every `lo`
            // capture, so the 16 bytes are read here: the protocol is the last field.
            let protocol = be16(data, 14).ok_or(cut(link, SLL_LEN, data.len()))?;
            ip_ether_type(protocol)?;
            Ok(&data[SLL_LEN..])
        }
        link_type::LINUX_SLL2 => {
            let rest = data
                .get(SLL2_LEN..)
                .ok_or(cut(link, SLL2_LEN, data.len()))?;
            ip_ether_type(u16::from_be_bytes([data[0], data[1]]))?;
            Ok(rest)
        }
        link_type::NULL | link_type::LOOP => {
            let rest = data
                .get(NULL_LEN..)
                .ok_or(cut(link, NULL_LEN, data.len()))?;
            let family = null_family([data[0], data[1], data[2], data[3]]);
            if family != AF_INET && !AF_INET6_VALUES.contains(&family) {
                return Err(SkipReason::NotIpFamily(family));
            }
            Ok(rest)
        }
        link_type::RAW | link_type::IPV4 | link_type::IPV6 => {
            let version = data.first().map_or(0, |b| b >> 4);
            let wrong = (link == link_type::IPV4 && version != 4)
                || (link == link_type::IPV6 && version != 6);
            if wrong {
                return Err(SkipReason::WrongIpVersion {
                    link_type: link,
                    version,
                });
            }
            Ok(data)
        }
        other => Err(SkipReason::UnsupportedLinkType(other)),
    }
}

fn ip_ether_type(ether_type: u16) -> Result<(), SkipReason> {
    if ether_type == ETHERTYPE_IPV4 || ether_type == ETHERTYPE_IPV6 {
        Ok(())
    } else {
        Err(SkipReason::NotIp { ether_type })
    }
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    let b = data.get(at..at + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

/// The family is written in the capturing host's byte order (NULL) or network order
/// (LOOP), and files are moved between hosts: families are small numbers, so whichever
/// reading fits in 16 bits is the right one.
fn null_family(b: [u8; 4]) -> u32 {
    let le = u32::from_le_bytes(b);
    if le <= 0xFFFF {
        le
    } else {
        u32::from_be_bytes(b)
    }
}

fn cut(link_type: u32, needed: usize, got: usize) -> SkipReason {
    SkipReason::LinkHeaderCut {
        link_type,
        needed,
        got,
    }
}
