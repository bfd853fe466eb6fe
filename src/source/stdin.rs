//! Standard input (`-`): read until EOF and split into lines like a file.
//!
//! A blocking read of a pipe cannot be woken, so when following, stdin is read on its own
//! thread and handed to the reader thread in chunks through a small bounded channel (a slow
//! sink makes the thread wait instead of buffering the pipe in memory). One-shot reading
//! reads it on the reader thread directly.

use std::io::{ErrorKind, Read};
use std::sync::mpsc::{sync_channel, Receiver, Sender, TryRecvError};

use super::splitter::LineSplitter;
use super::{LogId, Sink, SkipReason, TailEvent};

/// Bytes per chunk read from stdin.
const CHUNK_BYTES: usize = 64 * 1024;

/// What the stdin thread hands over.
enum Chunk {
    Data(Vec<u8>),
    End,
}

/// The stdin log: its id, splitter and offset.
pub(crate) struct StdinLog {
    id: LogId,
    splitter: LineSplitter,
    offset: u64,
    /// Chunks from the stdin thread (following only); None once stdin ended.
    chunks: Option<Receiver<Chunk>>,
    closed: bool,
}

impl StdinLog {
    pub fn new(id: LogId, max_line_bytes: usize, sink: &mut dyn Sink) -> StdinLog {
        sink.event(id, TailEvent::Opened(None));
        StdinLog {
            id,
            splitter: LineSplitter::new(max_line_bytes),
            offset: 0,
            chunks: None,
            closed: false,
        }
    }

    /// Starts the thread that reads `input`; each chunk sends `()` on `wake`.
    pub fn spawn_reader(&mut self, mut input: Box<dyn Read + Send>, wake: Sender<()>) {
        let (tx, rx) = sync_channel(2);
        let spawned = std::thread::Builder::new()
            .name("llmtail-stdin".into())
            .spawn(move || loop {
                let mut chunk = vec![0; CHUNK_BYTES];
                let end = match input.read(&mut chunk) {
                    Ok(0) => true,
                    Ok(n) => {
                        chunk.truncate(n);
                        false
                    }
                    Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                    Err(error) => {
                        tracing::warn!(%error, "cannot read standard input; treating it as ended");
                        true
                    }
                };
                let sent = tx.send(if end { Chunk::End } else { Chunk::Data(chunk) });
                let _ = wake.send(());
                if end || sent.is_err() {
                    return;
                }
            });
        match spawned {
            Ok(_) => self.chunks = Some(rx),
            Err(error) => tracing::warn!(%error, "cannot start the standard input thread"),
        }
    }

    /// Handles the chunks the stdin thread has handed over so far.
    pub fn pump(&mut self, sink: &mut dyn Sink) {
        while let Some(chunks) = &self.chunks {
            match chunks.try_recv() {
                Ok(Chunk::Data(data)) => self.feed(&data, sink),
                Ok(Chunk::End) | Err(TryRecvError::Disconnected) => {
                    self.chunks = None;
                    self.end_last_line(sink);
                    self.close(sink);
                }
                Err(TryRecvError::Empty) => return,
            }
        }
    }

    /// Reads `input` to its end on this thread, with the shared buffer.
    pub fn read_all(&mut self, input: &mut dyn Read, buf: &mut [u8], sink: &mut dyn Sink) {
        loop {
            match input.read(buf) {
                Ok(0) => break,
                Ok(n) => self.feed(&buf[..n], sink),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => {
                    tracing::warn!(%error, "cannot read standard input; treating it as ended");
                    break;
                }
            }
        }
        self.end_last_line(sink);
        self.close(sink);
    }

    /// Standard input ended: its last line is complete even without a `\n` (`printf` and
    /// `echo -n` write no newline; unlike a file, nothing more can come).
    fn end_last_line(&mut self, sink: &mut dyn Sink) {
        if self.splitter.pending_len() > 0 {
            self.feed(b"\n", sink);
        }
    }

    fn feed(&mut self, data: &[u8], sink: &mut dyn Sink) {
        self.offset += data.len() as u64;
        let id = self.id;
        let too_long = self.splitter.feed(data, |lines| sink.lines(id, lines));
        for _ in 0..too_long {
            sink.event(id, TailEvent::Skipped(SkipReason::TooLong));
        }
        let complete = self.offset - self.splitter.pending_len() as u64;
        sink.event(id, TailEvent::Offset(complete));
    }

    /// The reader stops before stdin ended: an unterminated last line is dropped.
    pub fn close(&mut self, sink: &mut dyn Sink) {
        if self.closed {
            return;
        }
        self.closed = true;
        if self.splitter.discard_partial() {
            sink.event(self.id, TailEvent::Skipped(SkipReason::TruncatedPartial));
        }
        sink.event(self.id, TailEvent::Closed);
    }
}
