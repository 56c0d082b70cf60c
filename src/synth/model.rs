//! The rates and habits of a simulated session, and the presets that set them.
//!
//! [`Model::default`] is the model `bcwire synth` has always used (its output, the
//! shipped sample captures included, does not change); a [`Preset`] replaces it as a
//! whole. Every value is a rate, a probability or a count, not a packet list: the
//! session script in `session.rs` stays the same.

use super::rng::Rng;

/// Named sets of model values (`bcwire synth --preset`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// The measured 34-minute, 3-player stock battle (flows.md §3.1, README §3): turns
    /// every 88 ms, the stock stale-ACK backlog, reliable messages on the next frame,
    /// 0x15 collisions.
    StockBattle,
}

impl Preset {
    /// Session length when neither `--minutes` nor `--packets` is given.
    pub fn minutes(self) -> f64 {
        match self {
            Preset::StockBattle => 34.0,
        }
    }

    pub fn model(self) -> Model {
        match self {
            Preset::StockBattle => Model {
                // ~11.4 turns a second each way; clients put their StateUpdate in every
                // turn while they have a ship, the host 2.2 per client on average.
                client_turn: 0.088,
                host_turn: 0.088,
                host_ships_per_turn: 2.2,
                client_acks: AckHabit {
                    repeats: 4,
                    keep: 110,
                    chance: 0.12,
                    alone: true,
                    stale: 0.07,
                    stale_most: 1,
                },
                host_acks: AckHabit {
                    repeats: 36,
                    keep: 1,
                    chance: 1.0,
                    alone: false,
                    stale: 0.0,
                    stale_most: 1,
                },
                prompt: true,
                fire_every: 7.0,
                torpedo_every: 10.25,
                damage: 0.35,
                repair: 0.1,
                notice_skip: 0.75,
                collision_every: Some(27.0),
                steady: true,
            },
        }
    }
}

/// Rates and habits of the simulated peers.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Seconds between a client's turns (its StateUpdates) in the game.
    pub client_turn: f64,
    /// Seconds between the host's turns per client.
    pub host_turn: f64,
    /// StateUpdates the host writes per client per turn, rotating over the ships; a
    /// fraction is the chance of one more.
    pub host_ships_per_turn: f64,
    /// How clients re-send ACKs they already sent.
    pub client_acks: AckHabit,
    /// How the host re-sends ACKs it already sent.
    pub host_acks: AckHabit,
    /// In the game, send new reliable messages and owed ACKs on the next frame instead
    /// of waiting for the turn.
    pub prompt: bool,
    /// Mean seconds between a client's phaser bursts (plus 1 s).
    pub fire_every: f64,
    /// Mean seconds between torpedo launches (plus 1 s).
    pub torpedo_every: f64,
    /// Factor on weapon damage.
    pub damage: f64,
    /// Factor on the speed of repairs and shield regeneration.
    pub repair: f64,
    /// Chance the host sends no 0x06 notice for one StartFiring of a pair.
    pub notice_skip: f64,
    /// Mean seconds between a client's collisions (0x15 CollisionEffect to the host,
    /// not relayed); `None`: no collisions.
    pub collision_every: Option<f64>,
    /// Waits between a client's shots and collisions vary from half to one and a half
    /// times their mean, instead of being exponential (Poisson): the counts of a session
    /// then stay close to their means whatever the seed.
    pub steady: bool,
}

impl Model {
    /// A wait of mean `mean` seconds before a client's next shot or collision.
    pub fn wait(&self, mean: f64, rng: &mut Rng) -> f64 {
        if self.steady {
            mean * rng.range(0.5, 1.5)
        } else {
            rng.exp(mean)
        }
    }
}

impl Default for Model {
    fn default() -> Model {
        Model {
            client_turn: 0.100,
            host_turn: 0.095,
            host_ships_per_turn: 2.0,
            client_acks: AckHabit::NONE,
            host_acks: AckHabit::NONE,
            prompt: false,
            fire_every: 12.0,
            torpedo_every: 17.0,
            damage: 1.0,
            repair: 1.0,
            notice_skip: 0.5,
            collision_every: None,
            steady: false,
        }
    }
}

/// The stock stale-ACK backlog (flows.md §3.1: 88,532 ACK messages in the 34-minute
/// session, backlogs of 20–33, datagrams of up to 110 messages): an ACK, once sent, waits
/// in a backlog and goes again with later datagrams of the link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckHabit {
    /// Times each ACK goes again after its first sending; 0: no backlog.
    pub repeats: u8,
    /// Most ACKs in the backlog; the oldest are dropped first.
    pub keep: usize,
    /// Chance a datagram carries the whole backlog (each ACK in it once more).
    pub chance: f64,
    /// The backlog goes in datagrams of its own (ACK-only datagrams), not with the
    /// datagram's other messages.
    pub alone: bool,
    /// Chance a datagram also carries 1 to `stale_most` ACKs picked from the last 24 the
    /// link sent (README §5).
    pub stale: f64,
    pub stale_most: usize,
}

impl AckHabit {
    /// No backlog; now and then 1–3 stale ACKs (the model before presets).
    pub const NONE: AckHabit = AckHabit {
        repeats: 0,
        keep: 0,
        chance: 0.0,
        alone: false,
        stale: 0.04,
        stale_most: 3,
    };
}
