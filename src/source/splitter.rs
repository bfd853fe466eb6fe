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
            next_match: None,
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
    /// For [`Lines::next_flagged`]: where in `body` the next match starts (`usize::MAX`: none
    /// left), or `None` when it must be searched for again.
    next_match: Option<usize>,
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
    /// The next line, and whether `find` matches in it. `find` returns where its first match in
    /// a slice starts; the patterns it looks for must not contain `\n`, so a match lies inside
    /// one line. It is run over the batch's bytes about once in all (from each match on to the
    /// next), not once per line: for a log where one line in ten can match, that spares nine
    /// searches in ten their start-up cost.
    pub fn next_flagged(
        &mut self,
        find: &dyn Fn(&[u8]) -> Option<usize>,
    ) -> Option<(&'a [u8], bool)> {
        if let Some(head) = self.head.take() {
            return Some((head, find(head).is_some()));
        }
        while !self.body.is_empty() {
            let next_match = *self
                .next_match
                .get_or_insert_with(|| find(self.body).unwrap_or(usize::MAX));
            let end = memchr(b'\n', self.body).unwrap_or(self.body.len());
            let line = without_leading_nuls(&self.body[..end]);
            self.body = self.body.get(end + 1..).unwrap_or_default();
            // `<=`: a match cannot start at the `\n` itself, but a finder that answers `Some(0)`
            // for everything ("every line") must flag an empty line rather than underflow.
            let flagged = next_match <= end;
            self.next_match = if flagged || next_match == usize::MAX {
                // Found in this line (search again past it), or nothing left to find.
                (!flagged).then_some(usize::MAX)
            } else {
                Some(next_match - (end + 1))
            };
            if line.len() > self.max_line_bytes {
                self.too_long += 1;
                continue;
            }
            return Some((line, flagged));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flagged_lines_are_those_the_finder_matches_in() {
        let find = |bytes: &[u8]| memchr::memmem::find(bytes, b"hit");
        let mut splitter = LineSplitter::new(12);
        let mut seen = Vec::new();
        splitter.feed(b"par", |_| {});
        splitter.feed(
            b"tial hit\nno\nhit one\nthis line is too long hit\n\nhit\nmiss\n",
            |lines| {
                while let Some((line, flagged)) = lines.next_flagged(&find) {
                    seen.push((String::from_utf8_lossy(line).into_owned(), flagged));
                }
            },
        );
        let expected = [
            ("partial hit", true),
            ("no", false),
            ("hit one", true),
            ("", false),
            ("hit", true),
            ("miss", false),
        ];
        assert_eq!(seen, expected.map(|(l, f)| (l.to_string(), f)));

        // A finder that flags everything flags empty lines too.
        let mut flags = Vec::new();
        LineSplitter::new(10).feed(b"\na\n\n", |lines| {
            while let Some((_, flagged)) = lines.next_flagged(&|_| Some(0)) {
                flags.push(flagged);
            }
        });
        assert_eq!(flags, [true, true, true]);
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
