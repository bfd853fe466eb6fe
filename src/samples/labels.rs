//! A label set as every output needs it: its pairs as they are (remote write's protobuf
//! labels) and its text escaped once (`name="value",...`, what the exposition writes and what
//! a replay knows a series by). Made once per unit or log and passed by reference with each
//! of its samples, so neither form is made again per sample, and no output reads the other's.

use super::spelling::push_escaped;

/// Labels in the order the exposition writes them, both unescaped and as escaped text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSet {
    /// `name="value",...`, escaped, without braces.
    text: String,
    /// Every name and value unescaped, back to back; `ends` cuts them apart.
    raw: String,
    /// Where each label's name and value end in `raw`.
    ends: Vec<(usize, usize)>,
}

impl LabelSet {
    pub fn new<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> LabelSet {
        // Room for most label sets at once: grown from empty, a text was copied five times,
        // and the growing was a tenth of a scrape.
        let mut set = LabelSet {
            text: String::with_capacity(128),
            raw: String::with_capacity(96),
            ends: Vec::with_capacity(8),
        };
        set.extend(labels);
        set
    }

    /// Adds a label after the others.
    pub fn push(&mut self, name: &str, value: &str) {
        if !self.text.is_empty() {
            self.text.push(',');
        }
        self.text.push_str(name);
        self.text.push_str("=\"");
        push_escaped(&mut self.text, value);
        self.text.push('"');
        self.raw.push_str(name);
        let name_end = self.raw.len();
        self.raw.push_str(value);
        self.ends.push((name_end, self.raw.len()));
    }

    pub fn extend<'a>(&mut self, labels: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (name, value) in labels {
            self.push(name, value);
        }
    }

    /// Becomes a copy of `other`, keeping its own buffers (a label set made per sample).
    pub fn copy_from(&mut self, other: &LabelSet) {
        self.text.clone_from(&other.text);
        self.raw.clone_from(&other.raw);
        self.ends.clone_from(&other.ends);
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.raw.clear();
        self.ends.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The labels escaped: `name="value",...`, without braces.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The labels as they are, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, value_end)| {
            let pair = (&self.raw[start..name_end], &self.raw[name_end..value_end]);
            start = value_end;
            pair
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_set_keeps_its_labels_as_they_are_and_escaped() {
        let mut set = LabelSet::new([("log", "C:\\logs\\a \"b\"\nc"), ("gpu", "")]);
        set.push("engine", "0");
        assert_eq!(
            set.text(),
            "log=\"C:\\\\logs\\\\a \\\"b\\\"\\nc\",gpu=\"\",engine=\"0\""
        );
        let pairs: Vec<_> = set.pairs().collect();
        assert_eq!(
            pairs,
            [
                ("log", "C:\\logs\\a \"b\"\nc"),
                ("gpu", ""),
                ("engine", "0")
            ]
        );
    }

    #[test]
    fn a_copy_is_equal_and_a_cleared_set_is_empty() {
        let set = LabelSet::new([("a", "1")]);
        let mut copy = LabelSet::new([("b", "2"), ("c", "3")]);
        copy.copy_from(&set);
        assert_eq!(copy, set);
        copy.clear();
        assert!(copy.is_empty() && copy.text().is_empty());
        assert_eq!(copy.pairs().count(), 0);
    }
}
