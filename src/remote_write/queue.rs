//! One receiver's queue: the pushes waiting to be sent, bounded in samples, the oldest dropped
//! first when full; what happened to every sample, counted; and the retry policy.
//!
//! A receiver that is down must never hold up reading logs or serving scrapes, and must not
//! make the agent grow without bound: the queue holds at most `max_samples` samples (a push in
//! flight is held by the sender, outside the bound), and what it cannot hold is counted in
//! `llmtail_remote_write_samples_dropped_total`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::body::Bytes;

/// The most samples a queue holds at first: an hour of a host exporting about 400 series (8
/// vLLM engines) at the 15 s default, about as old as Prometheus still accepts (its head block).
pub const MAX_QUEUED_SAMPLES: usize = 100_000;

/// Rounds a queue holds at least, however many series a round has: a round bigger than the
/// queue would otherwise drop part of itself with a healthy receiver, before the sender could
/// take its first request.
pub const ROUNDS_QUEUED: usize = 4;

/// The most samples a queue grows to (about 60 MB of compressed requests, at the 24 to 33
/// bytes a sample measured): past it, a round is
/// cut as before and what does not fit is counted as dropped.
pub const MAX_QUEUED_SAMPLES_CEILING: usize = 2_000_000;

/// One request body, compressed, and how many samples it carries.
#[derive(Debug, Clone)]
pub struct Batch {
    pub body: Bytes,
    pub samples: usize,
}

/// What happened to one receiver's samples, for `/metrics` and the push itself.
#[derive(Debug, Default)]
pub struct Counters {
    /// The receiver's URL, as the `url` label.
    pub url: String,
    /// Samples in requests the receiver accepted (2xx).
    pub sent: AtomicU64,
    /// Samples in requests that failed and were retried (network error, 5xx, 429): each
    /// failed attempt counts its samples.
    pub failed: AtomicU64,
    /// Samples that will never arrive: refused with another 4xx, pushed out of a full queue,
    /// or still queued when the agent stopped.
    pub dropped: AtomicU64,
    /// Samples waiting, the one request in flight included.
    pub queued: AtomicU64,
}

impl Counters {
    pub fn new(url: &str) -> Counters {
        Counters {
            url: url.to_string(),
            ..Counters::default()
        }
    }

