//! Command-line definitions. Parsing only; the commands live in `commands`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "bcwire",
    version,
    about = "Dissector for the Star Trek: Bridge Commander multiplayer protocol",
    long_about = "Reads pcap and pcapng captures, finds Bridge Commander sessions, decrypts \
                  the AlbyRules! cipher, walks every transport message and decodes every \
                  game opcode, including StateUpdate with per-ship subsystem layouts."
)]
pub struct Cli {
    /// When to colour output: auto (only on a terminal, honouring NO_COLOR), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Print nothing but errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More detail on stderr (repeatable).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Flush the output after every record (on by default when reading standard input,
    /// so a live `tcpdump -w - | bcwire decode -` shows each record as it comes).
    #[arg(short = 'l', long, global = true)]
    pub line_buffered: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Capture summary: format, link types, time span, sessions and clients, problems.
    Info(InfoArgs),
    /// One line (or JSON record) per game message, with filters.
    Decode(DecodeArgs),
    /// Full detail tree and annotated hex dump of selected datagrams.
    Show(ShowArgs),
    /// Per-direction counts, opcode and dirty-flag histograms, rates.
    Stats(StatsArgs),
    /// Sessions and clients: names, peer ids, ships, traffic, loss indicators.
    Flows(FlowsArgs),
    /// Compare two captures by meaning: counts, histograms, first divergence.
    Diff(DiffArgs),
    /// Write a deterministic synthetic multiplayer session as a capture.
    Synth(crate::synth::SynthArgs),
    /// One self-contained HTML page with charts; two files: side by side with their diff.
    Report(ReportArgs),
    /// Scrap Mechanic NetworkUpdate packets (offline: hex, binary or lines files).
    Sm(crate::sm::SmArgs),
    /// Names usable in filters and `--fields`: opcodes, ships, a capture's clients,
    /// record fields, warning codes.
    List(ListArgs),
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff): `bcwire man > bcwire.1`, `bcwire man decode >
    /// bcwire-decode.1`, or every page at once with `--out-dir`.
    Man(ManArgs),
    /// bcwire's decode inside Wireshark: the Lua plugin, its installation, and the
    /// prepared capture it shows decoded (docs/wireshark.md).
    Wireshark(WiresharkArgs),
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`decode`, `stats`, …); the top page without.
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
    /// Write `bcwire.1` and one `bcwire-COMMAND.1` per command into this folder.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub out_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(subcommand)]
    pub what: ListWhat,
}

#[derive(Debug, Subcommand)]
pub enum ListWhat {
    /// Game opcodes: number and name (`--opcode`, `--exclude`).
    Opcodes,
    /// Ship classes: species id, name as printed and script name (`--ship`).
    Ships {
        #[command(flatten)]
        input: InputArgs,
    },
    /// The clients of captures: name, port, peer id and slot (`--client`).
    Clients {
        /// Capture files or directories; `-` reads standard input.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        #[command(flatten)]
        input: InputArgs,
    },
    /// Every name `-Y` and `--fields` accept: record facts and decoded fields, with
    /// type, unit and meaning (`--format json` for scripts).
    Fields {
        #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
        format: TableOrJson,
    },
    /// Warning codes the decoders report.
    Warnings,
}

/// How record times are written (tshark's `-t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeFormat {
    /// Seconds since the first frame.
    R,
    /// Absolute time of day in the local time zone.
    A,
    /// Absolute date and time in the local time zone.
    Ad,
    /// Absolute year/day-of-year and time in the local time zone.
    Adoy,
    /// Time of day in UTC.
    U,
    /// Date and time in UTC.
    Ud,
    /// Year/day-of-year and time in UTC.
    Udoy,
    /// Seconds since the epoch (1970-01-01 UTC).
    E,
    /// Seconds since the previous frame captured.
    D,
    /// Seconds since the previous record shown.
    Dd,
}

/// Options of the commands that print one record after another.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// Stop after this many rows of the output: lines of the table, CSV rows, JSON
    /// records (a row per message with --fields); with -w, frames written.
    #[arg(short = 'c', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Time format, as tshark's: r (relative, default), a / ad / adoy (local time, with
    /// date, with year/day of year), u / ud / udoy (the same in UTC), e (epoch),
    /// d (delta from the previous frame), dd (delta from the previous shown); with the
    /// capture's precision (6 digits for microseconds, 9 for nanoseconds).
    #[arg(short = 't', value_enum, value_name = "FORMAT", default_value_t = TimeFormat::R, hide_possible_values = true)]
    pub time_format: TimeFormat,
}

