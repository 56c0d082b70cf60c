//! Field paths: one syntax that names any decoded value of a message.
//!
//! ```text
//! path     = segment ( "." segment )*
//! segment  = name selector*
//! name     = field name (no ".", "[" or "]") | "*"
//! selector = "[" ( position | key | "*" ) "]"
//! ```
//!
//! A path walks a message's [`Field`] tree the way its JSON reads (`docs/json.md`):
//! `speed`, `position[0]` (a vector's component or a list's element, 0-based),
//! `subsystems[hull].condition_pct` (the element of a list of groups whose `key` field
//! is `hull`), `power_block[warp_core].value`. A name that occurs more than once in one
//! group is a list of its values, as in the JSON: `file[0]`, `file[1]`.
//!
//! `*` matches any one name or any one element, so a path can also be a pattern
//! (`subsystems[*].condition_pct`). [`leaves`] lists a message's values with the
//! concrete path of each, in wire order; [`FieldPath::matches`] tests a concrete path
//! against a pattern; [`FieldPath::resolve`] finds the values a path names.

use super::field::{Field, Value};
use super::field_match::TreeName;
use super::registry::{field, FieldId};
use std::borrow::Cow;
use std::fmt;

/// What a segment's name or a selector accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sel {
    /// A position in a list (or a vector's component).
    Index(usize),
    /// The element of a list of groups whose `key` field has this text.
    Key(String),
    Any,
    /// Wireshark's slice of a text or bytes value: from `start` (from the end when
    /// negative), `len` items (to the end when none): `[0:2]`, `[1-3]`, `[-2:]`.
    Slice {
        start: isize,
        len: Option<usize>,
    },
}

/// A slice selector's text: `i:j` (offset and length), `i-j` (first and last,
/// inclusive), `:j`, `i:`, or a negative position `-i` (one item from the end).
fn parse_slice(inner: &str) -> Option<Sel> {
    let num = |t: &str| -> Option<isize> { t.parse().ok() };
    if let Some((a, b)) = inner.split_once(':') {
        let start = if a.is_empty() { 0 } else { num(a)? };
        let len = if b.is_empty() {
            None
        } else {
            Some(b.parse().ok()?)
        };
        return Some(Sel::Slice { start, len });
    }
    if let Some(rest) = inner.strip_prefix('-') {
        let n: isize = rest.parse().ok()?;
        return Some(Sel::Slice {
            start: -n,
            len: Some(1),
        });
    }
    let (a, b) = inner.split_once('-')?;
    let (first, last): (isize, isize) = (num(a)?, num(b)?);
    (last >= first && first >= 0).then(|| Sel::Slice {
        start: first,
        len: Some((last - first + 1) as usize),
    })
}

/// A name ending in a slice (`name[0:5]`, `client_name[-2:]`): the name before it and
/// the slice's start and length. A plain position (`[2]`) is not taken as one here.
pub fn split_slice(name: &str) -> Option<(&str, isize, Option<usize>)> {
    let inner = name.strip_suffix(']')?;
    let open = inner.rfind('[')?;
    match parse_slice(&inner[open + 1..])? {
        Sel::Slice { start, len } => Some((&name[..open], start, len)),
        _ => None,
    }
}

/// The characters of `t` a slice picks (none when it picks nothing).
pub fn slice_chars(t: &str, start: isize, len: Option<usize>) -> Option<String> {
    let chars: Vec<char> = t.chars().collect();
    let r = slice_range(chars.len(), start, len);
    (!r.is_empty()).then(|| chars[r].iter().collect())
}

/// The items `[start, start + len)` of a sequence of `n`, clipped to it.
fn slice_range(n: usize, start: isize, len: Option<usize>) -> std::ops::Range<usize> {
    let from = if start < 0 {
        n.saturating_sub(start.unsigned_abs())
    } else {
        (start as usize).min(n)
    };
    let to = len.map_or(n, |l| from.saturating_add(l).min(n));
    from..to
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    /// `None`: `*`. Resolved when the path is parsed to the registry entries it
    /// stands for, so walking a tree compares entries.
    name: Option<TreeName>,
    selectors: Vec<Sel>,
}

