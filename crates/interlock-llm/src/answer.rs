//! A model's answer scanned before the agent gets it (issue 42 item 3):
//! secrets, personal data and text aimed at the model, each redacted in
//! place (`[REDACTED:<kind>]`) as the policy says — in a whole answer, and
//! in a streamed one without breaking its framing.
//!
//! A stream is read as server-sent events. Each event carrying answer text
//! (OpenAI's `choices[i].delta.content`, Anthropic's `text_delta`,
//! Gemini's `candidates[i].content.parts[0].text`) is held
//! while its text is among the last [`WINDOW`] characters of its channel,
//! so a secret split across events is whole when it is scanned; events are
//! let out in the order they came, rewritten only where text was redacted.
//! What this cannot see: a secret longer than the window whose start was
//! already let out.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use interlock_inspect::{Action, Category, ResponsePolicy, scan_response};
use serde_json::Value;

use crate::request::WireFormat;

/// Characters of a channel's answer held back while more arrives.
pub const WINDOW: usize = 256;

/// The largest event a stream may send (its bytes before the blank line
/// that ends it): a provider that never ends one is cut off, not buffered.
pub const MAX_EVENT_BYTES: usize = 1 << 20;

/// Held events' bytes beyond which everything held is scanned and let out
/// (a stream of events without text behind one that waits cannot pile up).
pub const MAX_HELD_BYTES: usize = 1 << 20;

/// Why a stream was cut off.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the provider's stream sent an event over {MAX_EVENT_BYTES} bytes")]
pub struct EventTooLarge;

/// What was found (each kind once), for the leaf.
pub type Found = BTreeSet<(Category, &'static str)>;

/// Scans a whole (not streamed) answer; the answer rewritten if anything was
/// redacted, and what was found.
pub fn scan_whole(
    wire: WireFormat,
    body: &[u8],
    policy: &ResponsePolicy,
) -> (Option<Vec<u8>>, Found) {
    let mut found = Found::new();
    let Ok(mut v) = serde_json::from_slice::<Value>(body) else {
        // Not JSON (an error page, plain text): scanned as text, so nothing
        // passes unread.
        let text = String::from_utf8_lossy(body);
        let scan = scan_response(&text, policy);
        for f in &scan.findings {
            found.insert((f.category, f.rule));
        }
        let rewritten = (scan.redacted != text).then(|| scan.redacted.into_bytes());
        return (rewritten, found);
    };
    let mut changed = false;
    let mut scan_text = |t: &mut Value| {
        if let Some(s) = t.as_str() {
            let scan = scan_response(s, policy);
            for f in &scan.findings {
                found.insert((f.category, f.rule));
            }
            if scan.redacted != s {
                *t = Value::String(scan.redacted);
                changed = true;
            }
        }
    };
    match wire {
        WireFormat::OpenAi => {
            for c in v
                .get_mut("choices")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(t) = c.pointer_mut("/message/content") {
                    scan_text(t);
                }
            }
        }
        WireFormat::Anthropic => {
            for b in v
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if b.get("type").and_then(Value::as_str) == Some("text")
                    && let Some(t) = b.get_mut("text")
                {
                    scan_text(t);
                }
            }
        }
        WireFormat::Gemini => {
            for c in v
                .get_mut("candidates")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                for part in c
                    .pointer_mut("/content/parts")
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    if let Some(t) = part.get_mut("text") {
                        scan_text(t);
                    }
                }
            }
        }
    }
    let rewritten = changed.then(|| serde_json::to_vec(&v).expect("JSON serializes"));
    (rewritten, found)
}

/// One server-sent event, held until it may be let out.
struct Event {
    /// Its lines before `data:` (`event: …`), as received.
    head: String,
    /// Its data, parsed, when it carries answer text.
    data: Option<Value>,
    /// The raw event (let out as is when nothing in it changed).
    raw: String,
    /// The channel and text it carries.
    text: Option<(u64, String)>,
    changed: bool,
}

/// Scans a streamed answer as it passes.
pub struct StreamScan {
    wire: WireFormat,
    policy: ResponsePolicy,
    /// Bytes of an event not complete yet.
    partial: Vec<u8>,
    held: VecDeque<Event>,
    found: Found,
}

impl StreamScan {
    pub fn new(wire: WireFormat, policy: ResponsePolicy) -> StreamScan {
        StreamScan {
            wire,
            policy,
            partial: Vec::new(),
            held: VecDeque::new(),
            found: Found::new(),
        }
    }

