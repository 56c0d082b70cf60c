//! What every command's output needs: the settings of `--color`, `-q`, `-v`, `-l`
//! and the progress bar, and the exit code for trouble.

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
