//! Startup lines: KV-cache capacity, block counts, the engine config (which names the
//! model), and V0's cumulative preemption warning.
//!
//! - `# GPU blocks: N, # CPU blocks: M` (V0; the device word was `GPU`, `TPU`, `HPU`, then the
//!   dispatch key `CUDA`/`XLA` in 0.7.0 to 0.7.2, then the device name `cuda`/`rocm`/`npu` from 0.7.3;
//!   the CPU executor printed `# CPU blocks: N` alone, V1 0.6.4 to 0.7.3 `# GPU blocks: N` alone).
//! - `GPU KV cache size: 2,042,016 tokens` (0.8.0+, thousands separators; `%s KV cache size` with the
//!   device word from 0.30) and `Maximum concurrency for 32,768 tokens per request: 1.30x`, on one
//!   line joined by `, ` from 0.28.
//! - `Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: N` (0.9.1+).
//! - `Initializing an LLM engine (v0.4.0) with config: model='...', ..., served_model_name=..., ...`
//!   and its `a V0`/`a V1` forms. `Dumping input data for V1 LLM engine` (a crash dump with the same
//!   config) is deliberately not a match.
//! - V0 scheduler warning every 50th preemption: `... total_num_cumulative_preemption=N`.

use nom::{
    branch::alt,
    bytes::complete::{is_not, tag, take_while1},
    character::complete::char,
    combinator::opt,
    sequence::delimited,
    IResult, Parser,
};
use serde::Serialize;

use super::stats::scope;
use super::VllmRecord;
use crate::lex::field::whole;
use crate::lex::number::{float, grouped_uint, uint};

/// `# <DEV> blocks: N[, # CPU blocks: M]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blocks<'a> {
    pub device: &'a str,
    pub device_blocks: u64,
    /// The CPU swap-space blocks, when printed after the device's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_blocks: Option<u64>,
}

/// `<DEV> KV cache size: N tokens[, Maximum concurrency for ...]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KvCacheSize<'a> {
    pub device: &'a str,
    pub tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<MaxConcurrency>,
}

/// `Maximum concurrency for N tokens per request: X.XXx`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxConcurrency {
    pub tokens_per_request: u64,
    pub concurrency: f64,
}

/// `Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: N`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumGpuBlocks {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregated_engines: Option<u32>,
    pub blocks: u64,
}

/// The engine config line. `model` is as Python's `repr` printed it, quotes removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<&'a str>,
    pub model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_model_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_seq_len: Option<u64>,
}

/// What the API server's version line starts with, in the two forms vLLM has printed:
/// `logger.info("vLLM API server version %s", VLLM_VERSION)` (`run_server`, later
/// `setup_server`, in `vllm/entrypoints/openai/api_server.py`: 0.4.0 to 0.14.1, the line cases), and
/// `"vLLM server version %s, serving model %s"` (`log_version_and_model` in
/// `vllm/entrypoints/utils.py`, 0.15+: printed when the logo is off, `VLLM_DISABLE_LOG_LOGO`, or
/// the logger has no formatter; the logo itself spans lines and is not read).
pub const SERVER_VERSIONS: &[&str] = &["vLLM API server version ", "vLLM server version "];

/// The version of a `vLLM API server version 0.8.5` or `vLLM server version 0.15.1, serving
/// model ...` line: one word of the characters a version holds (`0.11.1rc2.dev5+gabc`).
fn server_version(message: &str) -> Option<&str> {
    let rest = SERVER_VERSIONS
        .iter()
        .find_map(|start| message.strip_prefix(start))?;
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || b"._+-".contains(b))
        .count();
    let (version, after) = rest.split_at(len);
    let known_end = after.is_empty() || after.starts_with(", serving model ");
    (len > 0 && version.as_bytes()[0].is_ascii_digit() && known_end).then_some(version)
}

/// V0's `total_num_cumulative_preemption=N`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preemptions {
    pub cumulative: u64,
}

/// Parses a startup or preemption message.
pub fn parse(message: &str) -> Option<VllmRecord<'_>> {
    let message = message.trim_end();
    if message.starts_with("# ") {
        return whole(message, blocks).map(VllmRecord::Blocks);
    }
    if message.starts_with("Maximum concurrency for ") {
        return whole(message, max_concurrency).map(VllmRecord::MaxConcurrency);
    }
    if message.starts_with("Initializing a") {
        return engine_config(message).map(VllmRecord::EngineConfig);
    }
    if message.starts_with("vLLM ") {
        return server_version(message).map(|version| VllmRecord::ServerVersion { version });
    }
    if let Some(at) = message.find("total_num_cumulative_preemption=") {
        if !message.contains(" is preempted by ") {
            return None;
        }
        let cumulative = whole(
            &message[at + "total_num_cumulative_preemption=".len()..],
            uint,
        )?;
        return Some(VllmRecord::Preemptions(Preemptions { cumulative }));
    }
    let (scope, body) = scope(message);
    if let Some(rest) =
        body.strip_prefix("vllm cache_config_info with initialization after num_gpu_blocks is: ")
    {
        return Some(VllmRecord::NumGpuBlocks(NumGpuBlocks {
            engine: scope.engine,
            aggregated_engines: scope.aggregated_engines,
            blocks: whole(rest, uint)?,
        }));
    }
    // The aggregated logger says `2 Engines: vllm cache_config_info ...` (no "Aggregated").
    if let Ok((rest, (engines, _))) = (
        uint,
        tag(" Engines: vllm cache_config_info with initialization after num_gpu_blocks is: "),
    )
        .parse(message)
    {
        return Some(VllmRecord::NumGpuBlocks(NumGpuBlocks {
            engine: None,
            aggregated_engines: Some(u32::try_from(engines).ok()?),
            blocks: whole(rest, uint)?,
        }));
    }
    whole(message, kv_cache_size).map(VllmRecord::KvCacheSize)
}

