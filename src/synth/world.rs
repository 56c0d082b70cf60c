//! The simulated world: ships, their movement, subsystem conditions, damage and repair.
//!
//! The world is authoritative: the host and the clients read it to write their
//! messages, so the wire always describes one consistent game. Conditions are kept as
//! `f32` on the 0–255 wire scale and truncated when written (stateupdate.md §5.2).

use super::rng::Rng;
use crate::game::opcodes::objects::{SubsystemBlob, SubsystemState};
use crate::game::opcodes::ship_layouts::{creation_layout, EntryFormat};
use crate::game::ships::{RecordFormat, ShipCatalog, ShipClass};
use crate::game::subsys::{Children, PowerSetting, SubsystemRecord};
use std::rc::Rc;

/// First object id of player slot 0; each slot owns 0x40000 ids (opcodes.md §2).
pub const SLOT_BASE: u32 = 0x3FFF_FFFF;
pub const SLOT_SPAN: u32 = 0x4_0000;
/// Half-size of the cube ships are kept in.
const ARENA: f32 = 350.0;

/// State of one top-level subsystem.
#[derive(Debug, Clone)]
pub struct System {
    pub condition: f32,
    pub children: Vec<f32>,
    /// Reactor only: main and backup battery.
    pub batteries: [f32; 2],
    /// Shield generator only: the six facings.
    pub facings: [f32; 6],
    /// Requested power in percent.
    pub power: u8,
}

fn byte(v: f32) -> u8 {
    v.clamp(0.0, 255.0) as u8
}

#[derive(Debug, Clone)]
pub struct Ship {
    pub id: u32,
    pub species: u8,
    pub class: Rc<ShipClass>,
    /// Client index (= player slot).
    pub owner: usize,
    pub pos: [f32; 3],
    pub fwd: [f32; 3],
    pub up: [f32; 3],
    pub speed: f32,
    target_speed: f32,
    yaw: f32,
    pitch: f32,
    next_maneuver: f64,
    pub cloaked: bool,
    pub systems: Vec<System>,
    pub alive: bool,
    power_cursor: usize,
    /// Id offset of each top-level entry; its children follow it.
    offsets: Vec<u32>,
    subsystem_count: u32,
}

fn norm(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if l == 0.0 {
        return [0.0, 1.0, 0.0];
    }
    [v[0] / l, v[1] / l, v[2] / l]
}

pub fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn add(a: [f32; 3], b: [f32; 3], k: f32) -> [f32; 3] {
    [a[0] + b[0] * k, a[1] + b[1] * k, a[2] + b[2] * k]
}

pub fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

impl Ship {
    pub fn spawn(id: u32, class: Rc<ShipClass>, owner: usize, now: f64, rng: &mut Rng) -> Ship {
        let mut r = || rng.range(-1.0, 1.0) as f32;
        let pos = [r() * 200.0, r() * 200.0, r() * 60.0];
        let fwd = norm([r(), r(), r() * 0.2]);
        let up = norm(sub(
            [0.0, 0.0, 1.0],
            [fwd[0] * fwd[2], fwd[1] * fwd[2], fwd[2] * fwd[2]],
        ));
        let systems = class
            .subsystems
            .iter()
            .map(|e| System {
                condition: 255.0,
                children: vec![255.0; e.children.len()],
                batteries: [255.0; 2],
                facings: [255.0; 6],
                power: 100,
            })
            .collect();
        let mut offsets = Vec::with_capacity(class.len());
        let mut next = 1u32;
        for e in &class.subsystems {
            offsets.push(next);
            next += 1 + e.children.len() as u32;
        }
        Ship {
            id,
            species: class.species_id as u8,
            owner,
            pos,
            fwd,
            up,
            speed: 0.0,
            target_speed: 0.0,
            yaw: 0.0,
            pitch: 0.0,
            next_maneuver: now,
            cloaked: false,
            systems,
            alive: true,
            power_cursor: 0,
            offsets,
            subsystem_count: next - 1,
            class,
        }
    }

    /// Top-level subsystems and children: the ids the ship consumes after its own.
    pub fn subsystem_count(&self) -> u32 {
        self.subsystem_count
    }

    /// Id of a top-level entry (`child = None`) or of one of its children. The order
    /// inside a ship is undocumented (opcodes.md §2); list order is used.
    pub fn subsystem_id(&self, entry: usize, child: Option<usize>) -> u32 {
        let base = self
            .id
            .wrapping_add(self.offsets.get(entry).copied().unwrap_or(1));
        base.wrapping_add(child.map_or(0, |c| c as u32 + 1))
    }

