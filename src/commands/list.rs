//! `bcwire list`: the names usable in filters and `--fields`. Each listing is one small
//! function over its source of truth, so it can be re-pointed when that source moves.

use super::capture_cmds::{config, run_file};
use super::inputs::{for_each, Flow};
use super::Output;
use crate::cli::{InputArgs, ListArgs, ListWhat};
use crate::game::field::{Field, Value};
use crate::game::opcodes::{opcode_name, opcode_names};
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::{Control, Sink};
use crate::report::names::Names;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
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
        ListWhat::Fields => {
            for (opcode, paths) in fields_seen()? {
                writeln!(w, "0x{opcode:02X} {}", opcode_name(opcode))?;
                for p in paths {
                    writeln!(w, "  {p}")?;
                }
            }
            Ok(0)
        }
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
                super::capture_cmds::no_game_traffic(&s, cfg.game_port)
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

/// Field paths by opcode, as the decoders produce them: a synthetic session (every
/// opcode the simulator sends) is decoded and the names of the fields collected.
/// Groups are `parent.child`, list items `list[]`.
pub fn fields_seen() -> Result<BTreeMap<u8, BTreeSet<String>>> {
    let mut args = crate::synth::SynthArgs::new("-");
    args.players = 4;
    args.minutes = Some(2.0);
    let (_, bytes) = crate::synth::generate(&args, Vec::new())?;
    let reader = crate::capture::CaptureReader::new(std::io::Cursor::new(bytes))
        .map_err(|e| anyhow::anyhow!("reading the synthetic session: {e}"))?;
    let mut sink = FieldSink::default();
    let cfg = crate::pipeline::Config::default();
    crate::pipeline::Pipeline::new(cfg).run(reader, &mut sink)?;
    Ok(sink.seen)
}

#[derive(Default)]
struct FieldSink {
    seen: BTreeMap<u8, BTreeSet<String>>,
}

impl Sink for FieldSink {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> Result<Control> {
        if let PacketBody::Game(g) = &p.body {
            for m in &g.messages {
                if let Some(game) = m.game.as_ref().or(m.assembled.as_ref().map(|a| &a.game)) {
                    let set = self.seen.entry(game.opcode).or_default();
                    collect(&game.fields, "", set);
                }
            }
        }
        Ok(Control::Continue)
    }
}

fn collect(fields: &[Field], prefix: &str, set: &mut BTreeSet<String>) {
    for f in fields {
        let path = format!("{prefix}{}", f.name);
        walk_value(&f.value, &path, set);
        set.insert(path);
    }
}

fn walk_value(v: &Value, path: &str, set: &mut BTreeSet<String>) {
    match v {
        Value::Group(children) => collect(children, &format!("{path}."), set),
        Value::List(items) => {
            for item in items {
                walk_value(item, &format!("{path}[]"), set);
            }
        }
        _ => {}
    }
}
