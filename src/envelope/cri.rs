//! Kubernetes CRI log files (`/var/log/pods/.../0.log`, containerd and CRI-O):
//! `<RFC3339Nano> <stdout|stderr> <P|F> <content>`, where `P` marks a partial line that the
//! runtime split (16 KiB by default) and the following parts up to an `F` complete.
use llmtail_grammars::LogTime;

use super::time::parse_datetime;

/// CRI: `<RFC3339Nano> <stdout|stderr> <P|F>[:more tags] <content>`.
pub fn fields(line: &str) -> Option<(LogTime, bool, &str)> {
    let (time, rest) = parse_datetime(line)?;
    let rest = rest.strip_prefix(' ')?;
    let rest = rest
        .strip_prefix("stdout ")
        .or_else(|| rest.strip_prefix("stderr "))?;
    let (tag, content) = match rest.split_once(' ') {
        Some((tag, content)) => (tag, content),
        None => (rest, ""),
    };
    let is_partial = match tag.split(':').next()? {
        "P" => true,
        "F" => false,
        _ => return None,
    };
    Some((time, is_partial, content))
}

#[cfg(test)]
mod tests {
    use crate::envelope::tests_support::{decode_all, STATS};
    use crate::envelope::EnvelopeKind;

    #[test]
    fn cri_partials_join_with_the_final_part() {
        let lines = [
            "2026-11-22T13:25:01.123456789Z stdout P INFO 11-22 13:25:01 [loggers.py:257] Engine 000: ",
            "2026-11-22T13:25:01.123456789Z stdout F Avg prompt throughput: 1.0 tokens/s",
            &format!("2026-11-22T13:25:11.000000000Z stderr F {STATS}"),
        ];
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &lines),
            ["<partial>", STATS, STATS]
        );
    }
}