    /// Entries of a weapon kind (`phaser`, `pulse`, `torpedo`, `tractor`).
    pub fn weapon_entry(&self, kinds: &[&str]) -> Option<usize> {
        self.class.subsystems.iter().position(|e| {
            e.weapon_system
                .as_deref()
                .is_some_and(|w| kinds.contains(&w))
                && !e.children.is_empty()
        })
    }

    pub fn entry_of_kind(&self, kind: &str) -> Option<usize> {
        self.class.subsystems.iter().position(|e| e.kind == kind)
    }

    pub fn can_cloak(&self) -> bool {
        self.class.can_cloak
    }

    fn hull(&self) -> usize {
        self.entry_of_kind("hull").unwrap_or(0)
    }

    pub fn hull_condition(&self) -> f32 {
        self.systems.get(self.hull()).map_or(0.0, |s| s.condition)
    }

    /// Move for `dt` seconds; pick a new manoeuvre now and then.
    pub fn advance(&mut self, now: f64, dt: f32, rng: &mut Rng) {
        if now >= self.next_maneuver {
            if rng.chance(0.3) {
                self.target_speed = 0.0;
                self.yaw = 0.0;
                self.pitch = 0.0;
                self.next_maneuver = now + rng.range(3.0, 9.0);
            } else {
                self.target_speed = rng.range(2.0, 7.5) as f32;
                self.yaw = if rng.chance(0.3) {
                    0.0
                } else {
                    rng.range(-0.6, 0.6) as f32
                };
                self.pitch = if rng.chance(0.5) {
                    0.0
                } else {
                    rng.range(-0.15, 0.15) as f32
                };
                self.next_maneuver = now + rng.range(2.0, 8.0);
            }
        }
        let far = self.pos.iter().any(|c| c.abs() > ARENA);
        let yaw = if far && dot(self.fwd, self.pos) > 0.0 {
            0.8
        } else {
            self.yaw
        };
        // Throttle touches now and then while cruising.
        if self.target_speed > 0.0 && rng.chance(f64::from(dt) * 0.4) {
            self.target_speed = (self.target_speed + rng.range(-1.0, 1.0) as f32).clamp(1.0, 8.0);
        }
        let accel = 1.5 * dt;
        self.speed += (self.target_speed - self.speed).clamp(-accel, accel);
        if yaw != 0.0 {
            let (s, c) = (yaw * dt).sin_cos();
            let side = cross(self.up, self.fwd);
            self.fwd = norm(add(
                [self.fwd[0] * c, self.fwd[1] * c, self.fwd[2] * c],
                side,
                s,
            ));
        }
        if self.pitch != 0.0 {
            let (s, c) = (self.pitch * dt).sin_cos();
            let f = self.fwd;
            self.fwd = norm(add([f[0] * c, f[1] * c, f[2] * c], self.up, s));
            self.up = add([self.up[0] * c, self.up[1] * c, self.up[2] * c], f, -s);
        }
        // Keep the frame orthonormal against rounding drift.
        self.up = norm(add(self.up, self.fwd, -dot(self.up, self.fwd)));
        self.pos = add(self.pos, self.fwd, self.speed * dt);
    }

    /// Repair and shield regeneration for `dt` seconds.
    pub fn repair(&mut self, dt: f32) {
        let hull = self.hull();
        for (i, s) in self.systems.iter_mut().enumerate() {
            let rate = if i == hull { 0.5 } else { 3.0 };
            s.condition = (s.condition + rate * dt).min(255.0);
            for c in &mut s.children {
                *c = (*c + 3.0 * dt).min(255.0);
            }
            for f in &mut s.facings {
                *f = (*f + 6.0 * dt).min(255.0);
            }
            for b in &mut s.batteries {
                *b = (*b + 2.0 * dt).min(255.0);
            }
        }
    }

