//! ANSI colour codes. vLLM colours its process prefix (always, 0.4.2 to 0.15) and, on a
//! terminal or with `VLLM_LOGGING_COLOR=1`, the level, date and file (0.12+); Docker and
//! journald keep the bytes. Grammars never see them.

use std::borrow::Cow;

/// Removes CSI sequences (`ESC [ params letter`, e.g. `\x1b[1;36m`, `\x1b[0m`, `\x1b[2K`).
/// Borrows when the text has no ESC byte, which is nearly always.
pub fn strip(text: &str) -> Cow<'_, str> {
    if memchr::memchr(0x1b, text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(esc) = rest.find('\x1b') {
        out.push_str(&rest[..esc]);
        let after = &rest[esc + 1..];
        rest = match after.strip_prefix('[') {
            Some(csi) => {
                // Parameters and intermediates, then one final byte in 0x40..=0x7e.
                let end = csi.bytes().position(|b| (0x40..=0x7e).contains(&b));
                match end {
                    Some(i) => &csi[i + 1..],
                    None => "",
                }
            }
            // A lone ESC (or another escape kind): drop the ESC byte only.
            None => after,
        };
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_vllm_0_33_colours() {
        let line = "\x1b[0;36m(APIServer pid=1)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m11-22 13:25:01\x1b[0m \x1b[90m[loggers.py:335]\x1b[0m Engine 000: x";
        assert_eq!(
            strip(line),
            "(APIServer pid=1) INFO 11-22 13:25:01 [loggers.py:335] Engine 000: x"
        );
    }

    #[test]
    fn borrows_plain_text_and_survives_a_dangling_escape() {
        assert!(matches!(strip("plain"), Cow::Borrowed("plain")));
        assert_eq!(strip("cut \x1b[1;3"), "cut ");
        assert_eq!(strip("lone \x1b end"), "lone  end");
    }
}
