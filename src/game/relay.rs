//! Relay linking: the host forwards most client messages to the other clients unchanged
//! (`README.md` §6), so the same game bytes appear once client → host and again host →
//! each other client. The linker pairs each host → client copy with its client → host
//! original by the bytes' hash within a short time window. Keyed by sender and content:
//! the host sends each original to a client once, and a client's own message comes back
//! to it only for a few kinds (chat), so a copy to client X belongs to the latest
//! original with those bytes from another client that X has not had yet, else to X's
//! own — two clients sending identical bytes are not linked to each other.

use crate::diag::Direction;
use crate::transport::hash::Fingerprint;
use std::collections::VecDeque;

/// How long after the original a copy may appear (stock hosts relay within milliseconds;
/// the window leaves room for retransmission delays).
pub const RELAY_WINDOW_SECS: f64 = 2.0;
/// Most originals remembered at once; the oldest drop out first.
pub const MAX_PENDING: usize = 1024;

/// Where a relayed copy came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelayLink<C> {
    /// The client that sent the original.
    pub original_client: C,
    pub original_frame: u64,
    /// Seconds between the original and this copy.
    pub delay: f64,
    /// 1 for the first copy of the original, 2 for the second, …
    pub copy_number: u32,
}

#[derive(Debug, Clone)]
struct Original<C> {
    print: Fingerprint,
    client: C,
    frame: u64,
    time: f64,
    copies: u32,
    /// Clients a copy went to (at most one copy each).
    receivers: Vec<C>,
}

/// Links relayed copies to their originals. `C` identifies a client (an endpoint, a flow
/// index — whatever the caller uses).
#[derive(Debug, Clone)]
pub struct RelayLinker<C> {
    pending: VecDeque<Original<C>>,
    /// How many pending originals fall in each bucket of fingerprints
    /// ([`bucket`]): most host messages (its own StateUpdates) have no original, and
    /// an empty bucket says so without a scan. A bucket shared with another message
    /// only costs the scan, which compares whole fingerprints; with at most
    /// [`MAX_PENDING`] originals in [`BUCKETS`] buckets that is rare. (A map from
    /// fingerprint to count did the same with a hash, a probe and an insert or removal
    /// per message, which cost more than the rest of the linker.)
    ///
    /// Empty until the first original is remembered: a sink that links no relays
    /// never feeds the linker, and a capture that opens sessions often (a long-running
    /// server's) would otherwise zero 32 KB of buckets for every session it opens.
    counts: Box<[u16]>,
    evicted: u64,
}

/// Buckets of [`RelayLinker::counts`]: a power of two, sixteen per pending original
/// at most.
const BUCKETS: usize = 1 << 14;

/// The bucket of a fingerprint: the top bits of its hash (which is mixed to the last
/// bit), with the length added in.
fn bucket(print: &Fingerprint) -> usize {
    (print.hash.wrapping_add(print.len as u64) >> (64 - BUCKETS.trailing_zeros())) as usize
}

impl<C> Default for RelayLinker<C> {
    fn default() -> Self {
        RelayLinker {
            pending: VecDeque::new(),
            counts: Box::default(),
            evicted: 0,
        }
    }
}

impl<C> RelayLinker<C> {
    fn forget_oldest(&mut self) {
        if let Some(o) = self.pending.pop_front() {
            if let Some(n) = self.counts.get_mut(bucket(&o.print)) {
                *n = n.saturating_sub(1);
            }
        }
    }
}

impl<C: Copy + PartialEq> RelayLinker<C> {
    pub fn new() -> RelayLinker<C> {
        RelayLinker::default()
    }

