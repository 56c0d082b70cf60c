//! Bounded IP reassembly for UDP datagrams.
//!
//! etherparse's `IpDefragPool` has no memory bound, cannot list what it holds, and does
//! not remember which frames contributed, so its building block `IpDefragBuf` (which
//! handles order, overlaps and the end marker) is driven from a table of our own.

use super::skip::SkipReason;
use etherparse::defrag::IpDefragBuf;
use etherparse::{IpFragOffset, IpNumber};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::net::IpAddr;

/// Bytes held in unfinished reassemblies before the oldest are dropped.
pub const DEFAULT_MAX_BYTES_HELD: usize = 4 << 20;
/// Unfinished reassemblies held at once.
pub const DEFAULT_MAX_PENDING: usize = 1024;
/// Age (from the first fragment) after which an unfinished datagram is dropped: the
/// Linux default `ipfrag_time`.
pub const DEFAULT_MAX_AGE_NS: i64 = 30_000_000_000;
/// Fragments accepted for one datagram.
pub const DEFAULT_MAX_FRAGMENTS_PER_DATAGRAM: usize = 128;
/// Dropped reassemblies listed individually in the report; the rest are only counted.
pub const MAX_LEFTOVERS_LISTED: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes_held: usize,
    pub max_pending: usize,
    pub max_age_ns: i64,
    pub max_fragments_per_datagram: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes_held: DEFAULT_MAX_BYTES_HELD,
            max_pending: DEFAULT_MAX_PENDING,
            max_age_ns: DEFAULT_MAX_AGE_NS,
            max_fragments_per_datagram: DEFAULT_MAX_FRAGMENTS_PER_DATAGRAM,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FragKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 identification (16 bits) or IPv6 fragment identification (32 bits).
    pub id: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftoverReason {
    /// Still incomplete when the capture ended.
    Incomplete,
    /// Older than `max_age_ns`.
    Expired,
    /// Dropped to stay within `max_bytes_held` / `max_pending`.
    Evicted,
    TooManyFragments,
    /// The reassembler refused a fragment (etherparse's description).
    Refused(String),
}

impl fmt::Display for LeftoverReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeftoverReason::Incomplete => f.write_str("incomplete at end of capture"),
            LeftoverReason::Expired => f.write_str("expired waiting for fragments"),
            LeftoverReason::Evicted => f.write_str("dropped to stay within the memory limit"),
            LeftoverReason::TooManyFragments => f.write_str("too many fragments"),
            LeftoverReason::Refused(what) => write!(f, "fragment refused: {what}"),
        }
    }
}

/// An IP datagram whose fragments never made a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FragmentLeftover {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub id: u32,
    /// Frames whose fragments were held, in arrival order.
    pub frames: Vec<u64>,
    /// Payload bytes received in those fragments.
    pub bytes: usize,
    pub reason: LeftoverReason,
}

impl fmt::Display for FragmentLeftover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IP datagram {} → {} id {:#x}: {} fragment(s), {} bytes (frames {:?}): {}",
            self.src,
            self.dst,
            self.id,
            self.frames.len(),
            self.bytes,
            self.frames,
            self.reason
        )
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FragmentReport {
    pub leftovers: Vec<FragmentLeftover>,
    /// Leftovers beyond [`MAX_LEFTOVERS_LISTED`], counted only.
    pub not_listed: u64,
}

/// A completed datagram (UDP header included) and the frames of its fragments.
pub(crate) type Reassembled = (Vec<u8>, Vec<u64>);

#[derive(Debug)]
struct Pending {
    buf: IpDefragBuf,
    frames: Vec<u64>,
    first_ts: i64,
    /// Memory charged: the reassembly buffer's length.
    held: usize,
    received: usize,
}

#[derive(Debug)]
pub(crate) struct Defragmenter {
    limits: Limits,
    pending: HashMap<FragKey, Pending>,
    held: usize,
    oldest_ts: i64,
    report: FragmentReport,
    spare: Vec<Vec<u8>>,
}

impl Defragmenter {
    pub fn new(limits: Limits) -> Defragmenter {
        Defragmenter {
            limits,
            pending: HashMap::default(),
            held: 0,
            oldest_ts: i64::MAX,
            report: FragmentReport::default(),
            spare: Vec::new(),
        }
    }

    pub fn bytes_held(&self) -> usize {
        self.held
    }

