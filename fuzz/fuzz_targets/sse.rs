//! The SSE parser (`interlock_gateway::sse::SseParser`) on arbitrary bytes,
//! fed whole and cut into chunks at fuzzer-chosen points.
//!
//! Invariants: nothing panics; the events do not depend on how the stream is
//! split into chunks; no event holds more than the bound (of bytes received).
#![no_main]

use interlock_gateway::sse::SseParser;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First byte: the bound; next four: cut points; the rest: the stream.
    if data.len() < 5 {
        return;
    }
    let max = usize::from(data[0]) + 1;
    let stream = &data[5..];
    let mut cuts: Vec<usize> = data[1..5]
        .iter()
        .map(|&c| usize::from(c) * stream.len() / 255)
        .collect();
    cuts.sort_unstable();

    let whole = SseParser::new(max).feed(stream);

    let mut parser = SseParser::new(max);
    let mut chunked = Vec::new();
    let mut at = 0;
    for cut in cuts.into_iter().chain([stream.len()]) {
        chunked.extend(parser.feed(&stream[at..cut]));
        at = cut;
    }
    assert_eq!(whole, chunked, "the events depend on the chunking");

    let mut bytewise = SseParser::new(max);
    let one: Vec<_> = stream.iter().flat_map(|b| bytewise.feed(&[*b])).collect();
    assert_eq!(whole, one, "byte-by-byte feeding differs");

    // The bound is on the bytes received. A name that is not UTF-8 is decoded
    // lossily (each bad byte becomes a 3-byte U+FFFD), so count each U+FFFD as
    // one byte: never more than it took on the wire.
    for e in whole.into_iter().flatten() {
        let name = e.event.as_deref().map_or(0, |n| {
            n.len()
                - 2 * n
                    .chars()
                    .filter(|&c| c == char::REPLACEMENT_CHARACTER)
                    .count()
        });
        assert!(
            e.data.len() + name <= max,
            "an event over the bound of {max}"
        );
    }
});
