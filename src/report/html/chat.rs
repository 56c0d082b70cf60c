//! The chat log.

use super::collect::CaptureReport;
use super::table::{row, td, thead, tn};
use std::fmt::Write as _;

pub(super) fn section(c: &CaptureReport) -> String {
    if c.chat.is_empty() {
        return "<p class=\"note\">No chat messages.</p>".into();
    }
    let mut h = String::from("<div class=\"scroll\"><table class=\"chat\">");
    h.push_str(&thead(&["s", "session", "from", "", "text"]));
    for l in &c.chat {
        h.push_str(&row(&[
            tn(format!("{:.1}", l.t)),
            tn(l.session),
            td(&l.sender),
            td(if l.team { "team" } else { "" }),
            td(&l.text),
        ]));
    }
    h.push_str("</table></div>");
    if c.chat_dropped > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">{} more chat lines not listed.</p>",
            c.chat_dropped
        );
    }
    h
}
