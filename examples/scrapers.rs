//! Many Prometheus servers at once: `--scrapers` threads each GET a URL in a loop for
//! `--seconds`, a new connection per scrape as Prometheus makes after an idle gap, and the
//! latencies of all of them (connect to last byte) are printed as percentiles. Used by
//! `benches/live.sh`; binds nothing, connects to 127.0.0.1 only.
//!
//! cargo run --release --example scrapers -- --port 3913 --scrapers 200 --seconds 10

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} {v}: not a number"))
        })
        .unwrap_or(default)
}

/// One scrape: connect, GET, read to the end. Returns the body's length.
fn scrape(port: u16, path: &str) -> std::io::Result<usize> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut body = Vec::new();
    stream.read_to_end(&mut body)?;
    if !body.starts_with(b"HTTP/1.1 200") {
        return Err(std::io::Error::other("not a 200"));
    }
    Ok(body.len())
}

fn main() {
    let port = u16::try_from(arg("--port", 3913)).expect("a port");
    let scrapers = arg("--scrapers", 200);
    let seconds = arg("--seconds", 10);
    let until = Instant::now() + Duration::from_secs(seconds);
    let threads: Vec<_> = (0..scrapers)
        .map(|_| {
            std::thread::spawn(move || {
                let (mut latencies, mut errors) = (Vec::new(), 0u64);
                while Instant::now() < until {
                    let started = Instant::now();
                    match scrape(port, "/metrics") {
                        Ok(_) => latencies.push(started.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let (mut all, mut errors) = (Vec::new(), 0);
    for thread in threads {
        let (latencies, failed) = thread.join().expect("a scraper thread");
        all.extend(latencies);
        errors += failed;
    }
    all.sort();
    let pct = |p: f64| {
        let at = ((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1));
        all.get(at).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{scrapers} scrapers, {seconds} s: {} scrapes ({:.0}/s), {errors} failed; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        all.len(),
        all.len() as f64 / seconds as f64,
        pct(0.5),
        pct(0.99),
        all.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
    );
}
