//! Server-sent events (`text/event-stream`, HTML Living Standard §9.2) read from
//! byte chunks as they arrive (`reqwest`'s `bytes_stream`): an upstream's SSE
//! answers and notifications (`upstream/http.rs`) and a team gateway's event
//! stream (`client.rs`) both go through [`SseParser`].
//!
//! Lines end with CRLF, LF or CR, also when a chunk ends between CR and LF; a
//! byte order mark at the start of the stream is skipped; `data:` lines are
//! joined with `\n`; `event:` names the event; comments, `id:`, `retry:` and
//! unknown fields are ignored. An event's data is kept as the bytes that were
//! sent (never decoded or re-encoded), so a JSON-RPC payload reaches the relay
//! unchanged.
//!
//! One event holds at most `max` bytes of data and name, however the stream
//! splits it into lines and chunks, and nothing else is kept (an ignored line
//! is skipped as it is read, not buffered): a hostile peer cannot grow the
//! parser's memory without bound.
//!
//! Why not a crate: among those that parse SSE from a byte stream,
//! `eventsource-stream` (unchanged since 2022), `sse-stream` and `sseer` put no
//! bound on an event's size, and `sse-core`, which has one, hands data over as a
//! `String` repaired with U+FFFD where it is not UTF-8 — bytes other than those
//! the upstream sent, which the relay must not forward as if they were its own.

use std::mem;

/// The byte order mark (U+FEFF in UTF-8), skipped at the start of a stream.
const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// The longest field name read (`event`); a longer one is a field not read here.
const MAX_NAME: usize = 5;

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, if the event had a non-empty one (the standard's
    /// default type is `message`).
    pub event: Option<String>,
    /// The `data:` lines' values joined with `\n`, as sent; empty for an event
    /// whose only data line is empty (as MCP's priming event, an `id:` and an
    /// empty `data:`).
    pub data: Vec<u8>,
}

/// An event's data and name together went over the parser's bound. The rest of
/// that event (up to the blank line that ends it) is skipped; the events after
/// it are read as usual.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("an SSE event over {max} bytes")]
pub struct TooLarge {
    pub max: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Data,
    Event,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the start of the stream, this many bytes of a byte order mark read.
    Bom(u8),
    /// At a line's start or in its field name (`name[..name_len]`).
    Name,
    /// Just after `field:`: a space here is not part of the value.
    Colon(Field),
    /// In a field's value.
    Value(Field),
    /// The rest of the line is skipped: a comment, a field not read here, or
    /// any line of an event over the bound.
    Ignore,
}

/// An incremental `text/event-stream` parser: [`feed`](SseParser::feed) it
/// chunks, get the events they complete. An event cut off by the end of the
/// stream is dropped, as the standard says.
#[derive(Debug)]
pub struct SseParser {
    max: usize,
    state: State,
    name: [u8; MAX_NAME],
    name_len: usize,
    /// The current event's data (its lines joined), and whether it has a data
    /// line at all (an empty `data:` makes an event with empty data).
    data: Vec<u8>,
    has_data: bool,
    /// The current event's `event:` value.
    event: Vec<u8>,
    /// The last line ended with CR: a LF right after it ends no other line.
    after_cr: bool,
    /// The current event went over `max`: skip to the blank line ending it.
    skipping: bool,
}

impl SseParser {
    /// A parser for a new stream whose events hold at most `max` bytes of data
    /// and name.
    pub fn new(max: usize) -> SseParser {
        SseParser {
            max,
            state: State::Bom(0),
            name: [0; MAX_NAME],
            name_len: 0,
            data: Vec::new(),
            has_data: false,
            event: Vec::new(),
            after_cr: false,
            skipping: false,
        }
    }

