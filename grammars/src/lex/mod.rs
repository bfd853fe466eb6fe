//! The small readers several engines' grammars share: numbers as Python prints them, the
//! times record heads print, `Key: value` fields, and a lenient view of a JSON object.
//!
//! Each engine's module reads its own lines with these and knows no other engine's module:
//! a reader two engines need lives here, so changing one engine's grammar cannot change
//! another's. Nothing here knows which engine printed what it reads.

pub mod field;
pub mod loose;
pub mod number;
pub mod time;
