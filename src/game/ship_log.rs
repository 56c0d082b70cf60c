//! Every ship created in a session, for the client ship lists of `flows`, `info` and
//! the report. The object registry forgets ended objects beyond its bound (their names
//! matter only while messages about them still arrive); the lists must not, or a long
//! game's players lose most of their ships from them. An entry costs a few dozen bytes,
//! and [`MAX_SHIPS_LISTED`] is far beyond any real game (a 15-player hour creates about
//! 840 ships), so only a hostile capture reaches it, and the summary says so.

/// Ship creations listed per session.
pub const MAX_SHIPS_LISTED: usize = 65_536;

/// One ship creation.
#[derive(Debug, Clone, PartialEq)]
pub struct ShipEntry {
    pub object_id: u32,
    /// Ship class ("Galaxy").
    pub class_name: String,
    pub owner_slot: u8,
    pub team: Option<u8>,
    /// Frame of the creation message.
    pub created_frame: u64,
}

/// The ships of one session in order of creation.
#[derive(Debug, Clone, Default)]
pub struct ShipLog {
    entries: Vec<ShipEntry>,
    unlisted: u64,
}

impl ShipLog {
    /// A new ship was registered (the registry hands its entry over, so that this list
    /// needs nothing of the registry's types).
    pub fn note(&mut self, ship: ShipEntry) {
        if self.entries.len() >= MAX_SHIPS_LISTED {
            self.unlisted += 1;
            return;
        }
        self.entries.push(ship);
    }

    /// The ships listed, in order of creation.
    pub fn entries(&self) -> &[ShipEntry] {
        &self.entries
    }

    /// Ships created beyond [`MAX_SHIPS_LISTED`].
    pub fn unlisted(&self) -> u64 {
        self.unlisted
    }
}
