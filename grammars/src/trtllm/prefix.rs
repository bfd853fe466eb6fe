//! The heads in front of a TensorRT-LLM message, found anywhere in the line.
//!
//! One message can reach the log behind any of these (outer wrappers such as
//! `triton-1  | `, ` 0: ` from `srun`, or `[1,5]<stderr>:` may come first):
//!
//! - Triton glog: `I0510 07:57:30.770724 21661 model_instance_state.cc:840] ` (no year; the
//!   number is the process id), or with `--log-format ISO8601`:
//!   `2024-05-10T07:57:30Z I 21661 model_instance_state.cc:840] `;
//! - the C++ logger: `[TensorRT-LLM][INFO] `, with an explicit rank `[TensorRT-LLM][INFO][3] `,
//!   and `[TensorRT-LLM] ` for the `print()` of the version at import;
//! - the Python logger and the 2026 C++ module-tag logger:
//!   `[04/28/2025-09:56:44] [TRT-LLM] [I] `, `[TRT-LLM] [MPI_Rank 1] [I] `,
//!   `[TRT-LLM] [RANK 0] [I] `, `[TRT-LLM] [I] [_torch][RANK 0] `, `[TRT-LLM] [I] [executor] [RANK 0] `,
//!   `[TRT-LLM AUTO-DEPLOY] [RANK 0] [I] `, and the C++ source variant
//!   `05-10-2025 07:57:30.123456 [TRT-LLM] [I] `.
//!
//! A Triton head may be followed by a TRT-LLM head (both are stripped). A module tag is at
//! most 8 characters, so a message that starts with a bracket (`[MemUsageChange] ...`) keeps it.

use super::clock;
use crate::LogTime;

/// A line split into what its heads say and the message after them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Head<'a> {
    pub time: Option<LogTime>,
    /// The rank a TRT-LLM head names (`[RANK 0]`, `[MPI_Rank 1]`, `[TensorRT-LLM][INFO][3]`).
    pub rank: Option<u32>,
    /// The process id in a Triton head.
    pub pid: Option<u32>,
    /// True when a Triton head was found.
    pub triton: bool,
    pub message: &'a str,
}

/// Heads sit near the front; do not look for one past this many bytes.
const SCAN_LIMIT: usize = 512;

/// The logger tags every TensorRT-LLM head carries (`[TRT-LLM` also opens `[TRT-LLM AUTO-DEPLOY]`).
pub const TAGS: [&str; 2] = ["[TensorRT-LLM]", "[TRT-LLM"];

/// Where the message of a logger head whose tag is at `tag_at` begins, when a whole head is there.
pub fn message_at(line: &str, tag_at: usize) -> Option<usize> {
    let head = trtllm(&line[tag_at..])?;
    Some(line.len() - head.message.len())
}

/// Where a head whose logger tag is at `tag_at` starts: before the time the logger prints in
/// front of the tag, and before a Triton head in front of that, looking no further back than
/// `floor`. A record glued to the one before keeps its time, rank and process id that way.
pub fn start(line: &str, tag_at: usize, floor: usize) -> usize {
    let mut start = tag_at;
    start -= time_before(&line[floor..start]).unwrap_or(0);
    start -= triton_before(&line[floor..start]).unwrap_or(0);
    start
}

/// The length of the logger time that ends `text`: `[04/28/2025-09:56:44] ` or
/// `05-10-2025 07:57:30[.123456] `.
fn time_before(text: &str) -> Option<usize> {
    const SLASHED: usize = "[04/28/2025-09:56:44] ".len();
    if let Some(inner) = tail(text, SLASHED).and_then(|t| t.strip_prefix('[')) {
        if matches!(clock::slashed(inner), Some((_, "] "))) {
            return Some(SLASHED);
        }
    }
    let body = text.strip_suffix(' ')?;
    // 19 bytes without a fraction; `.` and 1 to 9 digits with one.
    (19..=29).filter(|&n| n != 20).find_map(|n| {
        let time = tail(body, n)?;
        matches!(clock::month_first(time), Some((_, ""))).then_some(n + 1)
    })
}

