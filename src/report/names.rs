//! The names the decoding layers know (player names, ship classes), as the printers ask
//! for them; the trait lives with the pipeline that answers it.

pub use crate::pipeline::names::{Names, NoNames, ShipIdentity};

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// Object descriptions ("Galaxy (Kirk, slot 1)") and client names kept between
/// records while the names behind them stay the same ([`Names::epoch`]): a capture asks
/// for the same few objects' descriptions on nearly every message, and for one of a
/// few clients' names on every record.
#[derive(Default)]
pub struct Descriptions {
    cache: RefCell<Cached>,
}

#[derive(Default)]
struct Cached {
    epoch: u64,
    objects: DescriptionMap,
    clients: FxHashMap<(usize, usize), Option<Rc<str>>>,
}

/// (session, object id) → its description, if it has one.
/// Shared text: handing one out is a count, not a copy.
type DescriptionMap = FxHashMap<(usize, u32), Option<Rc<str>>>;

/// Descriptions (and client names) kept at most; past it the cache starts again (a
/// capture with more live objects than this is rare, and then answers are only
/// computed again).
const MAX_DESCRIPTIONS: usize = 4096;

impl Descriptions {
    fn current<'c>(cache: &'c mut Cached, names: &dyn Names) -> &'c mut Cached {
        let full =
            cache.objects.len() >= MAX_DESCRIPTIONS || cache.clients.len() >= MAX_DESCRIPTIONS;
        if cache.epoch != names.epoch() || full {
            cache.epoch = names.epoch();
            cache.objects.clear();
            cache.clients.clear();
        }
        cache
    }

    pub fn describe(&self, names: &dyn Names, session: usize, object_id: u32) -> Option<Rc<str>> {
        let mut cache = self.cache.borrow_mut();
        Self::current(&mut cache, names)
            .objects
            .entry((session, object_id))
            .or_insert_with(|| names.describe_object(session, object_id).map(Rc::from))
            .clone()
    }

    /// [`Names::client_name`], kept.
    pub fn client_name(&self, names: &dyn Names, session: usize, client: usize) -> Option<Rc<str>> {
        let mut cache = self.cache.borrow_mut();
        Self::current(&mut cache, names)
            .clients
            .entry((session, client))
            .or_insert_with(|| names.client_name(session, client).map(Rc::from))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::ships::ShipClass;
    use std::cell::Cell;

    /// Names that count the descriptions asked and change with `epoch`.
    struct Counting {
        asked: Cell<u32>,
        epoch: Cell<u64>,
    }

    impl Names for Counting {
        fn client_name(&self, session: usize, client: usize) -> Option<String> {
            self.asked.set(self.asked.get() + 1);
            Some(format!("{session}/{client}@{}", self.epoch.get()))
        }
        fn describe_object(&self, session: usize, id: u32) -> Option<String> {
            self.asked.set(self.asked.get() + 1);
            Some(format!("{session}:{id:#x}@{}", self.epoch.get()))
        }
        fn object_class(&self, _: usize, _: u32) -> Option<String> {
            None
        }
        fn ship_class(&self, _: u16) -> Option<&ShipClass> {
            None
        }
        fn epoch(&self) -> u64 {
            self.epoch.get()
        }
    }

    #[test]
    fn descriptions_are_kept_until_the_names_change() {
        let names = Counting {
            asked: Cell::new(0),
            epoch: Cell::new(7),
        };
        let d = Descriptions::default();
        assert_eq!(
            d.describe(&names, 0, 0x3FFF_FFFF).as_deref(),
            Some("0:0x3fffffff@7")
        );
        assert_eq!(
            d.describe(&names, 0, 0x3FFF_FFFF).as_deref(),
            Some("0:0x3fffffff@7")
        );
        assert_eq!(names.asked.get(), 1, "the second answer is kept");
        // Another session's object of the same id is its own entry.
        assert_eq!(
            d.describe(&names, 1, 0x3FFF_FFFF).as_deref(),
            Some("1:0x3fffffff@7")
        );
        names.epoch.set(8);
        assert_eq!(
            d.describe(&names, 0, 0x3FFF_FFFF).as_deref(),
            Some("0:0x3fffffff@8")
        );
        assert_eq!(names.asked.get(), 3, "a new epoch asks again");
        // Client names likewise, apart from objects.
        assert_eq!(d.client_name(&names, 0, 1).as_deref(), Some("0/1@8"));
        assert_eq!(d.client_name(&names, 0, 1).as_deref(), Some("0/1@8"));
        assert_eq!(d.client_name(&names, 0, 2).as_deref(), Some("0/2@8"));
        assert_eq!(names.asked.get(), 5, "the repeated name is kept");
        names.epoch.set(9);
        assert_eq!(d.client_name(&names, 0, 1).as_deref(), Some("0/1@9"));
        assert_eq!(
            d.describe(&names, 0, 0x3FFF_FFFF).as_deref(),
            Some("0:0x3fffffff@9")
        );
        assert_eq!(names.asked.get(), 7, "a new epoch asks for both again");
    }
}
