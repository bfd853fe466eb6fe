//! Scrapes that arrive together share one render.
//!
//! Rendering holds the state lock and costs about 2.5 ms per 6,000 series; 200 Prometheus
//! servers scraping at once each waited for all the renders queued before theirs (p50 453 ms,
//! p99 848 ms, BENCHMARKS.md). Here a scrape waits for the render in progress, then takes the
//! newest body if that render started after the scrape arrived, and renders only if not. So
//! no scrape is answered with data older than its own arrival, and a crowd arriving together
//! costs at most two renders, however many they are.
//!
//! A body is kept only while a scrape waits for it: one that arrives later never takes it, and
//! with 1,000 followed logs a body is 5 MB held between scrapes for nothing. What is kept is its
//! size, so the next render writes into room made once instead of doubling a buffer from 64 KB
//! (eight copies, and freed buffers the allocator keeps).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use axum::body::Bytes;
use tokio::sync::Mutex;

use super::render::Format;

/// The newest body of each format.
#[derive(Default)]
pub struct Snapshots {
    text: Slot,
    open_metrics: Slot,
}

/// One format's newest render, and who waits for it.
#[derive(Default)]
struct Slot {
    newest: Mutex<Newest>,
    /// Scrapes that arrived and wait for the lock: while there are some, the body is kept.
    waiting: AtomicUsize,
}

#[derive(Default)]
struct Newest {
    /// The last body, while a scrape that may take it waits.
    snapshot: Option<Snapshot>,
    /// The size of the last body: room for the next.
    last_len: usize,
}

struct Snapshot {
    /// When its render started: the state it shows is at least this new.
    started: Instant,
    body: Bytes,
}

/// A scrape counted as waiting until it holds the lock (or gives up: its client went away).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn start(count: &'a AtomicUsize) -> Waiting<'a> {
        count.fetch_add(1, Ordering::SeqCst);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Slot {
    fn anyone_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) > 0
    }
}

impl Snapshots {
    /// A body in `format` rendered after now, by `render` or by a concurrent scrape's.
    /// `render` is given the size of the last body, the room to make for the next.
    pub async fn get(
        &self,
        format: Format,
        render: impl FnOnce(usize) -> String + Send + 'static,
    ) -> Result<Bytes, tokio::task::JoinError> {
        let slot = match format {
            Format::Text004 => &self.text,
            Format::OpenMetrics => &self.open_metrics,
        };
        // Counted before the clock is read: a render that started after this scrape arrived
        // sees it waiting, and keeps its body for it.
        let waiting = Waiting::start(&slot.waiting);
        let arrived = Instant::now();
        // Fair (first come, first served): a scrape waits behind at most the render in
        // progress and one more.
        let mut newest = slot.newest.lock().await;
        drop(waiting);
        if let Some(snapshot) = &newest.snapshot {
            if snapshot.started >= arrived {
                let body = snapshot.body.clone();
                if !slot.anyone_waiting() {
                    newest.snapshot = None;
                }
                return Ok(body);
            }
        }
        newest.snapshot = None;
        let started = Instant::now();
        let room = newest.last_len;
        // Off the async workers: a big exposition must not stall other requests.
        let body = Bytes::from(tokio::task::spawn_blocking(move || render(room)).await?);
        newest.last_len = body.len();
        if slot.anyone_waiting() {
            newest.snapshot = Some(Snapshot {
                started,
                body: body.clone(),
            });
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn counting(renders: &Arc<AtomicUsize>) -> impl FnOnce(usize) -> String + Send + 'static {
        let renders = Arc::clone(renders);
        move |_| format!("render {}", renders.fetch_add(1, Ordering::SeqCst) + 1)
    }

    #[tokio::test]
    async fn a_scrape_after_a_render_renders_again() {
        let (snapshots, renders) = (Snapshots::default(), Arc::new(AtomicUsize::new(0)));
        let first = snapshots
            .get(Format::Text004, counting(&renders))
            .await
            .unwrap();
        let second = snapshots
            .get(Format::Text004, counting(&renders))
            .await
            .unwrap();
        assert_eq!(
            (&first[..], &second[..]),
            (&b"render 1"[..], &b"render 2"[..])
        );
    }

    #[tokio::test]
    async fn scrapes_that_arrive_during_a_render_share_the_next_one() {
        let snapshots = Arc::new(Snapshots::default());
        let renders = Arc::new(AtomicUsize::new(0));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let slow = {
            let renders = Arc::clone(&renders);
            move |_| {
                held.recv().unwrap();
                format!("render {}", renders.fetch_add(1, Ordering::SeqCst) + 1)
            }
        };
        let first = tokio::spawn({
            let snapshots = Arc::clone(&snapshots);
            async move { snapshots.get(Format::Text004, slow).await.unwrap() }
        });
        tokio::task::yield_now().await;
        let crowd: Vec<_> = (0..50)
            .map(|_| {
                let (snapshots, renders) = (Arc::clone(&snapshots), Arc::clone(&renders));
                tokio::spawn(async move {
                    let render = counting(&renders);
                    snapshots.get(Format::Text004, render).await.unwrap()
                })
            })
            .collect();
        // Every scrape of the crowd is waiting behind the first render.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        release.send(()).unwrap();
        assert_eq!(&first.await.unwrap()[..], b"render 1");
        for scrape in crowd {
            assert_eq!(&scrape.await.unwrap()[..], b"render 2");
        }
        assert_eq!(renders.load(Ordering::SeqCst), 2);
    }

    /// With 1,000 followed logs a body is 5 MB, and it was kept from one scrape to the next
    /// though no later scrape may take it.
    #[tokio::test]
    async fn a_body_no_scrape_waits_for_is_not_kept() {
        let (snapshots, renders) = (Snapshots::default(), Arc::new(AtomicUsize::new(0)));
        snapshots
            .get(Format::Text004, counting(&renders))
            .await
            .unwrap();
        let newest = snapshots.text.newest.lock().await;
        assert!(newest.snapshot.is_none(), "the body is still held");
        assert_eq!(newest.last_len, "render 1".len());
    }

    #[tokio::test]
    async fn a_render_is_given_the_size_of_the_last_body() {
        let snapshots = Snapshots::default();
        let room = |seen: Arc<AtomicUsize>| {
            move |last_len| {
                seen.store(last_len, Ordering::SeqCst);
                "x".repeat(1000)
            }
        };
        let seen = Arc::new(AtomicUsize::new(usize::MAX));
        snapshots
            .get(Format::Text004, room(Arc::clone(&seen)))
            .await
            .unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 0, "nothing rendered before");
        snapshots
            .get(Format::Text004, room(Arc::clone(&seen)))
            .await
            .unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 1000);
    }

    #[tokio::test]
    async fn each_format_has_its_own_body() {
        let (snapshots, renders) = (Snapshots::default(), Arc::new(AtomicUsize::new(0)));
        snapshots
            .get(Format::Text004, counting(&renders))
            .await
            .unwrap();
        let open = snapshots
            .get(Format::OpenMetrics, counting(&renders))
            .await
            .unwrap();
        assert_eq!(&open[..], b"render 2");
    }
}