/// The length of the Triton head that ends `text` (`I0510 07:57:30.770724 21661 file.cc:840] `
/// or `2024-05-10T07:57:30Z I 21661 file.cc:840] `). Read backwards to the pid, then the few
/// places the time can start are tried, so the cost is bounded whatever `text` holds.
fn triton_before(text: &str) -> Option<usize> {
    let head = text.strip_suffix("] ")?;
    let head = head.strip_suffix(|c: char| c.is_ascii_digit())?;
    let head = head.trim_end_matches(|c: char| c.is_ascii_digit());
    let head = head.strip_suffix(':')?;
    let file = head
        .bytes()
        .rev()
        .take(257)
        .take_while(|&b| b != b' ' && b != b']')
        .count();
    if file == 0 || file > 256 {
        return None;
    }
    let head = head[..head.len() - file].strip_suffix(' ')?;
    let pid = head
        .bytes()
        .rev()
        .take(21)
        .take_while(u8::is_ascii_digit)
        .count();
    if pid == 0 || pid > 20 {
        return None;
    }
    let time_end = head[..head.len() - pid].trim_end_matches(' ').len();
    // `I0510 07:57:30` is 14 bytes, the ISO head with a fraction at most 32.
    (14..=32).find_map(|n| {
        let at = time_end.checked_sub(n)?;
        let candidate = text.get(at..)?;
        triton(candidate)
            .filter(|h| h.message.is_empty())
            .map(|_| candidate.len())
    })
}

/// The last `n` bytes of `s`, when they start on a character boundary.
fn tail(s: &str, n: usize) -> Option<&str> {
    s.get(s.len().checked_sub(n)?..)
}

/// Splits a line into its heads and its message. Never fails: without a head, the line
/// (less a recognisable wrapper) is the message.
pub fn split(line: &str) -> Head<'_> {
    let limit = line.len().min(SCAN_LIMIT);
    let bytes = line.as_bytes();
    for start in 0..limit {
        let b = bytes[start];
        if b == b'{' {
            break;
        }
        let boundary = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        if !boundary || !(b == b'[' || b.is_ascii_digit() || matches!(b, b'I' | b'W' | b'E' | b'F'))
        {
            continue;
        }
        let at = &line[start..];
        if let Some(mut head) = triton(at) {
            if let Some(inner) = trtllm(head.message) {
                head.rank = inner.rank;
                head.message = inner.message;
            }
            return head;
        }
        if let Some(head) = trtllm(at) {
            return head;
        }
    }
    Head {
        message: strip_wrapper(line),
        ..Head::default()
    }
}

/// `I0510 07:57:30.770724 21661 file.cc:840] ` or `2024-05-10T07:57:30Z I 21661 file.cc:840] `.
fn triton(s: &str) -> Option<Head<'_>> {
    let (time, rest) = if matches!(s.as_bytes().first(), Some(b'I' | b'W' | b'E' | b'F')) {
        let (time, rest) = clock::glog(&s[1..])?;
        (time, rest)
    } else {
        let (time, rest) = clock::iso(s)?;
        let rest = rest.strip_prefix(' ')?;
        let level = rest.as_bytes().first()?;
        if !matches!(level, b'I' | b'W' | b'E' | b'F' | b'V') {
            return None;
        }
        (time, &rest[1..])
    };
    let rest = rest.strip_prefix(' ')?.trim_start_matches(' ');
    let pid_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if pid_len == 0 {
        return None;
    }
    let pid = rest[..pid_len].parse().ok();
    let rest = rest[pid_len..].strip_prefix(' ')?;
    let end = rest
        .find("] ")
        .or_else(|| rest.strip_suffix(']').map(str::len))?;
    let (file, line) = rest[..end].rsplit_once(':')?;
    if file.is_empty()
        || file.contains(' ')
        || line.is_empty()
        || !line.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let message = rest.get(end + 2..).unwrap_or("");
    Some(Head {
        time: Some(time),
        rank: None,
        pid,
        triton: true,
        message,
    })
}

