//! One walk per typed body: the decoders' single pass hands every field to a visitor.
//!
//! A decoder reads each field once, through [`FieldReader`](super::reader::FieldReader),
//! and hands it over — its `registry` entry (a [`FieldId`]), its name in the tree, typed
//! value, byte span — in wire order, while it fills the message's typed body. What that pass leaves behind
//! besides the body is up to the [`Visitor`]: [`TreeBuilder`] assembles the field tree
//! the printers read, [`Lean`] wants nothing (statistics and the HTML report read the
//! typed body only), and [`Selective`] keeps the top-level fields it was asked for
//! (`decode --fields`).

use super::field::{Field, Span, Value};
use super::registry::{FieldId, GAME_FIELDS};
use std::borrow::Cow;

/// Where a group or list opened; handed back when it closes.
pub type Mark = usize;

/// What a decoder's pass hands its fields to.
///
/// Groups and lists nest: [`Visitor::begin`] opens one, the fields handed over until
/// the matching `end_group` / `end_list` are its members, in order.
pub trait Visitor {
    /// Whether the visitor records anything at all. Asked once per message: a decoder
    /// for a visitor that builds nothing constructs no [`Value`] and makes no call, so a
    /// lean decode costs what reading the bytes costs.
    fn building(&self) -> bool;

    /// Whether a field of this registry entry is wanted; asked before a value that
    /// costs something to build (text, bytes, derived labels, a subsystem block's tree).
    fn wants(&self, id: FieldId) -> bool {
        let _ = id;
        self.building()
    }

