//! Command implementations: argument handling, then the pipeline, then a report.

mod capture_cmds;
mod cut;
mod decode_cmd;
mod diff_cmd;
mod from_cli;
mod in_order;
mod inputs;
mod list;
mod manual;
mod output;
#[cfg(feature = "parquet")]
mod parquet_cmd;
mod progress;
mod report_cmd;
mod run;
pub mod wireshark;

use crate::cli::{Cli, Command};
use crate::report::term;
use clap::{CommandFactory, Parser};
use from_cli::{color_choice, filter_spec, stats_by, time_format};
pub use output::{Output, EXIT_TROUBLE};
use std::io::{self, Write};

/// Parse arguments, run, and turn errors into a message and an exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_TROUBLE } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let out = Output {
        color: term::use_color(color_choice(cli.color)),
        quiet: cli.quiet,
        verbose: cli.verbose,
        progress: true,
        line_buffered: cli.line_buffered,
    };
    let stdout = io::stdout();
    let mut w = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = run(cli.command, out, &mut w).and_then(|code| {
        w.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            let _ = w.flush();
            eprintln!("bcwire: error: {e:#}");
            EXIT_TROUBLE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn run(command: Command, out: Output, w: &mut dyn Write) -> anyhow::Result<i32> {
    match command {
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "bcwire", w);
            Ok(0)
        }
        Command::Info(a) => capture_cmds::info(a, out, w),
        Command::Decode(a) => decode_cmd::decode(a, out, w),
        Command::Show(a) => capture_cmds::show(a, out, w),
        Command::Stats(a) => capture_cmds::stats(a, out, w),
        Command::Flows(a) => capture_cmds::flows(a, out, w),
        Command::Diff(a) => diff_cmd::diff(a, out, w),
        Command::Synth(a) => synth(&a, out, w),
        Command::List(a) => list::list(a, out, w),
        Command::Man(a) => man(&a, out, w),
        Command::Report(a) => report_cmd::report(a, out, w),
        Command::Wireshark(a) => wireshark::wireshark(a, out, w),
        Command::Sm(a) => {
            let mut err = io::stderr();
            crate::sm::run(&a, w, &mut err)
        }
    }
}

/// `bcwire man`: the top page, one command's page, or every page into a folder. A
/// command's page is named `bcwire-COMMAND` as git's and cargo's are.
fn man(a: &crate::cli::ManArgs, out: Output, w: &mut dyn Write) -> anyhow::Result<i32> {
    let top = Cli::command();
    let version = top.get_version().unwrap_or_default().to_string();
    let page = |cmd: &clap::Command| -> clap::Command {
        cmd.clone()
            .name(format!("bcwire-{}", cmd.get_name()))
            .version(version.clone())
    };
    if let Some(dir) = &a.out_dir {
        std::fs::create_dir_all(dir)?;
        let mut written = vec![dir.join("bcwire.1")];
        let mut text = Vec::new();
        manual::render_command(top.clone(), None, &mut text)?;
        crate::outfile::write_whole(&written[0], &text)?;
        for sub in top.get_subcommands().filter(|c| c.get_name() != "help") {
            let path = dir.join(format!("bcwire-{}.1", sub.get_name()));
            let mut text = Vec::new();
            manual::render_command(page(sub), Some(sub.get_name()), &mut text)?;
            crate::outfile::write_whole(&path, &text)?;
            written.push(path);
        }
        let path = dir.join(format!("bcwire-{}.7", manual::FILTER_PAGE));
        let mut text = Vec::new();
        manual::render_filter_page(&version, &mut text)?;
        crate::outfile::write_whole(&path, &text)?;
        written.push(path);
        if !out.quiet {
            eprintln!(
                "bcwire: wrote {} manual pages to {}",
                written.len(),
                dir.display()
            );
        }
        return Ok(0);
    }
    match &a.command {
        None => manual::render_command(top, None, w)?,
        Some(name) if name == manual::FILTER_PAGE => manual::render_filter_page(&version, w)?,
        Some(name) => {
            let Some(sub) = top.find_subcommand(name) else {
                let names: Vec<&str> = top.get_subcommands().map(|c| c.get_name()).collect();
                anyhow::bail!(
                    "no command {name:?}; commands: {}; and `filter` for the -Y language",
                    names.join(", ")
                );
            };
            manual::render_command(page(sub), Some(sub.get_name()), w)?;
        }
    }
    Ok(0)
}

/// `synth`: the capture to its file, or to standard output with `--out -` (the report
/// then goes to stderr); the report of what it holds on stdout unless `-q`.
fn synth(a: &crate::synth::SynthArgs, out: Output, w: &mut dyn Write) -> anyhow::Result<i32> {
    if a.out.as_os_str() == "-" {
        let (report, _) = crate::synth::generate(a, &mut *w)?;
        w.flush()?;
        if !out.quiet {
            eprintln!(
                "{}",
                crate::report::json_stream::to_pretty_string(&serde_json::to_value(&report)?)
            );
        }
        return Ok(0);
    }
    let report = crate::synth::run(a)?;
    if !out.quiet {
        eprintln!("bcwire: wrote {}", a.out.display());
        writeln!(
            w,
            "{}",
            crate::report::json_stream::to_pretty_string(&serde_json::to_value(&report)?)
        )?;
    }
    Ok(0)
}
