//! Which names `-Y` and `--fields` accept and what a decoded-field name reads: the
//! record facts (`super::facts`) and the registered game fields
//! (`crate::game::registry`), bare or qualified (`crate::game::qualified`). Both options
//! parse a field name into a [`FieldRef`] here and read it with [`FieldRef::resolve`],
//! so a name means the same in either and a misspelt one is the same error with the
//! same "did you mean".

use super::facts;
use super::record::{MessageRecord, TransportInfo};
use crate::game::field::{Field, Value};
use crate::game::path::{FieldPath, PathError};
use crate::game::qualified::{self, Scope, QUALIFIED};
use crate::game::registry::{lookup, roots_of, GAME_FIELDS};
use crate::game::walk::EntrySet;
use std::borrow::Cow;

/// The registry name a typed field path stands for: `fields.` and `assembled.fields.`
/// prefixes and every `[…]` selector dropped (`subsystems[hull].condition_pct` →
/// `subsystems.condition_pct`, `position[0]` → `position`).
pub fn registry_name(path: &str) -> String {
    let path = path
        .strip_prefix("assembled.fields.")
        .or_else(|| path.strip_prefix("fields."))
        .unwrap_or(path);
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whether a decoded-field path names something some decoder produces: a registered
/// name, its `_hex` twin, a bare name found at any depth (`power_pct`), or a qualified
/// name whose messages carry its field (`stateupdate.flags`). A pattern (`*`) is taken
/// as it is.
pub fn is_known_field(path: &str) -> bool {
    if path.contains('*') {
        return true;
    }
    let name = registry_name(path);
    if qualified::split(&name).is_some() {
        return qualified::lookup_qualified(&name).is_some();
    }
    // `lookup` folds what the registry names by one entry: each member of a record's
    // `children_pct` (named by the ship layout's child key) and a nested checksum tree.
    let known = |n: &str| {
        lookup(n).is_some()
            || (!n.contains('.')
                && GAME_FIELDS
                    .iter()
                    .any(|f| f.name.rsplit('.').next() == Some(n)))
    };
    known(&name) || name.strip_suffix("_hex").is_some_and(known)
}

/// Whether a decoder writes a field of exactly this registry name (so `x_hex` is its
/// own field rather than the JSON twin of `x`).
pub fn is_exact_field(path: &str) -> bool {
    let name = registry_name(path);
    let name = qualified::split(&name).map_or(name.as_str(), |(_, rest)| rest);
    lookup(name).is_some_and(|f| !f.is_json_twin())
}

/// A decoded record fact's name is the fact; a registered field of the same name is
/// reached by a qualified name (`peer_id` is the packet's, `score.peer_id` a Score's).
pub fn is_shadowed(name: &str) -> bool {
    facts::lookup(name).is_some()
        || name
            .strip_suffix("_hex")
            .is_some_and(|base| facts::lookup(base).is_some() && facts::lookup(name).is_none())
}

/// Every name users can type, as `bcwire list fields` lists them: facts and their
/// aliases, the registered game fields no fact shadows, the qualified names.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    facts::names()
        .chain(listed_fields().map(|f| f.name))
        .chain(QUALIFIED.iter().map(|f| f.name))
}

/// The registered game fields listed under their bare names.
pub fn listed_fields() -> impl Iterator<Item = &'static crate::game::registry::GameField> {
    GAME_FIELDS.iter().filter(|f| !is_shadowed(f.name))
}

/// The error for a name that is neither a fact nor a known field, with the closest
/// names.
pub fn unknown(name: &str) -> String {
    let hint = super::values::did_you_mean(&registry_name(name), all_names())
        .map(|m| format!(" (did you mean {m}?)"))
        .unwrap_or_default();
    format!("no field is named {name:?}{hint}; `bcwire list fields` lists them")
}

/// Which game message of a transport message a name reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `fields.`: the message's own game message.
    Own,
    /// `assembled.fields.`: the message a last fragment completes.
    Assembled,
    /// No prefix: the own game message, else the assembled one, else the decoded body
    /// of a connection-management message.
    Either,
}

/// A decoded-field name, parsed once: which message part and scope it reads, its path,
/// and whether it is a `_hex` twin (the values as `0x` text).
#[derive(Debug, Clone)]
pub struct FieldRef {
    pub part: Part,
    pub scope: Option<Scope>,
    pub path: FieldPath,
    pub hex: bool,
}

