//! Command implementations: argument handling, then the pipeline, then a report.

mod capture_cmds;
mod diff_cmd;
mod inputs;
mod list;
mod progress;
mod report_cmd;

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
        color: term::use_color(cli.color),
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
        Command::Man => {
            clap_mangen::Man::new(Cli::command()).render(w)?;
            Ok(0)
        }
        Command::Report(a) => report_cmd::report(a, out, w),
        Command::Sm(a) => {
            let mut err = io::stderr();
            crate::sm::run(&a, w, &mut err)
        }
    }
}

/// `synth`: the capture to its file, or to standard output with `--out -` (the report
/// then goes to stderr); the report of what it holds on stdout unless `-q`.
fn synth(a: &crate::synth::SynthArgs, out: Output, w: &mut dyn Write) -> anyhow::Result<i32> {
    if a.out.as_os_str() == "-" {
        let (report, _) = crate::synth::generate(a, &mut *w)?;
        w.flush()?;
        if !out.quiet {
            eprintln!("{}", serde_json::to_string_pretty(&report)?);
        }
        return Ok(0);
    }
    let report = crate::synth::run(a)?;
    if !out.quiet {
        eprintln!("bcwire: wrote {}", a.out.display());
        writeln!(w, "{}", serde_json::to_string_pretty(&report)?)?;
    }
    Ok(0)
}
