//! Push: the agent's series sent to Prometheus-compatible receivers with the remote-write 1.0
//! protocol, for hosts that cannot be scraped (behind NAT, short-lived cloud GPUs).
//!
//! Every `--remote-write.interval` the collector takes the samples a scrape would get
//! ([`crate::samples::all_samples`]) as protobuf series ([`round`]) stamped with the wall
//! clock, adds the `--label`s as external labels, and queues the compressed requests
//! on each receiver's bounded [`queue`]. One sender per receiver sends them oldest first
//! ([`client`]), retrying network errors, 5xx and 429 with backoff, dropping what a receiver
//! refuses with another 4xx. Everything runs on the serving runtime and never takes the
//! reader's or the server's time: a receiver that is down costs a queue and a connection
//! attempt every few seconds, nothing more.

pub mod client;
pub mod metrics;
pub mod prompb;
pub mod queue;
pub mod round;
pub mod settings;
pub mod staleness;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::samples::{self, SharedSources};
use crate::state::State;
use queue::{Backoff, Batch, Fate, Outcome, Queue, RequestPacer};
use settings::RemoteWrite;
use staleness::Staleness;

/// The most samples in one request: Prometheus' own `max_samples_per_send` is 2000 (500
/// before 2.44, prometheus/prometheus#12203); receivers take requests of this size.
pub const MAX_SAMPLES_PER_REQUEST: usize = 2000;

/// How long the senders go on after a stop is asked, to deliver the last round and what is
/// queued: a bounded last push, well inside systemd's 90 s stop timeout.
pub const FINAL_FLUSH: Duration = Duration::from_secs(5);

/// One queue per receiver, in the order of the settings.
pub type Queues = Arc<[Arc<Queue>]>;

/// The queues for the receivers `settings` name (none without remote write).
pub fn queues(settings: &RemoteWrite) -> Queues {
    settings
        .targets
        .iter()
        .map(|target| Arc::new(Queue::new(&target.url, queue::MAX_QUEUED_SAMPLES)))
        .collect()
}

/// Something that delivers one request body: the HTTP [`client::Client`], or a test's script.
pub trait Transport: Send {
    fn send(&mut self, body: Bytes) -> impl std::future::Future<Output = Outcome> + Send;
}

impl Transport for client::Client {
    fn send(&mut self, body: Bytes) -> impl std::future::Future<Output = Outcome> + Send {
        client::Client::send(self, body)
    }
}

/// Reads the external labels in force.
pub type ExternalLabels = Arc<dyn Fn() -> Vec<(String, String)> + Send + Sync>;

/// What the collector reads each round.
#[derive(Clone)]
pub struct Sources {
    pub state: Arc<Mutex<State>>,
    pub clock: Clock,
    /// The external labels (`--label`s) in force: a reload may change them.
    pub external_labels: ExternalLabels,
    pub queues: Queues,
    /// The series beside the state that a scrape shows too (the queues' own among them).
    pub sources: SharedSources,
}

/// The running collector and senders.
pub struct Pusher {
    stop: watch::Sender<bool>,
    collector: JoinHandle<()>,
    senders: Vec<JoinHandle<()>>,
}

impl Pusher {
    /// Starts pushing to every receiver of `settings`, on the current runtime; `None` without
    /// any.
    pub fn start(settings: &RemoteWrite, sources: Sources) -> Option<Pusher> {
        if settings.targets.is_empty() {
            return None;
        }
        let (stop, stopping) = watch::channel(false);
        let (closed, closing) = watch::channel(false);
        let senders = settings
            .targets
            .iter()
            .zip(sources.queues.iter())
            .map(|(target, queue)| {
                let client = client::Client::new(target.clone());
                tokio::spawn(send(Arc::clone(queue), client, closing.clone()))
            })
            .collect();
        let interval = settings.interval;
        let collector = tokio::spawn(collect(sources, interval, stopping, closed));
        let urls = settings.urls().join(" ");
        tracing::info!(%urls, ?interval, "pushing with remote write");
        Some(Pusher {
            stop,
            collector,
            senders,
        })
    }