    /// What was found so far.
    pub fn found(&self) -> &Found {
        &self.found
    }

    /// Takes `bytes` of the stream; returns what may be let out now, or
    /// why the stream must be cut off.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<u8>, EventTooLarge> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = event_end(&self.partial) {
            let raw: Vec<u8> = self.partial.drain(..end).collect();
            let raw = String::from_utf8_lossy(&raw).into_owned();
            let event = self.read(raw);
            self.held.push_back(event);
        }
        if self.partial.len() > MAX_EVENT_BYTES {
            return Err(EventTooLarge);
        }
        self.scan_held();
        let held: usize = self.held.iter().map(|e| e.raw.len()).sum();
        Ok(self.release(held > MAX_HELD_BYTES))
    }

    /// The stream ended: everything held, scanned — an event the provider
    /// did not end with a blank line too, as its last.
    pub fn finish(&mut self) -> Vec<u8> {
        if !self.partial.is_empty() {
            let raw = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
            let event = self.read(raw);
            self.held.push_back(event);
        }
        self.scan_held();
        self.release(true)
    }

    fn read(&self, raw: String) -> Event {
        let mut head = String::new();
        let mut data = String::new();
        for line in raw.lines() {
            if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            } else if !line.is_empty() {
                head.push_str(line);
                head.push('\n');
            }
        }
        let parsed: Option<Value> = serde_json::from_str(&data).ok();
        let text = parsed.as_ref().and_then(|v| self.text_of(v));
        Event {
            head,
            data: parsed.filter(|_| text.is_some()),
            raw,
            text,
            changed: false,
        }
    }

    /// The channel and text an event's data carries.
    fn text_of(&self, v: &Value) -> Option<(u64, String)> {
        match self.wire {
            WireFormat::OpenAi => {
                let c = v.get("choices")?.as_array()?.first()?;
                let t = c.pointer("/delta/content")?.as_str()?;
                Some((
                    c.get("index").and_then(Value::as_u64).unwrap_or(0),
                    t.to_owned(),
                ))
            }
            WireFormat::Anthropic => {
                if v.pointer("/delta/type")?.as_str()? != "text_delta" {
                    return None;
                }
                let t = v.pointer("/delta/text")?.as_str()?;
                Some((
                    v.get("index").and_then(Value::as_u64).unwrap_or(0),
                    t.to_owned(),
                ))
            }
            WireFormat::Gemini => {
                let c = v.get("candidates")?.as_array()?.first()?;
                let t = c.pointer("/content/parts/0/text")?.as_str()?;
                Some((
                    c.get("index").and_then(Value::as_u64).unwrap_or(0),
                    t.to_owned(),
                ))
            }
        }
    }

    fn set_text(&self, data: &mut Value, text: String) {
        let slot = match self.wire {
            WireFormat::OpenAi => data.pointer_mut("/choices/0/delta/content"),
            WireFormat::Anthropic => data.pointer_mut("/delta/text"),
            WireFormat::Gemini => data.pointer_mut("/candidates/0/content/parts/0/text"),
        };
        if let Some(slot) = slot {
            *slot = Value::String(text);
        }
    }

    /// Scans each channel's held text and redacts across its events.
    fn scan_held(&mut self) {
        let channels: BTreeSet<u64> = self
            .held
            .iter()
            .filter_map(|e| e.text.as_ref().map(|t| t.0))
            .collect();
        for channel in channels {
            let idx: Vec<usize> = (0..self.held.len())
                .filter(|&i| self.held[i].text.as_ref().is_some_and(|t| t.0 == channel))
                .collect();
            let whole: String = idx
                .iter()
                .map(|&i| self.held[i].text.as_ref().unwrap().1.as_str())
                .collect();
            let scan = scan_response(&whole, &self.policy);
            for f in &scan.findings {
                self.found.insert((f.category, f.rule));
            }
            if scan.redacted == whole {
                continue;
            }
            // Each event's end, moved past whatever was redacted before it.
            // As the inspection crate redacts: by start, overlaps skipped.
            let mut candidates: Vec<(usize, usize, usize)> = scan
                .findings
                .iter()
                .filter(|f| !matches!(self.policy.action(f.category), Action::Allow))
                .filter_map(|f| f.span.clone().map(|s| (s.start, s.end, token_len(f))))
                .collect();
            candidates.sort();
            let mut spans: Vec<(usize, usize, usize)> = Vec::new();
            for c in candidates {
                if spans.last().is_none_or(|l| c.0 >= l.1) {
                    spans.push(c);
                }
            }
            let map = |b: usize| -> usize {
                let mut shift: isize = 0;
                for &(s, e, token) in &spans {
                    if e <= b {
                        shift += token as isize - (e - s) as isize;
                    } else if s < b {
                        // Inside a redaction: the token stays with its start.
                        return (s as isize + shift + token as isize) as usize;
                    }
                }
                (b as isize + shift) as usize
            };
            let mut start = 0usize;
            let mut at = 0usize;
            for &i in &idx {
                let len = self.held[i].text.as_ref().unwrap().1.len();
                at += len;
                let end = map(at).min(scan.redacted.len()).max(start);
                let piece = scan.redacted.get(start..end).unwrap_or("").to_owned();
                start = end;
                let event = &mut self.held[i];
                if event.text.as_ref().unwrap().1 != piece {
                    event.text.as_mut().unwrap().1 = piece;
                    event.changed = true;
                }
            }
        }
    }

    /// Lets out held events from the front while each is clear of its
    /// channel's window (all of them at the end).
    fn release(&mut self, all: bool) -> Vec<u8> {
        let mut tail: BTreeMap<u64, usize> = BTreeMap::new();
        for e in &self.held {
            if let Some((c, t)) = &e.text {
                *tail.entry(*c).or_default() += t.chars().count();
            }
        }
        let mut out = Vec::new();
        while let Some(front) = self.held.front() {
            if let Some((c, t)) = &front.text {
                let after = tail[c] - t.chars().count();
                if !all && after < WINDOW {
                    break;
                }
                *tail.get_mut(c).unwrap() = after;
            }
            let mut e = self.held.pop_front().unwrap();
            if e.changed {
                let text = e.text.take().unwrap().1;
                let mut data = e.data.take().unwrap();
                self.set_text(&mut data, text);
                out.extend_from_slice(e.head.as_bytes());
                out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
            } else {
                out.extend_from_slice(e.raw.as_bytes());
            }
        }
        out
    }
}

