//! Line splitting: turns the bytes read from one file, in whatever pieces `read` returns
//! them, into complete lines.
//!
//! A line is only ever handed on once its `\n` has been read; the bytes after the last `\n`
//! stay here (the "partial tail") until the rest arrives. Lines are bytes: nothing is decoded,
//! a trailing `\r` is kept. A line longer than `max_line_bytes` is skipped up to its `\n`
//! without being held: once the tail grows past the limit it is dropped and the splitter
//! discards bytes until the next `\n`, so one file never holds more than `max_line_bytes`.
//!
//! NUL bytes at the start of a line are not part of it: a file truncated under a writer that
//! keeps its offset (copytruncate without `O_APPEND`) gets a hole there, read as a run of
//! NULs as long as the old file. Kept, that run made the next line too long to read.

use memchr::{memchr, memrchr};

/// Above this capacity an emptied partial-tail buffer is given back to the allocator, so a
/// file that once carried a long line does not keep a large buffer for the rest of its life.
const KEEP_CAPACITY: usize = 4096;

/// The line splitter of one open file (or of stdin).
#[derive(Debug)]
pub struct LineSplitter {
    max_line_bytes: usize,
    /// The bytes after the last `\n` seen, never more than `max_line_bytes`.
    partial: Vec<u8>,
    /// Skipping a too-long line (already counted) up to its `\n`.
    discarding: bool,
}

impl LineSplitter {
    /// A splitter that skips lines longer than `max_line_bytes` (not counting the `\n`).
    pub fn new(max_line_bytes: usize) -> Self {
        LineSplitter {
            max_line_bytes,
            partial: Vec::new(),
            discarding: false,
        }
    }

    /// Bytes held as the start of a line whose `\n` has not been read yet.
    pub fn pending_len(&self) -> usize {
        self.partial.len()
    }

    /// How much memory the partial tail holds on to (for tests of the memory bound).
    #[cfg(test)]
    pub fn held_capacity(&self) -> usize {
        self.partial.capacity()
    }

    /// Forgets the unterminated tail (the file was truncated, rotated away or closed, so the
    /// rest of that line will never come: gluing it to the next line would forge a line).
    /// Returns true if there were bytes to forget that had not been reported yet.
    pub fn discard_partial(&mut self) -> bool {
        let had_partial = !self.partial.is_empty();
        self.clear_partial();
        // A too-long line being skipped was already reported when it passed the limit.
        self.discarding = false;
        had_partial
    }

    /// Splits `data`, the next bytes of the file, and calls `on_lines` once with the complete
    /// lines it finishes (if any). Returns how many lines were skipped as too long.
    pub fn feed(&mut self, data: &[u8], on_lines: impl FnOnce(&mut Lines<'_>)) -> usize {
        let Some(first_nl) = memchr(b'\n', data) else {
            return self.absorb_tail(data);
        };
        let last_nl = memrchr(b'\n', data).unwrap_or(first_nl);
        let mut too_long = 0;

        // The first line may have started in an earlier read: finish it in `head`, a buffer
        // taken out of `self` so that `Lines` can borrow it while `self` stays free.
        let mut head = std::mem::take(&mut self.partial);
        let (head_line, body) = if self.discarding {
            self.discarding = false;
            (None, &data[first_nl + 1..=last_nl])
        } else if head.is_empty() {
            (None, &data[..=last_nl])
        } else if head.len() + first_nl > self.max_line_bytes {
            too_long += 1;
            (None, &data[first_nl + 1..=last_nl])
        } else {
            head.extend_from_slice(&data[..first_nl]);
            (Some(head.as_slice()), &data[first_nl + 1..=last_nl])
        };

        let mut lines = Lines {
            head: head_line,
            body,
            max_line_bytes: self.max_line_bytes,
            too_long: 0,
        };
        if lines.head.is_some() || !lines.body.is_empty() {
            on_lines(&mut lines);
        }
        // Count the too-long lines the callback did not iterate over, too.
        lines.by_ref().for_each(drop);
        too_long += lines.too_long;

        head.clear();
        self.partial = head;
        if self.partial.capacity() > KEEP_CAPACITY {
            self.partial = Vec::new();
        }
        too_long + self.absorb_tail(&data[last_nl + 1..])
    }

    /// Keeps `bytes` (which hold no `\n`) as the start of the next line, or starts skipping
    /// it if the line is already too long. Returns 1 if a too-long line starts being skipped.
    fn absorb_tail(&mut self, bytes: &[u8]) -> usize {
        let bytes = if self.partial.is_empty() {
            without_leading_nuls(bytes)
        } else {
            bytes
        };
        if self.discarding || bytes.is_empty() {
            return 0;
        }
        if self.partial.len() + bytes.len() > self.max_line_bytes {
            self.clear_partial();
            self.discarding = true;
            return 1;
        }
        self.partial.extend_from_slice(bytes);
        0
    }

    fn clear_partial(&mut self) {
        self.partial.clear();
        if self.partial.capacity() > KEEP_CAPACITY {
            self.partial = Vec::new();
        }
    }
}

/// `line` from its first byte that is not NUL (see the module's comment).
fn without_leading_nuls(line: &[u8]) -> &[u8] {
    match line.first() {
        Some(0) => &line[line.iter().position(|&b| b != 0).unwrap_or(line.len())..],
        _ => line,
    }
}

/// The complete lines of one [`LineSplitter::feed`], without their `\n`, in order.
/// Too-long lines inside the batch are left out (and counted).
pub struct Lines<'a> {
    head: Option<&'a [u8]>,
    /// Whole lines, each ending with `\n` (the slice is empty or ends with `\n`).
    body: &'a [u8],
    max_line_bytes: usize,
    too_long: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if let Some(head) = self.head.take() {
            return Some(head);
        }
        while !self.body.is_empty() {
            let end = memchr(b'\n', self.body).unwrap_or(self.body.len());
            let line = without_leading_nuls(&self.body[..end]);
            self.body = self.body.get(end + 1..).unwrap_or_default();
            if line.len() > self.max_line_bytes {
                self.too_long += 1;
                continue;
            }
            return Some(line);
        }
        None
    }
}