    /// Stops: one last round is collected, and the senders get [`FINAL_FLUSH`] to deliver what
    /// is queued; what is left is counted as dropped.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.collector.await;
        for sender in self.senders {
            let _ = sender.await;
        }
    }
}

/// Collects a round every `interval` until `stopping`, then a last one; then says the queues
/// are `closed` (no more rounds).
async fn collect(
    sources: Sources,
    interval: Duration,
    mut stopping: watch::Receiver<bool>,
    closed: watch::Sender<bool>,
) {
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut staleness = Staleness::default();
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                if caught_up(&sources) {
                    staleness = collect_round(&sources, staleness).await;
                } else {
                    // The first round as soon as the backlog is read, not an interval later.
                    ticker.reset_after(CATCH_UP_POLL);
                }
            }
            () = stopped(&mut stopping) => break,
        }
    }
    if caught_up(&sources) {
        collect_round(&sources, staleness).await;
    }
    let _ = closed.send(true);
}

/// How often the collector looks whether the logs' existing content is read, before its first
/// round.
const CATCH_UP_POLL: Duration = Duration::from_millis(100);

/// Whether the logs' existing content is read. Before that, counters hold part of a backlog
/// that a round's timestamp would date to now, so no round is taken.
fn caught_up(sources: &Sources) -> bool {
    sources
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .caught_up
}

/// Renders, reads and queues one round. `staleness` holds the previous round's series; the
/// one returned, this round's.
async fn collect_round(sources: &Sources, mut staleness: Staleness) -> Staleness {
    let sources_now = sources.clone();
    // Off the async worker: reading the samples holds the state lock for milliseconds per
    // 1,000 series.
    let collected = tokio::task::spawn_blocking(move || {
        let batches = round(&sources_now, &mut staleness);
        (batches, staleness)
    })
    .await;
    let Ok((batches, staleness)) = collected else {
        tracing::error!("remote write: collecting a round panicked; the next round tries again");
        return Staleness::default();
    };
    let round_samples = batches.iter().map(|b| b.samples).sum();
    queue_round(&sources.queues, &batches, round_samples).await;
    staleness
}

/// Queues a round's batches on every receiver's queue, sized for it first. Yields after each
/// batch, so that a sender takes the first requests while the rest are queued.
async fn queue_round(queues: &[Arc<Queue>], batches: &[Batch], round_samples: usize) {
    for queue in queues {
        queue.fit_round(round_samples);
    }
    for batch in batches {
        for queue in queues {
            let dropped = queue.push(batch.clone());
            if dropped > 0 {
                queue.note_full(dropped);
            }
        }
        tokio::task::yield_now().await;
    }
}

/// One round's requests: the series a scrape would see now, stamped with the wall clock (as
/// Prometheus stamps a scrape with its own), external labels added, and a stale marker for
/// each series the previous round had and this one has not.
fn round(sources: &Sources, staleness: &mut Staleness) -> Vec<Batch> {
    let timestamp_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let external = (sources.external_labels)();
    let mut sink = round::RoundSink::new(&external, timestamp_ms);
    {
        // As a scrape (which only reads: the reader's side judges): a poisoned lock still
        // holds the best numbers there are.
        let state = sources.state.lock().unwrap_or_else(PoisonError::into_inner);
        samples::all_samples(&state, &sources.sources, &mut sink);
    }
    let mut round = sink.finish();
    staleness.mark(&mut round.series, timestamp_ms);
    batches(round)
}

