//! Command implementations: argument handling, then the pipeline, then a report.

mod capture_cmds;
mod cut;
mod diff_cmd;
mod inputs;
mod list;
mod manual;
#[cfg(feature = "parquet")]
mod parquet_cmd;
mod progress;
mod report_cmd;
pub mod wireshark;

use crate::cli::{Cli, Command};
use crate::report::term;
use clap::{CommandFactory, Parser};
use std::io::{self, Write};

/// Exit code for trouble (bad input file, bad arguments), like diff(1) and grep(1).
pub const EXIT_TROUBLE: i32 = 2;

/// Settings every command needs for output.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub color: bool,
    pub quiet: bool,
    pub verbose: u8,
    /// Draw a progress bar for long inputs (when stderr is a terminal).
    pub progress: bool,
    /// Flush after every record (`-l`).
    pub line_buffered: bool,
}

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
        Command::Decode(a) => capture_cmds::decode(a, out, w),
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

/// The command line's `--color` as the printers take it.
fn color_choice(c: crate::cli::ColorChoice) -> term::ColorChoice {
    match c {
        crate::cli::ColorChoice::Auto => term::ColorChoice::Auto,
        crate::cli::ColorChoice::Always => term::ColorChoice::Always,
        crate::cli::ColorChoice::Never => term::ColorChoice::Never,
    }
}

/// The command line's `stats --by` as the statistics take it.
fn stats_by(by: crate::cli::StatsBy) -> crate::report::stats::StatsBy {
    use crate::report::stats::StatsBy as By;
    match by {
        crate::cli::StatsBy::Object => By::Object,
        crate::cli::StatsBy::Class => By::Class,
        crate::cli::StatsBy::Client => By::Client,
    }
}

/// The command line's filter flags as the pipeline's filter takes them.
fn filter_spec(a: &crate::cli::FilterArgs) -> crate::pipeline::filter::FilterSpec {
    crate::pipeline::filter::FilterSpec {
        opcode: a.opcode.clone(),
        exclude: a.exclude.clone(),
        direction: a.direction.clone(),
        client: a.client.clone(),
        object: a.object.clone(),
        ship: a.ship.clone(),
        frames: a.frames.clone(),
        time: a.time.clone(),
        display: a.display_filter.clone(),
    }
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

/// The command line's `-t` as the printers take it.
pub(super) fn time_format(t: crate::cli::TimeFormat) -> crate::report::timefmt::TimeFormat {
    use crate::cli::TimeFormat as T;
    use crate::report::timefmt::TimeFormat as F;
    match t {
        T::R => F::R,
        T::A => F::A,
        T::Ad => F::Ad,
        T::Adoy => F::Adoy,
        T::U => F::U,
        T::Ud => F::Ud,
        T::Udoy => F::Udoy,
        T::E => F::E,
        T::D => F::D,
        T::Dd => F::Dd,
    }
}