impl<'a> Lines<'a> {
    /// The next line `find` matches in, and where in it the match starts; the lines passed over
    /// on the way are added to `passed` (too-long lines are counted as such, not there). `find` returns where its first match
    /// in a slice starts; the patterns it looks for must not contain `\n`, so a match lies
    /// inside one line.
    ///
    /// The search runs over the batch's bytes, from each hit on to the next, and a line is only
    /// cut out around a hit: in a log where nine lines in ten hold nothing, those nine are
    /// counted by one vectorised newline count instead of being visited one by one. A finder
    /// that answers `Some(0)` for everything ("every line") visits every line, empty ones too.
    pub fn next_hit(
        &mut self,
        find: &dyn Fn(&[u8]) -> Option<usize>,
        passed: &mut u64,
    ) -> Option<(&'a [u8], usize)> {
        if let Some(head) = self.head.take() {
            if let Some(at) = find(head) {
                return Some((head, at));
            }
            *passed += 1;
        }
        while !self.body.is_empty() {
            let Some(at) = find(self.body) else {
                *passed += self.count_lines(self.body);
                self.body = &[];
                return None;
            };
            let start = memrchr(b'\n', &self.body[..at]).map_or(0, |nl| nl + 1);
            *passed += self.count_lines(&self.body[..start]);
            let end = memchr(b'\n', &self.body[at..]).map_or(self.body.len(), |nl| at + nl);
            let line = without_leading_nuls(&self.body[start..end]);
            self.body = self.body.get(end + 1..).unwrap_or_default();
            if line.len() > self.max_line_bytes {
                self.too_long += 1;
                continue;
            }
            // A match holds no NUL: it is in what is left of the line.
            return Some((line, at - (end - line.len())));
        }
        None
    }

    /// How many lines `region` (whole lines, each ending with `\n`) holds that are not too
    /// long; those are counted in `too_long` instead.
    fn count_lines(&mut self, region: &[u8]) -> u64 {
        let newlines = |bytes: &[u8]| memchr::memchr_iter(b'\n', bytes).count() as u64;
        // A line has at most `region.len() - 1` bytes before its `\n`.
        if region.len() <= self.max_line_bytes + 1 {
            return newlines(region);
        }
        // A line over the limit spans more than `max_line_bytes` bytes with no `\n`, and so
        // covers a whole block of half that: if every block holds a `\n`, no line is too long.
        let mut lines = 0;
        for block in region.chunks(self.max_line_bytes / 2) {
            match newlines(block) {
                0 => return self.count_lines_one_by_one(region),
                n => lines += n,
            }
        }
        lines
    }