    /// Reads `chunk`; returns the events it completes, in order, and a
    /// [`TooLarge`] in the place of each event over the bound.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Vec<Result<Event, TooLarge>> {
        let mut out = Vec::new();
        while let Some(&b) = chunk.first() {
            if mem::take(&mut self.after_cr) && b == b'\n' {
                chunk = &chunk[1..];
                continue;
            }
            match self.state {
                State::Bom(n) => {
                    if b == BOM[usize::from(n)] {
                        chunk = &chunk[1..];
                        self.state = if n == 2 {
                            State::Name
                        } else {
                            State::Bom(n + 1)
                        };
                    } else {
                        // Part of a mark starts a line that names no field
                        // read here; the byte is read again in that state.
                        self.state = if n == 0 { State::Name } else { State::Ignore };
                    }
                }
                State::Name => {
                    chunk = &chunk[1..];
                    match b {
                        b'\r' | b'\n' => {
                            if let Some(e) = self.end_of_name() {
                                out.push(e);
                            }
                            self.end_line(b);
                        }
                        b':' => {
                            self.state = match self.field() {
                                _ if self.skipping => State::Ignore,
                                Some(field) => match self.start_value(field) {
                                    Ok(()) => State::Colon(field),
                                    Err(e) => {
                                        out.push(Err(e));
                                        State::Ignore
                                    }
                                },
                                // A comment (no name) or another field.
                                None => State::Ignore,
                            };
                        }
                        _ if self.skipping || self.name_len == MAX_NAME => {
                            self.state = State::Ignore;
                        }
                        _ => {
                            self.name[self.name_len] = b;
                            self.name_len += 1;
                        }
                    }
                }
                State::Colon(field) => {
                    if b == b' ' {
                        chunk = &chunk[1..];
                    }
                    self.state = State::Value(field);
                }
                State::Value(field) => {
                    let end = line_end(chunk);
                    if let Err(e) = self.append(field, &chunk[..end]) {
                        out.push(Err(e));
                        self.state = State::Ignore;
                    }
                    chunk = self.after_run(chunk, end);
                }
                State::Ignore => {
                    let end = line_end(chunk);
                    chunk = self.after_run(chunk, end);
                }
            }
        }
        out
    }

    /// The field named so far, if it is one read here.
    fn field(&self) -> Option<Field> {
        match &self.name[..self.name_len] {
            b"data" => Some(Field::Data),
            b"event" => Some(Field::Event),
            _ => None,
        }
    }

    /// A line ended within its name: a blank line ends the event; a field
    /// without a colon has the empty value.
    fn end_of_name(&mut self) -> Option<Result<Event, TooLarge>> {
        if self.name_len == 0 {
            if mem::take(&mut self.skipping) {
                return None;
            }
            return self.dispatch();
        }
        if self.skipping {
            return None;
        }
        match self.field() {
            Some(field) => self.start_value(field).err().map(Err),
            None => None,
        }
    }

    /// A field's value begins: `event` starts over, `data` adds a line.
    fn start_value(&mut self, field: Field) -> Result<(), TooLarge> {
        match field {
            Field::Event => self.event.clear(),
            Field::Data => {
                if self.has_data {
                    self.append(Field::Data, b"\n")?;
                }
                self.has_data = true;
            }
        }
        Ok(())
    }

    /// Adds `bytes` to the current event's data or name, within the bound.
    fn append(&mut self, field: Field, bytes: &[u8]) -> Result<(), TooLarge> {
        if self.data.len() + self.event.len() + bytes.len() > self.max {
            // Nothing of the event is kept; its remaining lines are skipped.
            self.data = Vec::new();
            self.event = Vec::new();
            self.has_data = false;
            self.skipping = true;
            return Err(TooLarge { max: self.max });
        }
        match field {
            Field::Data => self.data.extend_from_slice(bytes),
            Field::Event => self.event.extend_from_slice(bytes),
        }
        Ok(())
    }

    /// After a run of `end` value or ignored bytes: ends the line if the run
    /// stopped at CR or LF, and returns the rest of `chunk`.
    fn after_run<'a>(&mut self, chunk: &'a [u8], end: usize) -> &'a [u8] {
        match chunk.get(end) {
            Some(&eol) => {
                self.end_line(eol);
                &chunk[end + 1..]
            }
            None => &[],
        }
    }

    fn end_line(&mut self, eol: u8) {
        self.state = State::Name;
        self.name_len = 0;
        self.after_cr = eol == b'\r';
    }

    /// The blank line ending an event: the event, if it had data.
    fn dispatch(&mut self) -> Option<Result<Event, TooLarge>> {
        let event = mem::take(&mut self.event);
        if !mem::take(&mut self.has_data) {
            return None;
        }
        Some(Ok(Event {
            event: (!event.is_empty()).then(|| String::from_utf8_lossy(&event).into_owned()),
            data: mem::take(&mut self.data),
        }))
    }
}

