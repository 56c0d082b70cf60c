//! Position tracks: where each ship was over time, from StateUpdate positions.
//!
//! An absolute position (0x01) is used as is and becomes the delta baseline; a delta
//! (0x02) is relative to the last absolute position the same sender sent for that
//! object (`stateupdate.md` §4). Baselines are kept per (direction, stream, object):
//! the host keeps one per receiving peer, so callers that can tell peers apart pass a
//! stream id (e.g. the client's port), others pass 0.
//!
//! Memory is bounded: at most [`MAX_TRACKS`] tracks and [`MAX_POINTS`] points per
//! track. A full track keeps every other point and from then on records every second
//! update (then every fourth, …), so a long session keeps an evenly thinned path.
//! The tracks also share [`MAX_TOTAL_POINTS`]: a capture of many ship lives (a long
//! battle creates ships without end) gives each track its share of them (at least
//! [`MIN_POINTS`]), so the points kept stop growing with the capture.

use super::stateupdate::StateUpdate;
use crate::diag::Direction;
// Looked up twice per StateUpdate; the ids are the input's, but both maps are bounded
// (MAX_TRACKS, MAX_BASELINES) and read out in sorted order.
use rustc_hash::FxHashMap as HashMap;

/// Most tracked (direction, object) pairs; further objects are counted, not tracked.
pub const MAX_TRACKS: usize = 4096;
/// Most points kept per track before thinning.
pub const MAX_POINTS: usize = 4096;
/// Most delta baselines (direction, stream, object).
pub const MAX_BASELINES: usize = 16384;
/// Points kept over all tracks: each track may hold its share (at least
/// [`MIN_POINTS`], at most [`MAX_POINTS`]) before it is thinned.
pub const MAX_TOTAL_POINTS: usize = 1_000_000;
/// The least share of [`MAX_TOTAL_POINTS`] a track gets, however many there are.
pub const MIN_POINTS: usize = 128;

/// One known position of a ship.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackPoint {
    /// The sender's game clock (seconds).
    pub game_time: f32,
    /// Capture timestamp (seconds).
    pub capture_time: f64,
    pub position: [f32; 3],
    /// From an absolute position (true) or baseline + delta.
    pub absolute: bool,
    /// Speed field of the same update, if sent.
    pub speed: Option<f32>,
}

/// Points kept within [`MAX_POINTS`]: when full, every other point goes and from then
/// on one update in `stride` is kept (the stride doubles each time).
#[derive(Debug, Clone)]
struct Thinned {
    points: Vec<TrackPoint>,
    stride: u32,
    skipped: u32,
}

impl Default for Thinned {
    fn default() -> Thinned {
        Thinned {
            points: Vec::new(),
            stride: 1,
            skipped: 0,
        }
    }
}

impl Thinned {
    /// Keep `p` if its turn has come, thinning first when `cap` points are kept.
    fn push(&mut self, p: TrackPoint, cap: usize) {
        self.skipped += 1;
        if self.skipped < self.stride {
            return;
        }
        self.skipped = 0;
        if self.points.len() >= cap {
            self.halve();
        }
        self.points.push(p);
    }

    /// Keep every other point, and from now on one update in twice as many.
    fn halve(&mut self) {
        let mut k = 0;
        self.points.retain(|_| {
            k += 1;
            k % 2 == 1
        });
        self.stride = self.stride.saturating_mul(2);
    }

    /// Thin down to `cap` points at most; the points given back.
    fn fit(&mut self, cap: usize) -> usize {
        let before = self.points.len();
        while self.points.len() > cap.max(1) {
            self.halve();
        }
        self.points.shrink_to(cap);
        before - self.points.len()
    }
}

/// The path of one object as seen in one direction.
#[derive(Debug, Clone, Default)]
pub struct Track {
    pub object_id: u32,
    path: Thinned,
    /// Deltas sent before any absolute position, as offsets from the baseline that was
    /// never seen: the shape of the path, relative to an unknown origin.
    relative: Thinned,
    pub updates: u64,
    pub absolute_updates: u64,
    pub delta_updates: u64,
    /// Deltas that arrived before any absolute position (no baseline to add them to).
    pub deltas_without_baseline: u64,
    /// Largest |speed| field seen.
    pub max_speed: f32,
    /// (capture − game) time of the first and the latest positioned update.
    pub first_clock_offset: Option<f64>,
    pub last_clock_offset: Option<f64>,
}

impl Track {
    fn new(object_id: u32) -> Track {
        Track {
            object_id,
            ..Track::default()
        }
    }

    pub fn points(&self) -> &[TrackPoint] {
        &self.path.points
    }

    /// Positions of deltas that had no baseline, relative to that unseen baseline (all
    /// share it: the baseline changes only with an absolute position).
    pub fn relative_points(&self) -> &[TrackPoint] {
        &self.relative.points
    }

    /// How far the sender's game clock drifted against capture time over the track
    /// (positive: the game clock ran slow).
    pub fn clock_drift(&self) -> Option<f64> {
        Some(self.last_clock_offset? - self.first_clock_offset?)
    }

