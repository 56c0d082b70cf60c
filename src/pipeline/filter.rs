//! Message selection for `decode`, `show` and `stats` (`--opcode`, `--client`, …).

use super::display::{ClientNames, DisplayFilter};
use super::facts::Fact;
use super::names::Names;
pub use super::values::{
    did_you_mean, parse_duration_ns, parse_frame_range, parse_object_id, parse_opcode, parse_range,
    parse_ship, parse_time_range, Range, TimeRange,
};
use crate::diag::Direction;
use crate::game::opcodes::FieldTrees;
use crate::game::ships::ShipCatalog;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use crate::pipeline::summary::{CaptureSummary, ClientSummary};
use anyhow::{anyhow, bail, Context, Result};

/// `--client` names no client of a capture: with several inputs a note for that one
/// (the client may be in the others), an error when it is the only one.
#[derive(Debug)]
pub struct ClientAbsent(pub String);

impl std::fmt::Display for ClientAbsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientAbsent {}

/// What to select, as the user wrote it; the command line converts its flags into this.
#[derive(Debug, Clone, Default)]
pub struct FilterSpec {
    pub opcode: Vec<String>,
    pub exclude: Vec<String>,
    pub direction: Option<String>,
    pub client: Option<String>,
    pub object: Option<String>,
    pub ship: Option<String>,
    pub frames: Option<String>,
    pub time: Option<String>,
    /// `-Y`: a display filter expression (`pipeline::display`).
    pub display: Option<String>,
}

/// Which client a `--client` value names.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientSel {
    /// A player name (compared without regard to case).
    Name(String),
    /// A bare number: the client's UDP port or its peer id.
    Number(u16),
    /// `0x04` or `peer:4`.
    Peer(u8),
    /// `port:62366`.
    Port(u16),
    /// `slot:2`: the player slot.
    Slot(u8),
}

impl ClientSel {
    pub fn parse(s: &str) -> Result<ClientSel> {
        let t = s.trim();
        let num = |v: &str| -> Option<u16> {
            let v = v.trim();
            match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                Some(h) => u16::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        };
        let small = |v: &str, what: &str| -> Result<u8> {
            num(v)
                .and_then(|n| u8::try_from(n).ok())
                .with_context(|| format!("invalid {what} {v:?} in --client {t:?} (0 to 255)"))
        };
        if let Some((kind, v)) = t.split_once(':') {
            match kind.to_ascii_lowercase().as_str() {
                "peer" => return Ok(ClientSel::Peer(small(v, "peer id")?)),
                "slot" => return Ok(ClientSel::Slot(small(v, "slot")?)),
                "port" => {
                    return num(v)
                        .map(ClientSel::Port)
                        .with_context(|| format!("invalid port {v:?} in --client {t:?}"))
                }
                _ => {}
            }
        }
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            return u8::from_str_radix(h, 16)
                .map(ClientSel::Peer)
                .with_context(|| format!("invalid peer id {t:?} (0x00 to 0xFF)"));
        }
        if let Ok(n) = t.parse::<u16>() {
            return Ok(ClientSel::Number(n));
        }
        if t.is_empty() {
            bail!("empty --client (give a name, port, peer id such as 0x04, or slot:N)");
        }
        Ok(ClientSel::Name(t.to_lowercase()))
    }

    /// How this selector matches one client of a summary, if it does.
    fn matches(&self, c: &ClientSummary) -> Option<&'static str> {
        let port = c.addr.map(|a| a.port());
        match self {
            ClientSel::Name(n) => c
                .name
                .as_ref()
                .filter(|m| m.to_lowercase() == *n)
                .map(|_| "name"),
            ClientSel::Port(p) => (port == Some(*p)).then_some("port"),
            ClientSel::Peer(p) => (c.peer_id == Some(*p)).then_some("peer id"),
            ClientSel::Slot(s) => (c.slot == Some(*s)).then_some("slot"),
            ClientSel::Number(n) => {
                if port == Some(*n) {
                    Some("port")
                } else if c.peer_id.is_some_and(|p| u16::from(p) == *n) {
                    Some("peer id")
                } else {
                    None
                }
            }
        }
    }
}

