//! The manual pages: each command's page from its clap definition (so options cannot
//! drift from the code), with EXIT STATUS, ENVIRONMENT and EXAMPLES sections added,
//! and `bcwire-filter(7)`, the display filter language, built from the record-fact
//! table so that its list of names is the one `-Y` reads.

use crate::pipeline::facts::{Fact, FACTS};
use crate::pipeline::filter::FilterSpec;
use clap_mangen::roff::{bold, italic, roman, Roff};
use std::io::Write;

/// The name of the filter language's page (`bcwire man filter`).
pub const FILTER_PAGE: &str = "filter";

/// A command's page (or the top page, `name` None) with the common sections.
pub fn render_command(
    cmd: clap::Command,
    name: Option<&str>,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd);
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    man.render_subcommands_section(w)?;
    man.render_extra_section(w)?;
    let mut roff = Roff::new();
    exit_status(&mut roff, name);
    environment(&mut roff);
    examples(&mut roff, name);
    see_also(&mut roff, name);
    roff.to_writer(w)?;
    man.render_version_section(w)?;
    man.render_authors_section(w)
}

fn exit_status(roff: &mut Roff, name: Option<&str>) {
    roff.control("SH", ["EXIT STATUS"]);
    let codes: &[(&str, &str)] = match name {
        Some("diff") => &[
            ("0", "the captures are equivalent"),
            ("1", "the captures differ (a flow only one side has counts)"),
            (
                "2",
                "trouble: a bad argument, or a capture that cannot be read",
            ),
        ],
        Some("show") => &[
            ("0", "a datagram was shown"),
            ("1", "nothing matched"),
            (
                "2",
                "trouble: a bad argument, or an input that cannot be read",
            ),
        ],
        _ => &[
            ("0", "success"),
            (
                "2",
                "trouble: a bad argument or filter (an unknown name, a syntax error), an \
                 output that is one of the inputs, or an input that cannot be read (the \
                 other inputs are still read)",
            ),
        ],
    };
    for (code, meaning) in codes {
        roff.control("TP", [])
            .text([bold(*code)])
            .text([roman(*meaning)]);
    }
}

fn environment(roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    for (var, meaning) in [
        (
            "NO_COLOR",
            "when set (to anything), no colour, as --color auto would otherwise use on a terminal",
        ),
        (
            "COLUMNS",
            "the width tables are fitted to when the output is not a terminal, or to \
             override the terminal's",
        ),
    ] {
        roff.control("TP", [])
            .text([bold(var)])
            .text([roman(meaning)]);
    }
}

/// Command lines worth copying, per command.
fn examples(roff: &mut Roff, name: Option<&str>) {
    let lines: &[(&str, &str)] = match name {
        None => &[
            (
                "bcwire stats capture.pcapng",
                "dirty-flag histograms each way",
            ),
            (
                "bcwire decode capture.pcapng --format jsonl",
                "every datagram as JSON Lines",
            ),
            (
                "bcwire diff stock.pcapng mine.pcapng",
                "two servers compared",
            ),
        ],
        Some("decode") => &[
            (
                "bcwire decode cap.pcapng -Y 'opcode == StateUpdate and flags & 0x20'",
                "StateUpdates with a subsystem block",
            ),
            (
                "bcwire decode cap.pcapng --client Worf -w worf.pcapng",
                "one player's frames cut out (the same as -Y 'client == Worf')",
            ),
            (
                "bcwire decode cap.pcapng --format csv --fields frame,time_relative,opcode,speed",
                "chosen columns, as tshark -T fields",
            ),
            (
                "tcpdump -U -w - udp port 22101 | bcwire decode -",
                "live decoding",
            ),
        ],
        Some("show") => &[(
            "bcwire show cap.pcapng --frame 852",
            "one datagram's tree and annotated hex",
        )],
        Some("stats") => &[
            (
                "bcwire stats cap.pcapng --by class",
                "histograms per ship class",
            ),
            (
                "bcwire stats cap.pcapng --interval 1s --format json",
                "rates per second",
            ),
        ],
        Some("diff") => &[
            (
                "bcwire diff stock.pcapng mine.pcapng --ignore 'subsystems[*].condition_pct'",
                "compared with one field left out",
            ),
            (
                "bcwire diff -q a.pcapng b.pcapng && echo same",
                "the exit status alone",
            ),
        ],
        Some("report") => &[("bcwire report cap.pcapng -o cap.html", "the HTML page")],
        Some("list") => &[
            ("bcwire list fields", "every name -Y and --fields accept"),
            (
                "bcwire list clients cap.pcapng",
                "the players, as --client takes them",
            ),
        ],
        Some("man") => &[(
            "bcwire man --out-dir ~/.local/share/man/man1",
            "every page at once (bcwire-filter.7 among them)",
        )],
        _ => &[],
    };
    if lines.is_empty() {
        return;
    }
    roff.control("SH", ["EXAMPLES"]);
    for (line, what) in lines {
        roff.control("TP", [])
            .text([bold(*line)])
            .text([roman(*what)]);
    }
}

