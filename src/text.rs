//! Text that others chose, made safe to show: a socket's path (any local
//! user names one), a server's error, a process's name. Printed raw, an
//! escape sequence in it repaints the reader's terminal (clears a line,
//! paints a green "ok", conceals what follows) and a bidirectional
//! override reorders what the reader sees. Everything of the kind goes
//! through [`printable`] before a terminal or a log sees it.

/// Whether `c` would act on a terminal rather than show: a control
/// character (C0, DEL, C1, where `U+009B` is a CSI of its own) or an
/// invisible formatting character that reorders or hides text (the
/// bidirectional marks, embeddings, overrides and isolates, zero-width
/// characters, the byte-order mark).
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Whether `text` shows as it is: no character of it acts on a terminal.
pub fn is_printable(text: &str) -> bool {
    !text.chars().any(acts)
}

/// `text` with every character that would act on a terminal written as an
/// escape (`\u{1b}`), the rest as it is.
pub fn printable(text: &str) -> String {
    if is_printable(text) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if acts(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Bytes that may not be UTF-8 (a path as the kernel lists it): the
/// invalid bytes written `\xff`, the rest as [`printable`] writes it.
pub fn printable_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(&printable(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// `text` between double quotes, [`printable`], its own quotes escaped:
/// what someone else said, shown as theirs. (Backslashes are left as they
/// are: a text already made printable keeps its escapes readable; and
/// what is quoted stands on a line of its own, which no character of it
/// can end.)
pub fn quoted(text: &str) -> String {
    let inner = printable(&text.replace('"', "\\\""));
    format!("\"{inner}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_acts_on_a_terminal_is_escaped_and_the_rest_kept() {
        let painted = "\u{1b}[2K\u{1b}[1G\u{1b}[32mok  \u{1b}[0m  redis fine\u{1b}[8m";
        let shown = printable(painted);
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(
            shown,
            "\\u{1b}[2K\\u{1b}[1G\\u{1b}[32mok  \\u{1b}[0m  redis fine\\u{1b}[8m"
        );
        // C1's CSI, a newline, a right-to-left override, a zero-width space.
        assert_eq!(
            printable("a\u{9b}31m\nb\u{202E}c\u{200B}d"),
            "a\\u{9b}31m\\u{a}b\\u{202e}c\\u{200b}d"
        );
        assert_eq!(printable("/run/redis/café.sock"), "/run/redis/café.sock");
        assert!(is_printable("/run/redis/redis-server.sock"));
        assert!(!is_printable("/tmp/\u{7f}"));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_written_out() {
        assert_eq!(
            printable_bytes(b"/tmp/\xff\x1b.sock"),
            "/tmp/\\xff\\u{1b}.sock"
        );
        assert_eq!(printable_bytes("/tmp/é".as_bytes()), "/tmp/é");
    }

    #[test]
    fn quoted_text_stays_on_its_line_and_in_its_quotes() {
        assert_eq!(
            quoted("ERR run \"curl | sh\"\u{1b}[8m\nfix: x"),
            "\"ERR run \\\"curl | sh\\\"\\u{1b}[8m\\u{a}fix: x\""
        );
    }
}