/// Any TensorRT-LLM logger head (C++ or Python), with the time that may precede it.
fn trtllm(s: &str) -> Option<Head<'_>> {
    let (time, rest) = if let Some(after) = s.strip_prefix('[') {
        match clock::slashed(after) {
            Some((time, rest)) => (Some(time), rest.strip_prefix("] ")?),
            None => (None, s),
        }
    } else if let Some((time, rest)) = clock::month_first(s) {
        (Some(time), rest.strip_prefix(' ')?)
    } else {
        (None, s)
    };
    if let Some(rest) = rest.strip_prefix("[TensorRT-LLM]") {
        return cpp(rest).map(|(rank, message)| Head {
            time,
            rank,
            pid: None,
            triton: false,
            message,
        });
    }
    let rest = rest
        .strip_prefix("[TRT-LLM] ")
        .or_else(|| rest.strip_prefix("[TRT-LLM AUTO-DEPLOY] "))?;
    python(rest).map(|(rank, message)| Head {
        time,
        rank,
        pid: None,
        triton: false,
        message,
    })
}

/// After `[TensorRT-LLM]`: `[LEVEL] `, `[LEVEL][rank] `, or ` ` (the version `print`).
fn cpp(s: &str) -> Option<(Option<u32>, &str)> {
    if let Some(rest) = s.strip_prefix(' ') {
        return Some((None, rest));
    }
    let rest = s.strip_prefix('[')?;
    let close = rest.find(']')?;
    if !matches!(
        &rest[..close],
        "TRACE" | "DEBUG" | "INFO" | "WARNING" | "ERROR"
    ) {
        return None;
    }
    let rest = &rest[close + 1..];
    let (rank, rest) = match bracketed_number(rest, "[") {
        Some((rank, rest)) => (Some(rank), rest),
        None => (None, rest),
    };
    Some((rank, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// After `[TRT-LLM] `: `[MPI_Rank n] |[RANK n] ` then `[L] `, then an optional module tag
/// (at most 8 characters, optionally padded) and `[RANK n] `.
fn python(s: &str) -> Option<(Option<u32>, &str)> {
    let mut rank = None;
    let mut rest = s;
    for opener in ["[MPI_Rank ", "[RANK "] {
        if let Some((n, after)) = bracketed_number(rest, opener) {
            rank = Some(n);
            rest = after.strip_prefix(' ')?;
            break;
        }
    }
    let level = rest.strip_prefix('[')?;
    let lvl = level.as_bytes().first()?;
    if !matches!(lvl, b'F' | b'E' | b'W' | b'I' | b'V' | b'D')
        || level.as_bytes().get(1) != Some(&b']')
    {
        return None;
    }
    rest = level[2..].strip_prefix(' ')?;
    if let Some((n, after)) = bracketed_number(rest, "[RANK ") {
        return Some((Some(n), after.strip_prefix(' ').unwrap_or(after)));
    }
    // Optional module tag: `[_torch]`, `[executor]`, `[llmapi  ]`; a pure number is a rank.
    if let Some(inner) = rest.strip_prefix('[') {
        if let Some(close) = inner.find(']') {
            let tag = &inner[..close];
            let is_tag = !tag.is_empty()
                && tag.len() <= 8
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b' ' | b'-'));
            if is_tag && !tag.starts_with("RANK ") {
                if tag.bytes().all(|b| b.is_ascii_digit()) {
                    rank = tag.parse().ok();
                }
                rest = &inner[close + 1..];
                if let Some((n, after)) = bracketed_number(rest.trim_start_matches(' '), "[RANK ") {
                    rank = Some(n);
                    rest = after;
                }
                rest = rest.strip_prefix(' ').unwrap_or(rest);
            }
        }
    }
    Some((rank, rest))
}

/// `<opener>N]` at the start of `s`.
fn bracketed_number<'a>(s: &'a str, opener: &str) -> Option<(u32, &'a str)> {
    let rest = s.strip_prefix(opener)?;
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    let value = rest[..n].parse().ok()?;
    Some((value, rest[n..].strip_prefix(']')?))
}