    /// Path length over the kept points.
    pub fn distance(&self) -> f64 {
        self.path
            .points
            .windows(2)
            .map(|w| dist(w[0].position, w[1].position))
            .sum()
    }

    /// Average speed over game time between the first and last kept point.
    pub fn average_speed(&self) -> Option<f64> {
        let (a, b) = (self.path.points.first()?, self.path.points.last()?);
        let dt = (b.game_time - a.game_time) as f64;
        (dt > 0.0).then(|| self.distance() / dt)
    }
}

fn dist(a: [f32; 3], b: [f32; 3]) -> f64 {
    let d: f64 = (0..3).map(|i| ((a[i] - b[i]) as f64).powi(2)).sum();
    d.sqrt()
}

/// The points one track may keep when there are `tracks` of them.
fn share(tracks: usize) -> usize {
    (MAX_TOTAL_POINTS / tracks.max(1)).clamp(MIN_POINTS, MAX_POINTS)
}

/// Tracks of every object in a capture.
#[derive(Debug, Default)]
pub struct Tracks {
    tracks: HashMap<(Direction, u32), Track>,
    baselines: HashMap<(Direction, u32, u32), [f32; 3]>,
    /// Updates for objects beyond [`MAX_TRACKS`].
    pub untracked_updates: u64,
    /// Points kept over all tracks (paths and relative paths).
    kept: usize,
}

impl Tracks {
    pub fn new() -> Tracks {
        Tracks::default()
    }

    /// Feed one StateUpdate. `stream` distinguishes the sender's separate streams for
    /// the same object (the host's per-peer baselines); pass 0 if unknown.
    pub fn observe(&mut self, dir: Direction, stream: u32, capture_time: f64, su: &StateUpdate) {
        let key = (dir, su.object_id);
        let bkey = (dir, stream, su.object_id);
        let position = if let Some(p) = su.position {
            if self.baselines.len() < MAX_BASELINES || self.baselines.contains_key(&bkey) {
                self.baselines.insert(bkey, p);
            }
            Some((p, true))
        } else if let Some(d) = su.delta {
            self.baselines.get(&bkey).map(|b| {
                let v = d.vector();
                ([b[0] + v[0], b[1] + v[1], b[2] + v[2]], false)
            })
        } else {
            None
        };
        let known = self.tracks.contains_key(&key);
        if !known && self.tracks.len() >= MAX_TRACKS {
            self.untracked_updates += 1;
            return;
        }
        let cap = share(self.tracks.len() + usize::from(!known));
        let t = self
            .tracks
            .entry(key)
            .or_insert_with(|| Track::new(su.object_id));
        t.updates += 1;
        let before = t.path.points.len() + t.relative.points.len();
        let speed = su.speed.map(|s| s.value());
        if let Some(s) = speed {
            t.max_speed = t.max_speed.max(s.abs());
        }
        if su.position.is_some() {
            t.absolute_updates += 1;
        } else if su.delta.is_some() {
            t.delta_updates += 1;
            if position.is_none() {
                t.deltas_without_baseline += 1;
                if let Some(d) = su.delta {
                    t.relative.push(
                        TrackPoint {
                            game_time: su.game_time,
                            capture_time,
                            position: d.vector(),
                            absolute: false,
                            speed,
                        },
                        cap,
                    );
                }
            }
        }
        if let Some((position, absolute)) = position {
            let offset = capture_time - su.game_time as f64;
            t.first_clock_offset.get_or_insert(offset);
            t.last_clock_offset = Some(offset);
            t.path.push(
                TrackPoint {
                    game_time: su.game_time,
                    capture_time,
                    position,
                    absolute,
                    speed,
                },
                cap,
            );
        }
        let after = t.path.points.len() + t.relative.points.len();
        self.kept = self.kept + after - before;
        // Tracks begun when there were fewer kept their larger shares: once the
        // points kept pass half again the budget, every track is thinned to today's
        // share (this happens after at least a third of the budget in new points).
        if self.kept > MAX_TOTAL_POINTS + MAX_TOTAL_POINTS / 2 {
            let cap = share(self.tracks.len());
            for t in self.tracks.values_mut() {
                self.kept -= t.path.fit(cap) + t.relative.fit(cap);
            }
        }
    }

    pub fn get(&self, dir: Direction, object_id: u32) -> Option<&Track> {
        self.tracks.get(&(dir, object_id))
    }

    /// All tracks, ordered by direction and object id, given up one by one (a caller
    /// that copies their points frees each track as it goes).
    pub fn into_sorted(self) -> Vec<(Direction, Track)> {
        let mut v: Vec<(Direction, Track)> =
            self.tracks.into_iter().map(|((d, _), t)| (d, t)).collect();
        v.sort_by_key(|(d, t)| (*d, t.object_id));
        v
    }

