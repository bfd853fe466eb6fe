//! The remote-write queues' own series (`llmtail_remote_write_*{url}`), appended to the
//! exposition after everything `render` writes: in scrapes and in pushes alike, so a receiver
//! sees how its own pushes fare.

use std::fmt::Write;
use std::sync::atomic::AtomicU64;

use crate::catalog::{agent, Kind, Metric};
use crate::exposition::render::{push_escaped, push_value, Format};

use super::queue::{Counters, Queue};
use super::Queues;

/// Which of a queue's counters a family shows.
type Reading = fn(&Counters) -> &AtomicU64;

/// Appends the queues' series to `exposition` (an OpenMetrics one keeps `# EOF` last).
pub fn append(exposition: &mut String, queues: &Queues, format: Format) {
    if queues.is_empty() {
        return;
    }
    let eof = format == Format::OpenMetrics && exposition.ends_with("# EOF\n");
    if eof {
        exposition.truncate(exposition.len() - "# EOF\n".len());
    }
    let read: [(&Metric, Reading); 4] = [
        (&agent::REMOTE_WRITE_SAMPLES_SENT, |c| &c.sent),
        (&agent::REMOTE_WRITE_SAMPLES_FAILED, |c| &c.failed),
        (&agent::REMOTE_WRITE_SAMPLES_DROPPED, |c| &c.dropped),
        (&agent::REMOTE_WRITE_QUEUE_SAMPLES, |c| &c.queued),
    ];
    for (metric, counter) in read {
        family(
            exposition,
            metric,
            format,
            queues.iter().map(|q: &std::sync::Arc<Queue>| {
                (q.counters.url.as_str(), Counters::get(counter(&q.counters)))
            }),
        );
    }
    if eof {
        exposition.push_str("# EOF\n");
    }
}

/// One family: HELP and TYPE (named as `render` names them in each format), then a sample per
/// receiver.
fn family<'a>(
    out: &mut String,
    metric: &Metric,
    format: Format,
    samples: impl Iterator<Item = (&'a str, u64)>,
) {
    let total = if metric.kind == Kind::Counter {
        "_total"
    } else {
        ""
    };
    let family_suffix = if format == Format::Text004 { total } else { "" };
    let name = metric.name;
    let _ = write!(
        out,
        "# HELP {name}{family_suffix} {}\n# TYPE {name}{family_suffix} {}\n",
        metric.help,
        metric.kind.as_str()
    );
    for (url, value) in samples {
        let _ = write!(out, "{name}{total}{{url=\"");
        push_escaped(out, url);
        out.push_str("\"} ");
        push_value(out, value as f64);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn each_receiver_gets_its_series_before_the_eof() {
        let queue = Queue::new("http://p:9090/api/v1/write", 100);
        queue.push(super::super::queue::Batch {
            body: Default::default(),
            samples: 3,
        });
        let queues: Queues = Arc::from([Arc::new(queue)]);
        let mut open_metrics = "llmtail_build_info{version=\"0.1.0\"} 1.0\n# EOF\n".to_string();
        append(&mut open_metrics, &queues, Format::OpenMetrics);
        assert!(open_metrics.ends_with("llmtail_remote_write_queue_samples{url=\"http://p:9090/api/v1/write\"} 3.0\n# EOF\n"), "{open_metrics}");
        assert!(open_metrics.contains("# TYPE llmtail_remote_write_samples_dropped counter\nllmtail_remote_write_samples_dropped_total{url=\"http://p:9090/api/v1/write\"} 0.0\n"), "{open_metrics}");
        let mut text = String::new();
        append(&mut text, &queues, Format::Text004);
        assert!(
            text.contains("# TYPE llmtail_remote_write_samples_sent_total counter\n"),
            "{text}"
        );
    }
}