/// Leading wrappers of a line without a head: `name  | ` (docker compose), ` 0: ` (srun),
/// `[1,5]<stderr>:` (mpirun --tag-output).
fn strip_wrapper(line: &str) -> &str {
    let mut s = line.trim_start();
    if let Some(bar) = s.find("| ") {
        let name = s[..bar].trim_end();
        if !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        {
            s = s[bar + 2..].trim_start();
        }
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = s[digits..].strip_prefix(": ") {
            s = rest.trim_start();
        }
    }
    if s.starts_with('[') {
        for tag in ["]<stdout>:", "]<stderr>:"] {
            if let Some(at) = s.find(tag) {
                if s[1..at].bytes().all(|b| b.is_ascii_digit() || b == b',') {
                    s = s[at + tag.len()..].trim_start();
                    break;
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triton_glog_head() {
        let h = split("I0510 07:57:30.770724 21661 model_instance_state.cc:840] {\"a\":1}");
        assert_eq!(h.message, "{\"a\":1}");
        assert_eq!(h.pid, Some(21661));
        assert_eq!(h.time.unwrap().to_string(), "05-10 07:57:30.770724 UTC");
    }

    #[test]
    fn triton_iso_head_behind_a_compose_wrapper() {
        let h = split(
            "triton-1  | 2024-05-10T07:57:30Z I 77 model_lifecycle.cc:469] loading: tensorrt_llm:1",
        );
        assert_eq!(h.message, "loading: tensorrt_llm:1");
        assert_eq!(h.time.unwrap().to_string(), "2024-05-10 07:57:30 UTC");
    }

    #[test]
    fn python_heads() {
        let h = split("[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 1");
        assert_eq!((h.message, h.rank), ("iter = 1", None));
        assert_eq!(h.time.unwrap().to_string(), "2025-04-28 09:56:44");
        let h = split("[10/21/2025-23:24:47] [TRT-LLM] [RANK 3] [I] iter = 1");
        assert_eq!((h.message, h.rank), ("iter = 1", Some(3)));
        let h = split("[TRT-LLM] [I] [_torch][RANK 2] iter = 1");
        assert_eq!((h.message, h.rank), ("iter = 1", Some(2)));
        let h = split("[TRT-LLM] [I] [executor] [RANK 1] x");
        assert_eq!((h.message, h.rank), ("x", Some(1)));
        let h = split("[TRT-LLM] [MPI_Rank 1] [I] x");
        assert_eq!((h.message, h.rank), ("x", Some(1)));
        let h = split("[TRT-LLM] [I] [batchmgr][RANK 0] [MemUsageChange] Allocated");
        assert_eq!(h.message, "[MemUsageChange] Allocated");
    }

    #[test]
    fn cpp_heads() {
        let h = split("[TensorRT-LLM][INFO] [MemUsageChange] Allocated");
        assert_eq!(h.message, "[MemUsageChange] Allocated");
        let h = split("[TensorRT-LLM][INFO][5] Number of tokens per block: 32.");
        assert_eq!(
            (h.message, h.rank),
            ("Number of tokens per block: 32.", Some(5))
        );
        let h = split("[TensorRT-LLM] TensorRT-LLM version: 1.1.0rc3");
        assert_eq!(h.message, "TensorRT-LLM version: 1.1.0rc3");
    }

    #[test]
    fn no_head() {
        assert_eq!(split("{\"iter\":1}").message, "{\"iter\":1}");
        assert_eq!(split(" 0: iter = 1").message, "iter = 1");
        assert_eq!(split("[1,5]<stderr>:iter = 1").message, "iter = 1");
        let h = split("[06/01/2025-10:00:00] [TRT] [I] [MemUsageChange] Init CUDA");
        assert!(h.time.is_none());
    }
}
