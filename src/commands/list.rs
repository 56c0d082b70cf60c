//! `bcwire list`: the names usable in filters and `--fields`. Each listing is one small
//! function over its source of truth, so it can be re-pointed when that source moves.

use super::inputs::{for_each, Flow};
use super::run::{config, run_file};
use super::Output;
use crate::cli::{InputArgs, ListArgs, ListWhat};
use crate::game::opcodes::opcode_names;
use anyhow::Result;
use std::io::Write;

pub fn list(a: ListArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    match a.what {
        ListWhat::Opcodes => {
            for (op, name) in opcode_names() {
                writeln!(w, "0x{op:02X}  {name}")?;
            }
            Ok(0)
        }
        ListWhat::Ships { input } => {
            let cfg = config(&input)?;
            for c in cfg.ships.classes() {
                writeln!(w, "{:>3}  {:<22} {}", c.species_id, c.display_name, c.name)?;
            }
            Ok(0)
        }
        ListWhat::Clients { files, input } => clients(&files, &input, out, w),
        ListWhat::Fields { format } => fields(format, w),
        ListWhat::Warnings => {
            for &code in crate::diag::Code::ALL {
                writeln!(
                    w,
                    "{:<28} {:<15} {:<10} {}",
                    code.as_str(),
                    code.layer().as_str(),
                    code.kind().as_str(),
                    code.description()
                )?;
            }
            Ok(0)
        }
    }
}

/// Every name `-Y` and `--fields` accept, as typed, with its type, unit and meaning
/// (the record facts, then the decoded fields): as a table, or as JSON for scripts (as
/// `tshark -G fields` serves them).
fn fields(format: crate::cli::TableOrJson, w: &mut dyn Write) -> Result<i32> {
    use crate::game::qualified::QUALIFIED;
    use crate::pipeline::facts::FACTS;
    use crate::pipeline::field_names::listed_fields;
    let opcode_list = |ops: &[u8]| ops.iter().map(|o| format!("0x{o:02X}")).collect::<Vec<_>>();
    match format {
        crate::cli::TableOrJson::Json => {
            let mut list = Vec::new();
            for f in FACTS {
                for name in std::iter::once(f.name).chain(f.aliases.iter().copied()) {
                    let mut description = f.description.to_string();
                    if name != f.name {
                        description = format!("Alias of {}: {description}", f.name);
                    }
                    list.push(serde_json::json!({
                        "name": name,
                        "kind": "fact",
                        "type": f.ty.as_str(),
                        "unit": f.unit,
                        "description": description,
                        "opcodes": [],
                    }));
                }
            }
            for f in listed_fields().chain(QUALIFIED) {
                list.push(serde_json::json!({
                    "name": f.name,
                    "kind": "field",
                    "type": f.ty.as_str(),
                    "unit": f.unit,
                    "description": f.description,
                    "opcodes": opcode_list(f.opcodes),
                }));
            }
            writeln!(w, "{}", serde_json::to_string_pretty(&list)?)?;
        }
        crate::cli::TableOrJson::Table => {
            writeln!(w, "Record facts (every message; aliases in brackets)")?;
            for f in FACTS {
                let aliases = if f.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", f.aliases.join(", "))
                };
                writeln!(
                    w,
                    "  {:<24} {:<9} {:<6} {}{aliases}",
                    f.name,
                    f.ty.as_str(),
                    f.unit,
                    f.description
                )?;
            }
            writeln!(w, "\nDecoded fields (opcodes that carry them in brackets)")?;
            let qualified_heading = std::iter::once(None).chain(QUALIFIED.iter().map(Some));
            for f in listed_fields().map(Some).chain(qualified_heading) {
                let Some(f) = f else {
                    writeln!(
                        w,
                        "\nQualified fields (one meaning of a name several messages share; \
                         bcwire-filter(7))"
                    )?;
                    continue;
                };
                let ops = if f.opcodes.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", opcode_ranges(f.opcodes))
                };
                writeln!(
                    w,
                    "  {:<34} {:<9} {:<6} {}{ops}",
                    f.name,
                    f.ty.as_str(),
                    f.unit,
                    f.description
                )?;
            }
        }
    }
    Ok(0)
}

/// Sorted opcodes as text, runs of three or more as ranges: `0x05 0x24 0x42-0xFF`.
fn opcode_ranges(ops: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let mut j = i;
        while j + 1 < ops.len() && ops[j + 1] == ops[j].wrapping_add(1) && ops[j] != u8::MAX {
            j += 1;
        }
        if j >= i + 2 {
            parts.push(format!("0x{:02X}-0x{:02X}", ops[i], ops[j]));
        } else {
            parts.extend(ops[i..=j].iter().map(|o| format!("0x{o:02X}")));
        }
        i = j + 1;
    }
    parts.join(" ")
}

/// The clients of each capture, as `--client` accepts them.
fn clients(files: &[String], input: &InputArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(input)?;
    let inputs = super::inputs::expand(files, out);
    let several = inputs.files.len() > 1;
    let failed = for_each(&inputs.files, |path| {
        let s = run_file(path, &cfg, &mut crate::pipeline::NullSink, out)?;
        if several {
            writeln!(w, "{path}")?;
        }
        for session in &s.sessions {
            for c in &session.clients {
                writeln!(
                    w,
                    "{}session {} {:<16} port {:<5} peer {:<4} slot:{}",
                    if several { "  " } else { "" },
                    session.index,
                    c.name.as_deref().unwrap_or("-"),
                    c.addr.map_or("-".to_string(), |a| a.port().to_string()),
                    c.peer_id.map_or("-".to_string(), |p| format!("0x{p:02X}")),
                    c.slot.map_or("-".to_string(), |s| s.to_string()),
                )?;
            }
        }
        if s.has_no_game_traffic() && !out.quiet {
            eprintln!(
                "bcwire: {path}: {}",
                super::run::no_game_traffic(&s, cfg.game_port)
            );
        }
        Ok(Flow::Next)
    })?;
    Ok(if failed || inputs.failed {
        super::EXIT_TROUBLE
    } else {
        0
    })
}
