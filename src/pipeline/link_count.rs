//! Frames counted by link type for the summary, cheaply per frame.
//!
//! The summary keys its counts by name ([`link_type::name`]); looking a name up in that
//! map for every frame compared strings in a tree search. Frames are counted here by
//! the link-type number of the frame before (a capture's frames nearly all share one),
//! and the names go into the summary's map once, at the end.

use crate::capture::link_type;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct LinkCounts {
    /// Frames by link-type name; at most one entry per name `link_type::name` gives
    /// (every unknown number shares one), so a short list.
    by_name: Vec<(&'static str, u64)>,
    /// The link-type number of the last frame counted and its entry in `by_name`.
    last: Option<(u32, usize)>,
}

impl LinkCounts {
    /// Count a frame of link type `link_type`.
    pub fn count(&mut self, link_type: u32) {
        let at = match self.last {
            Some((t, at)) if t == link_type => at,
            _ => {
                let name = link_type::name(link_type);
                let at = match self.by_name.iter().position(|(n, _)| *n == name) {
                    Some(at) => at,
                    None => {
                        self.by_name.push((name, 0));
                        self.by_name.len() - 1
                    }
                };
                self.last = Some((link_type, at));
                at
            }
        };
        if let Some((_, n)) = self.by_name.get_mut(at) {
            *n += 1;
        }
    }

    /// Add the counts to `map`, by name.
    pub fn add_to(&self, map: &mut BTreeMap<String, u64>) {
        for (name, n) in &self.by_name {
            *map.entry(name.to_string()).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_counted_under_their_names_and_unknown_numbers_share_one() {
        let mut c = LinkCounts::default();
        for t in [
            link_type::ETHERNET,
            link_type::ETHERNET,
            link_type::RAW,
            link_type::ETHERNET,
            9999,
            9998,
        ] {
            c.count(t);
        }
        let mut map = BTreeMap::new();
        c.add_to(&mut map);
        let want: BTreeMap<String, u64> = [("ETHERNET", 3), ("RAW", 1), ("unknown", 2)]
            .into_iter()
            .map(|(n, k)| (n.to_string(), k))
            .collect();
        assert_eq!(map, want);
    }
}
