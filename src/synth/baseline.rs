//! What a writer of StateUpdates remembers per (receiver, ship) and how it chooses the
//! movement fields to send (stateupdate.md §8).

use super::world::{sub, Ship};
use crate::game::stateupdate::{flag, Cf16, Delta, Dir3, StateUpdate};

/// Absolute position (and orientation, speed) forced this often (stateupdate.md §8).
const FORCE_INTERVAL: f64 = 1.0;

/// What a writer of the capture remembers per (receiver, ship) (stateupdate.md §8).
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    object: u32,
    forced_at: Option<f64>,
    base: [f32; 3],
    delta: Delta,
    fwd: Dir3,
    up: Dir3,
    speed: Cf16,
    cloak: Option<bool>,
    pub cursor: usize,
}

impl Baseline {
    /// Set the movement and cloak fields that changed, or all of them on the forced
    /// interval.
    pub fn movement(&mut self, ship: &Ship, now: f64, su: &mut StateUpdate, hash: Option<u16>) {
        if self.object != ship.id {
            *self = Baseline {
                object: ship.id,
                ..Baseline::default()
            };
        }
        let fwd = Dir3::from_vector(ship.fwd);
        let up = Dir3::from_vector(ship.up);
        let speed = Cf16::from_value(ship.speed);
        if self.forced_at.is_none_or(|t| now - t >= FORCE_INTERVAL) {
            su.flags |= flag::POSITION | flag::FORWARD | flag::UP | flag::SPEED;
            su.position = Some(ship.pos);
            su.integrity_hash = hash;
            su.forward = Some(fwd);
            su.up = Some(up);
            su.speed = Some(speed);
            self.forced_at = Some(now);
            self.base = ship.pos;
            self.delta = Delta::default();
            self.fwd = fwd;
            self.up = up;
            self.speed = speed;
        } else {
            let d = Delta::from_vector(sub(ship.pos, self.base));
            su.delta = changed(d, &mut self.delta, &mut su.flags, flag::DELTA);
            su.forward = changed(fwd, &mut self.fwd, &mut su.flags, flag::FORWARD);
            su.up = changed(up, &mut self.up, &mut su.flags, flag::UP);
            su.speed = changed(speed, &mut self.speed, &mut su.flags, flag::SPEED);
        }
        if ship.can_cloak() {
            let cloak = changed(
                Some(ship.cloaked),
                &mut self.cloak,
                &mut su.flags,
                flag::CLOAK,
            );
            su.cloak = cloak.flatten();
        }
    }
}

/// `value` when it differs from what the receiver last got (`last`, updated), with its
/// dirty flag `bit` set; `None` when it is unchanged and not sent.
fn changed<T: Copy + PartialEq>(value: T, last: &mut T, flags: &mut u8, bit: u8) -> Option<T> {
    if value == *last {
        return None;
    }
    *flags |= bit;
    *last = value;
    Some(value)
}