/// One client of a summary as `--client` values would name it.
fn describe_client(c: &ClientSummary) -> String {
    let mut parts = Vec::new();
    if let Some(a) = c.addr {
        parts.push(format!("port {}", a.port()));
    }
    if let Some(p) = c.peer_id {
        parts.push(format!("peer 0x{p:02X}"));
    }
    if let Some(s) = c.slot {
        parts.push(format!("slot:{s}"));
    }
    let name = c.name.as_deref().unwrap_or("(no name)");
    format!("{name} ({})", parts.join(", "))
}

/// The selection of every command: `-Y` and the short options, each compiled by
/// [`DisplayFilter::parse`] from the expression it stands for (`--opcode StateUpdate`
/// is `opcode in {0x1C}`, `--client Worf` is `client == "Worf"`; see
/// [`FilterSpec::expressions`]). Conditions on the datagram are tested once per frame,
/// the others once per message.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// `--direction`, `--frames`, `--time`.
    packet: Vec<std::sync::Arc<DisplayFilter>>,
    /// `--client` as given; compiled into `client_test` once it is known whether the
    /// capture can be read twice (a file) or is read as it goes (standard input).
    client: Option<ClientSel>,
    client_test: Option<std::sync::Arc<DisplayFilter>>,
    /// `--opcode`, `--exclude`, `--object`, `--ship`, then `-Y`.
    message: Vec<std::sync::Arc<DisplayFilter>>,
    /// `-Y` as given (also the last of `message`).
    display: Option<std::sync::Arc<DisplayFilter>>,
    /// The names the capture gave its clients, for `-Y` tests of `client`.
    client_names: Option<std::sync::Arc<ClientNames>>,
    /// Capture time of the first frame of the file being read (for `time_relative`),
    /// noted by the first [`Filter::keep_packet`]; `i64::MIN` until then.
    first_ts_ns: FirstTs,
}

/// The capture time of a file's first frame, shared by the clones of a filter.
#[derive(Debug, Clone)]
struct FirstTs(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl Default for FirstTs {
    fn default() -> Self {
        FirstTs(std::sync::Arc::new(std::sync::atomic::AtomicI64::new(
            i64::MIN,
        )))
    }
}

/// A fresh "no frame seen yet" for [`Filter::first_ts_ns`].
fn no_first_ts() -> FirstTs {
    FirstTs::default()
}

/// The `-Y` expressions the short options stand for, as the manual lists them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShortExpressions {
    /// Tested on the datagram: `--direction`, `--frames`, `--time`.
    pub packet: Vec<String>,
    /// Tested on each message: `--opcode`, `--exclude`, `--object`, `--ship`.
    pub message: Vec<String>,
}

impl FilterSpec {
    /// The `-Y` expression each short option stands for, after checking its value
    /// (with the option's own error message). `--client` by a name is `client == "X"`;
    /// by port, peer id or slot it names clients `-Y` reaches through
    /// `client_port`/`client_peer_id`, resolved per capture.
    pub fn expressions(&self, ships: &ShipCatalog) -> Result<ShortExpressions> {
        let mut e = ShortExpressions::default();
        if let Some(d) = &self.direction {
            let d = if d == "c2s" {
                Direction::C2S
            } else {
                Direction::S2C
            };
            e.packet
                .push(format!("{} == {}", Fact::Direction.name(), d.as_str()));
        }
        if let Some(r) = self.frames.as_deref().map(parse_frame_range).transpose()? {
            e.packet
                .extend(r.from.map(|f| format!("{} >= {f}", Fact::Frame.name())));
            e.packet
                .extend(r.to.map(|t| format!("{} <= {t}", Fact::Frame.name())));
        }
        if let Some(r) = self.time.as_deref().map(parse_time_range).transpose()? {
            // Rust prints the shortest text that reads back as the same f64.
            e.packet.extend(
                r.from
                    .map(|f| format!("{} >= {f}", Fact::TimeRelative.name())),
            );
            e.packet.extend(r.to.map(|t| {
                if r.to_exclusive {
                    format!("{} < {}", Fact::TimeRelative.name(), t + 1.0)
                } else {
                    format!("{} <= {t}", Fact::TimeRelative.name())
                }
            }));
        }
        let opcode_set = |list: &[String]| -> Result<Option<String>> {
            if list.is_empty() {
                return Ok(None);
            }
            let ops = list
                .iter()
                .map(|s| parse_opcode(s).map(|o| format!("0x{o:02X}")))
                .collect::<Result<Vec<_>>>()?;
            Ok(Some(format!(
                "{} in {{{}}}",
                Fact::Opcode.name(),
                ops.join(" ")
            )))
        };
        e.message.extend(opcode_set(&self.opcode)?);
        e.message
            .extend(opcode_set(&self.exclude)?.map(|t| format!("not {t}")));
        if let Some(id) = self.object.as_deref().map(parse_object_id).transpose()? {
            e.message
                .push(format!("{} == 0x{id:08X}", Fact::ObjectIds.name()));
        }
        if let Some(class) = &self.ship {
            parse_ship(class, ships)?;
            e.message
                .push(format!("{} == \"{}\"", Fact::Ship.name(), escape(class)));
        }
        Ok(e)
    }
}

