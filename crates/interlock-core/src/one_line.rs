//! Text someone else wrote (an agent, an upstream, a web page), made safe to
//! show on one line: a log, a terminal, a native dialog.

/// `s` with every control character (newlines, a terminal's escape
/// sequences) replaced by a space, cut to at most `max` characters with `…`
/// after a cut.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_long_text_is_cut() {
        assert_eq!(one_line("a\nb\u{1b}[2J", 20), "a b [2J");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("abc", 3), "abc");
        assert_eq!(one_line("ééé", 2), "éé…");
    }
}