/// `[REDACTED:<kind>]`'s length for a finding (as the inspection crate
/// writes it).
fn token_len(f: &interlock_inspect::Finding) -> usize {
    "[REDACTED:".len() + f.category.as_str().len() + 1
}

/// Where the first complete event in `buf` ends (after its blank line).
fn event_end(buf: &[u8]) -> Option<usize> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|p| p + 2);
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> ResponsePolicy {
        ResponsePolicy::default()
    }

    fn openai_event(text: &str) -> String {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]})
        )
    }

    fn text_of_stream(out: &[u8]) -> String {
        String::from_utf8_lossy(out)
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|v| {
                v.pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect()
    }

    #[test]
    fn a_secret_split_across_events_is_redacted_before_any_of_it_leaves() {
        let secret = "AKIAIOSFODNN7EXAMPLE";
        let mut s = StreamScan::new(WireFormat::OpenAi, policy());
        let mut out = Vec::new();
        let mut pieces = vec![
            "Your key is aws_access_key_id=".to_owned(),
            secret[..8].to_owned(),
            secret[8..].to_owned(),
        ];
        pieces.push(" and that is all.".to_owned());
        for p in &pieces {
            out.extend(s.push(openai_event(p).as_bytes()).unwrap());
        }
        // Nothing held was let out yet: all of it is within the window.
        assert!(out.is_empty());
        out.extend(s.push(b"data: [DONE]\n\n").unwrap());
        out.extend(s.finish());
        let text = text_of_stream(&out);
        assert!(
            !text.contains("AKIA") && !text.contains("EXAMPLE"),
            "{text}"
        );
        assert!(text.contains("[REDACTED:"), "{text}");
        assert!(text.ends_with(" and that is all."), "{text}");
        assert!(String::from_utf8_lossy(&out).ends_with("data: [DONE]\n\n"));
        assert!(!s.found().is_empty());
    }

    #[test]
    fn a_clean_stream_passes_byte_for_byte_once_past_the_window() {
        let mut s = StreamScan::new(WireFormat::OpenAi, policy());
        let mut sent = Vec::new();
        let mut out = Vec::new();
        for i in 0..100 {
            let e = openai_event(&format!("word{i} "));
            sent.extend_from_slice(e.as_bytes());
            // Split mid-event, as TCP may.
            let (a, b) = e.as_bytes().split_at(7);
            out.extend(s.push(a).unwrap());
            out.extend(s.push(b).unwrap());
        }
        assert!(
            !out.is_empty(),
            "events past the window are let out as they come"
        );
        out.extend(s.finish());
        assert_eq!(out, sent);
        assert!(s.found().is_empty());
    }

    #[test]
    fn anthropic_text_deltas_are_scanned_and_other_events_keep_their_place() {
        let mut s = StreamScan::new(WireFormat::Anthropic, policy());
        let delta = |t: &str| {
            format!(
                "event: content_block_delta\ndata: {}\n\n",
                serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}})
            )
        };
        let mut out = Vec::new();
        out.extend(
            s.push(b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
                .unwrap(),
        );
        assert!(
            !out.is_empty(),
            "an event with no text and nothing held leaves at once"
        );
        out.extend(s.push(delta("Mail jane.doe@").as_bytes()).unwrap());
        out.extend(s.push(delta("example.com today").as_bytes()).unwrap());
        out.extend(
            s.push(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
                .unwrap(),
        );
        out.extend(s.finish());
        let text = String::from_utf8_lossy(&out);
        assert!(!text.contains("jane.doe"), "{text}");
        assert!(
            text.contains("event: content_block_delta\ndata: "),
            "{text}"
        );
        assert!(text.find("message_start").unwrap() < text.find("REDACTED").unwrap());
        assert!(
            text.trim_end().ends_with("{\"type\":\"message_stop\"}"),
            "{text}"
        );
    }

    #[test]
    fn gemini_candidates_are_scanned_whole_and_streamed() {
        let key = "AKIAIOSFODNN7EXAMPLQ";
        let body = format!(
            r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"text":"the key is {key}"}}]}},"index":0}}]}}"#
        );
        let (rewritten, found) = scan_whole(WireFormat::Gemini, body.as_bytes(), &policy());
        assert!(!found.is_empty());
        assert!(!String::from_utf8(rewritten.unwrap()).unwrap().contains(key));
        let mut s = StreamScan::new(WireFormat::Gemini, policy());
        let event = |t: &str| {
            format!(
                "data: {}\r\n\r\n",
                serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}]})
            )
        };
        let mut out = s.push(event("the key is AKIAIOSF").as_bytes()).unwrap();
        out.extend(s.push(event("ODNN7EXAMPLQ, done").as_bytes()).unwrap());
        out.extend(s.finish());
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains("ODNN7EXAMPLQ"), "{out}");
        assert!(out.contains("[REDACTED:"), "{out}");
    }

    #[test]
    fn a_non_json_answer_is_scanned_as_text() {
        let (rewritten, found) = scan_whole(
            WireFormat::OpenAi,
            b"upstream said: AKIAIOSFODNN7EXAMPLQ",
            &policy(),
        );
        assert!(!found.is_empty());
        assert!(
            !String::from_utf8(rewritten.unwrap())
                .unwrap()
                .contains("AKIA")
        );
    }

    #[test]
    fn a_last_event_without_its_blank_line_is_scanned_too() {
        let mut s = StreamScan::new(WireFormat::OpenAi, policy());
        let last = openai_event("key AKIAIOSFODNN7EXAMPLE");
        let mut out = s.push(last.trim_end().as_bytes()).unwrap();
        out.extend(s.finish());
        let text = String::from_utf8_lossy(&out);
        assert!(!text.contains("AKIA"), "{text}");
        assert!(text.contains("REDACTED"), "{text}");
    }

    #[test]
    fn an_event_that_never_ends_cuts_the_stream_off() {
        let mut s = StreamScan::new(WireFormat::OpenAi, policy());
        let line = vec![b'a'; 64 * 1024];
        let mut cut = false;
        for _ in 0..20 {
            if s.push(&line).is_err() {
                cut = true;
                break;
            }
        }
        assert!(cut, "a 1.25 MiB event without an end is refused");
    }

    #[test]
    fn a_whole_answer_is_redacted_in_place() {
        let body = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "key: AKIAIOSFODNN7EXAMPLE"}}]}).to_string();
        let (rewritten, found) = scan_whole(WireFormat::OpenAi, body.as_bytes(), &policy());
        let v: Value = serde_json::from_slice(&rewritten.unwrap()).unwrap();
        assert!(!v.to_string().contains("AKIA"), "{v}");
        assert!(!found.is_empty());
        let clean =
            serde_json::json!({"content": [{"type": "text", "text": "All good."}]}).to_string();
        assert_eq!(
            scan_whole(WireFormat::Anthropic, clean.as_bytes(), &policy()).0,
            None
        );
    }
}