/// Options shared by every command that reads a capture.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// UDP port of the game server.
    #[arg(long, default_value_t = 22101, value_name = "PORT")]
    pub port: u16,
    /// Extra or replacement ship layouts (JSON, same schema as the built-in ships.json).
    #[arg(long, value_name = "FILE")]
    pub ships: Option<PathBuf>,
}

/// Writing the selected frames out as a capture.
#[derive(Debug, Clone, Default, Args)]
pub struct WriteArgs {
    /// Also write the selected frames, whole and with their timestamps, as a capture:
    /// pcapng, or classic pcap when FILE ends in `.pcap`; `-` writes it to standard
    /// output instead of the report.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<String>,
    /// With -w: give every written frame a pcapng packet comment with its one-line
    /// decode (Wireshark shows it in the packet list).
    #[arg(long, requires = "write")]
    pub annotate: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableOrJson {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Capture files or directories (read recursively); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: InputArgs,
    #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
    pub format: TableOrJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecodeFormat {
    Table,
    Jsonl,
    Json,
    Csv,
    /// One row per game message in a typed Parquet file (needs -o or --out-dir).
    #[cfg(feature = "parquet")]
    Parquet,
}

/// Which messages to keep.
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// Keep only these opcodes (name or number, repeatable or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "OPCODE")]
    pub opcode: Vec<String>,
    /// Drop these opcodes (name or number).
    #[arg(long, value_delimiter = ',', value_name = "OPCODE")]
    pub exclude: Vec<String>,
    /// Keep one direction: c2s (client to server) or s2c.
    #[arg(long, value_parser = ["c2s", "s2c"])]
    pub direction: Option<String>,
    /// Keep one client, both directions: player name, UDP port, peer id (`0x04`,
    /// `peer:4`) or slot (`slot:2`); `port:N` when a number could be either. On
    /// standard input a client's records wait until its name arrives (at most 10 s
    /// of capture time or 20,000 records), then follow in their order.
    #[arg(long, value_name = "NAME|PORT|PEER")]
    pub client: Option<String>,
    /// Keep messages that mention this object id (hex with 0x, or decimal).
    #[arg(long, value_name = "ID")]
    pub object: Option<String>,
    /// Keep messages about ships of this class (`Galaxy`, `"Kessok Heavy"` or
    /// `KessokHeavy`; `bcwire list ships`).
    #[arg(long, value_name = "CLASS")]
    pub ship: Option<String>,
    /// Frame range, 1-based and inclusive: `100-200`, `100-`, `-200` or `150`.
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub frames: Option<String>,
    /// Time range in seconds from the first frame: `10-20.5`, `30-`, `-5`; one value
    /// `10` is the second from 10 to 11.
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub time: Option<String>,
    /// Display filter over record facts and decoded fields, e.g. `opcode == StateUpdate
    /// and flags & 0x20`, `retransmission or warnings.code == "non_stock"`, `client ==
    /// Worf and direction == s2c` (docs/guide.md, "Display filters").
    #[arg(short = 'Y', long = "display-filter", value_name = "EXPR")]
    pub display_filter: Option<String>,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// Capture files or directories; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub records: RecordArgs,
    #[arg(long, value_enum, default_value_t = DecodeFormat::Table)]
    pub format: DecodeFormat,
    /// The whole decrypted datagram: a hex dump under its lines (table), a `plain_hex`
    /// column (CSV) or key (JSON).
    #[arg(long)]
    pub hex: bool,
    #[command(flatten)]
    pub write: WriteArgs,
    /// File to write (`--format parquet`).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Directory to write one Parquet file per input into, inputs read on all cores.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub out_dir: Option<std::path::PathBuf>,
    /// Only these values, one row per message: CSV columns or JSON Lines keys.
    /// Record keys (`frame`, `time`, `opcode`, …) or field paths
    /// (`subsystems[hull].condition_pct`, `position[0]`, `assembled.fields.player_name`).
    #[arg(long, value_delimiter = ',', value_name = "PATH")]
    pub fields: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Capture files or directories; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: InputArgs,
    /// Frame number to show (1-based).
    #[arg(long)]
    pub frame: Option<u64>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Show at most this many datagrams when selecting by filter.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    #[command(flatten)]
    pub write: WriteArgs,
    /// Stop after this many matching datagrams (as `--limit`; the smaller wins).
    #[arg(short = 'c', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Time of each datagram's heading as tshark's `-t` gives it: r, a, ad, adoy, u, ud,
    /// udoy, e, d, dd
    /// (without it: epoch seconds and seconds since the first frame).
    #[arg(
        short = 't',
        value_enum,
        value_name = "FORMAT",
        hide_possible_values = true
    )]
    pub time_format: Option<TimeFormat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsBy {
    Object,
    Class,
    Client,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Capture files or directories; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Break the dirty-flag histograms down further.
    #[arg(long, value_enum)]
    pub by: Option<StatsBy>,
    /// Rates over time in buckets of this length (e.g. 1s, 500ms, 1m).
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Start of each `--interval` bucket: r (seconds since the first frame, default),
    /// e (epoch), u / ud / udoy (UTC time, with date, with year/day of year), a / ad /
    /// adoy (the same in local time).
    #[arg(short = 't', value_enum, value_name = "FORMAT", default_value_t = TimeFormat::R, hide_possible_values = true)]
    pub time_format: TimeFormat,
    #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
    pub format: TableOrJson,
    #[command(flatten)]
    pub write: WriteArgs,
}

