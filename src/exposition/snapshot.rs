//! Scrapes that arrive together share one render.
//!
//! Rendering holds the state lock and costs about 2.5 ms per 6,000 series; 200 Prometheus
//! servers scraping at once each waited for all the renders queued before theirs (p50 453 ms,
//! p99 848 ms, BENCHMARKS.md). Here a scrape waits for the render in progress, then takes the
//! newest body if that render started after the scrape arrived, and renders only if not. So
//! no scrape is answered with data older than its own arrival, and a crowd arriving together
//! costs at most two renders, however many they are.

use std::time::Instant;

use axum::body::Bytes;
use tokio::sync::Mutex;

use super::render::Format;

/// The newest body of each format.
#[derive(Default)]
pub struct Snapshots {
    text: Mutex<Option<Snapshot>>,
    open_metrics: Mutex<Option<Snapshot>>,
}

struct Snapshot {
    /// When its render started: the state it shows is at least this new.
    started: Instant,
    body: Bytes,
}

impl Snapshots {
    /// A body in `format` rendered after now, by `render` or by a concurrent scrape's.
    pub async fn get(
        &self,
        format: Format,
        render: impl FnOnce() -> String + Send + 'static,
    ) -> Result<Bytes, tokio::task::JoinError> {
        let arrived = Instant::now();
        let slot = match format {
            Format::Text004 => &self.text,
            Format::OpenMetrics => &self.open_metrics,
        };
        // Fair (first come, first served): a scrape waits behind at most the render in
        // progress and one more.
        let mut newest = slot.lock().await;
        if let Some(snapshot) = newest.as_ref().filter(|s| s.started >= arrived) {
            return Ok(snapshot.body.clone());
        }
        let started = Instant::now();
        // Off the async workers: a big exposition must not stall other requests.
        let body = Bytes::from(tokio::task::spawn_blocking(render).await?);
        *newest = Some(Snapshot {
            started,
            body: body.clone(),
        });
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn counting(renders: &Arc<AtomicUsize>) -> impl FnOnce() -> String + Send + 'static {
        let renders = Arc::clone(renders);
        move || format!("render {}", renders.fetch_add(1, Ordering::SeqCst) + 1)
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
            move || {
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
