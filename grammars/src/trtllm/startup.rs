//! Format D: startup lines that carry KV-cache capacity, and the identity lines.
//!
//! Capacity templates of `kvCacheManager.cpp` (C++ logger) and the PyTorch executor (Python
//! logger), each filling the [`KvCapacity`] fields it prints:
//!
//! - ≈0.5-0.6: `Using %d tokens in paged KV cache.`
//! - ≈0.9-0.17: `Memory usage when calculating max tokens in paged kv cache: total: %.2f GiB, available: %.2f GiB`,
//!   `Number of blocks in KV cache primary pool: %d`,
//!   `Number of blocks in KV cache secondary pool: %d, onboard blocks to primary memory before reuse: %s`;
//! - ≈0.9-0.18: `Max KV cache pages per sequence: %d`;
//! - ≈0.19+: `Max KV cache blocks per sequence: %d [window size=%d], tokens per block=%d,
//!   primary blocks=%d, secondary blocks=%d[, max sequence length=%d]`;
//! - DEBUG, newer: `Number of blocks in KV cache primary pool for windowSize %d: %d`;
//! - ≈0.9+: `Number of tokens per block: %d.` and
//!   `[MemUsageChange] Allocated %0.2f GiB for max tokens in paged KV cache (%d).` (the number in
//!   parentheses is the max tokens);
//! - PyTorch: `Estimated max memory in KV cache : %.2f GiB` and `Peak memory during memory usage
//!   profiling (torch + non-torch): X GiB, available KV cache memory when calculating max tokens: Y GiB, ...`.
//!
//! Several allocations can happen in one process (an estimation pass, then the real pool; draft
//! models): the consumer keeps the last value of each field. Other `[MemUsageChange]` lines
//! (runtime buffers, decoder, execution context) and TensorRT builder lines are not capacity.
//!
//! Identity: `[TensorRT-LLM] TensorRT-LLM version: 1.1.0rc3` (a `print` at import) and Triton's
//! `loading: tensorrt_llm:1` (possibly as an escaped message `"loading: tensorrt_llm:1"`).

use std::borrow::Cow;

use serde::Serialize;

/// KV-cache capacity as one startup line states it. Only what the line printed is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct KvCapacity {
    /// The logger head's rank, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Max tokens the paged KV cache holds (`Using N tokens`, `[MemUsageChange] ... (N).`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Blocks in the primary (GPU) pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_blocks: Option<u64>,
    /// Blocks in the secondary (host offload) pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secondary_blocks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_block: Option<u64>,
    /// `Max KV cache pages per sequence` / `Max KV cache blocks per sequence`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_blocks_per_sequence: Option<u64>,
    /// The attention window the block counts are for (variable-window manager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sequence_length: Option<u64>,
    /// GiB allocated for the KV pool (`[MemUsageChange] Allocated X GiB ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocated_gib: Option<f64>,
    /// GiB the PyTorch backend estimated for the KV cache (`Estimated max memory in KV cache : X GiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_gib: Option<f64>,
    /// Device memory total when sizing the cache, GiB (`... total: X GiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_total_gib: Option<f64>,
    /// Memory available for the KV cache when sizing it, GiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_gib: Option<f64>,
}

/// A TRT-LLM startup message this module reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Startup<'a> {
    Capacity(KvCapacity),
    Version(&'a str),
    TritonModel {
        model: Cow<'a, str>,
        version: &'a str,
    },
}

/// Parses a startup message (head removed; a Triton escaped message not yet unescaped).
pub fn parse(message: &str, rank: Option<u32>) -> Option<Startup<'_>> {
    let message = message.trim_end();
    if let Some(rest) = message.strip_prefix("TensorRT-LLM version: ") {
        let version = rest.trim();
        if version.is_empty() || version.contains(char::is_whitespace) {
            return None;
        }
        return Some(Startup::Version(version));
    }
    if message.starts_with("loading: ") || message.starts_with("\"loading: ") {
        return triton_model(message);
    }
    capacity(message).map(|mut c| {
        c.rank = rank;
        Startup::Capacity(c)
    })
}

