//! Where a history larger than its memory budget goes: every series' samples held so far are
//! written to one run file (a temporary file, unlinked from the start, so it goes away with
//! the replay however it ends), series by series in output order; at the end each series is
//! written from its blocks in run 1, run 2, ... and then from memory.
//!
//! A run holds, for each series that had samples, a block: its id, how many samples, the
//! first and last time (so the merge knows without reading whether the blocks follow each
//! other in time), then the samples as (milliseconds, value bits), little-endian. Binary
//! rather than text: a sample's text is six times its 16 bytes.
//!
//! Every run lists its series in output order (families in the order first met, each
//! family's series in the order made): a later run can only add series at the ends of those
//! lists, so each run is a subsequence of the final order, and the merge reads every run
//! once, front to back.
//!
//! A spill every 32 MB makes a run per 32 MB of samples: a 100 GB log would make thousands,
//! and the merge keeps a file and a buffer open for each. So runs are merged as they come,
//! [`FAN_IN`] of a size into one of the next size (as a log-structured merge tree does): a
//! few runs of each size, each sample rewritten once per size, log base 8 of the runs.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};

/// Buffer of each run's writer and readers: the merge keeps one reader per run.
const RUN_BUFFER: usize = 1 << 16;

/// How many runs of one size are merged into one of the next size.
const FAN_IN: usize = 8;

/// One series' block in a run, as its header says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Block {
    pub id: usize,
    pub count: u64,
    pub first: i64,
    pub last: i64,
}

impl Block {
    const BYTES: usize = 32;
}

/// The runs written so far, oldest first: sizes (levels) never grow from one to the next.
#[derive(Default)]
pub(super) struct Runs {
    runs: Vec<Run>,
}

struct Run {
    file: File,
    /// 0 for a run spilled from memory, one more for each merge of [`FAN_IN`] runs.
    level: u32,
}

impl Runs {
    /// Starts a run in a new temporary file.
    pub fn start() -> io::Result<RunWriter> {
        let file = tempfile::tempfile().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create a temporary file in {} to spill the history to: {e}",
                    std::env::temp_dir().display()
                ),
            )
        })?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(RUN_BUFFER, file),
        })
    }

    /// Keeps a complete run spilled from memory, and merges runs while [`FAN_IN`] of one
    /// size are the last ones; `order` is every series id in output order.
    pub fn finish(&mut self, run: RunWriter, order: &[usize]) -> io::Result<()> {
        self.runs.push(Run {
            file: run.into_file()?,
            level: 0,
        });
        while let Some(level) = self.full_level() {
            let merged = self.runs.split_off(self.runs.len() - FAN_IN);
            let file = compact(merged, order)?;
            self.runs.push(Run {
                file,
                level: level + 1,
            });
        }
        Ok(())
    }

    /// The level of the last [`FAN_IN`] runs if they are all of one.
    fn full_level(&self) -> Option<u32> {
        let tail = self.runs.get(self.runs.len().checked_sub(FAN_IN)?..)?;
        let level = tail[0].level;
        tail.iter().all(|r| r.level == level).then_some(level)
    }

    /// Readers of every run from its start, in the order written.
    pub fn into_readers(self) -> io::Result<Vec<RunReader>> {
        readers(self.runs)
    }
}

fn readers(runs: Vec<Run>) -> io::Result<Vec<RunReader>> {
    runs.into_iter()
        .map(|Run { mut file, .. }| {
            file.rewind()?;
            let mut reader = RunReader {
                input: BufReader::with_capacity(RUN_BUFFER, file),
                next: None,
            };
            reader.read_header()?;
            Ok(reader)
        })
        .collect()
}

/// One run with every sample of `runs`, series by series in `order`. Samples of one
/// millisecond are all kept, in the order of their runs: the last one is the one written.
fn compact(runs: Vec<Run>, order: &[usize]) -> io::Result<File> {
    let mut readers = readers(runs)?;
    let mut out = Runs::start()?;
    for &id in order {
        let blocks: Vec<Block> = readers.iter_mut().filter_map(|r| r.block_of(id)).collect();
        let Some(first) = blocks.iter().map(|b| b.first).min() else {
            continue;
        };
        out.header(Block {
            id,
            count: blocks.iter().map(|b| b.count).sum(),
            first,
            last: blocks.iter().map(|b| b.last).max().expect("a block"),
        })?;
        merge(id, &mut readers, std::iter::empty(), |time, value| {
            out.sample(time, value)
        })?;
    }
    out.into_file()
}

pub(super) struct RunWriter {
    out: BufWriter<File>,
}

impl RunWriter {
    /// Writes a block: `block`'s header, then its `count` samples, in time order.
    pub fn block(
        &mut self,
        block: Block,
        samples: impl Iterator<Item = (i64, f64)>,
    ) -> io::Result<()> {
        self.header(block)?;
        for (time, value) in samples {
            self.sample(time, value)?;
        }
        Ok(())
    }

