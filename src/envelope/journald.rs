//! journald and syslog prefixes: `journalctl -o short` (`Nov 22 13:25:01 host ident[pid]: `),
//! `-o short-iso` (`2026-11-22T13:25:01+0000 host ident[pid]: `) and a syslog `<PRI>` in front.
//! `-o short` prints local time without a year or zone, and the month in the host's locale
//! (`janv.`, `Mär`, `5月`: see [`super::time::month_number`]); the pipeline reads it per line.
use llmtail_grammars::LogTime;

use super::time::{parse_datetime, parse_syslog_time};

/// `[<PRI>]Nov 22 13:25:01 host ident[pid]: message` or `2026-11-22T13:25:01+0000 host ident[pid]: message`.
pub fn decode(line: &str) -> Option<(&str, LogTime)> {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix('<') {
        let close = after.find('>')?;
        if close == 0 || close > 3 || !after[..close].bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        rest = &after[close + 1..];
    }
    let (time, rest) = parse_syslog_time(rest).or_else(|| parse_datetime(rest))?;
    let rest = rest.strip_prefix(' ')?;
    let (_host, rest) = rest.split_once(' ')?;
    let colon = rest.find(": ")?;
    let ident = &rest[..colon];
    if ident.is_empty() || ident.contains(' ') {
        return None;
    }
    Some((&rest[colon + 2..], time))
}

#[cfg(test)]
mod tests {
    use crate::envelope::detect::detect;
    use crate::envelope::tests_support::{decode_all, STATS};
    use crate::envelope::EnvelopeKind;

    #[test]
    fn journald_short_and_iso_and_syslog_pri() {
        let short = format!("Aug 19 18:30:11 vllm vllm[8707]: (APIServer pid=8707) {STATS}");
        let iso = format!("2026-08-19T18:30:11+0000 vllm vllm[8707]: {STATS}");
        let pri = format!("<14>Aug 19 18:30:11 vllm vllm: {STATS}");
        assert_eq!(
            decode_all(EnvelopeKind::Journald, &[&short, &iso, &pri]),
            [
                format!("(APIServer pid=8707) {STATS}"),
                STATS.to_string(),
                STATS.to_string()
            ]
        );
        assert_eq!(detect(&short), Some(EnvelopeKind::Journald));
    }

    #[test]
    fn ollama_under_a_localised_journal() {
        let gin =
            r#"[GIN] 2024/05/07 - 06:59:38 | 200 |      57.489µs |       127.0.0.1 | HEAD     "/""#;
        let slog = r#"time=2025-09-11T00:42:50.484+02:00 level=INFO source=sched.go:473 msg="loaded runners" count=1"#;
        let lines = [
            format!("5月 07 06:59:38 master ollama[176672]: {gin}"),
            format!("janv. 27 17:06:44 desktop ollama[1646734]: {slog}"),
            format!("Mär 03 08:00:00 gpu-01 ollama[812]: {gin}"),
            format!("dic 24 10:00:00 srv ollama[9]: {slog}"),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_eq!(
            decode_all(EnvelopeKind::Journald, &refs),
            [gin, slog, gin, slog]
        );
        assert_eq!(detect(&lines[0]), Some(EnvelopeKind::Journald));
        let (_, time) = super::decode(&lines[1]).unwrap();
        assert_eq!(time.to_string(), "01-27 17:06:44");
    }

    #[test]
    fn short_is_local_time_without_a_year_and_short_iso_keeps_its_offset() {
        let (_, short) = super::decode("Dec 31 23:59:50 host vllm[1]: x").unwrap();
        assert_eq!(short.to_string(), "12-31 23:59:50");
        let (_, iso) = super::decode("2026-08-19T18:30:11+0900 host vllm[1]: x").unwrap();
        assert_eq!(iso.to_string(), "2026-08-19 18:30:11 +09:00");
    }
}