    /// Drops reassemblies older than the age limit at time `now`.
    pub fn expire(&mut self, now: i64) {
        if self.pending.is_empty() || now.saturating_sub(self.oldest_ts) <= self.limits.max_age_ns {
            return;
        }
        let max_age = self.limits.max_age_ns;
        let old: Vec<FragKey> = self
            .pending
            .iter()
            .filter(|(_, p)| now.saturating_sub(p.first_ts) > max_age)
            .map(|(k, _)| *k)
            .collect();
        for key in old {
            self.drop_entry(key, LeftoverReason::Expired);
        }
        self.oldest_ts = self
            .pending
            .values()
            .map(|p| p.first_ts)
            .min()
            .unwrap_or(i64::MAX);
    }

    /// Adds one fragment; returns the whole UDP datagram (header included) and the
    /// frames that made it when this fragment completes it.
    pub fn add(
        &mut self,
        key: FragKey,
        offset: IpFragOffset,
        more: bool,
        payload: &[u8],
        frame: u64,
        ts: i64,
    ) -> Result<Option<Reassembled>, SkipReason> {
        if !self.pending.contains_key(&key) {
            while self.pending.len() >= self.limits.max_pending.max(1) {
                self.evict_oldest(None);
            }
            let data = self.spare.pop().unwrap_or_default();
            self.pending.insert(
                key,
                Pending {
                    buf: IpDefragBuf::new(IpNumber::UDP, data, Vec::new()),
                    frames: Vec::new(),
                    first_ts: ts,
                    held: 0,
                    received: 0,
                },
            );
            self.oldest_ts = self.oldest_ts.min(ts);
        }
        let Some(p) = self.pending.get_mut(&key) else {
            return Ok(None);
        };
        if p.frames.len() >= self.limits.max_fragments_per_datagram {
            p.frames.push(frame);
            self.drop_entry(key, LeftoverReason::TooManyFragments);
            return Err(SkipReason::BadFragment(format!(
                "more than {} fragments for one datagram",
                self.limits.max_fragments_per_datagram
            )));
        }
        p.frames.push(frame);
        p.received += payload.len();
        if let Err(e) = p.buf.add(offset, more, payload) {
            let what = format!("{e}");
            self.drop_entry(key, LeftoverReason::Refused(what.clone()));
            return Err(SkipReason::BadFragment(what));
        }
        let new_held = p.buf.data().len();
        self.held = (self.held + new_held).saturating_sub(p.held);
        p.held = new_held;
        if p.buf.is_complete() {
            let Some(done) = self.pending.remove(&key) else {
                return Ok(None);
            };
            self.held = self.held.saturating_sub(done.held);
            let (data, _) = done.buf.take_bufs();
            return Ok(Some((data, done.frames)));
        }
        while self.held > self.limits.max_bytes_held {
            if !self.evict_oldest(Some(key)) {
                self.drop_entry(key, LeftoverReason::Evicted);
                break;
            }
        }
        Ok(None)
    }

    /// Gives a finished buffer back for reuse.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < 16 {
            self.spare.push(buf);
        }
    }

    pub fn finish(&mut self) -> FragmentReport {
        let keys: Vec<FragKey> = self.pending.keys().copied().collect();
        for key in keys {
            self.drop_entry(key, LeftoverReason::Incomplete);
        }
        self.report
            .leftovers
            .sort_by_key(|l| l.frames.first().copied().unwrap_or(0));
        std::mem::take(&mut self.report)
    }

    /// Evicts the oldest entry other than `keep`; false if there is none.
    fn evict_oldest(&mut self, keep: Option<FragKey>) -> bool {
        let oldest = self
            .pending
            .iter()
            .filter(|(k, _)| Some(**k) != keep)
            .min_by_key(|(_, p)| (p.first_ts, p.frames.first().copied()))
            .map(|(k, _)| *k);
        match oldest {
            Some(k) => {
                self.drop_entry(k, LeftoverReason::Evicted);
                true
            }
            None => false,
        }
    }

    fn drop_entry(&mut self, key: FragKey, reason: LeftoverReason) {
        let Some(p) = self.pending.remove(&key) else {
            return;
        };
        self.held = self.held.saturating_sub(p.held);
        if self.report.leftovers.len() < MAX_LEFTOVERS_LISTED {
            self.report.leftovers.push(FragmentLeftover {
                src: key.src,
                dst: key.dst,
                id: key.id,
                frames: p.frames,
                bytes: p.received,
                reason,
            });
        } else {
            self.report.not_listed += 1;
        }
        let (data, _) = p.buf.take_bufs();
        self.recycle(data);
    }
}