/// `loading: tensorrt_llm:1`; the model name may itself contain `:`, the version is after the last.
fn triton_model(message: &str) -> Option<Startup<'_>> {
    let text = match message.strip_prefix('"') {
        Some(inner) => inner.strip_suffix('"')?,
        None => message,
    };
    let rest = text.strip_prefix("loading: ")?;
    let (model, version) = rest.rsplit_once(':')?;
    if model.is_empty() || version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let model = if model.contains('\\') {
        Cow::Owned(serde_json::from_str::<String>(&format!("\"{model}\"")).ok()?)
    } else {
        Cow::Borrowed(model)
    };
    Some(Startup::TritonModel { model, version })
}

fn capacity(m: &str) -> Option<KvCapacity> {
    let mut c = KvCapacity::default();
    if let Some(rest) = m.strip_prefix("Using ") {
        let (n, rest) = uint(rest)?;
        exact(rest, " tokens in paged KV cache.")?;
        c.tokens = Some(n);
    } else if let Some(rest) = m.strip_prefix("[MemUsageChange] Allocated ") {
        let (gib, rest) = float(rest)?;
        let rest = rest.strip_prefix(" GiB for max tokens in paged KV cache (")?;
        let (n, rest) = uint(rest)?;
        exact(rest, ").")?;
        c.allocated_gib = Some(gib);
        c.tokens = Some(n);
    } else if let Some(rest) =
        m.strip_prefix("Memory usage when calculating max tokens in paged kv cache: total: ")
    {
        let (total, rest) = float(rest)?;
        let (available, rest) = float(rest.strip_prefix(" GiB, available: ")?)?;
        exact(rest, " GiB")?;
        c.device_total_gib = Some(total);
        c.available_gib = Some(available);
    } else if let Some(rest) =
        m.strip_prefix("Number of blocks in KV cache primary pool for windowSize ")
    {
        let (window, rest) = uint(rest)?;
        let (n, rest) = uint(rest.strip_prefix(": ")?)?;
        exact(rest, "")?;
        c.window_size = Some(window);
        c.primary_blocks = Some(n);
    } else if let Some(rest) = m.strip_prefix("Number of blocks in KV cache primary pool: ") {
        let (n, rest) = uint(rest)?;
        exact(rest, "")?;
        c.primary_blocks = Some(n);
    } else if let Some(rest) = m.strip_prefix("Number of blocks in KV cache secondary pool: ") {
        let (n, rest) = uint(rest)?;
        if !(rest.is_empty() || rest.starts_with(", onboard blocks")) {
            return None;
        }
        c.secondary_blocks = Some(n);
    } else if let Some(rest) = m.strip_prefix("Max KV cache pages per sequence: ") {
        let (n, rest) = uint(rest)?;
        exact(rest, "")?;
        c.max_blocks_per_sequence = Some(n);
    } else if let Some(rest) = m.strip_prefix("Max KV cache blocks per sequence: ") {
        let (n, rest) = uint(rest)?;
        c.max_blocks_per_sequence = Some(n);
        blocks_per_sequence_tail(rest, &mut c)?;
    } else if let Some(rest) = m.strip_prefix("Number of tokens per block: ") {
        let (n, rest) = uint(rest)?;
        if !(rest.is_empty() || rest == ".") {
            return None;
        }
        c.tokens_per_block = Some(n);
    } else if let Some(rest) = m.strip_prefix("Estimated max memory in KV cache : ") {
        let (gib, rest) = float(rest)?;
        exact(rest, " GiB")?;
        c.estimated_gib = Some(gib);
    } else if m.starts_with("Peak memory during memory usage profiling") {
        let key = "available KV cache memory when calculating max tokens: ";
        let at = m.find(key)? + key.len();
        let (gib, rest) = float(&m[at..])?;
        rest.strip_prefix(" GiB")?;
        c.available_gib = Some(gib);
        if let Some(at) = m.find("device total memory ") {
            c.device_total_gib = float(&m[at + "device total memory ".len()..]).map(|(v, _)| v);
        }
    } else {
        return None;
    }
    Some(c)
}