impl Segment {
    /// The name as typed (none for `*`).
    fn text(&self) -> Option<&str> {
        self.name.as_ref().map(TreeName::text)
    }

    /// Whether the segment's name (or its `*`) is that of the field `f`.
    fn names(&self, f: &Field) -> bool {
        self.name.as_ref().is_none_or(|n| n.names(f))
    }
}

/// A parsed path (or pattern); parse once with `str::parse`, use many times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    segments: Vec<Segment>,
}

/// Why a text is not a path, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    pub at: usize,
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.at + 1, self.message)
    }
}

impl std::error::Error for PathError {}

/// Longest path accepted: paths come from command lines; this keeps a pattern's
/// matching cost bounded.
const MAX_SEGMENTS: usize = 64;

impl std::str::FromStr for FieldPath {
    type Err = PathError;

    fn from_str(text: &str) -> Result<FieldPath, PathError> {
        let err = |at: usize, message: &str| PathError {
            at,
            message: message.to_string(),
        };
        if text.is_empty() {
            return Err(err(0, "empty path"));
        }
        let bytes = text.as_bytes();
        let mut segments = Vec::new();
        let mut i = 0;
        loop {
            let start = i;
            while i < bytes.len() && !matches!(bytes[i], b'.' | b'[' | b']') {
                i += 1;
            }
            let name = &text[start..i];
            if name.is_empty() {
                return Err(err(start, "expected a field name or *"));
            }
            let mut selectors = Vec::new();
            while i < bytes.len() && bytes[i] == b'[' {
                let open = i;
                let Some(close) = text[open..].find(']').map(|k| open + k) else {
                    return Err(err(open, "[ without ]"));
                };
                let inner = &text[open + 1..close];
                if inner.is_empty() || inner.contains('[') {
                    return Err(err(open + 1, "expected a position, a key or * inside [ ]"));
                }
                selectors.push(match inner {
                    "*" => Sel::Any,
                    _ => match inner.parse::<usize>() {
                        Ok(n) => Sel::Index(n),
                        Err(_) => parse_slice(inner).unwrap_or_else(|| Sel::Key(inner.to_string())),
                    },
                });
                i = close + 1;
            }
            segments.push(Segment {
                name: (name != "*").then(|| TreeName::new(name)),
                selectors,
            });
            if segments.len() > MAX_SEGMENTS {
                return Err(err(start, "too many segments"));
            }
            match bytes.get(i) {
                None => break,
                Some(b'.') => i += 1,
                Some(_) => return Err(err(i, "expected . or [ after a segment")),
            }
        }
        Ok(FieldPath { segments })
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, s) in self.segments.iter().enumerate() {
            if k > 0 {
                f.write_str(".")?;
            }
            f.write_str(s.text().unwrap_or("*"))?;
            for sel in &s.selectors {
                match sel {
                    Sel::Index(n) => write!(f, "[{n}]")?,
                    Sel::Key(k) => write!(f, "[{k}]")?,
                    Sel::Any => f.write_str("[*]")?,
                    Sel::Slice { start, len } => match len {
                        Some(l) => write!(f, "[{start}:{l}]")?,
                        None => write!(f, "[{start}:]")?,
                    },
                }
            }
        }
        Ok(())
    }
}

/// The entries of the `key` members of list elements (a subsystem record's, a power
/// block pair's): the ship layout's key of the entry the element is about.
const KEY_ENTRIES: [FieldId; 2] = [field!("subsystems.key").id, field!("power_block.key").id];

/// The `key` text of a group, if it has one: its member of a key entry.
fn key_of(v: &Value) -> Option<&str> {
    match v {
        Value::Group(g) => g.iter().find_map(|f| match &f.value {
            Value::Text(t) if KEY_ENTRIES.contains(&f.id) => Some(t.as_str()),
            _ => None,
        }),
        _ => None,
    }
}

