//! Fingerprints of delivered game messages, for `bcwire diff` and two-capture reports.
//!
//! [`Comparison::fingerprint`] hashes a message's field tree. Building that tree for
//! every StateUpdate costs more than the rest of a lean decode, so a StateUpdate is
//! fingerprinted from its typed value instead: every value its fields would show (as
//! the fields show them: a delta as the vector, a speed as the float), and the names
//! its ship layout gives the subsystem and power entries. One that warned is decoded
//! once like the others ([`FieldTrees::TypedStateUpdates`]): its typed value keeps what
//! its tree shows beyond the values ([`StateUpdate::shown`]: the read that failed, a raw block's
//! fields, the bytes left over), and that is hashed too, behind a mark that a
//! warning-free update never writes. Two StateUpdates get equal fingerprints exactly
//! when their compared fields are equal and both warned or neither did (a test checks
//! this on the shared and synthetic captures, each message also with one byte
//! changed). Every other message (about 3 % of a game) is hashed as the field tree its
//! one decode recorded: the reader asks the pipeline for [`LeanFingerprints::trees`],
//! which are exactly the trees these fingerprints hash, so no message is decoded a
//! second time. All StateUpdates are hashed as trees when an ignored name could name
//! one of their fields.
//!
//! Fingerprints of the two kinds are never compared with each other: both captures of
//! a diff are read the same way, and a message goes the typed way or not by its own
//! bytes and ship class alone.
//!
//! Why this file is long: the code ends at about 300 lines; the rest is tests that
//! check the typed fingerprints against the tree fingerprints on real and changed
//! messages, and that each StateUpdate is decoded once.

use super::diff::Comparison;
use super::fold_hash::FoldHasher;
use crate::game::opcodes::FieldTrees;
use crate::game::registry::state_update_names as su_names;
use crate::game::ships::{RecordFormat, ShipCatalog, ShipClass};
use crate::game::stateupdate::{self, StateUpdate, SubsystemData};
use crate::game::GameMessage;
use std::hash::Hasher;

/// Every field name a warning-free StateUpdate's field tree can hold, besides the names
/// of its ship layout's entries and children and the `index N` / `child N` stand-ins.
const STATE_UPDATE_FIELDS: &[&str] = &[
    su_names::OBJECT_ID,
    su_names::GAME_TIME,
    su_names::FLAGS,
    su_names::FLAG_NAMES,
    su_names::POSITION,
    su_names::HASH_PRESENT,
    su_names::INTEGRITY_HASH,
    su_names::DELTA,
    su_names::FORWARD,
    su_names::UP,
    su_names::RIGHT,
    su_names::SPEED,
    su_names::CLOAK,
    su_names::SUBSYSTEMS_START_INDEX,
    su_names::SUBSYSTEMS_START_NAME,
    su_names::SUBSYSTEMS,
    su_names::SUBSYSTEMS_SUMMARY,
    su_names::INDEX,
    su_names::KEY,
    su_names::NAME,
    su_names::CONDITION_PCT,
    su_names::CHILDREN_PCT,
    su_names::MAIN_BATTERY_PCT,
    su_names::BACKUP_BATTERY_PCT,
    su_names::HAS_POWER_DATA,
    su_names::POWER_PCT,
    su_names::FACINGS_PCT,
    su_names::POWER_BLOCK,
    su_names::VALUE,
    su_names::POWER_PCT_INTERPRETED,
];

/// Fingerprints the delivered game messages of lean records.
pub struct LeanFingerprints {
    cmp: Comparison,
    catalog: ShipCatalog,
    /// StateUpdates may be fingerprinted from their typed value.
    typed: bool,
    /// Ignore `game_time` in typed StateUpdates.
    ignore_time: bool,
}

impl LeanFingerprints {
    pub fn new(cmp: Comparison, catalog: ShipCatalog) -> LeanFingerprints {
        LeanFingerprints {
            typed: typed_state_updates(&cmp, &catalog),
            ignore_time: cmp.ignores(su_names::GAME_TIME),
            cmp,
            catalog,
        }
    }

