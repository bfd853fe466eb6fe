//! The remote-write queues' own series (`llmtail_remote_write_*{url}`): a [`SampleSource`]
//! that every output reads after the state's series, so scrapes and pushes alike show how
//! each receiver's pushes fare, and the landing page tabulates them.

use std::sync::atomic::AtomicU64;

use crate::catalog::{agent, Metric};
use crate::samples::{total_suffix, LabelSet, SampleSink, SampleSource};

use super::queue::Counters;
use super::Queues;

/// Which of a queue's counters a family shows.
type Reading = fn(&Counters) -> &AtomicU64;

/// The families, in the order they are written, and the counter each shows.
const FAMILIES: [(&Metric, Reading); 4] = [
    (&agent::REMOTE_WRITE_SAMPLES_SENT, |c| &c.sent),
    (&agent::REMOTE_WRITE_SAMPLES_FAILED, |c| &c.failed),
    (&agent::REMOTE_WRITE_SAMPLES_DROPPED, |c| &c.dropped),
    (&agent::REMOTE_WRITE_QUEUE_SAMPLES, |c| &c.queued),
];

/// The queues' series: one family per counter, one sample per receiver, labelled `url`.
pub struct QueueSeries(pub Queues);

impl SampleSource for QueueSeries {
    fn samples(&self, out: &mut dyn SampleSink) {
        if self.0.is_empty() {
            return;
        }
        let none = LabelSet::default();
        for (metric, counter) in FAMILIES {
            out.family(metric);
            for queue in self.0.iter() {
                let counters = &queue.counters;
                let value = Counters::get(counter(counters)) as f64;
                let url = Some(("url", counters.url.as_str()));
                out.sample(metric.name, total_suffix(metric), url, &none, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote_write::queue::{Batch, Queue};
    use crate::remote_write::round::RoundSink;
    use std::sync::Arc;

    #[test]
    fn each_receiver_has_one_series_per_counter_labelled_with_its_url() {
        let queue = Queue::new("http://p:9090/api/v1/write", 100);
        queue.push(Batch {
            body: Default::default(),
            samples: 3,
        });
        let queues: Queues = Arc::from([Arc::new(queue)]);
        let mut sink = RoundSink::new(&[], 0);
        QueueSeries(queues).samples(&mut sink);
        let round = sink.finish();
        let series: Vec<(String, f64)> = round
            .series
            .iter()
            .map(|s| {
                let labels: Vec<_> = s.labels.iter().map(|l| &*l.value).collect();
                (labels.join(" "), s.samples[0].value)
            })
            .collect();
        let url = "http://p:9090/api/v1/write";
        assert_eq!(
            series,
            [
                (
                    format!("llmtail_remote_write_samples_sent_total {url}"),
                    0.0
                ),
                (
                    format!("llmtail_remote_write_samples_failed_total {url}"),
                    0.0
                ),
                (
                    format!("llmtail_remote_write_samples_dropped_total {url}"),
                    0.0
                ),
                (format!("llmtail_remote_write_queue_samples {url}"), 3.0),
            ]
        );
        assert_eq!(round.metadata.len(), 4);
    }

    #[test]
    fn without_receivers_there_is_no_family() {
        let mut sink = RoundSink::new(&[], 0);
        QueueSeries(Arc::from([])).samples(&mut sink);
        assert_eq!(sink.finish(), Default::default());
    }
}
