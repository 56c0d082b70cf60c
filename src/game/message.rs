//! A decoded game message (the payload of one complete 0x32 transport message).

use super::field::Field;
use super::opcodes::Body;
use super::update::StateUpdate;
use crate::diag::Warning;

/// One game message, decoded as far as the bytes allow.
///
/// `fields` covers every byte of the message: what is understood is typed, what is not is
/// a labelled `Value::Bytes` field, and a decode failure leaves a `decode_error` warning
/// plus the undecoded remainder as raw bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct GameMessage {
    pub opcode: u8,
    /// Human name of the opcode ("StateUpdate", "ChecksumRequest", "Unknown").
    pub name: &'static str,
    /// Bytes of the game message, opcode byte included.
    pub length: usize,
    pub fields: Vec<Field>,
    pub warnings: Vec<Warning>,
    /// What the message says, typed; `None` when its decoder failed before the part
    /// that identifies it (see [`Body`]).
    pub body: Option<Body>,
}

impl GameMessage {
    /// The object the message is about (see [`Body::object_id`]).
    pub fn object_id(&self) -> Option<u32> {
        self.body.as_ref().and_then(Body::object_id)
    }

    /// The typed StateUpdate (opcode 0x1C, header readable).
    pub fn state_update(&self) -> Option<&StateUpdate> {
        match &self.body {
            Some(Body::StateUpdate(su)) => Some(su),
            _ => None,
        }
    }

    pub fn state_update_mut(&mut self) -> Option<&mut StateUpdate> {
        match &mut self.body {
            Some(Body::StateUpdate(su)) => Some(su),
            _ => None,
        }
    }

    /// Whether dropping this message frees nothing: no field tree, no warnings, no
    /// body (a StateUpdate whose box went back to the pool has none). Most messages of
    /// a capture are such StateUpdates, and their records are refilled per message:
    /// the check lets a record forget one instead of running its out-of-line drop.
    #[inline]
    pub fn owns_nothing(&self) -> bool {
        // Every field named, none skipped: a field added to the message stops the build
        // here until this check covers what it owns (else a forgotten message leaks it).
        let GameMessage {
            opcode: _,
            name: _,
            length: _,
            fields,
            warnings,
            body,
        } = self;
        fields.capacity() == 0 && warnings.capacity() == 0 && body.is_none()
    }

    /// Take the StateUpdate's box out (to reuse its allocation for a later message).
    pub fn take_state_update(&mut self) -> Option<Box<StateUpdate>> {
        match self.body.take() {
            Some(Body::StateUpdate(su)) => Some(su),
            other => {
                self.body = other;
                None
            }
        }
    }
}

/// Every object id a game message names, each once, in the order of its first mention on
/// the wire: a StateUpdate's object and every field holding an object id, at any depth
/// (what `--object` and `-Y object_ids` test). Appended to `out`.
///
/// A StateUpdate's object is read from its typed value, which every decode has; its tree,
/// when one was built (a StateUpdate that warned, or whole trees asked for), names the same
/// object again, and other messages may name one object in two fields (source and
/// target): the list is the set of objects, so it does not depend on which trees were built.
pub fn mentioned_objects(g: &GameMessage, out: &mut Vec<u32>) {
    fn walk(fields: &[super::field::Field], out: &mut Vec<u32>) {
        for f in fields {
            match &f.value {
                super::field::Value::ObjectId(v) => out.push(*v),
                super::field::Value::Group(c) => walk(c, out),
                super::field::Value::List(items) => {
                    for i in items {
                        if let super::field::Value::Group(c) = i {
                            walk(c, out);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let start = out.len();
    if let Some(s) = g.state_update() {
        out.push(s.object_id);
    }
    walk(&g.fields, out);
    keep_first_of_each(out, start);
}

/// Drops every repeat of an id in `ids[start..]`, keeping each id's first place.
fn keep_first_of_each(ids: &mut Vec<u32>, start: usize) {
    // A message names a handful of objects: a scan of the ones kept costs less than a set.
    // A list long enough for that to be quadratic (ids are four bytes each, so a long
    // message can hold thousands) gets a set instead.
    const SCAN_UP_TO: usize = 32;
    if ids.len() - start <= SCAN_UP_TO {
        let mut kept = start;
        for i in start..ids.len() {
            let id = ids[i];
            if !ids[start..kept].contains(&id) {
                ids[kept] = id;
                kept += 1;
            }
        }
        ids.truncate(kept);
    } else {
        let mut seen = rustc_hash::FxHashSet::default();
        let tail: Vec<u32> = ids.drain(start..).collect();
        ids.extend(tail.into_iter().filter(|id| seen.insert(*id)));
    }
}

#[cfg(test)]
mod tests {
    use super::keep_first_of_each;

    fn kept(ids: &[u32], start: usize) -> Vec<u32> {
        let mut v = ids.to_vec();
        keep_first_of_each(&mut v, start);
        v
    }

    #[test]
    fn repeats_go_and_first_places_stay() {
        assert_eq!(kept(&[7, 7], 0), [7]);
        assert_eq!(kept(&[3, 1, 3, 2, 1], 0), [3, 1, 2]);
        assert_eq!(kept(&[], 0), [] as [u32; 0]);
        // Only what was appended is deduplicated.
        assert_eq!(kept(&[5, 5, 1, 5, 1], 2), [5, 5, 1, 5]);
    }

    #[test]
    fn a_long_list_gives_what_a_short_one_would() {
        let ids: Vec<u32> = (0..200).map(|i| (i * 7919) % 61).collect();
        let mut want = Vec::new();
        for &id in &ids {
            if !want.contains(&id) {
                want.push(id);
            }
        }
        assert_eq!(kept(&ids, 0), want);
        let mut prefixed = vec![9, 9];
        prefixed.extend(&ids);
        assert_eq!(kept(&prefixed, 2)[2..], want[..]);
    }
}