fn see_also(roff: &mut Roff, name: Option<&str>) {
    roff.control("SH", ["SEE ALSO"]);
    let mut refs = vec![
        "bcwire(1)",
        "bcwire-filter(7)",
        "tshark(1)",
        "wireshark-filter(4)",
    ];
    if name.is_none() {
        refs.remove(0);
    }
    roff.text([roman(refs.join(", "))]);
}

/// `bcwire-filter(7)`: the display filter language of `-Y`.
pub fn render_filter_page(version: &str, w: &mut dyn Write) -> std::io::Result<()> {
    let mut r = Roff::new();
    r.control(
        "TH",
        ["BCWIRE-FILTER", "7", "", &format!("bcwire {version}")],
    );
    r.control("SH", ["NAME"]);
    r.text([roman(
        "bcwire-filter - the display filter language of bcwire -Y",
    )]);

    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(
        "-Y EXPR (--display-filter) selects records as Wireshark's display filters do, over \
         the facts of a record and the decoded fields of its game message. decode, show, \
         stats, report and -w all apply it the same way.",
    )]);
    r.control("PP", []);
    r.text([
        bold("The per-message rule. "),
        roman(
            "The expression is tested on each transport message of a datagram (a GameSpy \
             datagram is one test on its datagram facts). A datagram is kept with the \
             messages that pass, and -w writes the frames that hold at least one. So \
             'not opcode == StateUpdate' keeps every message that is not a StateUpdate \
             (and the datagrams holding one), while a datagram made only of StateUpdates \
             is left out.",
        ),
    ]);

    r.control("SH", ["NAMES"]);
    r.text([
        roman("Every name is listed, with its type and meaning, by "),
        bold("bcwire list fields"),
        roman(" (--format json for scripts). The record facts are:"),
    ]);
    for f in FACTS {
        let mut what = f.description.to_string();
        if !f.aliases.is_empty() {
            what.push_str(&format!(" (also {})", f.aliases.join(", ")));
        }
        r.control("TP", [])
            .text([bold(f.name), roman(format!("  {}", f.ty.as_str()))])
            .text([roman(what)]);
    }
    r.control("PP", []);
    r.text([roman(
        "Any other name is a decoded field: its path as the JSON records spell it \
         (flags, speed, fields.player_name). A list named without a selector stands for \
         every element (subsystems.condition_pct); a selector picks one \
         (subsystems[hull].condition_pct, position[0]); a vector's components are .x, .y \
         and .z; a bare name not at the top is looked for at any depth (power_pct). A \
         name may be qualified by the message it is read from: the opcode's name in \
         lower case, event for the serialized events, or a connection-management type \
         (stateupdate.flags, torpedofire.flags, score.peer_id, peer_info.name). Where a \
         bare name is a record fact (peer_id, text, name, direction, object_id) the \
         fact wins and the decoded field needs its qualified name; where several \
         messages share a bare name (flags) it stands for all of them. A \
         name that is neither a fact nor a decoded field is an error, with the nearest \
         names.",
    )]);

    r.control("SH", ["OPERATORS"]);
    for (op, meaning) in [
        ("== eq", "equal"),
        ("!= ne", "the name is there and none of its values is equal (false where it is absent)"),
        ("~= any_ne", "some value is not equal"),
        ("< <= > >=", "ordered comparison of numbers"),
        ("&", "bit test: flags & 0x20 is true when the bit is set"),
        ("contains", "the text contains the string"),
        ("matches ~", "the text matches the regular expression, case-insensitive unless it starts with (?-i)"),
        ("in {...}", "one of the values or inside one of the ranges: opcode in {0x1C 0x19}, seq in {10..20, 40}"),
        ("and && or || not !", "logic, with parentheses"),
        ("NAME", "alone: the name is there (a yes/no fact: it is true)"),
        ("any all", "before a name: any of its values passes (the default, but for !=), or all of them and there is one: all subsystems.condition_pct == 100"),
        ("NAME[i:j] NAME[i-j] NAME[-i]", "a slice of a text or bytes value, as in Wireshark: offset i and length j, items i to j, from the end: name[0:5] == \"Check\", port_bytes[0] == \"f3\""),
    ] {
        r.control("TP", []).text([bold(op)]).text([roman(meaning)]);
    }
    r.control("PP", []);
    r.text([roman(
        "A name with several values (a list, the warnings of a message, port) passes \
         ==, <, ... when one of its values does, as in Wireshark 4.",
    )]);

    r.control("SH", ["VALUES"]);
    r.text([roman(
        "Numbers (50, 3.5, 0x20, -1); strings in double quotes, with \\n, \\t, \\xHH and \
         octal \\NNN escapes; another field (udp_length > length); bare words: an opcode \
         name for opcode (StateUpdate), a ship class for ship (Galaxy, \"Kessok Heavy\"), a \
         player name for client (client == Worf, checked against the capture's players), \
         c2s and s2c, true and false. An empty expression is no filter.",
    )]);

    r.control("SH", ["SHORT OPTIONS"]);
    r.text([roman(
        "Each selection option is compiled into the expression below and tested as -Y \
         is (several options, and -Y, must all hold). The expressions are those the \
         program builds:",
    )]);
    let ships = crate::game::ships::ShipCatalog::stock();
    let short = |spec: FilterSpec| -> String {
        let e = spec
            .expressions(&ships)
            .expect("the manual's examples are valid options");
        e.packet
            .iter()
            .chain(&e.message)
            .cloned()
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for (opt, spec, note) in [
        (
            "--opcode StateUpdate,TorpedoFire",
            FilterSpec {
                opcode: list(&["StateUpdate", "TorpedoFire"]),
                ..FilterSpec::default()
            },
            "",
        ),
        (
            "--exclude StateUpdate",
            FilterSpec {
                exclude: list(&["StateUpdate"]),
                ..FilterSpec::default()
            },
            " (GameSpy datagrams and transport messages, which have no opcode, stay)",
        ),
        (
            "--direction c2s",
            FilterSpec {
                direction: Some("c2s".into()),
                ..FilterSpec::default()
            },
            "",
        ),
        (
            "--object 0x3FFFFFFF",
            FilterSpec {
                object: Some("0x3FFFFFFF".into()),
                ..FilterSpec::default()
            },
            " (the object named anywhere in the message)",
        ),
        (
            "--ship \"Kessok Heavy\"",
            FilterSpec {
                ship: Some("Kessok Heavy".into()),
                ..FilterSpec::default()
            },
            "",
        ),
        (
            "--frames 10-20",
            FilterSpec {
                frames: Some("10-20".into()),
                ..FilterSpec::default()
            },
            "",
        ),
        (
            "--time 5",
            FilterSpec {
                time: Some("5".into()),
                ..FilterSpec::default()
            },
            " (one value is the second that starts there)",
        ),
        (
            "--time 5-8.5",
            FilterSpec {
                time: Some("5-8.5".into()),
                ..FilterSpec::default()
            },
            "",
        ),
    ] {
        r.control("TP", [])
            .text([bold(opt)])
            .text([roman(format!("{}{note}", short(spec)))]);
    }
    r.control("TP", [])
        .text([bold("--client NAME|N|port:N|peer:N|slot:N")])
        .text([roman(format!(
            "a capture file is read once first to find the clients the value names; each \
             becomes {session} == S and {client} == C, so that the client's frames from \
             before it sent its name are selected too. Read from standard input, --client \
             Worf is {client} == \"Worf\", port:N is {port} == N, peer:N is {peer} == N, a \
             bare number either; the client's records wait until its name arrives.",
            session = Fact::Session.name(),
            client = Fact::Client.name(),
            port = Fact::ClientPort.name(),
            peer = Fact::ClientPeerId.name(),
        ))]);

    r.control("SH", ["EXAMPLES"]);
    for (expr, what) in [
        (
            "opcode == StateUpdate and flags & 0x20 and subsystems[hull].condition_pct < 50",
            "damaged hulls",
        ),
        (
            "client == Worf and direction == c2s",
            "what one player sent",
        ),
        (
            "retransmission or warnings.code == \"non_stock\"",
            "trouble on the wire",
        ),
        ("opcode in {TorpedoFire BeamFire}", "weapons fire"),
        (
            "client_name matches \"^bot\"",
            "players whose name starts with bot",
        ),
        (
            "frame.time_relative >= 60 and udp.srcport == 22101",
            "tshark's names work too",
        ),
    ] {
        r.control("TP", [])
            .text([bold(format!("-Y '{expr}'"))])
            .text([roman(what)]);
    }

    r.control("SH", ["EXIT STATUS"]);
    r.text([roman(
        "A filter that does not parse, or names a field, opcode, ship class or player that \
         does not exist, stops the command with exit status 2 and a message pointing at \
         the place.",
    )]);
    r.control("SH", ["SEE ALSO"]);
    r.text([
        roman("bcwire(1), bcwire-decode(1), bcwire-list(1), "),
        italic("wireshark-filter"),
        roman("(4)"),
    ]);
    r.to_writer(w)
}
