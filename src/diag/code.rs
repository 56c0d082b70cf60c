//! Every warning bcwire can attach, registered once (as Wireshark registers its expert
//! items): a stable snake_case code, the layer that raises it, what kind of problem it
//! is and one line saying what it means. `docs/json.md`'s table of codes is tested equal
//! to [`Code::ALL`], and `bcwire list warnings` prints it.

use std::fmt;

/// The layer of the dissector that raises a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    Capture,
    Transport,
    Game,
    /// The Scrap Mechanic NetworkUpdate decoder (`bcwire sm`).
    ScrapMechanic,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Capture => "capture",
            Layer::Transport => "transport",
            Layer::Game => "game",
            Layer::ScrapMechanic => "scrap_mechanic",
        }
    }
}

/// What kind of problem a warning reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// The bytes break the format: too short, out of range, inconsistent.
    Malformed,
    /// Readable, but not what a stock peer sends (a reimplementation or a mod).
    NonStock,
    /// Out of order, repeated or conflicting across messages.
    Sequence,
    /// A bound of bcwire's own was reached; data was dropped or kept raw.
    Limit,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Malformed => "malformed",
            Kind::NonStock => "non_stock",
            Kind::Sequence => "sequence",
            Kind::Limit => "limit",
        }
    }
}

macro_rules! codes {
    ($( $variant:ident = $text:literal, $layer:ident, $kind:ident, $desc:literal; )+) => {
        /// A warning code. The text form (`as_str`) is the stable name in JSON.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $variant, )+
        }

        impl Code {
            /// Every code, in the order of the documentation table.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )+ ];

            /// The stable snake_case name used in JSON and on the command line.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $text, )+ }
            }

            pub fn layer(self) -> Layer {
                match self { $( Code::$variant => Layer::$layer, )+ }
            }

            pub fn kind(self) -> Kind {
                match self { $( Code::$variant => Kind::$kind, )+ }
            }

            /// One line saying what the warning means.
            pub fn description(self) -> &'static str {
                match self { $( Code::$variant => $desc, )+ }
            }

            /// The code of a snake_case name.
            pub fn from_name(name: &str) -> Option<Code> {
                match name { $( $text => Some(Code::$variant), )+ _ => None }
            }
        }
    };
}