    /// The field trees the pipeline must record for [`LeanFingerprints::of`]: all but
    /// those of StateUpdates with a typed value (which keeps what the tree of one that
    /// warned would show), or all when StateUpdates are hashed as trees too.
    pub fn trees(&self) -> FieldTrees {
        if self.typed {
            FieldTrees::TYPED_STATE_UPDATES
        } else {
            FieldTrees::All
        }
    }

    /// Fingerprint of a delivered message decoded with [`LeanFingerprints::trees`] (or
    /// more).
    pub fn of(&self, game: &GameMessage) -> u64 {
        if self.typed {
            if let Some(su) = game.state_update() {
                // The typed value says all the tree would exactly when it keeps what a
                // warned one's tree shows (a raw block always comes with a warning).
                let says_all = match &su.shown {
                    Some(_) => !game.warnings.is_empty(),
                    None => {
                        game.warnings.is_empty()
                            && !matches!(su.subsystems, Some(SubsystemData::Raw { .. }))
                    }
                };
                if says_all {
                    let class = su.species.and_then(|s| self.catalog.class(s));
                    return self.state_update(su, class);
                }
            }
        }
        self.cmp.fingerprint(game)
    }

    /// A StateUpdate decoded with `class`, by what its fields show: a warning-free one,
    /// or one that warned decoded with [`FieldTrees::TypedStateUpdates`] (which keeps
    /// in [`StateUpdate::shown`] what its tree shows beyond the values).
    pub fn state_update(&self, su: &StateUpdate, class: Option<&ShipClass>) -> u64 {
        let mut h = FoldHasher::default();
        h.write_u8(stateupdate::OPCODE);
        let shown = su.shown.as_deref();
        if shown.is_some() {
            // Never written for a warning-free update, whose tree differs from that
            // of every update that warned (as the tree fingerprints had them).
            h.write_u8(0xEE);
        }
        h.write_u32(su.object_id);
        if !self.ignore_time {
            // A field holds `f32 as f64`: hash the same bits.
            h.write_u64((su.game_time as f64).to_bits());
        }
        h.write_u8(su.flags);
        if let Some(p) = su.position {
            h.write_u8(1);
            p.iter().for_each(|c| h.write_u32(c.to_bits()));
            // A failed read of the presence bit shows no bit; one of the hash after
            // it shows the bit set and no hash.
            match (su.integrity_hash, shown.and_then(|s| s.failed.as_deref())) {
                (Some(x), _) => {
                    h.write_u8(1);
                    h.write_u16(x);
                }
                (None, Some(su_names::HASH_PRESENT)) => h.write_u8(2),
                (None, Some(su_names::INTEGRITY_HASH)) => h.write_u8(3),
                (None, _) => h.write_u8(0),
            }
        }
        if let Some(d) = su.delta {
            h.write_u8(2);
            d.vector().iter().for_each(|c| h.write_u32(c.to_bits()));
        }
        if let Some(v) = su.forward {
            h.write_u8(4);
            v.vector().iter().for_each(|c| h.write_u32(c.to_bits()));
        }
        if let Some(v) = su.up {
            h.write_u8(8);
            v.vector().iter().for_each(|c| h.write_u32(c.to_bits()));
        }
        if let Some(s) = su.speed {
            h.write_u8(0x10);
            h.write_u64((s.value() as f64).to_bits());
        }
        if let Some(c) = su.cloak {
            h.write_u8(0x40);
            h.write_u8(c as u8);
        }
        if let (Some(SubsystemData::Decoded(block)), Some(class)) = (&su.subsystems, class) {
            h.write_u8(0x20);
            h.write_u8(block.start);
            hash_name(
                &mut h,
                class.entry(block.start as usize).map_or("?", |e| &e.name),
            );
            for rec in &block.records {
                let Some(entry) = class.entry(rec.index as usize) else {
                    continue;
                };
                hash_name(&mut h, &entry.name);
                h.write_u8(rec.index);
                h.write_u8(rec.condition);
                h.write_usize(rec.children.len());
                for (k, c) in rec.children.iter().enumerate() {
                    match entry.children.get(k) {
                        Some(child) => hash_name(&mut h, &child.name),
                        None => hash_numbered(&mut h, b"child ", k),
                    }
                    h.write_u8(*c);
                }
                match rec.format {
                    RecordFormat::Base => h.write_u8(0),
                    RecordFormat::Power => {
                        h.write_u8(1);
                        h.write(&rec.batteries);
                    }
                    RecordFormat::Powered | RecordFormat::Shield => {
                        h.write_u8(2);
                        match rec.power_pct {
                            Some(p) => {
                                h.write_u8(1);
                                h.write_u8(p);
                            }
                            None => h.write_u8(0),
                        }
                        if rec.format == RecordFormat::Shield {
                            h.write(&rec.facings);
                        }
                    }
                }
            }
        }
        // Fields kept as the tree has them (a raw block's, the bytes left over) are
        // hashed as the tree fingerprint hashes them: an ignored name is left out as
        // there, so no mark or count goes before them (each begins with its name, whose
        // ASCII bytes none of this function's marks is).
        if let Some(shown) = shown {
            self.cmp.hash_fields(&shown.raw_block, &mut h);
        }
        if let Some(pairs) = &su.power {
            h.write_u8(0x80);
            h.write_usize(pairs.len());
            for p in pairs {
                match class.and_then(|c| c.entry(p.index as usize)) {
                    Some(e) => hash_name(&mut h, &e.name),
                    None => hash_numbered(&mut h, b"index ", p.index as usize),
                }
                h.write_u8(p.index);
                h.write_u8(p.value);
            }
        }
        if let Some(rest) = shown.and_then(|s| s.rest.as_ref()) {
            self.cmp.hash_fields(std::slice::from_ref(rest), &mut h);
        }
        h.finish()
    }
}

