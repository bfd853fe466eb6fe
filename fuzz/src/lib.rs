//! What the fuzz targets assert: the promises the grammars and the envelope decoders make to
//! the rest of the agent, checked on whatever input libFuzzer makes up. Not panicking is the
//! least of them; each check names the promise it holds a stage to, so a failure reads as a
//! broken promise, not as a crash to investigate.
//!
//! The targets in `fuzz_targets/` are one line each over these checks, so the checks build and
//! lint on the stable toolchain (`cargo check`, `cargo clippy` here) even where no nightly is
//! at hand to run them.

#![forbid(unsafe_code)]

pub mod envelope;
pub mod grammar;

/// True when `part` is a slice of `whole` (the grammars borrow what they return from the line:
/// a value that is not is one that came from somewhere else).
pub fn borrowed_from(part: &str, whole: &str) -> bool {
    let whole = whole.as_bytes().as_ptr_range();
    let part = part.as_bytes().as_ptr_range();
    whole.start <= part.start && part.end <= whole.end
}
