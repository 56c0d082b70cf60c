//! A name typed in a field path, resolved once to the registry entries it stands for.
//!
//! A field's name in a tree is its entry's last segment (`w` for `orientation.w`), so
//! a typed name stands for every entry whose path ends in it (`w`: `orientation.w` and
//! any other `….w`). [`TreeName::new`] finds those entries when the path is parsed;
//! walking a tree then tests a field by its entry ([`Field::id`]), a bit in a set,
//! instead of comparing its name with the typed text at every field.
//!
//! Three kinds of field are named apart from their entry, and are matched by their
//! tree name: a ship layout's children ([`LAYOUT_CHILD`], named by the layout's keys),
//! fields of another game ([`FieldId::OTHER_GAME`], which have no entries), and a list
//! element group carrying its list's entry under a name of its own (a subsystem
//! `record`, left at the top of a tree by a failed read; a list's elements are
//! otherwise values without names).

use super::field::{Field, Value};
use super::registry::{FieldId, FieldType, GAME_FIELDS, LAYOUT_CHILD};
use std::sync::OnceLock;

/// How a field of one entry is tested against a typed name. The two answers that need
/// no more than the entry come first, so the test is one comparison for most fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum Test {
    /// Its fields never carry the name.
    No,
    /// Its fields carry the name (the entry's last segment is the name).
    Yes,
    /// Its fields are named apart from it: compare the tree name.
    ByName,
    /// A list's entry, which a list element left flat by a failed read carries too
    /// under a name of its own: a group of it is compared by name, the list itself is
    /// a field of the name.
    ListOfName,
    /// As [`Test::ListOfName`], the list itself not a field of the name.
    ListOfOther,
}

/// Every position a [`FieldId`] can have, [`FieldId::OTHER_GAME`] included.
const IDS: usize = u8::MAX as usize + 1;

const _: () = assert!(GAME_FIELDS.len() < IDS);

/// Every entry under its tree name (its last segment), sorted by that name: built once.
fn by_tree_name() -> &'static [(&'static str, FieldId)] {
    static TABLE: OnceLock<Vec<(&'static str, FieldId)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: Vec<(&'static str, FieldId)> = GAME_FIELDS
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let local = f.name.rsplit('.').next().unwrap_or(f.name);
                FieldId::at(i).map(|id| (local, id))
            })
            .collect();
        table.sort_by(|a, b| a.0.cmp(b.0));
        table
    })
}

/// A name as typed in a path, with how a field of each entry is tested against it,
/// one byte per entry: walking a tree looks a field's entry up, and compares names
/// only for the few entries whose fields are named apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeName {
    text: String,
    tests: [Test; IDS],
}

impl TreeName {
    /// Resolve a typed name to the entries it stands for (none for a name no entry
    /// ends in: such a name still finds a field named apart from its entry).
    pub fn new(text: &str) -> TreeName {
        let mut tests = [Test::No; IDS];
        let table = by_tree_name();
        let from = table.partition_point(|(local, _)| *local < text);
        for (_, id) in table[from..].iter().take_while(|(local, _)| *local == text) {
            tests[id.index()] = Test::Yes;
        }
        for (i, f) in GAME_FIELDS.iter().enumerate() {
            if f.ty == FieldType::List {
                tests[i] = match tests[i] {
                    Test::Yes => Test::ListOfName,
                    _ => Test::ListOfOther,
                };
            }
        }
        tests[LAYOUT_CHILD.index()] = Test::ByName;
        tests[FieldId::OTHER_GAME.index()] = Test::ByName;
        TreeName {
            text: text.to_string(),
            tests,
        }
    }

    /// The name as typed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether some registry entry's fields carry this name.
    #[cfg(test)]
    fn has_entries(&self) -> bool {
        self.tests
            .iter()
            .any(|t| matches!(t, Test::Yes | Test::ListOfName))
    }

    /// Whether `f` is a field of this name: its entry is one the name stands for, or,
    /// for a field named apart from its entry, its tree name is the name.
    #[inline]
    pub fn names(&self, f: &Field) -> bool {
        let test = self.tests[f.id.index()];
        if test <= Test::Yes {
            return test == Test::Yes;
        }
        self.names_apart(test, f)
    }

    /// [`TreeName::names`] for an entry whose fields may be named apart from it.
    fn names_apart(&self, test: Test, f: &Field) -> bool {
        match (test, &f.value) {
            (Test::ByName, _) | (_, Value::Group(_)) => f.name == self.text,
            (test, _) => test == Test::ListOfName,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::field::Span;
    use crate::game::registry::{field, lookup_id};

    fn at(path: &str, name: &'static str, value: Value) -> Field {
        Field::keyed(
            lookup_id(path).unwrap_or(FieldId::OTHER_GAME),
            name,
            value,
            Span::new(0, 1),
        )
    }

    #[test]
    fn a_name_stands_for_every_entry_that_ends_in_it() {
        let w = TreeName::new("w");
        assert!(w.names(&at("orientation.w", "w", Value::Float(1.0))));
        assert!(!w.names(&at("orientation.x", "x", Value::Float(1.0))));
        let name = TreeName::new("name");
        assert!(name.names(&at("subsystems.name", "name", Value::Text("Hull".into()))));
        assert!(name.names(&at("name", "name", Value::Text("a".into()))));
        // A member of a nested checksum tree carries the top level's entry.
        let hash = TreeName::new("name_hash");
        assert!(hash.names(&at(
            "subdirs.subdir.files.file.name_hash",
            "name_hash",
            Value::Uint(1)
        )));
        assert!(!TreeName::new("orient").has_entries());
        assert!(!TreeName::new("orientation.w").has_entries());
    }

    #[test]
    fn fields_named_apart_from_their_entry_are_matched_by_name() {
        // A layout child: its name is the layout's key, not its entry's last segment.
        let child = Field::keyed(LAYOUT_CHILD, "name", Value::Float(50.0), Span::new(0, 1));
        assert!(TreeName::new("name").names(&child));
        assert!(!TreeName::new("child").names(&child));
        let port = Field::keyed(
            LAYOUT_CHILD,
            "port_impulse",
            Value::Float(50.0),
            Span::new(0, 1),
        );
        assert!(TreeName::new("port_impulse").names(&port));
        // Another game's field.
        let sm = Field::keyed(
            FieldId::OTHER_GAME,
            "speed",
            Value::Float(1.0),
            Span::new(0, 1),
        );
        assert!(TreeName::new("speed").names(&sm));
        assert!(!TreeName::new("position").names(&sm));
        // A subsystem record left flat is a `record`, not the list `subsystems`.
        let record = Field::new(
            field!("subsystems", "record"),
            Value::Group(Vec::new()),
            Span::new(0, 1),
        );
        assert!(!TreeName::new("subsystems").names(&record));
        assert!(TreeName::new("record").names(&record));
        let list = Field::new(
            field!("subsystems"),
            Value::List(Vec::new()),
            Span::new(0, 1),
        );
        assert!(TreeName::new("subsystems").names(&list));
        // A group of a group entry is named by its entry.
        let orientation = Field::new(
            field!("orientation"),
            Value::Group(Vec::new()),
            Span::new(0, 1),
        );
        assert!(TreeName::new("orientation").names(&orientation));
    }
}