/// A name, as `str::hash` writes it.
fn hash_name(h: &mut impl Hasher, name: &str) {
    h.write(name.as_bytes());
    h.write_u8(0xFF);
}

/// [`hash_name`] of `format!("{prefix}{n}")` (a field name such as `index 12`), without
/// the String.
fn hash_numbered(h: &mut impl Hasher, prefix: &[u8; 6], n: usize) {
    let mut name = [0u8; 26];
    name[..6].copy_from_slice(prefix);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = 6 + digits.len() - at;
    name[6..len].copy_from_slice(&digits[at..]);
    h.write(&name[..len]);
    h.write_u8(0xFF);
}

/// False when an ignored name could name a field of a StateUpdate (other than
/// `game_time`, which the typed fingerprint leaves out itself): then StateUpdates are
/// hashed as field trees, which skip such fields wherever they are.
fn typed_state_updates(cmp: &Comparison, catalog: &ShipCatalog) -> bool {
    let in_layouts = |name: &str| {
        catalog.classes().iter().any(|c| {
            c.subsystems
                .iter()
                .any(|e| e.name == name || e.children.iter().any(|ch| ch.name == name))
        })
    };
    cmp.paths.is_empty()
        && cmp.ignore.iter().all(|name| {
            let stand_in = name.starts_with("index ") || name.starts_with("child ");
            let su_field =
                name != su_names::GAME_TIME && STATE_UPDATE_FIELDS.contains(&name.as_str());
            !stand_in && !su_field && !in_layouts(name)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::stateupdate::{encode, Cf16, Delta, Dir3};
    use crate::game::subsys::PowerSetting;
    use crate::pipeline::record::{PacketBody, PacketRecord};
    use crate::pipeline::{Config, Control, FieldTrees, Pipeline, Sink};
    use crate::report::names::Names;
    use std::collections::HashMap;

    /// The bytes of a delivered game message: reassembled, or its part of the datagram.
    fn delivered_bytes(
        g: &crate::pipeline::record::GamePacket,
        m: &crate::pipeline::record::MessageRecord,
        game: &crate::game::message::GameMessage,
    ) -> Option<Vec<u8>> {
        match (&m.assembled, m.payload_offset) {
            (Some(a), _) => Some(a.bytes.clone()),
            (None, Some(at)) => Some(g.plain[at..at + game.length].to_vec()),
            (None, None) => None,
        }
    }

    /// (bytes, species the pipeline decoded it with) of every delivered StateUpdate.
    #[derive(Default)]
    struct StateUpdates(Vec<(Vec<u8>, Option<u16>)>);

    impl Sink for StateUpdates {
        fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
            let PacketBody::Game(g) = &p.body else {
                return Ok(Control::Continue);
            };
            for m in &g.messages {
                let Some(game) = m.delivered_game() else {
                    continue;
                };
                let Some(su) = game.state_update() else {
                    continue;
                };
                let Some(bytes) = delivered_bytes(g, m, game) else {
                    continue;
                };
                self.0.push((bytes, su.species));
            }
            Ok(Control::Continue)
        }
        fn field_trees(&self) -> FieldTrees {
            FieldTrees::None
        }
    }

    fn state_updates(capture: Vec<u8>) -> Vec<(Vec<u8>, Option<u16>)> {
        let reader = crate::capture::CaptureReader::new(std::io::Cursor::new(capture)).unwrap();
        let mut sink = StateUpdates::default();
        Pipeline::new(Config::default())
            .run(reader, &mut sink)
            .unwrap();
        sink.0
    }

    /// A synthetic session with losses (retransmissions) and five players, and the
    /// shared real-peer captures when they are there.
    fn corpus() -> Vec<(Vec<u8>, Option<u16>)> {
        let mut args = crate::synth::SynthArgs::new("unused");
        args.players = 5;
        args.seed = 11;
        args.loss = 0.02;
        args.packets = Some(3_000);
        let (_, capture) = crate::synth::generate(&args, Vec::new()).unwrap();
        let mut all = state_updates(capture);
        let shared = crate::capture::shared_captures::shared_pcaps();
        if shared.is_empty() {
            eprintln!("note: shared captures not found; synthetic StateUpdates only");
        }
        for path in shared {
            all.extend(state_updates(std::fs::read(path).unwrap()));
        }
        all
    }

    /// Every delivered message of a run asking for [`LeanFingerprints::trees`]: its
    /// bytes, the species its decode used, and its fingerprint from that one decode.
    struct OneDecode<'a> {
        lean: &'a LeanFingerprints,
        seen: Vec<(Vec<u8>, Option<u16>, u64)>,
    }

    impl Sink for OneDecode<'_> {
        fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
            let PacketBody::Game(g) = &p.body else {
                return Ok(Control::Continue);
            };
            for m in &g.messages {
                let Some(game) = m.delivered_game() else {
                    continue;
                };
                let Some(bytes) = delivered_bytes(g, m, game) else {
                    continue;
                };
                let species = game.state_update().and_then(|s| s.species);
                self.seen.push((bytes, species, self.lean.of(game)));
            }
            Ok(Control::Continue)
        }
        fn field_trees(&self) -> FieldTrees {
            self.lean.trees()
        }
    }

    /// The fingerprint from the pipeline's one decode is the one a second decode of
    /// the message's bytes with its whole field tree gives (hashed typed where a
    /// warning-free StateUpdate is), for every message kind, with and without typed
    /// StateUpdates.
    /// Statistics decode StateUpdates without their records
    /// ([`FieldTrees::Counts`]): every real StateUpdate, and each with one byte
    /// changed (the unfit, trailing and odd-block paths), must give the warnings, the
    /// flags, the subsystem start and every other typed value of the full decode.
    #[test]
    fn counting_decodes_give_what_full_decodes_give_but_records() {
        use crate::game::opcodes::{decode_reusing, DecodeContext};
        use crate::game::stateupdate::UpdatePool;
        let catalog = ShipCatalog::stock();
        let real = corpus();
        let mut all = with_one_byte_changed(&real);
        all.extend(real);
        let (mut full_pool, mut count_pool) = (UpdatePool::new(), UpdatePool::new());
        let (mut with_block, mut with_power, mut warned) = (0, 0, 0);
        for (bytes, species) in &all {
            // The registry the pipeline had is gone: the species goes in directly.
            let full = crate::game::stateupdate::decode_reusing(
                bytes,
                *species,
                &catalog,
                false,
                &mut full_pool,
            );
            let counted = crate::game::stateupdate::decode_counting(
                bytes,
                *species,
                &catalog,
                &mut count_pool,
            );
            assert_eq!(counted.warnings, full.warnings, "{bytes:02x?}");
            assert_eq!(counted.length, full.length);
            warned += !full.warnings.is_empty() as usize;
            match (full.state_update(), counted.state_update()) {
                (Some(f), Some(c)) => {
                    assert_eq!(c.flags, f.flags);
                    assert_eq!(c.subsystem_start, f.subsystem_start, "{bytes:02x?}");
                    assert!(c.subsystems.is_none() && c.power.is_none());
                    with_block += f.subsystems.is_some() as usize;
                    with_power += f.power.is_some() as usize;
                    let mut f = f.clone();
                    (f.subsystems, f.power) = (None, None);
                    // Compared as written: a changed byte can make a NaN.
                    assert_eq!(format!("{c:?}"), format!("{f:?}"), "{bytes:02x?}");
                }
                (f, c) => assert_eq!(f.is_none(), c.is_none(), "{bytes:02x?}"),
            }
        }
        assert!(with_block > 0 && with_power > 0 && warned > 0);
        // Through the decoder's entry point, as the pipeline asks for it.
        let registry = crate::game::objects::ObjectRegistry::default();
        let ctx = DecodeContext::new(&registry, &catalog).with_trees(FieldTrees::Counts);
        let m = decode_reusing(&all[0].0, &ctx, &mut count_pool);
        assert!(m.fields.is_empty());
        assert!(m.state_update().is_some_and(|su| su.subsystems.is_none()));
    }

    #[test]
    fn one_decode_fingerprints_equal_those_of_a_full_second_decode() {
        use crate::game::objects::ObjectRegistry;
        use crate::game::opcodes::{self, DecodeContext};
        use crate::game::walk::Lean;
        let mut args = crate::synth::SynthArgs::new("unused");
        args.players = 4;
        args.seed = 5;
        args.loss = 0.02;
        args.packets = Some(2_000);
        let (_, capture) = crate::synth::generate(&args, Vec::new()).unwrap();
        let catalog = ShipCatalog::stock();
        let registry = ObjectRegistry::default();
        for cmp in [
            Comparison::standard(),
            Comparison::new(false, &["speed".to_string()]).unwrap(),
        ] {
            let lean = LeanFingerprints::new(cmp.clone(), catalog.clone());
            assert_eq!(lean.typed, cmp.ignore.iter().all(|n| n != "speed"));
            let mut sink = OneDecode {
                lean: &lean,
                seen: Vec::new(),
            };
            let reader =
                crate::capture::CaptureReader::new(std::io::Cursor::new(capture.clone())).unwrap();
            Pipeline::new(Config::default())
                .run(reader, &mut sink)
                .unwrap();
            let mut others = 0;
            for (bytes, species, fp) in &sink.seen {
                let full = if bytes[0] == stateupdate::OPCODE {
                    stateupdate::decode(bytes, *species, &catalog)
                } else {
                    others += 1;
                    opcodes::decode(bytes, &DecodeContext::new(&registry, &catalog))
                };
                // A StateUpdate with a typed value, warned or not, is hashed from it.
                let one = (bytes[0] == stateupdate::OPCODE).then(|| {
                    let pool = &mut stateupdate::UpdatePool::new();
                    stateupdate::decode_shown(bytes, *species, &catalog, &mut Lean, pool)
                });
                let want = match one.as_ref().and_then(|m| m.state_update()) {
                    Some(su) if lean.typed => {
                        lean.state_update(su, species.and_then(|s| catalog.class(s)))
                    }
                    _ => cmp.fingerprint(&full),
                };
                assert_eq!(*fp, want, "{bytes:02x?}");
            }
            assert!(others > 100 && sink.seen.len() > 2 * others, "{others}");
        }
    }

    /// Every message once more with one byte changed in a few ways, so that pairs that
    /// differ in exactly one place are plentiful.
    fn with_one_byte_changed(msgs: &[(Vec<u8>, Option<u16>)]) -> Vec<(Vec<u8>, Option<u16>)> {
        let mut out = Vec::new();
        for (bytes, species) in msgs.iter().step_by(7).take(300) {
            for i in 1..bytes.len() {
                for v in [bytes[i] ^ 1, bytes[i] ^ 0x80, 0, 0xFF] {
                    let mut b = bytes.clone();
                    b[i] = v;
                    out.push((b, *species));
                }
            }
        }
        out
    }

    /// Typed fingerprints are equal exactly when field-tree fingerprints are and both
    /// updates warned or neither did, over all StateUpdates that take the typed way (a
    /// warned one as [`FieldTrees::TypedStateUpdates`] decodes it: once, without a
    /// tree). Returns how many did, and how many of them warned.
    fn assert_same_partition(cmp: &Comparison, msgs: &[(Vec<u8>, Option<u16>)]) -> (usize, usize) {
        use crate::game::stateupdate::UpdatePool;
        use crate::game::walk::Lean;
        let catalog = ShipCatalog::stock();
        let lean = LeanFingerprints::new(cmp.clone(), catalog.clone());
        assert!(lean.typed);
        let mut by_fields: HashMap<(u64, bool), (u64, usize)> = HashMap::new();
        let mut by_typed: HashMap<u64, ((u64, bool), usize)> = HashMap::new();
        let (mut typed, mut warned) = (0, 0);
        let mut pool = UpdatePool::new();
        for (k, (bytes, species)) in msgs.iter().enumerate() {
            let full = stateupdate::decode(bytes, *species, &catalog);
            let one = stateupdate::decode_shown(bytes, *species, &catalog, &mut Lean, &mut pool);
            let Some(su) = one.state_update() else {
                continue;
            };
            assert_eq!(one.warnings, full.warnings);
            assert_eq!(su.shown.is_some(), !one.warnings.is_empty());
            typed += 1;
            warned += su.shown.is_some() as usize;
            let f = (cmp.fingerprint(&full), su.shown.is_some());
            let t = lean.state_update(su, species.and_then(|s| catalog.class(s)));
            assert_eq!(lean.of(&one), t);
            let (seen_t, first) = *by_fields.entry(f).or_insert((t, k));
            assert_eq!(
                seen_t, t,
                "equal fields, different typed fingerprints: {:02x?} / {:02x?}",
                msgs[first].0, bytes
            );
            let (seen_f, first) = *by_typed.entry(t).or_insert((f, k));
            assert_eq!(
                seen_f, f,
                "different fields, equal typed fingerprints: {:02x?} / {:02x?}",
                msgs[first].0, bytes
            );
        }
        (typed, warned)
    }

    #[test]
    fn typed_fingerprints_partition_state_updates_as_their_fields_do() {
        let mut msgs = corpus();
        let changed = with_one_byte_changed(&msgs);
        msgs.extend(changed);
        let ignore = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            Comparison::new(false, &names).unwrap()
        };
        for cmp in [
            Comparison::new(false, &[]).unwrap(),
            Comparison::new(true, &[]).unwrap(),
            ignore(&["clock", "no_such_field"]),
            // Names only a warned update's tree holds: left out there as in the tree.
            ignore(&["trailing", "fits_classes", "subsystem_block_raw"]),
        ] {
            let (typed, warned) = assert_same_partition(&cmp, &msgs);
            assert!(
                typed > 10_000 && warned > 1_000,
                "only {typed} StateUpdates took the typed way, {warned} of them warned"
            );
        }
    }

    /// Under the fingerprints' trees a StateUpdate is decoded once, one that warned
    /// too, and builds no tree; decoding one again counts again (the count tells one
    /// decode from two).
    #[test]
    fn every_state_update_is_decoded_once() {
        use crate::game::objects::ObjectRegistry;
        use crate::game::opcodes::{decode_reusing, DecodeContext};
        use crate::game::stateupdate::tests::DECODES;
        use crate::game::stateupdate::UpdatePool;
        let catalog = ShipCatalog::stock();
        // An empty registry: every subsystem block is kept raw, with its warning.
        let registry = ObjectRegistry::default();
        let lean = LeanFingerprints::new(Comparison::standard(), catalog.clone());
        let mut msgs = corpus();
        let changed = with_one_byte_changed(&msgs);
        msgs.extend(changed);
        let decodes = |trees: FieldTrees, bytes: &[u8], pool: &mut UpdatePool| {
            let ctx = DecodeContext::new(&registry, &catalog).with_trees(trees);
            let before = DECODES.with(|n| n.get());
            let m = decode_reusing(bytes, &ctx, pool);
            (DECODES.with(|n| n.get()) - before, m)
        };
        let (mut pool, mut warned) = (UpdatePool::new(), 0);
        for (bytes, _) in &msgs {
            let (n, m) = decodes(lean.trees(), bytes, &mut pool);
            assert_eq!(n, 1, "{bytes:02x?}");
            if m.state_update().is_some() {
                assert!(m.fields.is_empty(), "{bytes:02x?}");
            }
            if !m.warnings.is_empty() {
                warned += 1;
                let before = DECODES.with(|n| n.get());
                decodes(lean.trees(), bytes, &mut pool);
                decodes(lean.trees(), bytes, &mut pool);
                assert_eq!(DECODES.with(|n| n.get()) - before, 2, "{bytes:02x?}");
            }
        }
        assert!(warned > 1_000, "{warned}");
    }

    /// A StateUpdate that warned, fingerprinted from its one decode: equal bytes give
    /// equal fingerprints, and a changed byte of a compared field, of a raw block or
    /// of the bytes left over gives another.
    #[test]
    fn a_changed_byte_of_a_warned_state_update_changes_its_fingerprint() {
        use crate::game::stateupdate::{flag, UpdatePool};
        use crate::game::walk::Lean;
        let catalog = ShipCatalog::stock();
        let lean = LeanFingerprints::new(Comparison::standard(), catalog.clone());
        let fp = |bytes: &[u8], species: Option<u16>| {
            let m = stateupdate::decode_shown(
                bytes,
                species,
                &catalog,
                &mut Lean,
                &mut UpdatePool::new(),
            );
            assert!(!m.warnings.is_empty(), "{bytes:02x?}");
            lean.of(&m)
        };
        // A real warning-free update with a subsystem block.
        let (clean, species) = corpus()
            .into_iter()
            .find(|(b, species)| {
                let m = stateupdate::decode(b, *species, &catalog);
                m.warnings.is_empty()
                    && m.state_update().is_some_and(|su| {
                        su.flags & flag::SUBSYSTEMS != 0 && su.flags & flag::POWER == 0
                    })
            })
            .unwrap();
        // Bytes left over after the last field: a trailing-bytes warning.
        let mut trailing = clean.clone();
        trailing.extend_from_slice(&[0x11, 0x22, 0x33]);
        let base = fp(&trailing, species);
        assert_eq!(base, fp(&trailing.clone(), species));
        // The object id, and a byte left over.
        for at in [1, trailing.len() - 1] {
            let mut b = trailing.clone();
            b[at] ^= 0x40;
            assert_ne!(fp(&b, species), base, "byte {at}");
        }
        // Game time is volatile: left out of the standard comparison.
        let mut b = trailing.clone();
        b[6] ^= 0x01;
        assert_eq!(fp(&b, species), base);
        // An unknown class: the subsystem block is kept raw, its bytes compared.
        let raw = fp(&clean, None);
        let mut b = clean.clone();
        *b.last_mut().unwrap() ^= 0x01;
        assert_ne!(fp(&b, None), raw);
        // A warned update never meets a warning-free one.
        let m =
            stateupdate::decode_shown(&clean, species, &catalog, &mut Lean, &mut UpdatePool::new());
        assert!(m.warnings.is_empty());
        assert_ne!(lean.of(&m), base);
    }

    /// Values the wire can write in more than one way, and ships whose layouts differ.
    #[test]
    fn equal_values_written_differently_are_equal_and_layouts_count() {
        let catalog = ShipCatalog::stock();
        let class = &catalog.classes()[0];
        let base = StateUpdate {
            species: Some(class.species_id),
            object_id: 0x4000_0001,
            game_time: 12.5,
            flags: 0x92,
            delta: Some(Delta {
                dir: Dir3([10, 20, 30]),
                magnitude: Cf16(0),
            }),
            speed: Some(Cf16(0x0FFF)),
            power: Some(vec![PowerSetting {
                index: 1,
                value: 0xCC,
            }]),
            ..StateUpdate::default()
        };
        // A zero-length delta in another direction, and the same speed one scale up.
        let mut other = base.clone();
        other.delta = Some(Delta {
            dir: Dir3([40, 50, 60]),
            magnitude: Cf16(0),
        });
        other.speed = Some(Cf16(0x1000));
        other.game_time = 99.0;
        let msgs: Vec<_> = [&base, &other]
            .iter()
            .map(|su| (encode(su), su.species))
            .collect();
        assert_ne!(msgs[0].0, msgs[1].0);
        let cmp = Comparison::new(false, &[]).unwrap();
        if cf16_values_meet() {
            assert_eq!(assert_same_partition(&cmp, &msgs), (2, 0));
            let lean = LeanFingerprints::new(cmp.clone(), catalog.clone());
            assert_eq!(
                lean.state_update(&base, Some(class)),
                lean.state_update(&other, Some(class))
            );
        }
        // Game time counts with --include-volatile.
        let volatile = Comparison::new(true, &[]).unwrap();
        let lean = LeanFingerprints::new(volatile.clone(), catalog.clone());
        assert_ne!(
            lean.state_update(&base, Some(class)),
            lean.state_update(&other, Some(class))
        );
        // The power entry is named by the layout: another class, another name.
        let lean = LeanFingerprints::new(cmp.clone(), catalog.clone());
        let named = |c: Option<&ShipClass>| lean.state_update(&base, c);
        let second = &catalog.classes()[1];
        let same_name = |a: &ShipClass, b: &ShipClass| {
            a.entry(1).map(|e| &e.name) == b.entry(1).map(|e| &e.name)
        };
        assert_eq!(
            named(Some(class)) == named(Some(second)),
            same_name(class, second)
        );
        assert_ne!(named(Some(class)), named(None));
    }

    /// Whether cf16 scale 0 at full mantissa and scale 1 at zero decode to the same value
    /// (the test above relies on it for "same value, other bytes").
    fn cf16_values_meet() -> bool {
        Cf16(0x0FFF).value() == Cf16(0x1000).value()
    }

    #[test]
    fn ignoring_a_state_update_field_name_turns_typed_fingerprints_off() {
        let catalog = ShipCatalog::stock();
        let on = |ignore: &[&str], volatile: bool| {
            let ignore: Vec<String> = ignore.iter().map(|s| s.to_string()).collect();
            typed_state_updates(&Comparison::new(volatile, &ignore).unwrap(), &catalog)
        };
        assert!(on(&[], false));
        assert!(on(&[], true));
        assert!(on(&["game_time"], true));
        assert!(on(&["chat_text_that_is_no_field"], false));
        for name in [
            "speed",
            "subsystems_summary",
            "index",
            "key",
            "value",
            "index 3",
            "child 0",
        ] {
            assert!(!on(&[name], false), "{name}");
        }
        let entry = catalog.classes()[0].entry(0).unwrap().name.clone();
        assert!(!on(&[&entry], false), "{entry}");
    }

    #[test]
    fn numbered_names_hash_as_their_text() {
        for n in [0usize, 7, 10, 255, 1_000_000] {
            let mut a = FoldHasher::default();
            hash_numbered(&mut a, b"index ", n);
            let mut b = FoldHasher::default();
            hash_name(&mut b, &format!("index {n}"));
            assert_eq!(a.finish(), b.finish(), "{n}");
        }
    }
}