    /// [`Lines::count_lines`] for a region that may hold a too-long line.
    #[cold]
    fn count_lines_one_by_one(&mut self, region: &[u8]) -> u64 {
        let Some((_, before_last_newline)) = region.split_last() else {
            return 0;
        };
        let mut lines = 0;
        for line in before_last_newline.split(|&b| b == b'\n') {
            if without_leading_nuls(line).len() > self.max_line_bytes {
                self.too_long += 1;
            } else {
                lines += 1;
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `pieces` and takes the lines `find` matches in: the lines, how many were passed
    /// over, and how many were too long.
    fn hits(
        max: usize,
        pieces: &[&[u8]],
        find: &dyn Fn(&[u8]) -> Option<usize>,
    ) -> (Vec<String>, u64, usize) {
        let mut splitter = LineSplitter::new(max);
        let (mut seen, mut passed, mut too_long) = (Vec::new(), 0, 0);
        for piece in pieces {
            too_long += splitter.feed(piece, |lines| {
                while let Some((line, at)) = lines.next_hit(find, &mut passed) {
                    assert_eq!(find(&line[at..]), Some(0), "the match starts at {at}");
                    seen.push(String::from_utf8_lossy(line).into_owned());
                }
            });
        }
        (seen, passed, too_long)
    }

    fn find_hit(bytes: &[u8]) -> Option<usize> {
        memchr::memmem::find(bytes, b"hit")
    }

    #[test]
    fn hits_are_the_lines_the_finder_matches_in_and_the_rest_are_counted() {
        let pieces: [&[u8]; 2] = [
            b"par",
            b"tial hit\nno\nhit one\nthis line is too long hit\n\nhit\nmiss\n",
        ];
        let (seen, passed, too_long) = hits(12, &pieces, &find_hit);
        assert_eq!(seen, ["partial hit", "hit one", "hit"]);
        assert_eq!(passed, 3, "`no`, the empty line and `miss`");
        assert_eq!(too_long, 1);
    }

    #[test]
    fn a_finder_that_matches_everywhere_visits_every_line_empty_ones_too() {
        let (seen, passed, _) = hits(10, &[b"\na\n\n"], &|_| Some(0));
        assert_eq!(seen, ["", "a", ""]);
        assert_eq!(passed, 0);
    }

    #[test]
    fn lines_passed_over_are_counted_exactly_around_too_long_ones_and_nul_runs() {
        let max = 256;
        let long = vec![b'x'; 3 * max];
        let nuls = vec![0u8; 3 * max];
        let short = b"short line\n".repeat(100);
        let mut text = short.clone();
        text.extend_from_slice(&long);
        text.extend_from_slice(b"\n");
        text.extend_from_slice(&short);
        text.extend_from_slice(&nuls);
        text.extend_from_slice(b"after a hole\nhit\n");
        text.extend_from_slice(&short);
        let (seen, passed, too_long) = hits(max, &[&text], &find_hit);
        assert_eq!(seen, ["hit"]);
        assert_eq!(
            too_long, 1,
            "the x line; the NUL run is no part of its line"
        );
        assert_eq!(passed, 301);
        let (lines, too_long_split, _) = split(max, &[&text]);
        assert_eq!(
            passed as usize + seen.len(),
            lines.len(),
            "as many as splitting finds"
        );
        assert_eq!(too_long_split, too_long);
    }

    /// Feeds `pieces` in order; returns the lines and the too-long count.
    fn split(max: usize, pieces: &[&[u8]]) -> (Vec<Vec<u8>>, usize, LineSplitter) {
        let mut splitter = LineSplitter::new(max);
        let mut lines = Vec::new();
        let mut too_long = 0;
        for piece in pieces {
            too_long += splitter.feed(piece, |batch| lines.extend(batch.map(<[u8]>::to_vec)));
        }
        (lines, too_long, splitter)
    }

    fn owned(lines: &[&[u8]]) -> Vec<Vec<u8>> {
        lines.iter().map(|l| l.to_vec()).collect()
    }

    #[test]
    fn whole_lines_in_one_piece() {
        let (lines, too_long, rest) = split(100, &[b"a\nbb\n\nccc\n"]);
        assert_eq!(lines, owned(&[b"a", b"bb", b"", b"ccc"]));
        assert_eq!(too_long, 0);
        assert_eq!(rest.pending_len(), 0);
    }

    #[test]
    fn a_line_is_not_emitted_before_its_newline() {
        let (lines, _, rest) = split(100, &[b"one\ntw"]);
        assert_eq!(lines, owned(&[b"one"]));
        assert_eq!(rest.pending_len(), 2);
    }

    #[test]
    fn a_line_over_several_pieces_is_joined() {
        let (lines, too_long, rest) = split(100, &[b"ab", b"cd", b"", b"ef\ngh", b"\n"]);
        assert_eq!(lines, owned(&[b"abcdef", b"gh"]));
        assert_eq!(too_long, 0);
        assert_eq!(rest.pending_len(), 0);
    }

    #[test]
    fn carriage_return_nul_and_invalid_utf8_pass_untouched() {
        let (lines, _, _) = split(100, &[b"crlf\r\nnul\0in\0\n\xff\xfe bad\n"]);
        assert_eq!(lines, owned(&[b"crlf\r", b"nul\0in\0", b"\xff\xfe bad"]));
    }

    /// A log truncated under a writer that keeps its offset (copytruncate) starts again with a
    /// run of NULs as long as the old file: over `max_line_bytes`, it cost the line after it.
    #[test]
    fn a_nul_run_longer_than_the_limit_before_a_line_is_skipped_and_the_line_kept() {
        let nuls = vec![0u8; 100 * 1024];
        let mut text = b"before\n".to_vec();
        text.extend_from_slice(&nuls);
        text.extend_from_slice(b"after\n");
        let (lines, too_long, _) = split(64 * 1024, &[&text]);
        assert_eq!(lines, owned(&[b"before", b"after"]));
        assert_eq!(too_long, 0);

        // The run in pieces, as reads return it, and its line's start in another.
        let pieces: Vec<&[u8]> = vec![b"before\n\0\0", &nuls, &nuls, b"\0af", b"ter\n\0\0\0\n"];
        let (lines, too_long, rest) = split(64 * 1024, &pieces);
        assert_eq!(lines, owned(&[b"before", b"after", b""]));
        assert_eq!(too_long, 0);
        assert_eq!(rest.pending_len(), 0);
    }

    #[test]
    fn a_line_of_exactly_the_limit_passes_one_more_byte_is_skipped() {
        let (lines, too_long, _) = split(4, &[b"1234\n12345\nok\n"]);
        assert_eq!(lines, owned(&[b"1234", b"ok"]));
        assert_eq!(too_long, 1);
    }

    #[test]
    fn a_too_long_line_over_pieces_is_skipped_once_up_to_its_newline() {
        let (lines, too_long, _) = split(4, &[b"first\nxx", b"xxxx", b"xxxxxx", b"xx\nnext\n"]);
        assert_eq!(lines, owned(&[b"next"]));
        assert_eq!(too_long, 2, "`first` and the x line");
    }

    #[test]
    fn a_too_long_partial_completed_in_the_next_piece_is_skipped() {
        // The head alone is within the limit, but head + rest is not.
        let (lines, too_long, _) = split(4, &[b"abc", b"de\nok\n"]);
        assert_eq!(lines, owned(&[b"ok"]));
        assert_eq!(too_long, 1);
    }

    #[test]
    fn too_long_lines_are_counted_even_if_the_batch_is_not_read() {
        let mut splitter = LineSplitter::new(2);
        let too_long = splitter.feed(b"abc\nd\nefg\n", |_| {});
        assert_eq!(too_long, 2);
    }

    #[test]
    fn discarding_the_partial_never_glues_it_to_the_next_line() {
        let mut splitter = LineSplitter::new(100);
        splitter.feed(b"cut in the mid", |_| {});
        assert!(splitter.discard_partial());
        assert!(!splitter.discard_partial(), "nothing left to drop");
        let mut lines = Vec::new();
        splitter.feed(b"fresh\n", |batch| lines.extend(batch.map(<[u8]>::to_vec)));
        assert_eq!(lines, owned(&[b"fresh"]));
    }

    #[test]
    fn discarding_while_skipping_a_long_line_reports_nothing_more() {
        let mut splitter = LineSplitter::new(2);
        assert_eq!(splitter.feed(b"long", |_| {}), 1);
        assert!(!splitter.discard_partial());
        let mut lines = Vec::new();
        splitter.feed(b"ok\n", |batch| lines.extend(batch.map(<[u8]>::to_vec)));
        assert_eq!(lines, owned(&[b"ok"]), "the skip ended with the discard");
    }

    #[test]
    fn a_32_mib_line_never_grows_the_held_buffer_past_the_limit() {
        let max = 64 * 1024;
        let mut splitter = LineSplitter::new(max);
        let chunk = vec![b'x'; 64 * 1024];
        let mut too_long = 0;
        for _ in 0..512 {
            too_long += splitter.feed(&chunk, |_| panic!("no line may come out"));
            assert!(splitter.held_capacity() <= max);
        }
        let mut lines = Vec::new();
        too_long += splitter.feed(b"\nafter\n", |b| lines.extend(b.map(<[u8]>::to_vec)));
        assert_eq!(too_long, 1);
        assert_eq!(lines, owned(&[b"after"]));
        assert!(splitter.held_capacity() <= KEEP_CAPACITY);
    }

    #[test]
    fn every_split_point_gives_the_same_lines() {
        let text: &[u8] = b"alpha\r\nbeta\n\n\xffgamma\0\ntoolongline\nz\n";
        let (expected, expected_too_long, _) = split(8, &[text]);
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let (lines, too_long, _) = split(8, &[&text[..a], &text[a..b], &text[b..]]);
                assert_eq!(lines, expected, "split at {a}, {b}");
                assert_eq!(too_long, expected_too_long, "split at {a}, {b}");
            }
        }
        assert_eq!(expected_too_long, 1);
    }
}