    /// A weapon hit of `amount` (wire scale): shields absorb part, the rest goes to the
    /// hull, one subsystem and maybe one of its children. Returns the ids of
    /// subsystems that went from intact to damaged (they join the repair list) and
    /// whether the ship died.
    pub fn hit(&mut self, amount: f32, rng: &mut Rng) -> (Vec<u32>, bool) {
        let mut rest = amount;
        if let Some(sh) = self.entry_of_kind("shield_generator") {
            let f = rng.below(6);
            let facing = &mut self.systems[sh].facings[f];
            let absorbed = facing.min(amount * 0.5);
            *facing -= absorbed;
            rest -= absorbed;
        }
        let mut newly = Vec::new();
        let hull = self.hull();
        self.systems[hull].condition -= rest * 1.5;
        let n = self.systems.len();
        let victim = rng.below(n);
        if victim != hull && rest > 0.0 {
            let s = &mut self.systems[victim];
            if s.condition >= 255.0 {
                newly.push(victim);
            }
            s.condition = (s.condition - rest).max(0.0);
            if !s.children.is_empty() && rng.chance(0.5) {
                let c = rng.below(s.children.len());
                s.children[c] = (s.children[c] - rest * 1.5).max(0.0);
            }
        }
        let dead = self.systems[hull].condition <= 0.0;
        if dead {
            self.systems[hull].condition = 0.0;
            self.alive = false;
        }
        (
            newly
                .into_iter()
                .map(|e| self.subsystem_id(e, None))
                .collect(),
            dead,
        )
    }

    /// One 0x20 record; `for_owner` leaves out the power data (stateupdate.md §5.2).
    pub fn record(&self, index: usize, for_owner: bool) -> SubsystemRecord {
        let entry = &self.class.subsystems[index];
        let s = &self.systems[index];
        SubsystemRecord {
            index: index as u8,
            format: entry.format,
            condition: byte(s.condition),
            children: s.children.iter().map(|c| byte(*c)).collect(),
            power_pct: (entry.format.has_power_bit() && !for_owner).then_some(s.power),
            batteries: if entry.format == RecordFormat::Power {
                [byte(s.batteries[0]), byte(s.batteries[1])]
            } else {
                [0; 2]
            },
            facings: if entry.format == RecordFormat::Shield {
                s.facings.map(byte)
            } else {
                [0; 6]
            },
        }
    }

    /// The client's 0x80 block: three pairs, round-robin over the powered entries
    /// (stateupdate.md §6; 204 = 100 %, the reading of the one captured value).
    pub fn power_pairs(&mut self) -> Vec<PowerSetting> {
        let powered: Vec<usize> = (0..self.class.len())
            .filter(|&i| self.class.subsystems[i].powered_type)
            .collect();
        let mut out = Vec::with_capacity(3);
        if powered.is_empty() {
            return out;
        }
        for _ in 0..3.min(powered.len()) {
            let i = powered[self.power_cursor % powered.len()];
            self.power_cursor = (self.power_cursor + 1) % powered.len();
            let pct = u32::from(self.systems[i].power);
            out.push(PowerSetting {
                index: i as u8,
                value: (pct * 204 / 100).min(255) as u8,
            });
        }
        out
    }

    /// A stand-in for the integrity hash (stateupdate.md §4): the documented fold over
    /// the condition values.
    pub fn integrity_hash(&self) -> u16 {
        let mut acc = 0u32;
        for s in &self.systems {
            acc ^= byte(s.condition) as u32;
            acc = acc.rotate_left(1);
        }
        ((acc >> 16) ^ (acc & 0xFFFF)) as u16
    }

    /// Orientation quaternion (w, x, y, z) of the model frame: +X right, +Y forward,
    /// +Z up (opcodes.md §6.3).
    pub fn quaternion(&self) -> [f32; 4] {
        let r = cross(self.fwd, self.up);
        let (f, u) = (self.fwd, self.up);
        let (m00, m01, m02) = (r[0], f[0], u[0]);
        let (m10, m11, m12) = (r[1], f[1], u[1]);
        let (m20, m21, m22) = (r[2], f[2], u[2]);
        let trace = m00 + m11 + m22;
        if trace > 0.0 {
            let s = (trace + 1.0).sqrt() * 2.0;
            [0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s]
        } else if m00 > m11 && m00 > m22 {
            let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
            [(m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s]
        } else if m11 > m22 {
            let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
            [(m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s]
        } else {
            let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
            [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s]
        }
    }

    /// The subsystem blob of a creation message for a fresh ship: the stock values
    /// (full conditions, power 100, weapon bit 0 and byte 1/0/1, opcodes.md §6.3).
    pub fn creation_blob(&self) -> SubsystemBlob {
        let layout = creation_layout(&self.class);
        let records = layout
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let s = &self.systems[i];
                let children: Children = s.children.iter().map(|c| byte(*c)).collect();
                match e.format {
                    EntryFormat::Base => SubsystemState::Base {
                        condition: byte(s.condition),
                        children,
                    },
                    EntryFormat::Power => SubsystemState::Power {
                        condition: byte(s.condition),
                        children,
                        main_battery: byte(s.batteries[0]),
                        backup_battery: byte(s.batteries[1]),
                    },
                    EntryFormat::Powered => SubsystemState::Powered {
                        condition: byte(s.condition),
                        children,
                        power: s.power as i8,
                        weapon: e
                            .weapon
                            .then_some((false, u8::from(e.kind != "torpedo_system"))),
                    },
                    EntryFormat::Shield => SubsystemState::Shield {
                        condition: byte(s.condition),
                        power: s.power as i8,
                        facings: s.facings.map(byte),
                    },
                }
            })
            .collect();
        SubsystemBlob::Decoded(records)
    }
}