    fn add(counter: &AtomicU64, samples: usize) {
        counter.fetch_add(samples as u64, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// The pushes waiting for one receiver.
#[derive(Debug)]
pub struct Queue {
    batches: Mutex<VecDeque<Batch>>,
    /// Grows with the rounds ([`Queue::fit_round`]), never shrinks.
    max_samples: std::sync::atomic::AtomicUsize,
    /// Wakes the sender when a batch arrives.
    arrived: tokio::sync::Notify,
    /// Whether the queue has been full since the last batch was sent (for the log).
    full: std::sync::atomic::AtomicBool,
    pub counters: Counters,
}

impl Queue {
    pub fn new(url: &str, max_samples: usize) -> Queue {
        Queue {
            batches: Mutex::default(),
            max_samples: std::sync::atomic::AtomicUsize::new(max_samples),
            arrived: tokio::sync::Notify::new(),
            full: std::sync::atomic::AtomicBool::new(false),
            counters: Counters::new(url),
        }
    }

    /// Queues `batch`, dropping the oldest batches (then `batch` itself, if it alone is too
    /// big) to stay within the bound. Returns the samples dropped.
    pub fn push(&self, batch: Batch) -> usize {
        let max_samples = self.max_samples();
        let mut batches = self.batches.lock().unwrap_or_else(PoisonError::into_inner);
        let mut held: usize = batches.iter().map(|b| b.samples).sum();
        let mut dropped = 0;
        while held + batch.samples > max_samples {
            let Some(oldest) = batches.pop_front() else {
                break;
            };
            held -= oldest.samples;
            dropped += oldest.samples;
        }
        let added = batch.samples;
        if held + batch.samples > max_samples {
            dropped += batch.samples;
        } else {
            batches.push_back(batch);
        }
        drop(batches);
        Counters::add(&self.counters.dropped, dropped);
        Counters::add(&self.counters.queued, added);
        self.counters
            .queued
            .fetch_sub(dropped as u64, Ordering::Relaxed);
        self.arrived.notify_one();
        dropped
    }

    /// The most samples the queue holds now.
    pub fn max_samples(&self) -> usize {
        self.max_samples.load(Ordering::Relaxed)
    }

    /// Grows the queue to hold [`ROUNDS_QUEUED`] rounds of `round_samples` (up to
    /// [`MAX_QUEUED_SAMPLES_CEILING`]), and says so: the series count sets what a queue must
    /// hold, not a constant.
    pub fn fit_round(&self, round_samples: usize) {
        let wanted = round_samples
            .saturating_mul(ROUNDS_QUEUED)
            .min(MAX_QUEUED_SAMPLES_CEILING);
        let before = self.max_samples.fetch_max(wanted, Ordering::Relaxed);
        if wanted > before {
            tracing::info!(
                url = %self.counters.url,
                round_samples,
                max_samples = wanted,
                "remote write queue sized to {ROUNDS_QUEUED} rounds of this many series"
            );
        }
    }

    /// Takes the oldest batch, to send it: it stays counted as queued until [`Queue::settle`].
    pub fn take(&self) -> Option<Batch> {
        self.batches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }

    /// Waits until a batch may have arrived.
    pub async fn arrival(&self) {
        self.arrived.notified().await;
    }

    /// Counts a taken batch's fate.
    pub fn settle(&self, batch: &Batch, fate: Fate) {
        let counter = match fate {
            Fate::Sent => {
                self.full.store(false, Ordering::Relaxed);
                &self.counters.sent
            }
            Fate::Dropped => &self.counters.dropped,
        };
        Counters::add(counter, batch.samples);
        self.counters
            .queued
            .fetch_sub(batch.samples as u64, Ordering::Relaxed);
    }

    /// Counts a failed attempt at sending `batch`, which is retried.
    pub fn failed(&self, batch: &Batch) {
        Counters::add(&self.counters.failed, batch.samples);
    }

    /// Gives up on every sample still queued or in flight (the agent is stopping): they are
    /// counted as dropped. Returns how many.
    pub fn abandon(&self) -> usize {
        self.batches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let left = self.counters.queued.swap(0, Ordering::Relaxed);
        Counters::add(&self.counters.dropped, left as usize);
        left as usize
    }

    /// Logs that the queue is full, once until a batch is sent again.
    pub fn note_full(&self, dropped: usize) {
        if !self.full.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                url = %self.counters.url,
                dropped,
                max_samples = self.max_samples(),
                "remote write queue full: dropping the oldest samples (counted in llmtail_remote_write_samples_dropped_total)"
            );
        }
    }
}

/// Where a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Sent,
    Dropped,
}

/// What to do after an attempt, from the receiver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sent,
    /// A network error, a 5xx or a 429: the receiver may take it later. `after` is the
    /// receiver's Retry-After, if it gave one.
    Retry {
        why: String,
        after: Option<Duration>,
    },
    /// Another 4xx: the receiver will never take it (a malformed or out-of-order sample,
    /// a wrong password), so sending it again would only block the samples behind it.
    Refused {
        why: String,
    },
}

impl Outcome {
    /// The outcome of an HTTP answer with `status`, as the remote-write spec says: retry on
    /// 5xx and 429, never on other 4xx.
    pub fn of_status(status: u16, body: &str, retry_after: Option<Duration>) -> Outcome {
        let why = || format!("HTTP {status}: {}", body.trim());
        match status {
            200..=299 => Outcome::Sent,
            429 | 500..=599 => Outcome::Retry {
                why: why(),
                after: retry_after,
            },
            _ => Outcome::Refused { why: why() },
        }
    }
}

/// Exponential backoff between retries of one batch, capped, as Prometheus' queue manager
/// does (`min_backoff` 30 ms, `max_backoff` 5 s): a receiver back from an outage gets the
/// backlog within 5 s, and one that stays down costs a connection attempt every 5 s.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
}

pub const MIN_BACKOFF: Duration = Duration::from_millis(30);
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The longest Retry-After honoured: a receiver asking for more gets asked again after this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { next: MIN_BACKOFF }
    }
}

impl Backoff {
    /// How long to wait before the next attempt: the backoff, which then doubles up to its cap,
    /// or the receiver's Retry-After when that is longer (up to [`MAX_RETRY_AFTER`]). A
    /// Retry-After is a floor, never a way round the backoff: `Retry-After: 0` from a receiver
    /// in trouble would otherwise make the agent retry with no pause at all.
    pub fn wait(&mut self, retry_after: Option<Duration>) -> Duration {
        let backoff = self.next;
        self.next = (self.next * 2).min(MAX_BACKOFF);
        match retry_after {
            Some(after) => after.min(MAX_RETRY_AFTER).max(backoff),
            None => backoff,
        }
    }

