//! A sudden one-way rate collapse: one direction of a client's flow falls below
//! [`COLLAPSE_SHARE`] of its median datagram rate over the previous [`HISTORY`] seconds,
//! for [`MIN_SECONDS`] seconds or more, while the other direction keeps at least
//! [`KEEP_SHARE`] of its own median. The peer is still talking, so the link is up; what
//! stopped is one side's traffic (a host that stopped sending to one client, a client
//! whose uplink died), which a silence list of both directions does not single out.

use super::collect::{ClientTraffic, Problem, FRAMES_PER_PROBLEM};
use crate::diag::{Code, Direction};

/// Seconds of history whose median is the usual rate.
pub const HISTORY: usize = 30;
/// Seconds in a row the rate must stay collapsed.
pub const MIN_SECONDS: usize = 10;
/// Below this share of its median a direction has collapsed...
pub const COLLAPSE_SHARE: f64 = 0.1;
/// ...while the other direction keeps at least this share of its own.
pub const KEEP_SHARE: f64 = 0.5;

/// One collapse of one direction of one client's flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Collapse {
    pub direction: Direction,
    /// The first collapsed second (seconds from the capture's start).
    pub start: i64,
    /// Seconds until the rate came back to the share of the median it had fallen from
    /// (or the client's flow ended).
    pub length: i64,
    /// The median rate before (datagrams per second).
    pub median: f64,
    /// The first frame of the first collapsed second.
    pub frame: u64,
}

/// The median of the window (at most [`HISTORY`] long): the mean of the two middle
/// values. Asked for every second of every client's flow, so sorted on the stack.
fn median(window: &[u32]) -> f64 {
    let mut buf = [0u32; HISTORY];
    let n = window.len().min(HISTORY);
    let v = &mut buf[..n];
    v.copy_from_slice(&window[..n]);
    v.sort_unstable();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0
    }
}

/// Every collapse in one client's flow, in time order.
pub fn collapses(client: &ClientTraffic) -> Vec<Collapse> {
    let (Some((&first, _)), Some((&last, _))) = (
        client.seconds.first_key_value(),
        client.seconds.last_key_value(),
    ) else {
        return Vec::new();
    };
    // Seconds without a datagram are zeros; the span is bounded by the collector's.
    let span = (last - first + 1) as usize;
    let mut rate = [vec![0u32; span], vec![0u32; span]];
    let mut frames = vec![0u64; span];
    for (&s, c) in &client.seconds {
        let i = (s - first) as usize;
        rate[0][i] = c.datagrams[0];
        rate[1][i] = c.datagrams[1];
        frames[i] = c.first_frame;
    }
    let mut out = Vec::new();
    for d in [Direction::C2S, Direction::S2C] {
        let (me, other) = (&rate[d.index()], &rate[1 - d.index()]);
        // The other direction's median only for a second that fell (most do not).
        let collapsed = |i: usize| {
            let m = median(&me[i - HISTORY..i]);
            m > 0.0 && (me[i] as f64) < COLLAPSE_SHARE * m && {
                let o = median(&other[i - HISTORY..i]);
                o > 0.0 && other[i] as f64 >= KEEP_SHARE * o
            }
        };
        let mut i = HISTORY;
        while i < span {
            if !collapsed(i) {
                i += 1;
                continue;
            }
            let mut run = 1;
            while i + run < span && collapsed(i + run) {
                run += 1;
            }
            if run < MIN_SECONDS {
                i += run;
                continue;
            }
            // The rolling median sinks as the collapse goes on; its length is measured
            // against the median it fell from.
            let m = median(&me[i - HISTORY..i]);
            let mut end = i + run;
            while end < span && (me[end] as f64) < COLLAPSE_SHARE * m {
                end += 1;
            }
            out.push(Collapse {
                direction: d,
                start: first + i as i64,
                length: (end - i) as i64,
                median: m,
                frame: frames[i],
            });
            i = end;
        }
    }
    out.sort_by_key(|c| c.start);
    out
}

/// The collapses of every client as one Problem row (None without any).
pub fn problem(clients: &[ClientTraffic]) -> Option<Problem> {
    let mut all: Vec<(&ClientTraffic, Collapse)> = clients
        .iter()
        .flat_map(|c| collapses(c).into_iter().map(move |k| (c, k)))
        .collect();
    all.sort_by_key(|(_, k)| k.start);
    let (who, first) = all.first()?;
    Some(Problem {
        code: Code::RateCollapse,
        count: all.len() as u64,
        frames: all
            .iter()
            .map(|(_, k)| k.frame)
            .filter(|&f| f > 0)
            .take(FRAMES_PER_PROBLEM)
            .collect(),
        example: format!(
            "{} {}: {:.0} datagrams/s fell below {:.0} % from {} s for {} s",
            who.name,
            first.direction.as_str(),
            first.median,
            COLLAPSE_SHARE * 100.0,
            first.start,
            first.length
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::collect::ClientSecond;

    fn flow(c2s: impl Fn(i64) -> u32, s2c: impl Fn(i64) -> u32, secs: i64) -> ClientTraffic {
        let mut t = ClientTraffic::default();
        for s in 0..secs {
            t.seconds.insert(
                s,
                ClientSecond {
                    datagrams: [c2s(s), s2c(s)],
                    first_frame: s as u64 + 1,
                    ..ClientSecond::default()
                },
            );
        }
        t
    }

    #[test]
    fn one_way_stop_is_a_collapse() {
        let t = flow(|_| 20, |s| if s >= 70 { 0 } else { 30 }, 120);
        let k = collapses(&t);
        assert_eq!(k.len(), 1, "{k:?}");
        assert_eq!(k[0].direction, Direction::S2C);
        assert_eq!((k[0].start, k[0].length, k[0].frame), (70, 50, 71));
        assert!(problem(&[t]).is_some());
    }

    #[test]
    fn both_ways_stopping_or_short_dips_are_not() {
        // Both directions stop: the client left.
        let gone = flow(
            |s| if s >= 70 { 0 } else { 20 },
            |s| if s >= 70 { 0 } else { 30 },
            120,
        );
        assert!(collapses(&gone).is_empty());
        // Nine seconds of silence one way: short of ten.
        let dip = flow(|_| 20, |s| if (70..79).contains(&s) { 0 } else { 30 }, 120);
        assert!(collapses(&dip).is_empty());
        // Ten seconds: a collapse.
        let ten = flow(|_| 20, |s| if (70..80).contains(&s) { 0 } else { 30 }, 120);
        assert_eq!(collapses(&ten).len(), 1);
        // A drop to 20 % is no collapse.
        let low = flow(|_| 20, |s| if s >= 70 { 6 } else { 30 }, 120);
        assert!(collapses(&low).is_empty());
    }
}