    /// All tracks, ordered by direction and object id.
    pub fn iter(&self) -> Vec<(Direction, &Track)> {
        let mut v: Vec<(Direction, &Track)> =
            self.tracks.iter().map(|((d, _), t)| (*d, t)).collect();
        v.sort_by_key(|(d, t)| (*d, t.object_id));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::super::stateupdate::{Cf16, Delta};
    use super::*;

    fn abs(t: f32, p: [f32; 3]) -> StateUpdate {
        StateUpdate {
            object_id: 7,
            game_time: t,
            flags: 0x01,
            position: Some(p),
            ..StateUpdate::default()
        }
    }
    fn delta(t: f32, d: [f32; 3]) -> StateUpdate {
        StateUpdate {
            object_id: 7,
            game_time: t,
            flags: 0x12,
            delta: Some(Delta::from_vector(d)),
            speed: Some(Cf16::from_value(-5.0)),
            ..StateUpdate::default()
        }
    }

    #[test]
    fn deltas_add_to_the_same_senders_last_absolute_position() {
        let mut tr = Tracks::new();
        let d = Direction::C2S;
        tr.observe(d, 0, 100.0, &delta(0.5, [1.0, 0.0, 0.0])); // no baseline yet
        tr.observe(d, 0, 101.0, &abs(1.0, [10.0, 20.0, 30.0]));
        tr.observe(d, 0, 101.1, &delta(1.1, [0.0, 2.0, 0.0]));
        tr.observe(d, 0, 101.2, &delta(1.2, [0.0, 4.0, 0.0]));
        // The other direction has its own baseline.
        tr.observe(Direction::S2C, 0, 101.3, &delta(1.3, [0.0, 4.0, 0.0]));
        let t = tr.get(d, 7).unwrap();
        assert_eq!(t.deltas_without_baseline, 1);
        assert_eq!((t.absolute_updates, t.delta_updates), (1, 3));
        let p = t.points();
        assert_eq!(p.len(), 3);
        assert!(p[0].absolute && !p[2].absolute);
        // Relative to the absolute position, not to the previous delta.
        assert!((p[2].position[1] - 24.0).abs() < 0.01, "{:?}", p[2]);
        assert!((t.max_speed - 5.0).abs() < 0.01);
        assert!((t.distance() - 4.0).abs() < 0.01);
        assert_eq!(t.first_clock_offset, Some(100.0));
        assert!(t.clock_drift().unwrap().abs() < 1e-3);
        assert_eq!(tr.get(Direction::S2C, 7).unwrap().points().len(), 0);
        // Deltas without a baseline keep their shape, relative to the unseen one.
        let rel = tr.get(Direction::S2C, 7).unwrap().relative_points();
        assert_eq!(rel.len(), 1);
        assert!((rel[0].position[1] - 4.0).abs() < 0.01, "{rel:?}");
        assert_eq!(t.relative_points().len(), 1);
    }

    #[test]
    fn long_tracks_are_thinned_not_grown() {
        let mut tr = Tracks::new();
        let n = MAX_POINTS * 3;
        for i in 0..n {
            tr.observe(
                Direction::S2C,
                0,
                i as f64,
                &abs(i as f32, [i as f32, 0.0, 0.0]),
            );
        }
        let t = tr.get(Direction::S2C, 7).unwrap();
        assert!(t.points().len() <= MAX_POINTS);
        assert!(t.points().len() >= MAX_POINTS / 2);
        assert_eq!(t.updates, n as u64);
        let p = t.points();
        assert_eq!(p[0].game_time, 0.0);
        assert!(p.windows(2).all(|w| w[0].game_time < w[1].game_time));
        assert!(p.last().unwrap().game_time as usize > n - 10);
    }

    #[test]
    fn many_tracks_share_the_point_budget() {
        let mut tr = Tracks::new();
        let (objects, per_object) = (2000u32, 2000usize);
        for o in 0..objects {
            for i in 0..per_object {
                let mut su = abs(i as f32, [i as f32, o as f32, 0.0]);
                su.object_id = o;
                tr.observe(Direction::S2C, 0, i as f64, &su);
            }
        }
        let kept: usize = (0..objects)
            .map(|o| tr.get(Direction::S2C, o).unwrap().points().len())
            .sum();
        // Without the budget every point would be kept: 4,000,000 of them.
        assert!(kept <= MAX_TOTAL_POINTS + MAX_TOTAL_POINTS / 2, "{kept}");
        assert_eq!(kept, tr.kept);
        for o in 0..objects {
            let t = tr.get(Direction::S2C, o).unwrap();
            assert_eq!(t.updates, per_object as u64);
            let p = t.points();
            // Thinned evenly from the first update to (near) the last.
            assert!(p.len() >= MIN_POINTS / 2, "{}", p.len());
            assert_eq!(p[0].game_time, 0.0);
            assert!(p.windows(2).all(|w| w[0].game_time < w[1].game_time));
            assert!(p.last().unwrap().game_time as usize >= per_object - 2 * per_object / p.len());
        }
    }
}