/// ` [window size=%d], tokens per block=%d, primary blocks=%d, secondary blocks=%d[, max sequence length=%d]`:
/// read as `name=value` pairs so a reordering or an added pair does not break it.
fn blocks_per_sequence_tail(rest: &str, c: &mut KvCapacity) -> Option<()> {
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix("[window size=") {
        Some(after) => {
            let (w, after) = uint(after)?;
            c.window_size = Some(w);
            after.strip_prefix(']')?
        }
        None => rest,
    };
    for pair in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=')?;
        let (n, tail) = uint(value.trim())?;
        exact(tail, "")?;
        match name.trim() {
            "tokens per block" => c.tokens_per_block = Some(n),
            "primary blocks" => c.primary_blocks = Some(n),
            "secondary blocks" => c.secondary_blocks = Some(n),
            "max sequence length" => c.max_sequence_length = Some(n),
            _ => {}
        }
    }
    Some(())
}

fn uint(s: &str) -> Option<(u64, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn float(s: &str) -> Option<(f64, &str)> {
    let n = s
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn exact(rest: &str, expected: &str) -> Option<()> {
    (rest == expected).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(m: &str) -> KvCapacity {
        match parse(m, None) {
            Some(Startup::Capacity(c)) => c,
            other => panic!("{m}: {other:?}"),
        }
    }

    #[test]
    fn every_capacity_template() {
        assert_eq!(
            cap("Using 10718 tokens in paged KV cache.").tokens,
            Some(10718)
        );
        let c =
            cap("[MemUsageChange] Allocated 78.30 GiB for max tokens in paged KV cache (3731744).");
        assert_eq!((c.allocated_gib, c.tokens), (Some(78.30), Some(3731744)));
        assert_eq!(
            cap("Number of blocks in KV cache primary pool: 631").primary_blocks,
            Some(631)
        );
        assert_eq!(cap("Number of blocks in KV cache secondary pool: 10728, onboard blocks to primary memory before reuse: true").secondary_blocks, Some(10728));
        assert_eq!(
            cap("Max KV cache pages per sequence: 125").max_blocks_per_sequence,
            Some(125)
        );
        let c = cap("Max KV cache blocks per sequence: 128 [window size=4096], tokens per block=32, primary blocks=2000, secondary blocks=0, max sequence length=4096");
        assert_eq!(
            (
                c.window_size,
                c.tokens_per_block,
                c.primary_blocks,
                c.max_sequence_length
            ),
            (Some(4096), Some(32), Some(2000), Some(4096))
        );
        assert_eq!(
            cap("Number of tokens per block: 32.").tokens_per_block,
            Some(32)
        );
        assert_eq!(
            cap("Estimated max memory in KV cache : 70.52 GiB").estimated_gib,
            Some(70.52)
        );
        let c = cap("Memory usage when calculating max tokens in paged kv cache: total: 79.11 GiB, available: 70.40 GiB");
        assert_eq!(
            (c.device_total_gib, c.available_gib),
            (Some(79.11), Some(70.40))
        );
    }

    #[test]
    fn not_capacity() {
        assert_eq!(
            parse(
                "[MemUsageChange] Allocated 2.12 GiB for runtime buffers.",
                None
            ),
            None
        );
        assert_eq!(parse("Using 10718 tokens in paged KV cache", None), None);
        assert_eq!(parse("loading: tensorrt_llm:latest", None), None);
    }

    #[test]
    fn identity() {
        assert_eq!(
            parse("TensorRT-LLM version: 1.1.0rc3", None),
            Some(Startup::Version("1.1.0rc3"))
        );
        assert_eq!(
            parse("\"loading: tensorrt_llm:1\"", None),
            Some(Startup::TritonModel {
                model: Cow::Borrowed("tensorrt_llm"),
                version: "1"
            })
        );
    }
}
