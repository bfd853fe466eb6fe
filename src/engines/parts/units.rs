//! An engine's units in one log (vLLM's engines, SGLang's schedulers, ranks), by key.
//!
//! Each unit is boxed: a B-tree node holds room for eleven values inline, so a log with one
//! unit of 800 bytes held a node of 9 KB (of 16 KB for a TensorRT-LLM rank), and 1,000
//! followed logs of two vLLM engines held 9 MB of room for engines they never had. Boxed, a
//! unit costs its own size and a node eleven pointers. The state file is the same: a box
//! serialises as what it holds.

use std::collections::BTreeMap;

/// Units by key, in key order; see the module's doc.
pub type Units<K, V> = BTreeMap<K, Box<V>>;