impl ClientSel {
    /// The `-Y` expression of this selector for a stream read as it goes. A capture
    /// file resolves the selector against its clients instead ([`Filter::for_capture`]),
    /// so that a name matches the client's frames from before it was sent too.
    /// `None` for a slot: it is sent in Settings, which no record carries.
    fn expression_as_read(&self) -> Option<String> {
        Some(match self {
            ClientSel::Name(n) => format!("{} == \"{}\"", Fact::Client.name(), escape(n)),
            ClientSel::Port(p) => format!("{} == {p}", Fact::ClientPort.name()),
            ClientSel::Peer(p) => format!("{} == 0x{p:02X}", Fact::ClientPeerId.name()),
            ClientSel::Number(n) if *n <= u16::from(u8::MAX) => {
                format!(
                    "{} == {n} or {} == {n}",
                    Fact::ClientPort.name(),
                    Fact::ClientPeerId.name()
                )
            }
            ClientSel::Number(n) => format!("{} == {n}", Fact::ClientPort.name()),
            ClientSel::Slot(_) => return None,
        })
    }
}

/// A name as a `-Y` string literal.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Compile an expression the program wrote itself from a checked option value.
fn compile(text: &str, ships: &ShipCatalog) -> Result<std::sync::Arc<DisplayFilter>> {
    DisplayFilter::parse(text, ships)
        .map(std::sync::Arc::new)
        .map_err(|e| anyhow!("{e}"))
}

impl Filter {
    pub fn from_spec(a: &FilterSpec) -> Result<Filter> {
        Filter::from_spec_with(a, &ShipCatalog::stock())
    }

    /// As [`Filter::from_spec`], knowing the ship classes of `--ships` too.
    pub fn from_spec_with(a: &FilterSpec, ships: &ShipCatalog) -> Result<Filter> {
        let e = a.expressions(ships)?;
        // An empty expression is no filter, as in Wireshark.
        let display = a
            .display
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .map(|t| DisplayFilter::parse(t, ships).map(std::sync::Arc::new))
            .transpose()?;
        let packet = e
            .packet
            .iter()
            .map(|t| compile(t, ships))
            .collect::<Result<_>>()?;
        let mut message: Vec<_> = e
            .message
            .iter()
            .map(|t| compile(t, ships))
            .collect::<Result<_>>()?;
        message.extend(display.clone());
        Ok(Filter {
            packet,
            client: a.client.as_deref().map(ClientSel::parse).transpose()?,
            client_test: None,
            message,
            display,
            client_names: None,
            first_ts_ns: no_first_ts(),
        })
    }

    /// This filter for a capture read as it goes (standard input): `--client` is
    /// tested on what the records say of their client, its name, port or peer id (its
    /// records wait until its name is known, [`Filter::waits_for_names`]). A slot is
    /// sent in Settings, which no record carries: `slot:N` needs a file.
    pub fn for_stream(&self) -> Result<Filter> {
        let client_test = match &self.client {
            None => None,
            Some(ClientSel::Slot(n)) => bail!(
                "--client slot:{n} needs a capture file, read twice; on standard input give \
                 the client's name, port or peer id"
            ),
            Some(c) => c
                .expression_as_read()
                .map(|t| compile(&t, &ShipCatalog::stock()))
                .transpose()?,
        };
        Ok(Filter {
            client_test,
            first_ts_ns: no_first_ts(),
            ..self.clone()
        })
    }

