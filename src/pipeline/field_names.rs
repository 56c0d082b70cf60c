//! Which names `-Y` and `--fields` accept: the record facts (`super::facts`) and the
//! registered game fields (`crate::game::registry`). Both options check a name here, so
//! a misspelt one is the same error with the same "did you mean" in either.

use super::facts;
use crate::game::registry::{lookup, GAME_FIELDS};

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
/// name, its `_hex` twin, or a bare name found at any depth (`power_pct`). A pattern
/// (`*`) is taken as it is.
pub fn is_known_field(path: &str) -> bool {
    if path.contains('*') {
        return true;
    }
    let name = registry_name(path);
    let known = |n: &str| {
        GAME_FIELDS
            .iter()
            .any(|f| f.name == n || (!n.contains('.') && f.name.rsplit('.').next() == Some(n)))
    };
    known(&name) || name.strip_suffix("_hex").is_some_and(known)
}

/// Whether a decoder writes a field of exactly this registry name (so `x_hex` is its
/// own field rather than the JSON twin of `x`).
pub fn is_exact_field(path: &str) -> bool {
    lookup(&registry_name(path)).is_some_and(|f| !f.is_json_twin())
}

/// Every name users can type: facts, their aliases, registered game fields.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    facts::names().chain(GAME_FIELDS.iter().map(|f| f.name))
}

/// The error for a name that is neither a fact nor a known field, with the closest
/// names.
pub fn unknown(name: &str) -> String {
    let hint = super::filter::did_you_mean(&registry_name(name), all_names())
        .map(|m| format!(" (did you mean {m}?)"))
        .unwrap_or_default();
    format!("no field is named {name:?}{hint}; `bcwire list fields` lists them")
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
}