/// Every ship of the session, one slot per client.
pub struct World {
    pub ships: Vec<Option<Ship>>,
    classes: Vec<Rc<ShipClass>>,
    last_advance: f64,
    /// Factor on the speed of repairs and shield regeneration.
    pub repair: f32,
}

impl World {
    pub fn new(players: usize) -> World {
        let catalog = ShipCatalog::stock();
        let classes = (1..=15u16)
            .filter_map(|s| catalog.class(s).cloned().map(Rc::new))
            .collect();
        World {
            ships: vec![None; players],
            classes,
            last_advance: 0.0,
            repair: 1.0,
        }
    }

    /// A world whose repairs run at `repair` times the stock speed.
    pub fn with_repair(players: usize, repair: f32) -> World {
        World {
            repair,
            ..World::new(players)
        }
    }

    /// A playable class (species 1–15), chosen at random.
    pub fn random_class(&self, rng: &mut Rng) -> Rc<ShipClass> {
        rng.pick(&self.classes).clone()
    }

    /// Move every live ship and run repairs up to `now`.
    pub fn advance(&mut self, now: f64, rng: &mut Rng) {
        let dt = (now - self.last_advance) as f32;
        if dt <= 0.0 {
            return;
        }
        self.last_advance = now;
        for ship in self.ships.iter_mut().flatten().filter(|s| s.alive) {
            ship.advance(now, dt, rng);
            ship.repair(dt * self.repair);
        }
    }

    pub fn live(&self, slot: usize) -> Option<&Ship> {
        self.ships.get(slot)?.as_ref().filter(|s| s.alive)
    }

    pub fn live_mut(&mut self, slot: usize) -> Option<&mut Ship> {
        self.ships.get_mut(slot)?.as_mut().filter(|s| s.alive)
    }

    pub fn slot_base(slot: usize) -> u32 {
        SLOT_BASE.wrapping_add(slot as u32 * SLOT_SPAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::compressed::cv3_decode;
    use crate::game::stateupdate::Dir3;

    fn ship(species: u16) -> Ship {
        let class = Rc::new(ShipCatalog::stock().class(species).unwrap().clone());
        Ship::spawn(SLOT_BASE, class, 0, 0.0, &mut Rng::new(3))
    }

    #[test]
    fn respawn_id_step_matches_the_sovereign_capture() {
        // opcodes.md §2: a Sovereign (33 subsystems) in slot 0 respawned as base + 34.
        let s = ship(5);
        assert_eq!(s.subsystem_count(), 33);
        assert_eq!(s.id + s.subsystem_count() + 1, 0x4000_0021);
    }

    #[test]
    fn quaternion_rotates_the_model_axes_onto_the_ship_frame() {
        let mut rng = Rng::new(9);
        let mut s = ship(1);
        for _ in 0..50 {
            s.advance(rng.range(0.0, 100.0), 0.5, &mut rng);
            let [w, x, y, z] = s.quaternion();
            // Rotate +Y by the quaternion.
            let fy = [
                2.0 * (x * y - w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z + w * x),
            ];
            for k in 0..3 {
                assert!((fy[k] - s.fwd[k]).abs() < 1e-3, "{fy:?} vs {:?}", s.fwd);
            }
            let d = cv3_decode(Dir3::from_vector(s.up).0);
            assert!(dot(d, s.fwd).abs() < 0.05);
        }
    }

    #[test]
    fn hits_lower_conditions_and_kill_eventually() {
        let mut rng = Rng::new(5);
        let mut s = ship(3);
        let mut hits = 0;
        while s.alive && hits < 1000 {
            s.hit(60.0, &mut rng);
            hits += 1;
        }
        assert!(!s.alive);
        assert!(hits > 5, "{hits}");
        assert_eq!(s.record(0, false).condition, 0);
    }
}