/// The elements a selector can pick from: a list's items, a vector's components.
fn select<'a>(v: Cow<'a, Value>, sel: &Sel, out: &mut Vec<Cow<'a, Value>>) {
    // Text and bytes are sequences too (Wireshark's slices): `[n]` is one item.
    let (start, len) = match sel {
        Sel::Index(n) => (*n as isize, Some(1)),
        Sel::Slice { start, len } => (*start, *len),
        _ => (0, None),
    };
    match v.as_ref() {
        Value::Bytes(b) if matches!(sel, Sel::Index(_) | Sel::Slice { .. }) => {
            let r = slice_range(b.len(), start, len);
            if !r.is_empty() || len == Some(0) {
                out.push(Cow::Owned(Value::Bytes(b[r].to_vec())));
            }
            return;
        }
        Value::Text(t) if matches!(sel, Sel::Index(_) | Sel::Slice { .. }) => {
            let chars: Vec<char> = t.chars().collect();
            let r = slice_range(chars.len(), start, len);
            if !r.is_empty() || len == Some(0) {
                out.push(Cow::Owned(Value::Text(chars[r].iter().collect())));
            }
            return;
        }
        _ => {}
    }
    match v {
        Cow::Borrowed(Value::List(items)) => match sel {
            Sel::Slice { start, len } => {
                let r = slice_range(items.len(), *start, *len);
                out.extend(items[r].iter().map(Cow::Borrowed));
            }
            Sel::Index(n) => out.extend(items.get(*n).map(Cow::Borrowed)),
            Sel::Key(k) => out.extend(
                items
                    .iter()
                    .filter(|i| key_of(i) == Some(k.as_str()))
                    .map(Cow::Borrowed),
            ),
            Sel::Any => out.extend(items.iter().map(Cow::Borrowed)),
        },
        Cow::Borrowed(Value::Vec3(c)) => {
            let pick = |n: usize| c.get(n).map(|x| Cow::Owned(Value::Float(*x as f64)));
            match sel {
                Sel::Index(n) => out.extend(pick(*n)),
                Sel::Key(_) => {}
                Sel::Any => out.extend((0..3).filter_map(pick)),
                Sel::Slice { start, len } => {
                    out.extend(slice_range(3, *start, *len).filter_map(pick))
                }
            }
        }
        _ => {}
    }
}

impl FieldPath {
    /// Whether the path has a `*` anywhere.
    pub fn is_pattern(&self) -> bool {
        self.segments
            .iter()
            .any(|s| s.name.is_none() || s.selectors.contains(&Sel::Any))
    }

    /// A single name without selectors (`game_time`): as an ignore pattern it names
    /// that field at any depth.
    pub fn bare_name(&self) -> Option<&str> {
        match self.segments.as_slice() {
            [s] if s.selectors.is_empty() => s.text(),
            _ => None,
        }
    }

    /// The name the path starts from, a top-level field's (none for `*`).
    pub fn first_name(&self) -> Option<&str> {
        self.segments.first().and_then(Segment::text)
    }

    /// Whether a segment of this path is the field `name`.
    pub fn has_name(&self, name: &str) -> bool {
        self.segments.iter().any(|s| s.text() == Some(name))
    }