    fn header(&mut self, block: Block) -> io::Result<()> {
        let mut header = [0; Block::BYTES];
        header[..8].copy_from_slice(&(block.id as u64).to_le_bytes());
        header[8..16].copy_from_slice(&block.count.to_le_bytes());
        header[16..24].copy_from_slice(&block.first.to_le_bytes());
        header[24..].copy_from_slice(&block.last.to_le_bytes());
        self.out.write_all(&header)
    }

    #[inline]
    fn sample(&mut self, time: i64, value: f64) -> io::Result<()> {
        let mut sample = [0; 16];
        sample[..8].copy_from_slice(&time.to_le_bytes());
        sample[8..].copy_from_slice(&value.to_bits().to_le_bytes());
        self.out.write_all(&sample)
    }

    fn into_file(self) -> io::Result<File> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// One run read front to back: the header of its next block, then that block's samples.
pub(super) struct RunReader {
    input: BufReader<File>,
    next: Option<Block>,
}

impl RunReader {
    /// The next block if it is series `id`'s (its samples are to be read next), else `None`.
    pub fn block_of(&mut self, id: usize) -> Option<Block> {
        self.next.filter(|b| b.id == id)
    }

    /// The next sample of the block taken with [`RunReader::block_of`].
    pub fn sample(&mut self) -> io::Result<(i64, f64)> {
        let mut sample = [0; 16];
        self.input.read_exact(&mut sample)?;
        let time = i64::from_le_bytes(sample[..8].try_into().expect("8 bytes"));
        let value = u64::from_le_bytes(sample[8..].try_into().expect("8 bytes"));
        Ok((time, f64::from_bits(value)))
    }

    /// Moves on to the next block, once every sample of the one taken is read.
    pub fn read_header(&mut self) -> io::Result<()> {
        let mut header = [0; Block::BYTES];
        match self.input.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                self.next = None;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        let word = |at: usize| <[u8; 8]>::try_from(&header[at..at + 8]).expect("8 bytes");
        self.next = Some(Block {
            id: u64::from_le_bytes(word(0)) as usize,
            count: u64::from_le_bytes(word(8)),
            first: i64::from_le_bytes(word(16)),
            last: i64::from_le_bytes(word(24)),
        });
        Ok(())
    }
}

/// One series' samples in runs and memory, one per millisecond (the last taken, the one of
/// the later part: a run can end and the next begin within one), in time order, fed to
/// `sample`. Returns how many were fed.
pub(super) fn merge_folded(
    id: usize,
    runs: &mut [RunReader],
    memory: impl Iterator<Item = (i64, f64)> + Clone,
    mut sample: impl FnMut(i64, f64) -> io::Result<()>,
) -> io::Result<usize> {
    let mut fold = Fold {
        pending: None,
        fed: 0,
    };
    merge(id, runs, memory, |time, value| {
        fold.push(time, value, &mut sample)
    })?;
    fold.finish(&mut sample)
}

/// One series' samples in runs and memory, each part in time order, fed to `sample` as one
/// sequence in time order; samples of one millisecond in the order of their parts.
fn merge(
    id: usize,
    runs: &mut [RunReader],
    memory: impl Iterator<Item = (i64, f64)> + Clone,
    mut sample: impl FnMut(i64, f64) -> io::Result<()>,
) -> io::Result<()> {
    let blocks: Vec<(usize, Block)> = runs
        .iter_mut()
        .enumerate()
        .filter_map(|(run, reader)| reader.block_of(id).map(|b| (run, b)))
        .collect();
    let memory_first = memory.clone().next().map(|s| s.0);
    let firsts = blocks.iter().map(|(_, b)| b.first).chain(memory_first);
    let lasts = blocks.iter().map(|(_, b)| b.last);
    if lasts.zip(firsts.skip(1)).all(|(last, next)| last <= next) {
        // The usual case: times run on from run to run (a log's times never go back).
        for &(run, block) in &blocks {
            for _ in 0..block.count {
                let (time, value) = runs[run].sample()?;
                sample(time, value)?;
            }
        }
        for (time, value) in memory {
            sample(time, value)?;
        }
    } else {
        interleave(&blocks, runs, memory, &mut sample)?;
    }
    for &(run, _) in &blocks {
        runs[run].read_header()?;
    }
    Ok(())
}

/// Merges parts whose times overlap (two logs of the same label, say): the earliest head
/// first, on a tie the part taken earlier, so the later one's sample is the one kept.
fn interleave(
    blocks: &[(usize, Block)],
    runs: &mut [RunReader],
    mut memory: impl Iterator<Item = (i64, f64)>,
    sample: &mut impl FnMut(i64, f64) -> io::Result<()>,
) -> io::Result<()> {
    // Each part's next sample and how many are left after it; the memory part last.
    let mut heads: Vec<Option<(i64, f64)>> = Vec::with_capacity(blocks.len() + 1);
    let mut left: Vec<u64> = Vec::with_capacity(blocks.len());
    for &(run, block) in blocks {
        heads.push(Some(runs[run].sample()?));
        left.push(block.count - 1);
    }
    heads.push(memory.next());
    loop {
        let earliest = heads
            .iter()
            .enumerate()
            .filter_map(|(part, head)| head.map(|(time, _)| (time, part)))
            .min();
        let Some((_, part)) = earliest else {
            return Ok(());
        };
        let (time, value) = heads[part].take().expect("the earliest head");
        sample(time, value)?;
        heads[part] = if part == blocks.len() {
            memory.next()
        } else if left[part] > 0 {
            left[part] -= 1;
            Some(runs[blocks[part].0].sample()?)
        } else {
            None
        };
    }
}

/// Keeps the last of the samples in one millisecond, as [`super::Samples`] does in memory.
struct Fold {
    pending: Option<(i64, f64)>,
    fed: usize,
}

impl Fold {
    #[inline]
    fn push(
        &mut self,
        time: i64,
        value: f64,
        sample: &mut impl FnMut(i64, f64) -> io::Result<()>,
    ) -> io::Result<()> {
        if let Some(pending) = self.pending.replace((time, value)) {
            if pending.0 != time {
                self.fed += 1;
                sample(pending.0, pending.1)?;
            }
        }
        Ok(())
    }

