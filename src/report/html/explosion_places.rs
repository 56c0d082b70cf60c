//! Explosion (0x29) positions that are not places. Stock hosts send the world position
//! of the blast; some reimplementations send a direction there instead (a unit vector),
//! and drawn as positions those rings gather round (0, 0), far from every ship. A
//! session whose explosions all lie within [`UNIT_LENGTH`] of the origin while its
//! ships move over [`SHIPS_MOVE`] units or more is such a session: its explosions are
//! not drawn on the map and the Problems section lists them as non-stock.

use super::collect::{CaptureReport, EventKind, FRAMES_PER_PROBLEM};
use super::svg::drawable;

/// Explosion positions no longer than this are directions, not places: 1, with room
/// for the rounding of a packed direction and of f32.
pub const UNIT_LENGTH: f64 = 1.01;
/// A ship whose track spans this many units (along any axis) has moved far enough that
/// a blast against it cannot stay within a unit of the origin.
pub const SHIPS_MOVE: f64 = 20.0;

/// One session's explosions whose positions are directions.
#[derive(Debug, Clone, PartialEq)]
pub struct UnplacedExplosions {
    pub session: usize,
    /// Explosion events of the session (host copies to other clients counted once).
    pub count: usize,
    /// The first frames that carry one.
    pub frames: Vec<u64>,
    /// The longest explosion position, and the widest span of one ship's track.
    pub longest: f64,
    pub ship_span: f64,
}

fn length(p: [f32; 3]) -> f64 {
    p.iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        .sqrt()
}

/// The widest extent, along any axis, of one absolute track of the session.
fn ship_span(c: &CaptureReport, session: usize) -> f64 {
    c.ships
        .iter()
        .filter(|s| s.session == session && !s.track_relative)
        .map(|s| {
            let mut lo = [f64::MAX; 3];
            let mut hi = [f64::MIN; 3];
            for p in s.track.iter().filter(|p| drawable(p.pos)) {
                for a in 0..3 {
                    lo[a] = lo[a].min(f64::from(p.pos[a]));
                    hi[a] = hi[a].max(f64::from(p.pos[a]));
                }
            }
            (0..3).map(|a| hi[a] - lo[a]).fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

/// The sessions whose explosion positions are directions, in session order.
pub fn unplaced_explosions(c: &CaptureReport) -> Vec<UnplacedExplosions> {
    let mut found: Vec<UnplacedExplosions> = Vec::new();
    let mut placed: Vec<usize> = Vec::new();
    for e in &c.events {
        let (EventKind::Explosion, Some(p)) = (e.kind, e.position) else {
            continue;
        };
        if placed.contains(&e.session) {
            continue;
        }
        let len = length(p);
        if !len.is_finite() || len > UNIT_LENGTH {
            placed.push(e.session);
            found.retain(|u| u.session != e.session);
            continue;
        }
        let i = match found.iter().position(|u| u.session == e.session) {
            Some(i) => i,
            None => {
                found.push(UnplacedExplosions {
                    session: e.session,
                    count: 0,
                    frames: Vec::new(),
                    longest: 0.0,
                    ship_span: 0.0,
                });
                found.len() - 1
            }
        };
        let u = &mut found[i];
        u.count += 1;
        u.longest = u.longest.max(len);
        if u.frames.len() < FRAMES_PER_PROBLEM && u.frames.last() != Some(&e.frame) {
            u.frames.push(e.frame);
        }
    }
    for u in &mut found {
        u.ship_span = ship_span(c, u.session);
    }
    found.retain(|u| u.ship_span >= SHIPS_MOVE);
    found.sort_by_key(|u| u.session);
    found
}

#[cfg(test)]
mod tests {
    use super::super::collect::{Event, Ship, ShipPoint};
    use super::*;

    fn boom(session: usize, frame: u64, pos: [f32; 3]) -> Event {
        Event {
            t: frame as f64,
            frame,
            session,
            kind: EventKind::Explosion,
            object: Some(0x3FFF_FFFF),
            target: None,
            ship: None,
            target_ship: None,
            position: Some(pos),
            value: Some(50.0),
        }
    }

    fn ship(session: usize, xs: &[f32]) -> Ship {
        Ship {
            session,
            object_id: 0x3FFF_FFFF,
            created_frame: Some(1),
            label: String::new(),
            class: None,
            player: None,
            born: 0.0,
            died: None,
            end: 10.0,
            slot: Some(0),
            client: None,
            track_direction: None,
            track: xs
                .iter()
                .map(|&x| ShipPoint {
                    t: 0.0,
                    pos: [x, 0.0, 0.0],
                    speed: None,
                })
                .collect(),
            track_relative: false,
            updates: 0,
            health: Vec::new(),
        }
    }

    #[test]
    fn directions_among_moving_ships_are_found_per_session() {
        let c = CaptureReport {
            ships: vec![
                ship(0, &[0.0, 80.0]),
                ship(1, &[0.0, 80.0]),
                ship(2, &[3.0, 5.0]),
            ],
            events: vec![
                boom(0, 4, [0.6, 0.8, 0.0]),
                boom(0, 9, [0.0, 0.0, -1.0]),
                // A session with one real position among directions is stock.
                boom(1, 5, [0.0, 1.0, 0.0]),
                boom(1, 6, [40.0, 1.0, 0.0]),
                // Ships that barely move: a blast near the origin may be a place.
                boom(2, 7, [0.5, 0.0, 0.0]),
            ],
            ..CaptureReport::default()
        };
        let u = unplaced_explosions(&c);
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!((u[0].session, u[0].count), (0, 2));
        assert_eq!(u[0].frames, vec![4, 9]);
        assert_eq!(u[0].ship_span, 80.0);
    }
}