    /// The values this path names in `fields`, in wire order (several when the path
    /// has a `*` or names a repeated field without a position).
    pub fn resolve<'a>(&self, fields: &'a [Field]) -> Vec<Cow<'a, Value>> {
        let mut current: Vec<Cow<'a, Value>> = Vec::new();
        for (k, seg) in self.segments.iter().enumerate() {
            // The groups this segment looks into: the message itself at first, then
            // the groups named so far and, as Wireshark's fields of repeated items,
            // every group element of a list named without a selector.
            let mut next = Vec::new();
            let groups: Vec<&'a [Field]> = if k == 0 {
                vec![fields]
            } else {
                let mut groups = Vec::new();
                for v in &current {
                    match v {
                        Cow::Borrowed(Value::Group(g)) => groups.push(g.as_slice()),
                        Cow::Borrowed(Value::List(items)) => {
                            groups.extend(items.iter().filter_map(|i| match i {
                                Value::Group(g) => Some(g.as_slice()),
                                _ => None,
                            }))
                        }
                        // A vector's components by name: `position.x`.
                        Cow::Borrowed(Value::Vec3(c)) if seg.selectors.is_empty() => {
                            let axis = match seg.text() {
                                Some("x") => Some(0),
                                Some("y") => Some(1),
                                Some("z") => Some(2),
                                _ => None,
                            };
                            next.extend(axis.map(|i| Cow::Owned(Value::Float(f64::from(c[i])))));
                        }
                        _ => {}
                    }
                }
                groups
            };
            for g in groups {
                let named: Vec<&'a Field> = g.iter().filter(|f| seg.names(f)).collect();
                let mut sels = seg.selectors.iter();
                // A repeated name is a list of its values: the first selector picks
                // among them (as `name[1]` picks the second element of the JSON array).
                let repeated = seg.name.is_some() && named.len() > 1;
                let mut vals: Vec<Cow<'a, Value>> = if repeated {
                    match sels.next() {
                        Some(Sel::Index(n)) => named
                            .get(*n)
                            .map(|f| Cow::Borrowed(&f.value))
                            .into_iter()
                            .collect(),
                        Some(Sel::Key(key)) => named
                            .iter()
                            .filter(|f| key_of(&f.value) == Some(key.as_str()))
                            .map(|f| Cow::Borrowed(&f.value))
                            .collect(),
                        Some(Sel::Slice { start, len }) => named
                            [slice_range(named.len(), *start, *len)]
                        .iter()
                        .map(|f| Cow::Borrowed(&f.value))
                        .collect(),
                        Some(Sel::Any) | None => {
                            named.iter().map(|f| Cow::Borrowed(&f.value)).collect()
                        }
                    }
                } else {
                    named.iter().map(|f| Cow::Borrowed(&f.value)).collect()
                };
                for sel in sels {
                    let mut picked = Vec::new();
                    for v in vals {
                        select(v, sel, &mut picked);
                    }
                    vals = picked;
                }
                next.extend(vals);
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        // A bare name not at the top names that field at any depth.
        if current.is_empty() {
            if let [Segment {
                name: Some(name),
                selectors,
            }] = self.segments.as_slice()
            {
                if selectors.is_empty() {
                    deep(fields, name, &mut current);
                }
            }
        }
        current
    }

    /// Whether the concrete path `p` (as [`leaves`] writes them) is this pattern or
    /// lies under it: `subsystems[*]` matches `subsystems[hull].condition_pct`. A bare
    /// name matches a field of that name at any depth.
    pub fn matches(&self, p: &FieldPath) -> bool {
        if let Some(name) = self.bare_name() {
            return p.segments.iter().any(|s| s.text() == Some(name));
        }
        if self.segments.len() > p.segments.len() {
            return false;
        }
        self.segments
            .iter()
            .zip(&p.segments)
            .enumerate()
            .all(|(k, (a, b))| {
                let name_ok = a.name.is_none() || a.text() == b.text();
                // The last segment of the pattern may stop before the path's selectors.
                let last = k + 1 == self.segments.len();
                let sel_ok = (a.selectors.len() == b.selectors.len()
                    || (last && a.selectors.len() < b.selectors.len()))
                    && a.selectors
                        .iter()
                        .zip(&b.selectors)
                        .all(|(x, y)| x == &Sel::Any || x == y);
                name_ok && sel_ok
            })
    }
}