/// Cuts a round into requests of at most [`MAX_SAMPLES_PER_REQUEST`]; the first carries the
/// metadata.
fn batches(round: round::Round) -> Vec<Batch> {
    let mut metadata = round.metadata;
    let mut batches = Vec::new();
    let mut series = round.series.into_iter().peekable();
    while series.peek().is_some() {
        let timeseries: Vec<_> = series.by_ref().take(MAX_SAMPLES_PER_REQUEST).collect();
        let request = prompb::WriteRequest {
            metadata: std::mem::take(&mut metadata),
            timeseries,
        };
        batches.push(Batch {
            samples: request.timeseries.len(),
            body: Bytes::from(prompb::encode(&request)),
        });
    }
    batches
}

/// Sends `queue`'s batches, oldest first, until it is `closed` and empty, or [`FINAL_FLUSH`]
/// after it closed; what is left then is counted as dropped.
async fn send(
    queue: Arc<Queue>,
    mut transport: impl Transport,
    mut closing: watch::Receiver<bool>,
) {
    let mut deadline = closing.clone();
    let flush_deadline = async move {
        stopped(&mut deadline).await;
        tokio::time::sleep(FINAL_FLUSH).await;
    };
    tokio::select! {
        () = send_until_closed(&queue, &mut transport, &mut closing) => {}
        () = flush_deadline => {}
    }
    let left = queue.abandon();
    if left > 0 {
        tracing::warn!(url = %queue.counters.url, samples = left, "remote write: stopping with samples not delivered (counted as dropped)");
    }
}

async fn send_until_closed(
    queue: &Queue,
    transport: &mut impl Transport,
    closing: &mut watch::Receiver<bool>,
) {
    let mut pace = Pace::default();
    loop {
        if let Some(batch) = queue.take() {
            deliver(queue, transport, &batch, &mut pace).await;
            continue;
        }
        // `closed` is only sent after the last round was queued, so empty now means done.
        // (A collector gone without saying so, e.g. panicked, counts as closed.)
        if *closing.borrow() || closing.has_changed().is_err() {
            return;
        }
        tokio::select! {
            () = queue.arrival() => {}
            () = stopped(closing) => {}
        }
    }
}

/// Completes once `flag` is true, or its sender is gone (which means the same: no more rounds).
async fn stopped(flag: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, not held across the caller's awaits.
    let _ = flag.wait_for(|set| *set).await.map(|_| ());
}

/// How one receiver's requests are paced: the backoff between retries, the cap on requests a
/// second, and what was said of its trouble.
#[derive(Debug, Default)]
struct Pace {
    backoff: Backoff,
    requests: RequestPacer,
    trouble: Trouble,
}

