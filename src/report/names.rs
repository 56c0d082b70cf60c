//! The names the decoding layers know (player names, ship classes), as the printers ask
//! for them; the trait lives with the pipeline that answers it.

pub use crate::pipeline::names::{Names, NoNames};