fn blocks(input: &str) -> IResult<&str, Blocks<'_>> {
    (
        tag("# "),
        take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_'),
        tag(" blocks: "),
        uint,
        opt((tag(", # CPU blocks: "), uint).map(|(_, n)| n)),
    )
        .map(|(_, device, _, device_blocks, cpu_blocks)| Blocks {
            device,
            device_blocks,
            cpu_blocks,
        })
        .parse(input)
}

fn max_concurrency(input: &str) -> IResult<&str, MaxConcurrency> {
    (
        tag("Maximum concurrency for "),
        grouped_uint,
        tag(" tokens per request: "),
        float,
        char('x'),
    )
        .map(
            |(_, tokens_per_request, _, concurrency, _)| MaxConcurrency {
                tokens_per_request,
                concurrency,
            },
        )
        .parse(input)
}

fn kv_cache_size(input: &str) -> IResult<&str, KvCacheSize<'_>> {
    (
        take_while1(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit()),
        tag(" KV cache size: "),
        grouped_uint,
        tag(" tokens"),
        opt((tag(", "), max_concurrency).map(|(_, m)| m)),
    )
        .map(|(device, _, tokens, _, max_concurrency)| KvCacheSize {
            device,
            tokens,
            max_concurrency,
        })
        .parse(input)
}

/// `'Qwen/Qwen3-8B'` or, for a name with a single quote in it, `"..."`.
fn python_str(input: &str) -> IResult<&str, &str> {
    alt((
        delimited(char('\''), is_not("'"), char('\'')),
        delimited(char('"'), is_not("\""), char('"')),
    ))
    .parse(input)
}

fn engine_config(message: &str) -> Option<EngineConfig<'_>> {
    let header: IResult<&str, _> = (
        alt((
            tag("Initializing an LLM engine"),
            tag("Initializing a V0 LLM engine"),
            tag("Initializing a V1 LLM engine"),
        )),
        opt(delimited(tag(" (v"), is_not(")"), char(')'))),
        tag(" with config: model="),
    )
        .parse(message);
    let (rest, (_, version, _)) = header.ok()?;
    let (config, model) = python_str(rest).ok()?;
    let served_model_name = key_value(config, ", served_model_name=").map(|v| v.trim_matches('\''));
    let max_seq_len = key_value(config, ", max_seq_len=").and_then(|v| v.parse().ok());
    Some(EngineConfig {
        version,
        model,
        served_model_name,
        max_seq_len,
    })
}

/// The unquoted value after `key` in a `k=v, k=v` config string.
///
/// A value ends at the next `, `, or at the `)` that closes the 0.1.x-0.6.x f-string, where
/// `served_model_name` was the last key (`seed=0, served_model_name=chatglm3-6b/)`). A value that
/// runs to the end of the line without that `)` is a line cut short (Docker and CRI split
/// records over 16 KiB) and is not taken.
fn key_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    let at = config.find(key)? + key.len();
    let value = &config[at..];
    let value = match value.find(", ") {
        Some(end) => &value[..end],
        None => value.strip_suffix(')')?,
    };
    Some(value).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_value_must_be_followed_by_another_key() {
        assert_eq!(
            key_value(
                "seed=0, served_model_name=qwen, x=1",
                ", served_model_name="
            ),
            Some("qwen")
        );
        assert_eq!(
            key_value("seed=0, served_model_name=Qwen/Qw", ", served_model_name="),
            None
        );
    }

    #[test]
    fn a_cut_config_line_keeps_its_model_but_not_the_cut_fields() {
        let line = "Initializing a V1 LLM engine (v0.14.1) with config: model='Qwen/Qwen3-8B', max_seq_len=40960, served_model_name=Qwe";
        let config = engine_config(line).unwrap();
        assert_eq!(
            (config.model, config.max_seq_len, config.served_model_name),
            ("Qwen/Qwen3-8B", Some(40960), None)
        );
    }

    #[test]
    fn kv_cache_size_takes_the_joined_concurrency() {
        let size = whole("GPU KV cache size: 391,748 tokens, Maximum concurrency for 32,768 tokens per request: 11.96x", kv_cache_size).unwrap();
        assert_eq!((size.device, size.tokens), ("GPU", 391_748));
        assert_eq!(size.max_concurrency.unwrap().tokens_per_request, 32_768);
    }

    #[test]
    fn blocks_read_every_device_word() {
        for (line, device) in [
            ("# GPU blocks: 1, # CPU blocks: 2", "GPU"),
            ("# cuda blocks: 1, # CPU blocks: 2", "cuda"),
            ("# npu blocks: 1, # CPU blocks: 2", "npu"),
        ] {
            assert_eq!(whole(line, blocks).unwrap().device, device);
        }
        assert_eq!(
            whole("# CPU blocks: 7281", blocks).unwrap().cpu_blocks,
            None
        );
    }
}