    /// Originals currently remembered.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Originals forgotten inside the window because [`MAX_PENDING`] was reached (their
    /// relayed copies, if any, go unlinked).
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Feed one complete game message of `client`'s flow. Client → host messages are
    /// remembered; a host → client message identical to a remembered one from another
    /// client within the window is returned as a copy of it.
    pub fn observe(
        &mut self,
        dir: Direction,
        client: C,
        payload: &[u8],
        frame: u64,
        time: f64,
    ) -> Option<RelayLink<C>> {
        while self
            .pending
            .front()
            .is_some_and(|o| time - o.time > RELAY_WINDOW_SECS)
        {
            self.forget_oldest();
        }
        // Word-at-a-time hash with the length: a collision inside the window is
        // negligible, and a byte-serial hash cost more than the rest of the linker.
        let print = Fingerprint::of(payload);
        match dir {
            Direction::C2S => {
                if self.pending.len() >= MAX_PENDING {
                    self.forget_oldest();
                    self.evicted += 1;
                }
                if self.counts.is_empty() {
                    self.counts = vec![0; BUCKETS].into_boxed_slice();
                }
                // At most MAX_PENDING originals are counted, far below u16::MAX.
                if let Some(n) = self.counts.get_mut(bucket(&print)) {
                    *n = n.saturating_add(1);
                }
                self.pending.push_back(Original {
                    print,
                    client,
                    frame,
                    time,
                    copies: 0,
                    receivers: Vec::new(),
                });
                None
            }
            Direction::S2C => {
                // No buckets yet: no original either.
                if self.counts.get(bucket(&print)).is_none_or(|&n| n == 0) {
                    return None;
                }
                // Newest first: the latest identical original is the one being relayed.
                // Another client's original first; the receiver's own only when none
                // is left (the host echoes chat to its sender too).
                let fits = |o: &Original<C>| {
                    o.print == print && o.time <= time && !o.receivers.contains(&client)
                };
                let at = self
                    .pending
                    .iter()
                    .rposition(|o| fits(o) && o.client != client)
                    .or_else(|| self.pending.iter().rposition(fits))?;
                let o = &mut self.pending[at];
                o.copies += 1;
                o.receivers.push(client);
                Some(RelayLink {
                    original_client: o.client,
                    original_frame: o.frame,
                    delay: time - o.time,
                    copy_number: o.copies,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::opcodes::test_util::hex;
    use Direction::{C2S, S2C};

    #[test]
    fn copies_link_to_their_original() {
        let mut l = RelayLinker::<u16>::new();
        let fire = hex("19ffff0340060200007fffff07406b4015bc58");
        assert_eq!(l.observe(C2S, 2, &fire, 143, 1.00), None);
        let a = l.observe(S2C, 1, &fire, 144, 1.01).unwrap();
        assert_eq!(
            (a.original_client, a.original_frame, a.copy_number),
            (2, 143, 1)
        );
        assert!((a.delay - 0.01).abs() < 1e-9);
        let b = l.observe(S2C, 3, &fire, 145, 1.02).unwrap();
        assert_eq!(b.copy_number, 2);
        // Different bytes, or outside the window: no link.
        assert_eq!(l.observe(S2C, 1, &hex("1a00"), 146, 1.03), None);
        assert_eq!(l.observe(S2C, 1, &fire, 200, 3.5), None);
        assert_eq!(l.pending(), 0);
    }

    #[test]
    fn identical_messages_of_two_clients_link_by_sender() {
        // Clients 1 and 2 send the same bytes (frames 129, 130); the host relays 1's
        // to 2 and 2's to 1.
        let mut l = RelayLinker::<u16>::new();
        let phaser = hex("12050100000400800000");
        assert_eq!(l.observe(C2S, 1, &phaser, 129, 1.00), None);
        assert_eq!(l.observe(C2S, 2, &phaser, 130, 1.00), None);
        let to2 = l.observe(S2C, 2, &phaser, 131, 1.01).unwrap();
        assert_eq!((to2.original_client, to2.original_frame), (1, 129));
        let to1 = l.observe(S2C, 1, &phaser, 132, 1.01).unwrap();
        assert_eq!((to1.original_client, to1.original_frame), (2, 130));
        // A third client gets both: one copy of each original.
        let a = l.observe(S2C, 3, &phaser, 133, 1.02).unwrap();
        let b = l.observe(S2C, 3, &phaser, 134, 1.02).unwrap();
        assert_eq!((a.original_frame, b.original_frame), (130, 129));
        // Nothing is left for a third copy to client 3.
        assert_eq!(l.observe(S2C, 3, &phaser, 135, 1.03), None);
        // An echo to the sender links to its own message.
        let chat = hex("2c02000000026767");
        assert_eq!(l.observe(C2S, 1, &chat, 140, 1.10), None);
        let echo = l.observe(S2C, 1, &chat, 141, 1.11).unwrap();
        assert_eq!((echo.original_client, echo.original_frame), (1, 140));
    }

    /// Two messages whose fingerprints share a bucket: the bucket being taken does not
    /// link the one to the other, and each still links to its own original.
    #[test]
    fn a_shared_bucket_links_nothing_wrong() {
        let a = 0u64.to_le_bytes();
        let b = (1..)
            .map(|i: u64| i.to_le_bytes())
            .find(|b| bucket(&Fingerprint::of(b)) == bucket(&Fingerprint::of(&a)))
            .unwrap();
        let mut l = RelayLinker::<u8>::new();
        assert_eq!(l.observe(C2S, 1, &a, 10, 1.0), None);
        assert_eq!(l.observe(S2C, 2, &b, 11, 1.0), None);
        assert_eq!(l.observe(C2S, 1, &b, 12, 1.0), None);
        assert_eq!(l.observe(S2C, 2, &b, 13, 1.0).unwrap().original_frame, 12);
        assert_eq!(l.observe(S2C, 2, &a, 14, 1.0).unwrap().original_frame, 10);
        // Both forgotten: the bucket is empty again.
        assert_eq!(l.observe(S2C, 3, &a, 15, 4.0), None);
        assert_eq!(l.pending(), 0);
        assert!(l.counts.iter().all(|&n| n == 0));
    }

    /// The buckets are made with the first original: host messages alone, as a
    /// session's first ones are, link nothing and allocate nothing.
    #[test]
    fn buckets_come_with_the_first_original() {
        let mut l = RelayLinker::<u8>::new();
        let stop = hex("0828810000d8008000");
        assert_eq!(l.observe(S2C, 2, &stop, 10, 0.0), None);
        assert!(l.counts.is_empty());
        assert_eq!(l.observe(C2S, 1, &stop, 11, 0.1), None);
        assert_eq!(l.counts.len(), BUCKETS);
        assert_eq!(
            l.observe(S2C, 2, &stop, 12, 0.2).unwrap().original_frame,
            11
        );
    }

    #[test]
    fn latest_identical_original_wins_and_state_is_bounded() {
        let mut l = RelayLinker::<u8>::new();
        let stop = hex("0828810000d8008000");
        l.observe(C2S, 2, &stop, 10, 0.0);
        l.observe(C2S, 3, &stop, 11, 0.5);
        let link = l.observe(S2C, 2, &stop, 12, 0.6).unwrap();
        assert_eq!((link.original_client, link.original_frame), (3, 11));
        for i in 0..(MAX_PENDING as u64 + 50) {
            l.observe(C2S, 1, &i.to_le_bytes(), i, 1.0);
        }
        assert_eq!(l.pending(), MAX_PENDING);
        assert_eq!(l.evicted(), 52);
    }
}
