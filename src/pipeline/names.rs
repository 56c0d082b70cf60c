//! How the printers ask the decoding layers for readable names; the pipeline answers
//! with what it has learnt so far of each session.

use crate::game::ships::ShipClass;

/// Names known at the time a record was produced (player names, ship classes).
pub trait Names {
    /// Player name or `client N` for a client of a session.
    fn client_name(&self, session: usize, client: usize) -> Option<String>;
    /// The peer id the host assigned a client (or its peer info names), once seen.
    fn client_peer_id(&self, _session: usize, _client: usize) -> Option<u8> {
        None
    }
    /// "Galaxy (Bot1, slot 1)" for an object id, if anything is known.
    fn describe_object(&self, session: usize, object_id: u32) -> Option<String>;
    /// Ship class name of an object, if its creation was seen.
    fn object_class(&self, session: usize, object_id: u32) -> Option<String>;
    /// The layout of a ship class (subsystem names, keys), from the catalog the
    /// decoder used.
    fn ship_class(&self, species: u16) -> Option<&ShipClass>;
    /// Changes whenever an answer above may have changed (an object created or gone, a
    /// player's name or slot learnt): a printer may keep answers while it stays equal.
    fn epoch(&self) -> u64;
    /// The ship an object id is part of right now: the ship itself, or the ship that
    /// owns a subsystem id. Its creation frame tells a ship from a later one that
    /// reuses the id; reports attach events and tracks to ships by it.
    fn ship_of(&self, _session: usize, _object_id: u32) -> Option<ShipIdentity> {
        None
    }
    /// The player slot owning an object's ship (from its creation, which may differ
    /// from the id's range) and that player's name (the slot's client's, else the
    /// name in the creation record).
    fn object_owner(&self, _session: usize, _object_id: u32) -> Option<(u8, Option<String>)> {
        None
    }
}

/// One ship's life: its object id and the frame of the creation message that began it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShipIdentity {
    pub object_id: u32,
    pub created_frame: u64,
}

/// Knows nothing: every lookup falls back to numbers.
pub struct NoNames;

impl Names for NoNames {
    fn client_name(&self, _: usize, _: usize) -> Option<String> {
        None
    }
    fn describe_object(&self, _: usize, _: u32) -> Option<String> {
        None
    }
    fn object_class(&self, _: usize, _: u32) -> Option<String> {
        None
    }
    fn ship_class(&self, _: u16) -> Option<&ShipClass> {
        None
    }
    fn epoch(&self) -> u64 {
        0
    }
}