/// The values of every field named `name` at any depth of `fields`, in wire order.
fn deep<'a>(fields: &'a [Field], name: &TreeName, out: &mut Vec<Cow<'a, Value>>) {
    fn inside<'a>(v: &'a Value, name: &TreeName, out: &mut Vec<Cow<'a, Value>>) {
        match v {
            Value::Group(g) => deep(g, name, out),
            Value::List(items) => items.iter().for_each(|i| inside(i, name, out)),
            _ => {}
        }
    }
    for f in fields {
        if name.names(f) {
            out.push(Cow::Borrowed(&f.value));
        } else {
            inside(&f.value, name, out);
        }
    }
}

/// Every value of `fields` with its concrete path, in wire order: groups are walked
/// into, lists of groups are walked into element by element (`name[key]` when the
/// element has a `key`, `name[i]` otherwise), a repeated name's values get `name[i]`;
/// scalars, vectors, byte strings and lists of scalars are leaves.
pub fn leaves<'a>(fields: &'a [Field], visit: &mut dyn FnMut(&str, &'a Value)) {
    let mut path = String::new();
    walk_fields(fields, &mut path, visit);
}

fn walk_fields<'a>(fields: &'a [Field], path: &mut String, visit: &mut dyn FnMut(&str, &'a Value)) {
    for (k, f) in fields.iter().enumerate() {
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&f.name);
        let earlier = fields[..k].iter().filter(|x| x.name == f.name).count();
        let repeated = earlier > 0 || fields[k + 1..].iter().any(|x| x.name == f.name);
        if repeated {
            use std::fmt::Write as _;
            let _ = write!(path, "[{earlier}]");
        }
        walk_value(&f.value, path, visit);
        path.truncate(len);
    }
}