    /// After a request that got an answer: the next failure starts from the minimum again.
    pub fn reset(&mut self) {
        self.next = MIN_BACKOFF;
    }
}

/// The most requests one receiver gets in a second, whatever it answers: a receiver that fails
/// fast (or says `Retry-After: 0`) must not turn the agent into a flood. 100 requests of 2,000
/// samples a second is far more than any round needs.
pub const MAX_REQUESTS_PER_SECOND: u32 = 100;

/// Spaces one receiver's requests at least `1 / MAX_REQUESTS_PER_SECOND` apart.
#[derive(Debug, Default)]
pub struct RequestPacer {
    last: Option<tokio::time::Instant>,
}

impl RequestPacer {
    /// Waits until the next request may go, and counts it as gone.
    pub async fn ready(&mut self) {
        let spacing = Duration::from_secs(1) / MAX_REQUESTS_PER_SECOND;
        if let Some(last) = self.last {
            tokio::time::sleep_until(last + spacing).await;
        }
        self.last = Some(tokio::time::Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(samples: usize) -> Batch {
        Batch {
            body: Bytes::from(vec![0; samples]),
            samples,
        }
    }

    #[test]
    fn a_full_queue_drops_its_oldest_batches_and_counts_their_samples() {
        let queue = Queue::new("http://receiver/api/v1/write", 10);
        assert_eq!(queue.push(batch(4)), 0);
        assert_eq!(queue.push(batch(5)), 0);
        assert_eq!(queue.push(batch(3)), 4, "the oldest (4) makes room for 3");
        assert_eq!(Counters::get(&queue.counters.dropped), 4);
        assert_eq!(Counters::get(&queue.counters.queued), 8);
        assert_eq!(queue.take().unwrap().samples, 5, "oldest first");
    }

    #[test]
    fn a_batch_bigger_than_the_whole_queue_is_dropped_itself() {
        let queue = Queue::new("u", 10);
        queue.push(batch(2));
        assert_eq!(queue.push(batch(11)), 13);
        assert!(queue.take().is_none());
        assert_eq!(Counters::get(&queue.counters.queued), 0);
    }

    #[test]
    fn settled_and_abandoned_batches_leave_the_queued_count() {
        let queue = Queue::new("u", 100);
        queue.push(batch(7));
        queue.push(batch(9));
        let taken = queue.take().unwrap();
        queue.failed(&taken);
        queue.settle(&taken, Fate::Sent);
        let in_flight = queue.take().unwrap();
        queue.failed(&in_flight);
        assert_eq!(queue.abandon(), 9, "the batch in flight is counted too");
        let counters = &queue.counters;
        assert_eq!(Counters::get(&counters.sent), 7);
        assert_eq!(Counters::get(&counters.failed), 16);
        assert_eq!(Counters::get(&counters.dropped), 9);
        assert_eq!(Counters::get(&counters.queued), 0);
    }

    #[test]
    fn server_errors_and_429_are_retried_other_4xx_refused() {
        assert_eq!(Outcome::of_status(204, "", None), Outcome::Sent);
        for status in [500, 502, 503, 429] {
            assert!(
                matches!(Outcome::of_status(status, "", None), Outcome::Retry { .. }),
                "{status}"
            );
        }
        for status in [400, 401, 403, 404, 413] {
            assert!(
                matches!(
                    Outcome::of_status(status, "out of order sample", None),
                    Outcome::Refused { .. }
                ),
                "{status}"
            );
        }
    }

    #[test]
    fn backoff_doubles_to_its_cap_honours_retry_after_and_resets() {
        let mut backoff = Backoff::default();
        let waits: Vec<u128> = (0..10).map(|_| backoff.wait(None).as_millis()).collect();
        assert_eq!(waits, [30, 60, 120, 240, 480, 960, 1920, 3840, 5000, 5000]);
        assert_eq!(
            backoff.wait(Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            backoff.wait(Some(Duration::from_secs(3600))),
            MAX_RETRY_AFTER
        );
        backoff.reset();
        assert_eq!(backoff.wait(None), MIN_BACKOFF);
    }

    #[test]
    fn retry_after_zero_does_not_skip_the_backoff() {
        let mut backoff = Backoff::default();
        let waits: Vec<u128> = (0..6)
            .map(|_| backoff.wait(Some(Duration::ZERO)).as_millis())
            .collect();
        assert_eq!(waits, [30, 60, 120, 240, 480, 960]);
    }
}
