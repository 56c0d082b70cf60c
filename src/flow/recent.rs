//! Where the latest datagrams between a few endpoint pairs went, so that the next
//! datagram of a busy flow skips the session table's lookups.
//!
//! Classifying a datagram looks its server endpoint up, then its session, then its
//! client endpoint in that session (two hashes of a socket address, two tree searches)
//! and tests whether the session has ended; together a large share of the decoding
//! thread's work per datagram. While no session or client was added or retired, a
//! datagram that is not a connect goes where the last one between the same two
//! endpoints went, so that answer is remembered per pair. The flows of a capture
//! interleave datagram by datagram (a host answers each of its clients in turn), so a
//! few pairs are remembered at once, not only the last one.

use crate::diag::Direction;
use std::net::SocketAddr;

/// Pairs remembered, in slots picked by a hash of the pair (a new pair takes its
/// slot over): more than the busy flows of a capture at any one time.
const SLOTS: usize = 16;

/// Where a pair's last datagram went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    pub direction: Direction,
    pub session: usize,
    pub client: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    pair: u128,
    known: Known,
    /// The table's [`Recent::version`] when it was remembered.
    version: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Recent {
    slots: [Option<Entry>; SLOTS],
    /// Bumped by [`Recent::forget_all`]: entries of an older version are stale.
    version: u64,
}

/// An IPv4 endpoint pair as one number; IPv6 pairs are not remembered (rare, and
/// their lookups are only slower, never different).
fn pair(src: SocketAddr, dst: SocketAddr) -> Option<u128> {
    match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => Some(
            u128::from(s.ip().to_bits()) << 80
                | u128::from(s.port()) << 64
                | u128::from(d.ip().to_bits()) << 16
                | u128::from(d.port()),
        ),
        _ => None,
    }
}

fn slot(pair: u128) -> usize {
    // Fibonacci hashing of both halves: the top bits of the product pick the slot.
    let mixed = (pair as u64) ^ ((pair >> 64) as u64).rotate_left(29);
    (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Recent {
    /// Where the last datagram from `src` to `dst` went, if nothing was added or
    /// retired since.
    pub fn get(&self, src: SocketAddr, dst: SocketAddr) -> Option<Known> {
        let pair = pair(src, dst)?;
        let e = self.slots[slot(pair)]?;
        (e.pair == pair && e.version == self.version).then_some(e.known)
    }

    /// Remember where a datagram from `src` to `dst` went.
    pub fn put(&mut self, src: SocketAddr, dst: SocketAddr, known: Known) {
        if let Some(pair) = pair(src, dst) {
            self.slots[slot(pair)] = Some(Entry {
                pair,
                known,
                version: self.version,
            });
        }
    }

    /// A session or client was added or retired: every answer may be stale.
    pub fn forget_all(&mut self) {
        self.version += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    const KNOWN: Known = Known {
        direction: Direction::C2S,
        session: 3,
        client: 1,
    };

    #[test]
    fn a_pair_is_known_until_everything_is_forgotten() {
        let (a, b) = (addr("10.0.0.2:5000"), addr("10.0.0.1:22101"));
        let mut r = Recent::default();
        assert_eq!(r.get(a, b), None);
        r.put(a, b, KNOWN);
        assert_eq!(r.get(a, b), Some(KNOWN));
        // The other direction is another pair.
        assert_eq!(r.get(b, a), None);
        r.forget_all();
        assert_eq!(r.get(a, b), None);
    }

    #[test]
    fn pairs_sharing_a_slot_are_told_apart() {
        let server = addr("10.0.0.1:22101");
        let mut r = Recent::default();
        // More pairs than slots: some share one, and only the last put is known there.
        let clients: Vec<SocketAddr> = (0..40)
            .map(|i| addr(&format!("10.0.1.{i}:{}", 5000 + i)))
            .collect();
        for (i, c) in clients.iter().enumerate() {
            r.put(*c, server, Known { client: i, ..KNOWN });
        }
        for (i, c) in clients.iter().enumerate() {
            if let Some(k) = r.get(*c, server) {
                assert_eq!(k.client, i, "a pair answered with another pair's place");
            }
        }
        assert!(
            r.get(clients[39], server).is_some(),
            "the last pair is known"
        );
    }

    #[test]
    fn ipv6_pairs_are_not_remembered() {
        let (a, b) = (addr("[2001:db8::2]:5000"), addr("[2001:db8::1]:22101"));
        let mut r = Recent::default();
        r.put(a, b, KNOWN);
        assert_eq!(r.get(a, b), None);
    }
}