fn walk_value<'a>(v: &'a Value, path: &mut String, visit: &mut dyn FnMut(&str, &'a Value)) {
    match v {
        Value::Group(g) => walk_fields(g, path, visit),
        Value::List(items)
            if items
                .iter()
                .any(|i| matches!(i, Value::Group(_) | Value::List(_))) =>
        {
            for (k, item) in items.iter().enumerate() {
                let len = path.len();
                match key_of(item) {
                    Some(key) => {
                        path.push('[');
                        path.push_str(key);
                        path.push(']');
                    }
                    None => {
                        use std::fmt::Write as _;
                        let _ = write!(path, "[{k}]");
                    }
                }
                walk_value(item, path, visit);
                path.truncate(len);
            }
        }
        _ => visit(path, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::field::Span;
    use crate::game::registry::lookup_id;

    /// A field at this path: its entry where the registry has one.
    fn f(path: &'static str, value: Value) -> Field {
        let id = lookup_id(path).unwrap_or(FieldId::OTHER_GAME);
        let name = path.rsplit('.').next().unwrap_or(path);
        Field::keyed(id, name, value, Span::new(0, 1))
    }

    fn sub(key: &str, cond: f64) -> Value {
        Value::Group(vec![
            f("subsystems.index", Value::Uint(1)),
            f("subsystems.key", Value::Text(key.into())),
            f("subsystems.name", Value::Text(key.to_uppercase())),
            f("subsystems.condition_pct", Value::Float(cond)),
        ])
    }

    fn message() -> Vec<Field> {
        vec![
            f("object_id", Value::ObjectId(7)),
            f("position", Value::Vec3([1.0, 2.0, 3.0])),
            f(
                "subsystems",
                Value::List(vec![sub("hull", 50.0), sub("sensors", 75.0)]),
            ),
            f("file", Value::Text("a".into())),
            f("file", Value::Text("b".into())),
            f(
                "inner",
                Value::Group(vec![f("game_time", Value::Float(1.5))]),
            ),
            f("facings", Value::List(vec![Value::Uint(1), Value::Uint(2)])),
        ]
    }

    #[test]
    fn a_key_is_found_by_its_entry_not_its_name() {
        // A field printed as `key` whose entry is the record's `name` is not the
        // record's key (two entries, one local name); the `subsystems.key` member is.
        let record = Value::Group(vec![
            Field::keyed(
                lookup_id("subsystems.name").unwrap(),
                "key",
                Value::Text("Hull".into()),
                Span::new(0, 1),
            ),
            f("subsystems.key", Value::Text("hull".into())),
        ]);
        assert_eq!(key_of(&record), Some("hull"));
        let m = vec![f("subsystems", Value::List(vec![record]))];
        let got = p("subsystems[hull]").resolve(&m);
        assert_eq!(got.len(), 1);
        assert!(p("subsystems[Hull]").resolve(&m).is_empty());
    }

    fn p(s: &str) -> FieldPath {
        s.parse().unwrap()
    }

    #[test]
    fn segments_find_fields_by_entry_and_named_apart_ones_by_name() {
        let one = |path: &str, m: &[Field]| {
            p(path)
                .resolve(m)
                .into_iter()
                .map(|c| c.into_owned())
                .collect::<Vec<_>>()
        };
        // A read that failed inside `orientation` left its members flat at the top,
        // each with its member's entry: found by the name the tree prints, at the top
        // or at any depth, not under the group that never closed.
        let flat = vec![
            f("object_id", Value::ObjectId(7)),
            f("orientation.w", Value::Float(1.0)),
            f("orientation.x", Value::Float(0.5)),
        ];
        assert_eq!(one("w", &flat), [Value::Float(1.0)]);
        assert_eq!(one("x", &flat), [Value::Float(0.5)]);
        assert!(one("orientation.w", &flat).is_empty());
        assert!(one("orientation", &flat).is_empty());
        // A record left flat by a failed read is a `record`, not the list.
        let record = Field::new(
            field!("subsystems", "record"),
            sub("hull", 50.0),
            Span::new(0, 1),
        );
        let flat = vec![record, f("subsystems.index", Value::Uint(2))];
        assert!(one("subsystems", &flat).is_empty());
        assert_eq!(one("condition_pct", &flat), [Value::Float(50.0)]);
        assert_eq!(one("index", &flat), [Value::Uint(2)]);
        // A layout child, by the layout's key under its record's `children_pct`.
        let mut hull = match sub("hull", 50.0) {
            Value::Group(g) => g,
            _ => unreachable!(),
        };
        hull.push(f(
            "subsystems.children_pct",
            Value::Group(vec![
                f("subsystems.children_pct.port_impulse", Value::Float(25.0)),
                f("subsystems.children_pct.name", Value::Float(75.0)),
            ]),
        ));
        let m = vec![f("subsystems", Value::List(vec![Value::Group(hull)]))];
        assert_eq!(
            one("subsystems[hull].children_pct.port_impulse", &m),
            [Value::Float(25.0)]
        );
        // A child keyed like a registered name is found by its key only.
        assert_eq!(
            one("subsystems[0].children_pct.name", &m),
            [Value::Float(75.0)]
        );
        assert_eq!(one("port_impulse", &m), [Value::Float(25.0)]);
        assert!(one("subsystems[hull].children_pct.child", &m).is_empty());
        // A nested checksum tree carries the top level's entries.
        let files = |hash: u64| {
            f(
                "files",
                Value::Group(vec![f(
                    "files.file",
                    Value::Group(vec![f("files.file.name_hash", Value::Uint(hash))]),
                )]),
            )
        };
        let m = vec![
            files(1),
            f(
                "subdirs",
                Value::Group(vec![f(
                    "subdirs.subdir",
                    Value::Group(vec![f("file_count", Value::Uint(1)), files(2)]),
                )]),
            ),
        ];
        assert_eq!(
            one("subdirs.subdir.files.file.name_hash", &m),
            [Value::Uint(2)]
        );
        assert_eq!(one("files.file.name_hash", &m), [Value::Uint(1)]);
        assert_eq!(one("subdirs.subdir.file_count", &m), [Value::Uint(1)]);
        assert_eq!(one("file_count", &m), [Value::Uint(1)]);
        // Another game's fields (no entries) by their names.
        let sm = vec![
            f("sm_speed", Value::Float(3.0)),
            f("sm_body", Value::Group(vec![f("sm_mass", Value::Uint(9))])),
        ];
        assert_eq!(sm[0].id, FieldId::OTHER_GAME);
        assert_eq!(one("sm_speed", &sm), [Value::Float(3.0)]);
        assert_eq!(one("sm_body.sm_mass", &sm), [Value::Uint(9)]);
        assert_eq!(one("sm_mass", &sm), [Value::Uint(9)]);
        assert!(one("speed", &sm).is_empty());
    }

    #[test]
    fn paths_name_values_as_the_json_reads() {
        let m = message();
        let one = |s: &str| {
            p(s).resolve(&m)
                .into_iter()
                .map(|c| c.into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(one("object_id"), [Value::ObjectId(7)]);
        assert_eq!(one("position[1]"), [Value::Float(2.0)]);
        assert_eq!(
            one("subsystems[sensors].condition_pct"),
            [Value::Float(75.0)]
        );
        assert_eq!(one("subsystems[0].condition_pct"), [Value::Float(50.0)]);
        assert_eq!(
            one("subsystems[*].condition_pct"),
            [Value::Float(50.0), Value::Float(75.0)]
        );
        assert_eq!(one("file[1]"), [Value::Text("b".into())]);
        assert_eq!(one("file").len(), 2);
        assert_eq!(one("inner.game_time"), [Value::Float(1.5)]);
        assert_eq!(one("facings[1]"), [Value::Uint(2)]);
        assert!(one("subsystems[warp_core].condition_pct").is_empty());
        assert!(one("position[3]").is_empty());
        assert!(one("nothing.here").is_empty());
    }

    #[test]
    fn every_leaf_path_resolves_to_its_value_and_prints_as_parsed() {
        let m = message();
        let mut seen = Vec::new();
        leaves(&m, &mut |path, v| seen.push((path.to_string(), v.clone())));
        let names: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            names,
            [
                "object_id",
                "position",
                "subsystems[hull].index",
                "subsystems[hull].key",
                "subsystems[hull].name",
                "subsystems[hull].condition_pct",
                "subsystems[sensors].index",
                "subsystems[sensors].key",
                "subsystems[sensors].name",
                "subsystems[sensors].condition_pct",
                "file[0]",
                "file[1]",
                "inner.game_time",
                "facings",
            ]
        );
        for (path, v) in &seen {
            let parsed = p(path);
            assert_eq!(parsed.to_string(), *path);
            assert_eq!(
                parsed.resolve(&m).first().map(|c| c.as_ref()),
                Some(v),
                "{path}"
            );
        }
    }

    #[test]
    fn patterns_match_paths_and_what_lies_under_them() {
        let yes = |pat: &str, path: &str| p(pat).matches(&p(path));
        assert!(yes(
            "subsystems[*].condition_pct",
            "subsystems[hull].condition_pct"
        ));
        assert!(yes("subsystems[hull]", "subsystems[hull].condition_pct"));
        assert!(yes("subsystems", "subsystems[hull].condition_pct"));
        assert!(yes("*.game_time", "inner.game_time"));
        assert!(yes("game_time", "inner.game_time"));
        assert!(!yes(
            "subsystems[*].condition_pct",
            "subsystems[hull].index"
        ));
        assert!(!yes(
            "subsystems[sensors]",
            "subsystems[hull].condition_pct"
        ));
        assert!(!yes("inner.game_time.x", "inner.game_time"));
        assert!(p("subsystems[*]").is_pattern() && !p("a.b[1]").is_pattern());
    }

    #[test]
    fn malformed_paths_are_refused_with_a_position() {
        for (text, at) in [
            ("", 0),
            ("a..b", 2),
            ("a[", 1),
            ("a[]", 2),
            ("a]b", 1),
            (".a", 0),
        ] {
            let e = text.parse::<FieldPath>().unwrap_err();
            assert_eq!(e.at, at, "{text}: {e}");
        }
        let long = vec!["a"; MAX_SEGMENTS + 1].join(".");
        assert!(long.parse::<FieldPath>().is_err());
    }
}
