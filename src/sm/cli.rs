//! `bcwire sm decode`: arguments, input reading (hex, binary file, hex lines file) and the
//! command loop. Warnings go to `err` with their location; the exit code is 2 when
//! nothing at all could be decoded, 0 otherwise.

use super::decoder::{Decoder, Layer, Options};
use super::packet::{DEFAULT_MAX_OUTPUT, MAX_OUTPUT_LIMIT};
use super::render::{located_warnings, packet_json, write_text, Origin};
use anyhow::Context;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;

/// Largest `--file` accepted and longest `--lines` line, so a wrong path cannot make
/// the decoder read gigabytes.
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// Decode Scrap Mechanic NetworkUpdate packets (offline: bytes you extracted yourself).
#[derive(Debug, Clone, clap::Args)]
pub struct SmArgs {
    #[command(subcommand)]
    pub command: SmCommand,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum SmCommand {
    /// Decode NetworkUpdate packets (ids 21, 22 and compound 29).
    Decode(DecodeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Indented tree for people.
    Text,
    /// One JSON document with stable snake_case names.
    Json,
}

#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["hex", "file", "lines"])))]
pub struct DecodeArgs {
    /// Packet bytes in hex; spaces are allowed (quote them or pass several words).
    #[arg(value_name = "HEX", num_args = 1..)]
    pub hex: Vec<String>,
    /// Read one packet as raw binary from this file.
    #[arg(long, value_name = "F")]
    pub file: Option<PathBuf>,
    /// Read one hex packet per line from this file (blank lines and # comments ignored).
    #[arg(long, value_name = "F")]
    pub lines: Option<PathBuf>,
    /// What the bytes are: wire = [id][LZ4 block]; packet = [id][tick][sub-updates];
    /// payload = [tick][sub-updates].
    #[arg(long, value_enum, default_value_t = Layer::Wire)]
    pub layer: Layer,
    /// Cap on the decompressed size of one packet, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_OUTPUT,
          value_parser = parse_max_output)]
    pub max_output: usize,
    /// Learn controller types from Creates across the packets, so Update layouts that
    /// depend on them are chosen from facts rather than inferred from sizes.
    #[arg(long)]
    pub stateful: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn parse_max_output(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n == 0 || n > MAX_OUTPUT_LIMIT {
        return Err(format!("must be 1..={MAX_OUTPUT_LIMIT}"));
    }
    Ok(n)
}

/// Parse hex digits, ignoring whitespace, `:` and `,`. Errors name the 1-based column.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<(u8, usize)> = None;
    for (col, c) in text.char_indices() {
        if c.is_whitespace() || c == ':' || c == ',' {
            continue;
        }
        let Some(d) = c.to_digit(16) else {
            return Err(format!("column {}: {c:?} is not a hex digit", col + 1));
        };
        match high.take() {
            None => high = Some((d as u8, col)),
            Some((h, _)) => out.push(h << 4 | d as u8),
        }
    }
    if let Some((_, col)) = high {
        return Err(format!(
            "column {}: odd number of hex digits (last byte has one digit)",
            col + 1
        ));
    }
    Ok(out)
}

/// Run `bcwire sm …`; returns the exit code.
pub fn run(args: &SmArgs, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    match &args.command {
        SmCommand::Decode(d) => run_decode(d, out, err),
    }
}

struct Session<'a> {
    decoder: Decoder,
    format: Format,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    packets: usize,
    decoded: usize,
    warnings: usize,
    input_errors: usize,
}

impl Session<'_> {
    fn packet(&mut self, bytes: &[u8], origin: Origin) -> anyhow::Result<()> {
        let report = self.decoder.decode(bytes);
        match self.format {
            Format::Text => write_text(self.out, &report, origin)?,
            Format::Json => {
                if self.packets > 0 {
                    self.out.write_all(b",\n")?;
                }
                let mut text = Vec::new();
                crate::report::json_stream::write_value(
                    &mut text,
                    &packet_json(&report, origin),
                    false,
                );
                self.out.write_all(&text)?;
            }
        }
        for line in located_warnings(&report, origin) {
            writeln!(self.err, "warning: {line}")?;
        }
        self.packets += 1;
        self.warnings += report.warning_count();
        if report.decoded_something() {
            self.decoded += 1;
        }
        Ok(())
    }

    fn input_error(&mut self, msg: String) -> anyhow::Result<()> {
        writeln!(self.err, "warning: {msg}")?;
        self.input_errors += 1;
        Ok(())
    }
}