/// Sends one batch until the receiver takes or refuses it.
async fn deliver(queue: &Queue, transport: &mut impl Transport, batch: &Batch, pace: &mut Pace) {
    let Pace {
        backoff,
        requests,
        trouble,
    } = pace;
    loop {
        requests.ready().await;
        match transport.send(batch.body.clone()).await {
            Outcome::Sent => {
                queue.settle(batch, Fate::Sent);
                backoff.reset();
                trouble.resolved(&queue.counters.url);
                return;
            }
            Outcome::Refused { why } => {
                queue.settle(batch, Fate::Dropped);
                backoff.reset();
                trouble.refused(&queue.counters.url, batch.samples, &why);
                return;
            }
            Outcome::Retry { why, after } => {
                queue.failed(batch);
                let wait = backoff.wait(after);
                trouble.failed(&queue.counters.url, &why, wait);
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// Logs a receiver's trouble once when it starts and once when it ends, not at every retry.
#[derive(Debug, Default)]
struct Trouble {
    since_last_success: bool,
}

impl Trouble {
    fn failed(&mut self, url: &str, why: &str, wait: Duration) {
        if std::mem::replace(&mut self.since_last_success, true) {
            tracing::debug!(url, ?wait, "remote write failed again: {why}");
        } else {
            tracing::warn!(url, "remote write failed, retrying with backoff (further failures at debug level): {why}");
        }
    }

    fn refused(&mut self, url: &str, samples: usize, why: &str) {
        if std::mem::replace(&mut self.since_last_success, true) {
            tracing::debug!(url, samples, "remote write refused again: {why}");
        } else {
            tracing::warn!(url, samples, "remote write refused by the receiver, samples dropped (not retried; further refusals at debug level): {why}");
        }
    }

    fn resolved(&mut self, url: &str) {
        if std::mem::take(&mut self.since_last_success) {
            tracing::info!(url, "remote write works again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use queue::Counters;
    use std::collections::VecDeque;

    /// Answers each send with the next scripted outcome, then with Sent; records the bodies.
    struct Scripted {
        outcomes: VecDeque<Outcome>,
        bodies: Arc<Mutex<Vec<Bytes>>>,
    }

    impl Transport for Scripted {
        fn send(&mut self, body: Bytes) -> impl std::future::Future<Output = Outcome> + Send {
            self.bodies.lock().unwrap().push(body);
            let outcome = self.outcomes.pop_front().unwrap_or(Outcome::Sent);
            async move { outcome }
        }
    }

    fn scripted(outcomes: Vec<Outcome>) -> (Scripted, Arc<Mutex<Vec<Bytes>>>) {
        let bodies = Arc::default();
        let transport = Scripted {
            outcomes: outcomes.into(),
            bodies: Arc::clone(&bodies),
        };
        (transport, bodies)
    }

    fn batch(tag: u8, samples: usize) -> Batch {
        Batch {
            body: Bytes::from(vec![tag]),
            samples,
        }
    }

    fn retry() -> Outcome {
        Outcome::of_status(503, "service unavailable", None)
    }

    /// Sends what `queue` holds with `transport`, as after a stop: until empty or the flush
    /// deadline. Time is paused, so backoff sleeps take no real time.
    async fn drain(queue: &Arc<Queue>, transport: Scripted) {
        let (closed, closing) = watch::channel(true);
        send(Arc::clone(queue), transport, closing).await;
        drop(closed);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_error_is_retried_until_the_receiver_takes_the_batch() {
        let queue = Arc::new(Queue::new("http://r/api/v1/write", 100));
        queue.push(batch(1, 10));
        queue.push(batch(2, 5));
        let (transport, bodies) = scripted(vec![retry(), retry()]);
        drain(&queue, transport).await;
        let sent: Vec<u8> = bodies.lock().unwrap().iter().map(|b| b[0]).collect();
        assert_eq!(sent, [1, 1, 1, 2], "retried in order, the next one after");
        let counters = &queue.counters;
        assert_eq!(Counters::get(&counters.sent), 15);
        assert_eq!(Counters::get(&counters.failed), 20);
        assert_eq!(Counters::get(&counters.dropped), 0);
        assert_eq!(Counters::get(&counters.queued), 0);
    }

    /// A receiver answering `503` with `Retry-After: 0` got 17,929 requests in 20 s: the
    /// backoff now holds, and no receiver gets more than the cap a second.
    #[tokio::test(start_paused = true)]
    async fn retry_after_zero_is_retried_with_backoff_not_in_a_tight_loop() {
        let queue = Arc::new(Queue::new("http://r/api/v1/write", 100));
        queue.push(batch(1, 10));
        let eager = Outcome::of_status(503, "busy", Some(Duration::ZERO));
        let (transport, bodies) = scripted(vec![eager; 10_000]);
        let started = tokio::time::Instant::now();
        let (_closed, closing) = watch::channel(false);
        let sender = tokio::spawn(send(Arc::clone(&queue), transport, closing));
        tokio::time::sleep(Duration::from_secs(20)).await;
        sender.abort();
        let requests = bodies.lock().unwrap().len();
        // 30 ms doubling to 5 s: 30+60+...+3840 is 7.65 s for 9 retries, then one every 5 s.
        assert!(
            requests <= 13,
            "{requests} requests in {:?}",
            started.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_receiver_gets_at_most_the_capped_requests_a_second() {
        let queue = Arc::new(Queue::new("http://r/api/v1/write", 100_000));
        for n in 0..500 {
            queue.push(batch((n % 250) as u8, 1));
        }
        let (transport, bodies) = scripted(Vec::new());
        let (_closed, closing) = watch::channel(false);
        let sender = tokio::spawn(send(Arc::clone(&queue), transport, closing));
        tokio::time::sleep(Duration::from_secs(1)).await;
        sender.abort();
        let requests = bodies.lock().unwrap().len() as u32;
        assert!(
            requests <= queue::MAX_REQUESTS_PER_SECOND + 1,
            "{requests} requests in a second"
        );
    }

    /// 5,000 logs made rounds of about 107k samples, over the 100k queue: 72,000 samples were
    /// dropped in 20 s with a healthy receiver. The queue is sized from the round.
    #[tokio::test(start_paused = true)]
    async fn a_round_bigger_than_the_default_queue_is_queued_whole() {
        let queue = Arc::new(Queue::new(
            "http://r/api/v1/write",
            queue::MAX_QUEUED_SAMPLES,
        ));
        let round: Vec<Batch> = (0..54).map(|n| batch(n as u8, 2000)).collect();
        let samples = round.iter().map(|b| b.samples).sum();
        for _ in 0..3 {
            queue_round(std::slice::from_ref(&queue), &round, samples).await;
        }
        assert_eq!(Counters::get(&queue.counters.dropped), 0);
        assert_eq!(Counters::get(&queue.counters.queued), 3 * 108_000);
        assert_eq!(queue.max_samples(), 4 * 108_000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_400_is_dropped_and_counted_and_never_sent_again() {
        let queue = Arc::new(Queue::new("http://r/api/v1/write", 100));
        queue.push(batch(1, 10));
        queue.push(batch(2, 5));
        let refused = Outcome::of_status(400, "out of order sample", None);
        let (transport, bodies) = scripted(vec![refused]);
        drain(&queue, transport).await;
        let sent: Vec<u8> = bodies.lock().unwrap().iter().map(|b| b[0]).collect();
        assert_eq!(sent, [1, 2]);
        assert_eq!(Counters::get(&queue.counters.dropped), 10);
        assert_eq!(Counters::get(&queue.counters.sent), 5);
        assert_eq!(Counters::get(&queue.counters.failed), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_receiver_down_past_the_final_flush_leaves_its_samples_counted_as_dropped() {
        let queue = Arc::new(Queue::new("http://r/api/v1/write", 100));
        queue.push(batch(1, 10));
        queue.push(batch(2, 5));
        let (transport, _) = scripted(vec![retry(); 1000]);
        drain(&queue, transport).await;
        assert_eq!(Counters::get(&queue.counters.dropped), 15);
        assert_eq!(Counters::get(&queue.counters.sent), 0);
        assert_eq!(Counters::get(&queue.counters.queued), 0);
    }

    #[test]
    fn a_big_round_is_cut_into_requests_and_the_first_carries_the_metadata() {
        use crate::samples::{LabelSet, SampleSink};
        let mut sink = round::RoundSink::new(&[], 7);
        sink.family(&crate::catalog::agent::OFFSET);
        for i in 0..4500 {
            let labels = LabelSet::new([("n", i.to_string().as_str())]);
            sink.sample("llmtail_x", "", None, &labels, f64::from(i));
        }
        let batches = batches(sink.finish());
        let sizes: Vec<usize> = batches.iter().map(|b| b.samples).collect();
        assert_eq!(sizes, [2000, 2000, 500]);
        let requests: Vec<_> = batches
            .iter()
            .map(|b| prompb::decode(&b.body).unwrap())
            .collect();
        assert_eq!(requests[0].metadata.len(), 1);
        assert!(requests[1].metadata.is_empty());
        assert_eq!(requests[2].timeseries[499].samples[0].value, 4499.0);
    }
}