    fn finish(mut self, sample: &mut impl FnMut(i64, f64) -> io::Result<()>) -> io::Result<usize> {
        if let Some((time, value)) = self.pending.take() {
            self.fed += 1;
            sample(time, value)?;
        }
        Ok(self.fed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `parts` (each a series' samples, in time order) as one run each, and merges
    /// series 0 from them and `memory`.
    fn merged(parts: &[&[(i64, f64)]], memory: &[(i64, f64)]) -> Vec<(i64, f64)> {
        let mut runs = Runs::default();
        for part in parts {
            let mut run = Runs::start().unwrap();
            let block = Block {
                id: 0,
                count: part.len() as u64,
                first: part[0].0,
                last: part[part.len() - 1].0,
            };
            run.block(block, part.iter().copied()).unwrap();
            runs.finish(run, &[0]).unwrap();
        }
        let mut readers = runs.into_readers().unwrap();
        assert!(readers.len() < FAN_IN, "{} runs", readers.len());
        let mut got = Vec::new();
        let fed = merge_folded(0, &mut readers, memory.iter().copied(), |t, v| {
            got.push((t, v));
            Ok(())
        })
        .unwrap();
        assert_eq!(fed, got.len());
        assert!(readers.iter_mut().all(|r| r.block_of(0).is_none()));
        got
    }

    #[test]
    fn runs_that_follow_each_other_are_written_one_after_the_other() {
        let got = merged(&[&[(1, 1.0), (2, 2.0)], &[(3, 3.0)]], &[(4, 4.0)]);
        assert_eq!(got, vec![(1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0)]);
    }

    #[test]
    fn a_millisecond_split_between_two_runs_keeps_the_later_sample() {
        let got = merged(&[&[(1, 1.0), (2, 2.0)], &[(2, 5.0)]], &[(2, 6.0), (3, 3.0)]);
        assert_eq!(got, vec![(1, 1.0), (2, 6.0), (3, 3.0)]);
    }

    #[test]
    fn runs_whose_times_overlap_are_interleaved_in_time_order() {
        let got = merged(&[&[(1, 1.0), (5, 5.0)], &[(2, 2.0), (5, 7.0)]], &[(3, 3.0)]);
        assert_eq!(got, vec![(1, 1.0), (2, 2.0), (3, 3.0), (5, 7.0)]);
    }

    #[test]
    fn many_runs_are_merged_into_few_and_read_back_the_same() {
        // 200 runs of two samples, the second of each in the millisecond of the next run's
        // first (which is kept): merged in levels of eight, yet every millisecond keeps its
        // last sample.
        let parts: Vec<Vec<(i64, f64)>> = (0..200)
            .map(|i| vec![(i * 2, i as f64), (i * 2 + 2, -(i as f64))])
            .collect();
        let parts: Vec<&[(i64, f64)]> = parts.iter().map(Vec::as_slice).collect();
        let got = merged(&parts, &[(400, 0.5), (401, 1.5)]);
        let mut expected: Vec<(i64, f64)> = (0..200).map(|i| (i * 2, i as f64)).collect();
        expected.extend([(400, 0.5), (401, 1.5)]);
        assert_eq!(got, expected);
    }
}