fn run_decode(args: &DecodeArgs, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    let decoder = Decoder::new(Options {
        layer: args.layer,
        max_output: args.max_output,
        stateful: args.stateful,
    });
    let format = args.format;
    let mut s = Session {
        decoder,
        format,
        out,
        err,
        packets: 0,
        decoded: 0,
        warnings: 0,
        input_errors: 0,
    };
    if format == Format::Json {
        s.out.write_all(b"{\"packets\":[\n")?;
    }

    if let Some(path) = &args.file {
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut bytes = Vec::new();
        file.take(MAX_INPUT_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {}", path.display()))?;
        if bytes.len() > MAX_INPUT_BYTES {
            s.input_error(format!(
                "{}: input_too_large: more than {MAX_INPUT_BYTES} bytes",
                path.display()
            ))?;
        } else {
            s.packet(
                &bytes,
                Origin {
                    index: 0,
                    line: None,
                },
            )?;
        }
    } else if let Some(path) = &args.lines {
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        read_lines(&mut s, BufReader::new(file))
            .with_context(|| format!("reading {}", path.display()))?;
    } else {
        let text = args.hex.join(" ");
        match parse_hex(&text) {
            Ok(bytes) => s.packet(
                &bytes,
                Origin {
                    index: 0,
                    line: None,
                },
            )?,
            Err(e) => s.input_error(format!("HEX argument: hex_invalid: {e}"))?,
        }
    }

    let failed = s.decoded == 0 && (s.warnings > 0 || s.input_errors > 0 || s.packets == 0);
    let code = if failed { 2 } else { 0 };
    match format {
        Format::Json => {
            let summary = json!({
                "packets": s.packets,
                "decoded": s.decoded,
                "warnings": s.warnings,
                "input_errors": s.input_errors,
                "exit_code": code,
            });
            writeln!(s.out, "\n],\"summary\":{summary}}}")?;
        }
        Format::Text => {
            if s.packets > 1 || s.input_errors > 0 {
                writeln!(
                    s.out,
                    "{} packet(s), {} decoded, {} warning(s), {} input error(s)",
                    s.packets, s.decoded, s.warnings, s.input_errors
                )?;
            }
        }
    }
    if failed {
        let why = if s.packets == 0 && s.input_errors == 0 {
            "no packets in the input"
        } else {
            "nothing could be decoded"
        };
        writeln!(s.err, "error: {why}")?;
    }
    Ok(code)
}

fn read_lines(s: &mut Session<'_>, mut reader: impl BufRead) -> anyhow::Result<()> {
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .by_ref()
            .take(MAX_INPUT_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        if buf.len() > MAX_INPUT_BYTES && buf.last() != Some(&b'\n') {
            // Skip the rest of an absurdly long line.
            let mut sink = Vec::new();
            while reader.by_ref().take(1 << 16).read_until(b'\n', &mut sink)? > 0 {
                if sink.last() == Some(&b'\n') {
                    break;
                }
                sink.clear();
            }
            s.input_error(format!(
                "line {line_no}: line_too_long: over {MAX_INPUT_BYTES} bytes"
            ))?;
            continue;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let index = s.packets;
        match parse_hex(text) {
            Ok(bytes) => s.packet(
                &bytes,
                Origin {
                    index,
                    line: Some(line_no),
                },
            )?,
            Err(e) => s.input_error(format!("line {line_no}: hex_invalid: {e}"))?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_with_spaces_and_errors() {
        assert_eq!(
            parse_hex("16 00 0a\tFF").unwrap(),
            vec![0x16, 0x00, 0x0a, 0xff]
        );
        assert_eq!(parse_hex("").unwrap(), Vec::<u8>::new());
        assert!(parse_hex("1g").unwrap_err().contains("column 2"));
        assert!(parse_hex("16 0").unwrap_err().contains("odd"));
    }
}