/// Where the line in `chunk` ends (at its CR or LF), or `chunk.len()`.
fn line_end(chunk: &[u8]) -> usize {
    chunk
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .unwrap_or(chunk.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: Option<&str>, data: &str) -> Result<Event, TooLarge> {
        Ok(Event {
            event: name.map(str::to_owned),
            data: data.as_bytes().to_vec(),
        })
    }

    /// Every split of `wire` into two chunks, and byte by byte, gives what
    /// reading it whole gives.
    fn feed_all_ways(max: usize, wire: &[u8]) -> Vec<Result<Event, TooLarge>> {
        let whole = SseParser::new(max).feed(wire);
        for cut in 0..=wire.len() {
            let mut p = SseParser::new(max);
            let mut got = p.feed(&wire[..cut]);
            got.extend(p.feed(&wire[cut..]));
            assert_eq!(
                got,
                whole,
                "cut at {cut} of {:?}",
                String::from_utf8_lossy(wire)
            );
        }
        let mut p = SseParser::new(max);
        let bytes: Vec<_> = wire.iter().flat_map(|b| p.feed(&[*b])).collect();
        assert_eq!(bytes, whole, "byte by byte");
        whole
    }

    /// From `upstream/http.rs`: an event split mid-JSON, a keep-alive comment,
    /// a CRLF-ended event.
    #[test]
    fn events_split_across_chunks() {
        let mut p = SseParser::new(1 << 20);
        assert!(
            p.feed(b"event: message\ndata: {\"jsonrpc\":\"2.0\",")
                .is_empty()
        );
        let got = p.feed(b"\"id\":1,\"result\":{}}\n\n: keepalive\n\n");
        assert_eq!(
            got,
            [event(
                Some("message"),
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
            )]
        );
        let got = p.feed(
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n\r\n",
        );
        assert_eq!(
            got,
            [event(
                None,
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
            )]
        );
    }

    /// From `client.rs`: a keep-alive, then a named CRLF event, in chunks of 7.
    #[test]
    fn events_parse_across_chunk_boundaries() {
        let json = r#"{"kind":"server.pending","server":"fs","hash":"sha256:ab"}"#;
        let wire = format!(": keep-alive\n\nevent: server.pending\ndata: {json}\r\n\r\n");
        let mut p = SseParser::new(1 << 20);
        let mut got = Vec::new();
        for chunk in wire.as_bytes().chunks(7) {
            got.extend(p.feed(chunk));
        }
        assert_eq!(got, [event(Some("server.pending"), json)]);
        assert_eq!(p.feed(b"data: {nope\n\n"), [event(None, "{nope")]);
        assert_eq!(feed_all_ways(1 << 20, wire.as_bytes()), got);
    }

    #[test]
    fn every_line_ending() {
        let want = [event(Some("a"), "1\n2"), event(None, "3")];
        for wire in [
            "event: a\ndata: 1\ndata: 2\n\ndata: 3\n\n",
            "event: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n",
            "event: a\rdata: 1\rdata: 2\r\rdata: 3\r\r",
            "event: a\r\ndata: 1\rdata: 2\n\r\ndata: 3\r\n\r",
        ] {
            assert_eq!(feed_all_ways(64, wire.as_bytes()), want, "{wire:?}");
        }
        // CR then LF is one line end even across chunks, not a blank line.
        let mut p = SseParser::new(64);
        assert!(p.feed(b"data: a\r").is_empty());
        assert!(p.feed(b"\ndata: b\r").is_empty());
        assert_eq!(p.feed(b"\n\r"), [event(None, "a\nb")]);
        // And a CR-only stream's blank line needs no lookahead.
        let mut p = SseParser::new(64);
        assert_eq!(p.feed(b"data: x\r\r"), [event(None, "x")]);
    }

    #[test]
    fn byte_order_mark_only_at_the_start() {
        let wire = b"\xEF\xBB\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\ndata: z\n\n";
        assert_eq!(
            feed_all_ways(64, wire),
            [event(None, "x"), event(None, "z")]
        );
        // Without a mark the first line is read as it is; half a mark spoils it.
        assert_eq!(feed_all_ways(64, b"data: x\n\n"), [event(None, "x")]);
        assert_eq!(
            feed_all_ways(64, b"\xEF\xBBdata: x\n\ndata: y\n\n"),
            [event(None, "y")]
        );
    }

    #[test]
    fn fields_as_the_standard_reads_them() {
        let wire = concat!(
            ": a comment\n",
            "data:no space\n",
            "data:  two spaces\n",
            "data\n",
            "data:\n",
            "id: 7\n",
            "retry: 1000\n",
            "Data: wrong case\n",
            "datum: other field\n",
            "event: first\n",
            "event:second\n",
            "\n",
            "event: unused\n",
            "\n",
            "event\n",
            "data: {\"raw\":\"\\u00e9 é\"}\n",
            "\n",
            "id: 8\n",
            "data:\n",
            "\n",
        );
        assert_eq!(
            feed_all_ways(64, wire.as_bytes()),
            [
                event(Some("second"), "no space\n two spaces\n\n"),
                event(None, "{\"raw\":\"\\u00e9 \u{e9}\"}"),
                event(None, ""),
            ]
        );
        // Data is bytes as sent, UTF-8 or not.
        assert_eq!(
            SseParser::new(64).feed(b"data: \xFF\xFE\n\n"),
            [Ok(Event {
                event: None,
                data: vec![0xFF, 0xFE]
            })]
        );
        // An event cut off by the end of the stream is not an event.
        assert!(SseParser::new(64).feed(b"data: x\n").is_empty());
    }

    #[test]
    fn an_event_over_the_bound_is_refused_and_skipped() {
        let max = 10;
        // Exactly `max` bytes of data and name pass, however they are split.
        assert_eq!(
            feed_all_ways(max, b"event: ab\ndata: 1234\ndata: 567\n\n"),
            [event(Some("ab"), "1234\n567")]
        );
        let over = TooLarge { max };
        for wire in [
            &b"data: 12345678901\n\ndata: ok\n\n"[..],
            b"event: abcdef\ndata: 12345\n\ndata: ok\n\n",
            b"data: 12345\ndata: 12345\ndata: more\n: and\ndata: more\n\ndata: ok\n\n",
            b"data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n\ndata: ok\n\n",
        ] {
            assert_eq!(
                feed_all_ways(max, wire),
                [Err(over), event(None, "ok")],
                "{:?}",
                String::from_utf8_lossy(wire)
            );
        }
        assert_eq!(over.to_string(), "an SSE event over 10 bytes");
    }

    /// A line that never ends, or endless lines, keep nothing beyond the bound:
    /// comments and unknown fields are skipped as they are read.
    #[test]
    fn memory_stays_bounded() {
        let max = 1024;
        let mut p = SseParser::new(max);
        let mut errors = 0;
        errors += p.feed(b"data: ").len();
        for _ in 0..1000 {
            errors += p.feed(&[b'x'; 100]).len();
            assert!(p.data.capacity() <= 2 * max && p.event.capacity() <= 2 * max);
        }
        assert_eq!(errors, 1, "one error for the event, not one per chunk");
        assert_eq!(p.feed(b"\n\ndata: after\n\n"), [event(None, "after")]);

        let mut p = SseParser::new(max);
        assert!(p.feed(b":").is_empty());
        for _ in 0..1000 {
            assert!(p.feed(&[b'c'; 100]).is_empty());
        }
        assert!(p.feed(b"\nsomefield").is_empty());
        for _ in 0..1000 {
            assert!(p.feed(&[b'f'; 100]).is_empty());
        }
        assert_eq!(p.data.capacity() + p.event.capacity(), 0);
        assert_eq!(p.feed(b"\ndata: after\n\n"), [event(None, "after")]);
    }
}