    /// One field: its registry entry, its name in the tree (the entry's last segment,
    /// or a ship layout's child key), its value and the bytes it was read from.
    fn field(&mut self, id: FieldId, name: Cow<'static, str>, value: Value, span: Span);

    /// A field read but not handed over, since [`Visitor::wants`] said no: its span
    /// only (it still counts for [`Visitor::last_span`] and [`Visitor::furthest_end`]).
    fn skipped(&mut self, span: Span) {
        let _ = span;
    }

    /// Open a group or list.
    fn begin(&mut self) -> Mark;

    /// Close the group opened at `mark`: its members become one field whose value is
    /// the group (each member keeps its span).
    fn end_group(&mut self, id: FieldId, name: Cow<'static, str>, mark: Mark, span: Span);

    /// Close the list opened at `mark`: its members' values, in order, become one field.
    fn end_list(&mut self, id: FieldId, name: Cow<'static, str>, mark: Mark, span: Span);

    /// Span of the last field handed over at the open level, if it was kept.
    fn last_span(&self) -> Option<Span>;

    /// Where the furthest field handed over at the top level ends (so a failed decode
    /// knows where its undecoded remainder starts).
    fn furthest_end(&self) -> Option<u32>;
}

/// Top-level fields of a full StateUpdate (header, motion, subsystem block).
const FIELDS_PER_MESSAGE: usize = 16;

/// The visitor that builds the whole field tree, exactly as the decoders describe it.
#[derive(Debug, Default)]
pub struct TreeBuilder {
    fields: Vec<Field>,
}

impl TreeBuilder {
    pub fn new() -> TreeBuilder {
        TreeBuilder {
            // Room for a StateUpdate's top-level fields, the bulk of every capture, so
            // the list is not grown three times per message.
            fields: Vec::with_capacity(FIELDS_PER_MESSAGE),
        }
    }

    /// The fields built so far (the top level, open groups' members included).
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    pub fn into_fields(self) -> Vec<Field> {
        self.fields
    }
}

impl Visitor for TreeBuilder {
    fn building(&self) -> bool {
        true
    }

    fn wants(&self, _id: FieldId) -> bool {
        true
    }

    #[inline]
    fn field(&mut self, id: FieldId, name: Cow<'static, str>, value: Value, span: Span) {
        self.fields.push(Field {
            id,
            name,
            value,
            span,
        });
    }

    fn begin(&mut self) -> Mark {
        self.fields.len()
    }

    fn end_group(&mut self, id: FieldId, name: Cow<'static, str>, mark: Mark, span: Span) {
        let first = mark.min(self.fields.len());
        let inner: Vec<Field> = self.fields.drain(first..).collect();
        self.fields
            .push(Field::keyed(id, name, Value::Group(inner), span));
    }

    fn end_list(&mut self, id: FieldId, name: Cow<'static, str>, mark: Mark, span: Span) {
        let first = mark.min(self.fields.len());
        let items: Vec<Value> = self.fields.drain(first..).map(|f| f.value).collect();
        self.fields
            .push(Field::keyed(id, name, Value::List(items), span));
    }

    fn last_span(&self) -> Option<Span> {
        self.fields.last().map(|f| f.span)
    }

    fn furthest_end(&self) -> Option<u32> {
        self.fields.iter().map(|f| f.span.end()).max()
    }
}

/// The visitor that wants nothing: a lean decode (typed body and warnings only).
#[derive(Debug, Default, Clone, Copy)]
pub struct Lean;

impl Visitor for Lean {
    fn building(&self) -> bool {
        false
    }

    fn field(&mut self, _id: FieldId, _name: Cow<'static, str>, _value: Value, _span: Span) {}

    fn begin(&mut self) -> Mark {
        0
    }

    fn end_group(&mut self, _id: FieldId, _name: Cow<'static, str>, _mark: Mark, _span: Span) {}

    fn end_list(&mut self, _id: FieldId, _name: Cow<'static, str>, _mark: Mark, _span: Span) {}

    fn last_span(&self) -> Option<Span> {
        None
    }

    fn furthest_end(&self) -> Option<u32> {
        None
    }
}

/// A few top-level field names, resolved once to their [`GAME_FIELDS`] entries, held
/// as a small plain value the decode context carries (it is copied with the context).
/// Testing a field is comparing its [`FieldId`] with a few bytes: it runs for every
/// top-level field decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntrySet {
    /// Positions in [`GAME_FIELDS`].
    entries: [u8; MAX_ENTRIES],
    len: u8,
}

/// More names than this are no longer "a few": whole trees cost less than testing.
const MAX_ENTRIES: usize = 16;
const _: () = assert!(GAME_FIELDS.len() <= u8::MAX as usize);

impl EntrySet {
    /// No names.
    pub const EMPTY: EntrySet = EntrySet {
        entries: [0; MAX_ENTRIES],
        len: 0,
    };

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The set of these names' entries; `None` when one of them has no registry entry
    /// or there are more than [`MAX_ENTRIES`] (the caller builds whole trees then).
    pub fn of<'n>(names: impl IntoIterator<Item = &'n str>) -> Option<EntrySet> {
        let mut set = EntrySet::default();
        for name in names {
            let i = GAME_FIELDS.binary_search_by(|f| f.name.cmp(name)).ok()?;
            if set.entries[..set.len as usize].contains(&(i as u8)) {
                continue;
            }
            *set.entries.get_mut(set.len as usize)? = i as u8;
            set.len += 1;
        }
        Some(set)
    }

    /// The names of both sets; `None` when they are more than [`MAX_ENTRIES`].
    pub fn union(self, other: EntrySet) -> Option<EntrySet> {
        let mut set = self;
        for &i in &other.entries[..other.len as usize] {
            if set.entries[..set.len as usize].contains(&i) {
                continue;
            }
            *set.entries.get_mut(set.len as usize)? = i;
            set.len += 1;
        }
        Some(set)
    }

    #[inline]
    pub fn contains(&self, id: FieldId) -> bool {
        self.entries[..self.len as usize].contains(&(id.index() as u8))
    }
}

/// The visitor that keeps only the top-level fields of the names it was given, each
/// whole: a path resolves inside them (`subsystems[hull].condition_pct` reads every
/// record's `key`). What it drops is not built where building costs something:
/// [`Visitor::wants`] says no to the text, bytes and derived trees of other names.
///
/// Its fields are the whole tree's top-level fields of those names, in order (and every
/// member a failed read left flat), so a path that starts at one of them finds what it
/// finds in the whole tree.
#[derive(Debug)]
pub struct Selective {
    names: EntrySet,
    tree: TreeBuilder,
    /// Where the groups and lists still open start: inside one everything is kept,
    /// since only its name, known when it closes, decides.
    open: Vec<Mark>,
    last: Option<Span>,
    furthest: Option<u32>,
}

impl Selective {
    pub fn new(names: EntrySet) -> Selective {
        Selective {
            names,
            tree: TreeBuilder::default(),
            open: Vec::new(),
            last: None,
            furthest: None,
        }
    }

    /// The fields kept. Groups a failed read left open stay flat, as in a
    /// [`TreeBuilder`]'s tree, so their members are top-level fields, each with its
    /// member's entry (`orientation.w`, printed `w`): a path's first name finds them
    /// in the whole tree, and a bare name below them. Such a group never closed, so
    /// its own entry, which decides, is unknown: its members are all kept, as while
    /// it was open, and a path finds among them what it finds in the whole tree.
    pub fn into_fields(self) -> Vec<Field> {
        self.tree.into_fields()
    }

    /// Note a field handed over, kept or not: what a [`TreeBuilder`] would answer for
    /// the last span and the furthest end.
    fn saw(&mut self, span: Span) {
        self.last = Some(span);
        self.furthest = Some(self.furthest.map_or(span.end(), |e| e.max(span.end())));
    }

    fn keeps(&self, id: FieldId) -> bool {
        !self.open.is_empty() || self.names.contains(id)
    }

    /// Close the innermost group or list: whether to keep it (else its members are
    /// dropped).
    fn close(&mut self, id: FieldId, mark: Mark, span: Span) -> bool {
        self.open.pop();
        self.saw(span);
        let keep = self.keeps(id);
        if !keep {
            self.tree.fields.truncate(mark);
        }
        keep
    }
}

impl Visitor for Selective {
    fn building(&self) -> bool {
        true
    }

    fn wants(&self, id: FieldId) -> bool {
        self.keeps(id)
    }

    fn skipped(&mut self, span: Span) {
        self.saw(span);
    }

    fn field(&mut self, id: FieldId, name: Cow<'static, str>, value: Value, span: Span) {
        self.saw(span);
        if self.keeps(id) {
            self.tree.field(id, name, value, span);
        }
    }

    fn begin(&mut self) -> Mark {
        let mark = self.tree.begin();
        self.open.push(mark);
        mark
    }

    fn end_group(&mut self, id: FieldId, name: Cow<'static, str>, mark: Mark, span: Span) {
        if self.close(id, mark, span) {
            self.tree.end_group(id, name, mark, span);
        }
    }

    fn end_list(&mut self, id: FieldId, name: Cow<'static, str>, mark: Mark, span: Span) {
        if self.close(id, mark, span) {
            self.tree.end_list(id, name, mark, span);
        }
    }

    fn last_span(&self) -> Option<Span> {
        self.last
    }

    fn furthest_end(&self) -> Option<u32> {
        self.furthest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::registry::field;

    #[test]
    fn tree_builder_nests_groups_and_lists() {
        let mut t = TreeBuilder::new();
        t.field(
            field!("flags").id,
            "a".into(),
            Value::Uint(1),
            Span::new(1, 2),
        );
        let list = t.begin();
        for i in 0..2u64 {
            let g = t.begin();
            t.field(
                field!("contacts.contact.magnitude_raw").id,
                "x".into(),
                Value::Uint(i),
                Span::new(2 + i as usize, 3 + i as usize),
            );
            t.end_group(
                field!("contacts.contact").id,
                "entry".into(),
                g,
                Span::new(2 + i as usize, 3 + i as usize),
            );
        }
        t.end_list(field!("contacts").id, "items".into(), list, Span::new(2, 4));
        let f = t.into_fields();
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].span, Span { start: 2, len: 2 });
        let Value::List(items) = &f[1].value else {
            panic!("not a list: {:?}", f[1].value)
        };
        assert_eq!(items.len(), 2);
        let Value::Group(inner) = &items[1] else {
            panic!("not a group: {:?}", items[1])
        };
        assert_eq!(inner[0].value, Value::Uint(1));
        assert_eq!(inner[0].span, Span { start: 3, len: 1 });
    }

    #[test]
    fn selective_keeps_named_top_level_fields_whole() {
        let names = EntrySet::of(["position", "contacts"]).expect("registry names");
        let mut s = Selective::new(names);
        s.field(
            field!("flags").id,
            "flags".into(),
            Value::Hex(1),
            Span::new(1, 2),
        );
        s.field(
            field!("position").id,
            "position".into(),
            Value::Vec3([1.0; 3]),
            Span::new(2, 14),
        );
        let g = s.begin();
        s.field(
            field!("orientation.w").id,
            "w".into(),
            Value::Float(1.0),
            Span::new(14, 18),
        );
        s.end_group(
            field!("orientation").id,
            "orientation".into(),
            g,
            Span::new(14, 18),
        );
        let c = s.begin();
        s.field(
            field!("contacts.contact").id,
            "contact".into(),
            Value::Uint(7),
            Span::new(18, 22),
        );
        s.end_group(
            field!("contacts").id,
            "contacts".into(),
            c,
            Span::new(18, 22),
        );
        s.skipped(Span::new(22, 25));
        assert_eq!(s.last_span(), Some(Span::new(22, 25)));
        // A read that fails inside a group leaves it open, its members flat at the top:
        // the group's entry is never known, so all of them are kept, wanted or not.
        s.begin();
        s.field(
            field!("position").id,
            "position".into(),
            Value::Vec3([2.0; 3]),
            Span::new(25, 37),
        );
        s.field(
            field!("force").id,
            "force".into(),
            Value::Float(3.0),
            Span::new(37, 41),
        );
        assert_eq!(s.furthest_end(), Some(41));
        let fields = s.into_fields();
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_ref()).collect();
        assert_eq!(names, ["position", "contacts", "position", "force"]);
        let Value::Group(inner) = &fields[1].value else {
            panic!("not a group: {:?}", fields[1].value)
        };
        assert_eq!(inner[0].name, "contact");
    }

    #[test]
    fn selective_tests_entries_not_names() {
        // A member's name that equals a wanted top-level name is not that field: a
        // subsystem record's `name` is not the top-level `name`.
        let mut s = Selective::new(EntrySet::of(["name"]).expect("registry names"));
        assert!(s.wants(field!("name").id));
        assert!(!s.wants(field!("subsystems.name").id));
        s.field(
            field!("subsystems.name").id,
            "name".into(),
            Value::Uint(1),
            Span::new(1, 2),
        );
        s.field(
            field!("name").id,
            "name".into(),
            Value::Uint(2),
            Span::new(2, 3),
        );
        let fields = s.into_fields();
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].value, Value::Uint(2));
    }

    #[test]
    fn lean_keeps_nothing() {
        let mut v = Lean;
        assert!(!v.building());
        v.field(
            field!("flags").id,
            "a".into(),
            Value::Uint(1),
            Span::new(1, 2),
        );
        assert_eq!(v.last_span(), None);
        assert_eq!(v.furthest_end(), None);
    }
}
