//! One walk per typed body: the decoders' single pass hands every field to a visitor.
//!
//! A decoder reads each field once, through [`FieldReader`](super::reader::FieldReader),
//! and hands it over — name (the key of its `registry` entry), typed value, byte span —
//! in wire order, while it fills the message's typed body. What that pass leaves behind
//! besides the body is up to the [`Visitor`]: [`TreeBuilder`] assembles the field tree
//! the printers read, [`Lean`] wants nothing (statistics and the HTML report read the
//! typed body only), and a selective visitor keeps the fields it was asked for.

use super::field::{Field, Span, Value};
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

    /// Whether a field of this name is wanted; asked before a value that costs
    /// something to build (text, bytes, derived labels, a subsystem block's tree).
    fn wants(&self, name: &str) -> bool {
        let _ = name;
        self.building()
    }

    /// One field: its name, its value and the bytes it was read from.
    fn field(&mut self, name: Cow<'static, str>, value: Value, span: Span);

    /// Open a group or list.
    fn begin(&mut self) -> Mark;

    /// Close the group opened at `mark`: its members become one field whose value is
    /// the group (each member keeps its span).
    fn end_group(&mut self, name: Cow<'static, str>, mark: Mark, span: Span);

    /// Close the list opened at `mark`: its members' values, in order, become one field.
    fn end_list(&mut self, name: Cow<'static, str>, mark: Mark, span: Span);

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

    fn wants(&self, _name: &str) -> bool {
        true
    }

    #[inline]
    fn field(&mut self, name: Cow<'static, str>, value: Value, span: Span) {
        self.fields.push(Field { name, value, span });
    }

    fn begin(&mut self) -> Mark {
        self.fields.len()
    }

    fn end_group(&mut self, name: Cow<'static, str>, mark: Mark, span: Span) {
        let first = mark.min(self.fields.len());
        let inner: Vec<Field> = self.fields.drain(first..).collect();
        self.fields
            .push(Field::new(name, Value::Group(inner), span));
    }

    fn end_list(&mut self, name: Cow<'static, str>, mark: Mark, span: Span) {
        let first = mark.min(self.fields.len());
        let items: Vec<Value> = self.fields.drain(first..).map(|f| f.value).collect();
        self.fields.push(Field::new(name, Value::List(items), span));
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

    fn field(&mut self, _name: Cow<'static, str>, _value: Value, _span: Span) {}

    fn begin(&mut self) -> Mark {
        0
    }

    fn end_group(&mut self, _name: Cow<'static, str>, _mark: Mark, _span: Span) {}

    fn end_list(&mut self, _name: Cow<'static, str>, _mark: Mark, _span: Span) {}

    fn last_span(&self) -> Option<Span> {
        None
    }

    fn furthest_end(&self) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_builder_nests_groups_and_lists() {
        let mut t = TreeBuilder::new();
        t.field("a".into(), Value::Uint(1), Span::new(1, 2));
        let list = t.begin();
        for i in 0..2u64 {
            let g = t.begin();
            t.field(
                "x".into(),
                Value::Uint(i),
                Span::new(2 + i as usize, 3 + i as usize),
            );
            t.end_group("entry".into(), g, Span::new(2 + i as usize, 3 + i as usize));
        }
        t.end_list("items".into(), list, Span::new(2, 4));
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
    fn lean_keeps_nothing() {
        let mut v = Lean;
        assert!(!v.building());
        v.field("a".into(), Value::Uint(1), Span::new(1, 2));
        assert_eq!(v.last_span(), None);
        assert_eq!(v.furthest_end(), None);
    }
}
