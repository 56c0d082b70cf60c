//! Fuzz target `sm_decode`: see `bcwire_fuzz::sm_decode` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::sm_decode(data));