/// Why a name is not a field.
#[derive(Debug, Clone)]
pub enum FieldRefError {
    /// Not a path at all.
    Syntax(PathError),
    /// A path no decoder produces (the text says so, with the closest names).
    Unknown(String),
}

impl std::fmt::Display for FieldRefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldRefError::Syntax(e) => write!(f, "not a field path ({e})"),
            FieldRefError::Unknown(text) => f.write_str(text),
        }
    }
}

impl FieldRef {
    /// Parse a decoded-field name (not a record fact: facts are looked up first).
    pub fn parse(name: &str) -> Result<FieldRef, FieldRefError> {
        let (part, rest) = if let Some(r) = name.strip_prefix("assembled.fields.") {
            (Part::Assembled, r)
        } else if let Some(r) = name.strip_prefix("fields.") {
            (Part::Own, r)
        } else {
            (Part::Either, name)
        };
        // The path is checked whole first, so a syntax error points into it.
        rest.parse::<FieldPath>().map_err(FieldRefError::Syntax)?;
        if !is_known_field(rest) {
            return Err(FieldRefError::Unknown(unknown(name)));
        }
        let (scope, path) = match qualified::split(rest) {
            Some((scope, path)) => (Some(scope), path),
            None => (None, rest),
        };
        // `flags_hex` is the JSON twin of `flags` where no decoder writes it: the same
        // values, as the `0x` text the records show.
        let twin = path
            .strip_suffix("_hex")
            .filter(|base| !base.is_empty() && !is_exact_field(path))
            .and_then(|base| base.parse::<FieldPath>().ok());
        let hex = twin.is_some();
        let path = match twin {
            Some(base) => base,
            None => path.parse().map_err(FieldRefError::Syntax)?,
        };
        Ok(FieldRef {
            part,
            scope,
            path,
            hex,
        })
    }

    /// The top-level decoded fields this name reads from: the one its path starts
    /// from, or every one a bare name can find its field under
    /// ([`roots_of`]). `None` when the path starts from any name (`*`).
    pub fn roots(&self) -> Option<Vec<&str>> {
        match self.path.bare_name() {
            Some(name) => Some(roots_of(name)),
            None => self.path.first_name().map(|n| vec![n]),
        }
    }

    /// The decoded fields this name reads in a transport message: none when the
    /// message is outside the name's scope.
    pub fn fields<'a>(&self, m: &'a MessageRecord) -> &'a [Field] {
        let own = m.game.as_ref();
        let assembled = m.assembled.as_ref().map(|a| &a.game);
        let game = match self.part {
            Part::Own => own,
            Part::Assembled => assembled,
            Part::Either => own.or(assembled),
        };
        match (game, &m.transport) {
            (Some(g), _) => match self.scope {
                Some(s) if !s.holds_opcode(g.opcode) => &[],
                _ => &g.fields,
            },
            (None, TransportInfo::Low { name, fields, .. }) if self.part == Part::Either => {
                match self.scope {
                    Some(s) if !s.holds_low(name) => &[],
                    _ => fields,
                }
            }
            _ => &[],
        }
    }

    /// The values this name reads in a transport message, in wire order.
    pub fn resolve<'a>(&self, m: &'a MessageRecord) -> Vec<Cow<'a, Value>> {
        self.path.resolve(self.fields(m))
    }
}

/// The registry entries of the top-level fields these names read from, resolved
/// once, so that a decode builds only those (`FieldTrees::Only`). `None` when a name
/// starts from any field or from one without an entry, or there are too many: whole
/// trees then.
pub fn top_entries<'r>(refs: impl IntoIterator<Item = &'r FieldRef>) -> Option<EntrySet> {
    let mut names = Vec::new();
    for r in refs {
        names.extend(r.roots()?);
    }
    EntrySet::of(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_paths_map_to_registry_names() {
        assert_eq!(
            registry_name("subsystems[hull].condition_pct"),
            "subsystems.condition_pct"
        );
        assert_eq!(registry_name("fields.position[0]"), "position");
        assert_eq!(registry_name("assembled.fields.player_name"), "player_name");
    }

    #[test]
    fn qualified_names_parse_into_scope_and_path() {
        let r = FieldRef::parse("stateupdate.flags_hex").unwrap();
        assert_eq!(r.scope, Some(Scope::Opcode(0x1C)));
        assert!(r.hex);
        assert!(FieldRef::parse("stateupdate.launcher").is_err());
        assert!(FieldRef::parse("score.peer_id").is_ok());
        assert!(is_shadowed("peer_id") && is_shadowed("peer_id_hex"));
        assert!(!is_shadowed("flags"));
    }
}
