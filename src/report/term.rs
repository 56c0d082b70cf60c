//! Terminal conventions: colour decisions and styles. Only presentation code uses this.

use owo_colors::{OwoColorize, Style};
use std::io::IsTerminal;

/// When to colour output (the command line's `--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    /// Only on a terminal, and not when `NO_COLOR` is set.
    Auto,
    Always,
    Never,
}

/// Whether to emit ANSI colour on stdout.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

/// Named styles so every command colours the same things the same way.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    pub enabled: bool,
}

impl Palette {
    pub fn new(enabled: bool) -> Palette {
        Palette { enabled }
    }
    fn paint(&self, style: Style, s: &str) -> String {
        if self.enabled {
            s.style(style).to_string()
        } else {
            s.to_string()
        }
    }
    pub fn heading(&self, s: &str) -> String {
        self.paint(Style::new().bold(), s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint(Style::new().dimmed(), s)
    }
    pub fn warn(&self, s: &str) -> String {
        self.paint(Style::new().yellow(), s)
    }
    pub fn error(&self, s: &str) -> String {
        self.paint(Style::new().red(), s)
    }
    pub fn c2s(&self, s: &str) -> String {
        self.paint(Style::new().cyan(), s)
    }
    pub fn s2c(&self, s: &str) -> String {
        self.paint(Style::new().magenta(), s)
    }
    pub fn opcode(&self, s: &str) -> String {
        self.paint(Style::new().green(), s)
    }
    /// Background colour for field `i` in the annotated hex view (cycles).
    pub fn field_bg(&self, i: usize, s: &str) -> String {
        let base = Style::new().black();
        let style = match i % 6 {
            0 => base.on_blue(),
            1 => base.on_magenta(),
            2 => base.on_cyan(),
            3 => base.on_green(),
            4 => base.on_yellow(),
            _ => base.on_red(),
        };
        self.paint(style, s)
    }
}
