//! Ship subsystem layouts — placeholder contract, replaced by the full catalog.

/// All known ship classes (stock ones built in, plus any loaded from a layout file).
#[derive(Debug, Clone, Default)]
pub struct ShipCatalog {}

impl ShipCatalog {
    /// The 16 stock classes.
    pub fn stock() -> ShipCatalog {
        ShipCatalog {}
    }

    /// Readable class name for a species id, if known.
    pub fn class_name(&self, _species: u16) -> Option<&str> {
        None
    }
}