codes! {
    TruncatedCapture = "truncated_capture", Capture, Malformed,
        "the capture file ends inside a record or block";
    RecordOverSnaplen = "record_over_snaplen", Capture, Malformed,
        "a record holds more bytes than its interface's snap length; it is read whole";
    CaptureBlockMalformed = "capture_block_malformed", Capture, Malformed,
        "a section or interface block has options the reader refuses; it is kept without them";
    UnknownTransportType = "unknown_transport_type", Transport, Malformed,
        "a transport message type nobody has described; the rest of the datagram is kept raw";
    TruncatedHeader = "truncated_header", Transport, Malformed,
        "the datagram is shorter than its packet header";
    MessageOverrun = "message_overrun", Transport, Malformed,
        "a transport message's length runs past the end of the datagram";
    MessageTooShort = "message_too_short", Transport, Malformed,
        "a transport message's length is smaller than its own header";
    CountMismatch = "count_mismatch", Transport, Malformed,
        "the packet header's message count differs from the messages found";
    TrailingBytes = "trailing_bytes", Game, Malformed,
        "bytes after the end of a complete structure";
    MalformedBody = "malformed_body", Transport, Malformed,
        "a connection-level (low type) message body does not have its documented shape";
    DamagedFrame = "damaged_frame", Transport, Malformed,
        "byte 0 cannot start a packet in its direction (damaged, or on a flow that has carried no game packet yet possibly no game packet at all); the frame keeps its record, decoded as far as it goes";
    SeqGap = "seq_gap", Transport, Sequence,
        "a new reliable message skipped sequence numbers on its counter";
    SeqOutOfOrder = "seq_out_of_order", Transport, Sequence,
        "a new reliable message is numbered below one already seen (not a wrap)";
    PeerIdMismatch = "peer_id_mismatch", Transport, Sequence,
        "a client sends a peer id other than the one the host assigned to it";
    FragmentIndexOutOfRange = "fragment_index_out_of_range", Transport, Malformed,
        "a fragment's index is not below the set's declared total";
    FragmentTotalZero = "fragment_total_zero", Transport, Malformed,
        "the first fragment of a set declares a total of zero fragments";
    FragmentTotalConflict = "fragment_total_conflict", Transport, Sequence,
        "fragments of one set declare different totals";
    FragmentConflict = "fragment_conflict", Transport, Sequence,
        "two copies of one fragment carry different bytes";
    FragmentSetTooLarge = "fragment_set_too_large", Transport, Limit,
        "a fragment set would exceed the per-set byte limit; the set is dropped";
    FragmentLimit = "fragment_limit", Transport, Limit,
        "the reassembly memory limit is reached; the fragment is dropped";
    NonStock = "non_stock", Transport, NonStock,
        "readable, but framed or shaped differently from what stock peers send";
    DecodeError = "decode_error", Game, Malformed,
        "a game message ends before a field it must contain; the rest is kept raw";
    UnknownClass = "unknown_class", Game, NonStock,
        "an object or event class nobody has described; its body is kept raw";
    NoLayout = "no_layout", Game, NonStock,
        "no known layout reads the data (unknown ship class, or a Scrap Mechanic body of unexpected size); it is kept raw";
    LayoutMismatch = "layout_mismatch", Game, NonStock,
        "an entry does not fit the subsystem layout of the ship's class";
    LayoutUnfit = "layout_unfit", Game, NonStock,
        "a subsystem block ends before the records of its class's layout do (a reimplementation's block); kept raw";
    SubsystemCycle = "subsystem_cycle", Game, NonStock,
        "subsystem records continue past a full cycle of the class's list";
    BothBlocks = "both_blocks", Game, NonStock,
        "a StateUpdate sets both the subsystem (0x20) and power (0x80) flags";
    ObjectIdConflict = "object_id_conflict", Game, Malformed,
        "a creation of an id that a live object of another owner or class holds; the newest takes the id";
    LengthMismatch = "length_mismatch", Game, Malformed,
        "a message's flags and its length disagree";
    CaptureCorrupt = "capture_corrupt", Capture, Malformed,
        "the capture's structure is broken where the reader cannot find the next record; reading stops";
    CaptureReadError = "capture_read_error", Capture, Malformed,
        "the input could not be read further (an I/O error); what was read is reported";
    IpFragmentsIncomplete = "ip_fragments_incomplete", Capture, Sequence,
        "IP fragments of a datagram never all arrived; the datagram is not decoded";
    FragmentSetIncomplete = "fragment_set_incomplete", Transport, Sequence,
        "a fragmented reliable message never completed, or no fragment came for 60 s";
    RateCollapse = "rate_collapse", Transport, Sequence,
        "one direction of a client's flow fell below 10 % of its median datagram rate over the previous 30 s for 10 s or more while the other kept at least half of its own";
    SessionTableFull = "session_table_full", Transport, Limit,
        "the session table is full; datagrams of further sessions or clients are not decoded";
    ReliabilityWindowLimit = "reliability_window_limit", Transport, Limit,
        "unacknowledged reliable messages left the tracker's window beyond those it remembers";
    EventsNotListed = "events_not_listed", Transport, Limit,
        "a client's boot and silence events beyond the per-client bound are counted, not listed";
    ObjectRegistryFull = "object_registry_full", Game, Limit,
        "a session's object table is full; later objects lack ship layouts and names";
    ShipListLimit = "ship_list_limit", Game, Limit,
        "ships ended before the most recent ones kept are missing from the client ship lists";
    RelayLinkerFull = "relay_linker_full", Game, Limit,
        "client messages were forgotten before their relayed copies could be linked";
    NotListed = "not_listed", Capture, Limit,
        "a list reached its bound; the line says how many more entries there were";
    PaddingNonzero = "padding_nonzero", ScrapMechanic, NonStock,
        "padding bits that the format keeps zero are not zero";
    InputEmpty = "input_empty", ScrapMechanic, Malformed,
        "no bytes to decode";
    PacketIdUnsupported = "packet_id_unsupported", ScrapMechanic, Malformed,
        "a packet id other than the NetworkUpdate ids";
    Lz4Invalid = "lz4_invalid", ScrapMechanic, Malformed,
        "the LZ4 block does not decompress";
    Lz4OutputOverCap = "lz4_output_over_cap", ScrapMechanic, Limit,
        "the LZ4 block decompresses to more than the output bound";
    TickTruncated = "tick_truncated", ScrapMechanic, Malformed,
        "the packet ends inside the tick header";
    StateTableFull = "state_table_full", ScrapMechanic, Limit,
        "the table of object controllers is full; later Creates are not learned";
    UpdateEmpty = "update_empty", ScrapMechanic, Malformed,
        "an update with no bytes";
    UpdateTruncated = "update_truncated", ScrapMechanic, Malformed,
        "an update ends before its header or declared size";
    UpdateTypeUnknown = "update_type_unknown", ScrapMechanic, NonStock,
        "an update type the seed does not describe; the body is kept raw";
    ObjectTypeInvalid = "object_type_invalid", ScrapMechanic, Malformed,
        "an object type above the documented maximum; the body is kept raw";
    CompoundTruncated = "compound_truncated", ScrapMechanic, Malformed,
        "a compound update ends before its declared size";
    CompoundSizeInvalid = "compound_size_invalid", ScrapMechanic, Malformed,
        "an inner packet's size leaves no room for its id byte";
    RawTruncated = "raw_truncated", ScrapMechanic, Malformed,
        "a raw state ends before its declared size";
    RawSizeInvalid = "raw_size_invalid", ScrapMechanic, Malformed,
        "a raw state declares an impossible size";
    DeltaWithoutPrevious = "delta_without_previous", ScrapMechanic, Sequence,
        "a delta update for an object whose previous state was never seen";
    DeltaBaseTooLarge = "delta_base_too_large", ScrapMechanic, Malformed,
        "a delta update follows an update too large to serve as its base";
    BitfieldTruncated = "bitfield_truncated", ScrapMechanic, Malformed,
        "a delta update ends inside its changed-bytes bitfield";
    DeltaTruncated = "delta_truncated", ScrapMechanic, Malformed,
        "a delta update ends before the bytes its bitfield announces";
    DeltaUnusedBits = "delta_unused_bits", ScrapMechanic, Malformed,
        "bits set in a delta bitfield beyond the state's length";
    AxisInvalid = "axis_invalid", ScrapMechanic, Malformed,
        "an axis value outside the documented range";
    PUpdateNotJoint = "p_update_not_joint", ScrapMechanic, NonStock,
        "a P update for an object that is not a Joint (only documented for Joints); body kept raw";
}

/// How serious a warning is, on the scale of Wireshark's expert items (the plugin of
/// `bcwire wireshark` lists each code under this severity and its kind's group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; the data is readable (a non-stock peer, a mod).
    Note,
    /// Something went missing or out of order, or bcwire kept data raw at a bound.
    Warn,
    /// The bytes break the format.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warn => "warn",
            Severity::Error => "error",
        }
    }
}

impl Code {
    /// The severity of this code: an error where the bytes break the format, a warning
    /// for sequence problems and bcwire's own limits, a note for what is readable but not
    /// stock. Trailing bytes are readable, so they only warn.
    pub fn severity(self) -> Severity {
        match (self, self.kind()) {
            (Code::TrailingBytes, _) => Severity::Warn,
            (_, Kind::Malformed) => Severity::Error,
            (_, Kind::Sequence | Kind::Limit) => Severity::Warn,
            (_, Kind::NonStock) => Severity::Note,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &c in Code::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{s}"
            );
            assert_eq!(Code::from_name(s), Some(c));
            assert!(!c.description().is_empty());
        }
        assert_eq!(Code::from_name("nonsense"), None);
    }
}
