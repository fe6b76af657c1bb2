//! How prose is compared: white space collapsed. Its own module because tool
//! hashing, content listings and drift all compare prose the same way, and the
//! first two depend on each other's types.

/// Runs of white space as one space, ends trimmed: how prose is compared.
pub fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
