//! Controller types learned from Create updates (`--stateful`).
//!
//! Update layouts of RigidBody and ChildShape depend on the controller type, which only
//! the Create update carries. The table remembers it per `(object type, id)` until the
//! matching Remove.

use std::collections::HashMap;

/// Entries kept at most; beyond this Creates are no longer learned (and said so once),
/// so hostile input cannot grow memory without bound.
pub const MAX_ENTRIES: usize = 1 << 20;

#[derive(Debug, Default, Clone)]
pub struct ControllerTable {
    map: HashMap<(u8, u32), u8>,
    /// Set once the table refused an entry for being full.
    pub overflowed: bool,
}

impl ControllerTable {
    pub fn new() -> ControllerTable {
        ControllerTable::default()
    }
    pub fn get(&self, object_type: u8, id: u32) -> Option<u8> {
        self.map.get(&(object_type, id)).copied()
    }
    /// Remember a Create; returns false when the table is full.
    pub fn learn(&mut self, object_type: u8, id: u32, controller: u8) -> bool {
        let key = (object_type, id);
        if self.map.len() >= MAX_ENTRIES && !self.map.contains_key(&key) {
            self.overflowed = true;
            return false;
        }
        self.map.insert(key, controller);
        true
    }
    pub fn forget(&mut self, object_type: u8, id: u32) {
        self.map.remove(&(object_type, id));
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learn_get_forget() {
        let mut t = ControllerTable::new();
        assert!(t.learn(0, 7, 2));
        assert_eq!(t.get(0, 7), Some(2));
        assert_eq!(t.get(1, 7), None);
        t.forget(0, 7);
        assert!(t.is_empty());
    }
}