    /// Whether, read as it goes, the selection must wait for a client's name to know
    /// whether the client is the one it names: a player name, a peer id (sent with the
    /// name), or a `-Y` test of `client`. A port is known from the first datagram.
    pub fn waits_for_names(&self) -> bool {
        let by_client = match self.client {
            Some(ClientSel::Name(_) | ClientSel::Peer(_)) => true,
            Some(ClientSel::Number(n)) => n <= u16::from(u8::MAX),
            _ => false,
        };
        by_client || self.display.as_ref().is_some_and(|d| d.mentions_client())
    }

    /// This filter for a capture that has none of the clients `--client` names: it
    /// selects no client's datagram (`diff` then shows the other side's flows alone).
    pub fn selecting_no_client(&self) -> Result<Filter> {
        Ok(Filter {
            client_test: Some(compile(
                &format!("{} in {{}}", Fact::Client.name()),
                &ShipCatalog::stock(),
            )?),
            first_ts_ns: no_first_ts(),
            ..self.clone()
        })
    }

    /// Whether `--client` wants a first reading of the capture to find who it names.
    pub fn needs_clients(&self) -> bool {
        self.client.is_some() || self.display.as_ref().is_some_and(|d| d.mentions_client())
    }

    /// This filter for one capture whose summary is known: `--client` becomes a test of
    /// the sessions' clients it names (`session == S and client == C`), so every frame
    /// of theirs is selected in both directions, also those before the name or peer id
    /// was sent. A selector that names no client, or two by different means, is an
    /// error listing the clients.
    pub fn for_capture(&self, summary: &CaptureSummary) -> Result<Filter> {
        let mut filter = self.clone();
        filter.first_ts_ns = no_first_ts();
        if self.display.as_ref().is_some_and(|d| d.mentions_client()) {
            let named = summary.sessions.iter().flat_map(|s| {
                s.clients
                    .iter()
                    .filter_map(move |c| Some(((s.index, c.index), c.name.clone()?)))
            });
            let named: ClientNames = named.collect();
            // A player name no client has is most likely a slip: the same error and
            // "did you mean" as `--client`.
            let d = self.display.as_ref().expect("mentions_client implies -Y");
            for word in d.client_words() {
                if !named.values().any(|n| n.eq_ignore_ascii_case(&word)) {
                    let hint = did_you_mean(&word, named.values().map(String::as_str))
                        .map(|m| format!(" (did you mean {m}?)"))
                        .unwrap_or_default();
                    let mut list: Vec<&str> = named.values().map(String::as_str).collect();
                    list.sort_unstable();
                    list.dedup();
                    bail!(
                        "-Y: no client {word:?} in this capture{hint}; known players: {}",
                        if list.is_empty() {
                            "none".to_string()
                        } else {
                            list.join(", ")
                        }
                    );
                }
            }
            filter.client_names = Some(std::sync::Arc::new(named));
        }
        let Some(sel) = &self.client else {
            return Ok(filter);
        };
        let all: Vec<&ClientSummary> = summary.sessions.iter().flat_map(|s| &s.clients).collect();
        let mut found = Vec::new();
        let mut how = Vec::new();
        for s in &summary.sessions {
            for c in &s.clients {
                if let Some(h) = sel.matches(c) {
                    found.push((s.index, c.index));
                    if !how.contains(&h) {
                        how.push(h);
                    }
                }
            }
        }
        let known = || {
            if all.is_empty() {
                "the capture has no Bridge Commander client".to_string()
            } else {
                let list: Vec<String> = all.iter().map(|c| describe_client(c)).collect();
                format!("known clients: {}", list.join("; "))
            }
        };
        let given = self.client_text();
        if found.is_empty() {
            let hint = match sel {
                ClientSel::Name(n) => did_you_mean(n, all.iter().filter_map(|c| c.name.as_deref()))
                    .map(|m| format!(" (did you mean {m}?)"))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            return Err(ClientAbsent(format!(
                "no client {given} in this capture{hint}; {}",
                known()
            ))
            .into());
        }
        if how.len() > 1 {
            bail!(
                "--client {given} names clients by {}; say port:N or peer:N; {}",
                how.join(" and by "),
                known()
            );
        }
        let test: Vec<String> = found
            .iter()
            .map(|(s, c)| {
                format!(
                    "{} == {s} and {} == {c}",
                    Fact::Session.name(),
                    Fact::Client.name()
                )
            })
            .collect();
        filter.client_test = Some(compile(&test.join(" or "), &ShipCatalog::stock())?);
        Ok(filter)
    }

    fn client_text(&self) -> String {
        match &self.client {
            Some(ClientSel::Name(n)) => format!("{n:?}"),
            Some(ClientSel::Number(n)) | Some(ClientSel::Port(n)) => n.to_string(),
            Some(ClientSel::Peer(p)) => format!("0x{p:02X}"),
            Some(ClientSel::Slot(s)) => format!("slot:{s}"),
            None => String::new(),
        }
    }

    /// Whether nothing is filtered out at all (no condition of any kind).
    pub fn selects_everything(&self) -> bool {
        self.selects_all_messages() && self.packet.is_empty() && self.client.is_none()
    }

    /// True when no message-level condition is set (every message of a kept packet is
    /// kept).
    pub fn selects_all_messages(&self) -> bool {
        self.message.is_empty()
    }

    /// The `-Y` expression, if one was given.
    pub fn display(&self) -> Option<&DisplayFilter> {
        self.display.as_deref()
    }

    /// The field trees the selection reads ([`DisplayFilter::field_trees`]: `-Y`, and
    /// `--object`, which tests every object id a message names); a sink asks for these
    /// together with its own ([`FieldTrees::union`]).
    pub fn field_trees(&self) -> FieldTrees {
        self.packet
            .iter()
            .chain(&self.message)
            .fold(FieldTrees::None, |t, d| t.union(d.field_trees()))
    }

    /// Whether a GameSpy datagram of a kept packet is kept: the message conditions are
    /// tested on its datagram facts, so a condition that asks for a game message
    /// (`--opcode`, `--object`, `--ship`) fails and `--exclude` passes, as their `-Y`
    /// forms do.
    pub fn keep_gamespy(&self, p: &PacketRecord, names: &dyn Names) -> bool {
        self.message.iter().all(|d| {
            d.matches(
                p,
                None,
                names,
                self.client_names.as_deref(),
                self.first_ts(p),
            )
        })
    }

    /// Whether a record is selected: the selection keeps the datagram and, for a game
    /// datagram, at least one of its messages. A GameSpy datagram, and a game datagram
    /// whose walk found no message (none announced, or the first one unreadable), is
    /// tested on its datagram facts alone. Every command selects records with this one
    /// test.
    pub fn keeps_record(&self, p: &PacketRecord, first_ts_ns: i64, names: &dyn Names) -> bool {
        if !self.keep_packet(p, first_ts_ns, names) {
            return false;
        }
        match &p.body {
            PacketBody::GameSpy { .. } => self.keep_gamespy(p, names),
            PacketBody::Game(g) if g.messages.is_empty() => self.keep_gamespy(p, names),
            PacketBody::Game(g) => g.messages.iter().any(|m| self.keep_message(p, m, names)),
        }
    }

    /// Datagram conditions: `--direction`, `--frames`, `--time`, `--client`.
    pub fn keep_packet(&self, p: &PacketRecord, first_ts_ns: i64, names: &dyn Names) -> bool {
        // A plain load first: the exchange writes the line, once per file is enough.
        if self
            .first_ts_ns
            .0
            .load(std::sync::atomic::Ordering::Relaxed)
            == i64::MIN
        {
            let _ = self.first_ts_ns.0.compare_exchange(
                i64::MIN,
                first_ts_ns,
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        let first = self.first_ts(p);
        self.packet
            .iter()
            .chain(&self.client_test)
            .all(|d| d.matches(p, None, names, self.client_names.as_deref(), first))
    }

    /// The first frame's capture time as noted, else `p`'s own.
    fn first_ts(&self, p: &PacketRecord) -> i64 {
        match self
            .first_ts_ns
            .0
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            i64::MIN => p.ts_ns,
            t => t,
        }
    }

    /// Message conditions: `--opcode`, `--exclude`, `--object`, `--ship`, `-Y`.
    pub fn keep_message(&self, p: &PacketRecord, m: &MessageRecord, names: &dyn Names) -> bool {
        if self.message.is_empty() {
            return true;
        }
        let first = self.first_ts(p);
        self.message
            .iter()
            .all(|d| d.matches(p, Some(m), names, self.client_names.as_deref(), first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r: Range<u64> = parse_range("10-20", "frame").unwrap();
        assert!(r.contains(10) && r.contains(20) && !r.contains(21));
        let r: Range<u64> = parse_range("-5", "frame").unwrap();
        assert!(r.contains(0) && !r.contains(6));
        let r: Range<u64> = parse_range("7", "frame").unwrap();
        assert!(r.contains(7) && !r.contains(8));
        assert!(parse_range::<u64>("x-2", "frame").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("1s").unwrap(), 1_000_000_000);
        assert_eq!(parse_duration_ns("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration_ns("2m").unwrap(), 120_000_000_000);
        assert!(parse_duration_ns("0s").is_err());
        assert!(parse_duration_ns("fast").is_err());
    }

    /// The decode asks for a `-Y` expression's fields: what it names is built, the
    /// rest of the message is not.
    #[test]
    fn fields_the_expression_does_not_name_are_not_built() {
        use crate::game::objects::ObjectRegistry;
        use crate::game::opcodes::{decode, DecodeContext};
        use crate::game::update::{encode, flag, Cf16, StateUpdate};
        use crate::game::walk::EntrySet;
        let trees = |expr: &str| {
            let spec = FilterSpec {
                display: Some(expr.to_string()),
                ..FilterSpec::default()
            };
            Filter::from_spec(&spec).unwrap().field_trees()
        };
        let su = StateUpdate {
            object_id: 0x4000_0001,
            game_time: 12.5,
            flags: flag::POSITION | flag::SPEED,
            position: Some([1.0, 2.0, 3.0]),
            speed: Some(Cf16::from_value(2.0)),
            ..StateUpdate::default()
        };
        let bytes = encode(&su);
        let (registry, ships) = (ObjectRegistry::default(), ShipCatalog::stock());
        let built = |expr: &str| {
            let ctx = DecodeContext::new(&registry, &ships).with_trees(trees(expr));
            let m = decode(&bytes, &ctx);
            m.fields
                .iter()
                .map(|f| f.name.to_string())
                .collect::<Vec<_>>()
        };
        assert!(built("opcode == StateUpdate").is_empty());
        assert_eq!(built("speed > 1"), ["speed"]);
        assert_eq!(
            built("game_time < frame and position.x > 0"),
            ["game_time", "position"]
        );
        assert_eq!(built("flags & 0x10 or speed"), ["flags", "speed"]);
        // A bare name reaches its field at any depth: the lists it sits in are built.
        assert_eq!(
            trees("score > 0"),
            FieldTrees::Only(EntrySet::of(["score", "updates"]).unwrap())
        );
        assert_eq!(
            trees("power_pct > 0"),
            FieldTrees::Only(EntrySet::of(["subsystems"]).unwrap())
        );
        // A path from any name: whole trees.
        assert_eq!(trees("*.x > 0"), FieldTrees::All);
        // Object ids are gathered from every tree but a StateUpdate's, whose id is
        // typed; with a named field, that StateUpdate gets that field too.
        assert_eq!(
            trees("object_ids == 0x3FFFFFFF"),
            FieldTrees::TYPED_STATE_UPDATES
        );
        assert_eq!(
            trees("object_ids == 1 and speed > 1"),
            FieldTrees::TypedStateUpdates(EntrySet::of(["speed"]).unwrap())
        );
        let spec = FilterSpec {
            object: Some("0x3FFFFFFF".into()),
            ..FilterSpec::default()
        };
        assert_eq!(
            Filter::from_spec(&spec).unwrap().field_trees(),
            FieldTrees::TYPED_STATE_UPDATES
        );
    }

    #[test]
    fn opcodes_by_number() {
        assert_eq!(parse_opcode("0x1C").unwrap(), 0x1C);
        assert_eq!(parse_opcode("28").unwrap(), 28);
        assert!(parse_opcode("NoSuchOpcode").is_err());
    }
}