#[derive(Debug, Args)]
pub struct FlowsArgs {
    /// Capture files or directories; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: InputArgs,
    #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
    pub format: TableOrJson,
    /// Join and leave times: r (seconds since the first frame, default), e (epoch),
    /// u / ud / udoy (UTC time, with date, with year/day of year), a / ad / adoy (the
    /// same in local time).
    #[arg(short = 't', value_enum, value_name = "FORMAT", default_value_t = TimeFormat::R, hide_possible_values = true)]
    pub time_format: TimeFormat,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    #[arg(value_name = "A")]
    pub a: String,
    #[arg(value_name = "B")]
    pub b: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// The same selection applied to both captures (`-Y`, `--client`, `--time`, …):
    /// only the messages it keeps are counted, aligned and compared.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Also compare volatile fields (game time, sequence numbers, timestamps).
    #[arg(long)]
    pub include_volatile: bool,
    /// Field names to ignore when comparing aligned messages (repeatable).
    #[arg(long, value_delimiter = ',', value_name = "FIELD")]
    pub ignore: Vec<String>,
    /// Show at most this many field differences (the output counts the rest).
    #[arg(long, default_value_t = 20)]
    pub max_differences: usize,
    #[arg(long, value_enum, default_value_t = TableOrJson::Table)]
    pub format: TableOrJson,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Capture file (pcap or pcapng).
    #[arg(value_name = "FILE")]
    pub a: String,
    /// A second capture: shown side by side, with the comparison of `bcwire diff`.
    #[arg(value_name = "B")]
    pub b: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
    /// Show only the datagrams and messages this display filter keeps (as `decode -Y`).
    #[arg(short = 'Y', long = "display-filter", value_name = "EXPR")]
    pub display_filter: Option<String>,
    /// Where to write the page; `-` writes to standard output.
    #[arg(short, long, default_value = "report.html", value_name = "FILE")]
    pub output: String,
}

#[derive(Debug, Args)]
#[command(
    long_about = "bcwire's decode inside Wireshark: a Lua plugin that shows a \
    `bc` protocol tree (the decrypted datagram as its own tab, every transport and game \
    message, every decoded field with its bytes), registers every name of `bcwire list \
    fields` as a display-filter field `bc.NAME`, and lists bcwire's warnings under \
    Analyze > Expert Information. The plugin reads the decode that `bcwire wireshark \
    prepare` writes beside a copy of the capture (docs/wireshark.md)."
)]
pub struct WiresharkArgs {
    #[command(subcommand)]
    pub what: WiresharkWhat,
}

#[derive(Debug, Subcommand)]
pub enum WiresharkWhat {
    /// Print the Lua plugin (for Wireshark 3.x to 4.4 and later; Lua 5.1 to 5.4).
    /// `tshark -X lua_script:bcwire.lua` loads it without installing.
    Plugin,
    /// Write the plugin as `bcwire.lua` into the personal Wireshark plugin folder:
    /// `~/.local/lib/wireshark/plugins` on Linux and macOS, `%APPDATA%\Wireshark\plugins`
    /// on Windows.
    Install {
        /// Another folder to put it in.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write a copy of a capture that the plugin shows decoded: OUT (pcapng, every frame
    /// as it was) and beside it OUT.bcwire, bcwire's decode, which OUT's interface
    /// descriptions name.
    Prepare {
        /// Capture file; `-` reads standard input.
        #[arg(value_name = "FILE")]
        file: String,
        /// The pcapng file to write (the decode file is this name with `.bcwire` added).
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        #[command(flatten)]
        input: InputArgs,
    },
}
