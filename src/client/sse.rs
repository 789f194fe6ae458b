//! A `text/event-stream` parser, fed bytes as they arrive.
//!
//! It follows the WHATWG event-stream rules that matter for MCP: lines end
//! in CR, LF or CRLF (a CRLF split across two reads is one line end), a
//! leading BOM is dropped, `:` lines are comments, one space after the colon
//! is stripped, `data` lines join with `\n`, a blank line dispatches, an event
//! with no data is not dispatched, `id` persists across events and a
//! half-received event at the end of the stream is discarded. It holds no
//! socket: the HTTP layer pushes body bytes in and takes events out, so the
//! rules are tested on byte strings.
//!
//! Like an `EventSource`, one parser lives for a whole request, across the
//! connections that carry it: it keeps the last event id and the server's
//! `retry` for resuming a cut stream, and [`SseParser::restart`] forgets
//! only the half-read event of a lost connection.

use std::time::Duration;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The event type; `message` when the server named none.
    pub(crate) event: String,
    /// The data lines joined with `\n`.
    pub(crate) data: String,
}

/// An event (or line) larger than the parser accepts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLarge {
    pub(crate) limit: usize,
}

/// The parser's state between pushes.
#[derive(Debug)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: String,
    event: String,
    /// The `id` field as last set, possibly by an event still being read.
    last_id: Option<String>,
    /// The id as of the last complete event: what a resume starts after.
    dispatched_id: Option<String>,
    retry: Option<Duration>,
    /// The previous push ended in CR: a LF starting this one ends no line.
    after_cr: bool,
    /// No line has ended yet, so a BOM may still be at the start.
    at_start: bool,
    limit: usize,
}

impl SseParser {
    /// A parser that refuses lines and events longer than `limit` bytes.
    pub(crate) fn new(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            data: String::new(),
            event: String::new(),
            last_id: None,
            dispatched_id: None,
            retry: None,
            after_cr: false,
            at_start: true,
            limit,
        }
    }

    /// The largest line or event it accepts.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// The id of the last complete event, kept across
    /// [`restart`](SseParser::restart)s: the `Last-Event-ID` of a resume.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.dispatched_id.as_deref()
    }

    /// How long the server asked the client to wait before reconnecting.
    pub(crate) fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Starts reading a new connection's stream: a half-read event of the
    /// lost one is dropped, its id included (the server sends it again after
    /// the last complete one); the last event id and `retry` carry over.
    pub(crate) fn restart(&mut self) {
        self.last_id.clone_from(&self.dispatched_id);
        self.line.clear();
        self.data.clear();
        self.event.clear();
        self.after_cr = false;
        self.at_start = true;
    }

    /// Feeds bytes; complete events are appended to `out`.
    pub(crate) fn push(
        &mut self,
        mut bytes: &[u8],
        out: &mut Vec<SseEvent>,
    ) -> Result<(), TooLarge> {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.extend_line(&bytes[..end])?;
            self.end_line(out)?;
            let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
            if bytes[end] == b'\r' && end + 1 == bytes.len() {
                self.after_cr = true;
            }
            bytes = &bytes[end + if crlf { 2 } else { 1 }..];
        }
        self.extend_line(bytes)
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), TooLarge> {
        if self.line.len() + bytes.len() > self.limit {
            return Err(TooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), TooLarge> {
        let mut line = std::mem::take(&mut self.line);
        if std::mem::replace(&mut self.at_start, false) && line.starts_with(b"\xEF\xBB\xBF") {
            line.drain(..3);
        }
        if line.is_empty() {
            self.dispatch(out);
        } else if line[0] != b':' {
            let text = String::from_utf8_lossy(&line);
            let (field, value) = match text.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (&*text, ""),
            };
            match field {
                "data" => {
                    if self.data.len() + value.len() + 1 > self.limit {
                        return Err(TooLarge { limit: self.limit });
                    }
                    self.data.push_str(value);
                    self.data.push('\n');
                }
                "event" => value.clone_into(&mut self.event),
                "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    // Too many digits to count is simply very long.
                    self.retry = Some(Duration::from_millis(value.parse().unwrap_or(u64::MAX)));
                }
                // Unknown fields are ignored, as the standard says.
                _ => {}
            }
        }
        // Keep the buffer's allocation for the next line.
        line.clear();
        self.line = line;
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        // The id counts even for an event without data (as a priming event
        // may be): the standard sets the last event id before that check.
        if self.dispatched_id != self.last_id {
            self.dispatched_id.clone_from(&self.last_id);
        }
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        out.push(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(parser: &mut SseParser, chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk, &mut out).unwrap();
        }
        out
    }

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        parse_with(&mut SseParser::new(1 << 20), chunks)
    }

    fn message(data: &str) -> SseEvent {
        SseEvent {
            event: "message".into(),
            data: data.into(),
        }
    }

    #[test]
    fn an_mcp_stream_yields_its_notifications_and_response_in_order() {
        let stream = b"event: message\r\ndata: {\"method\":\"notifications/progress\"}\r\n\r\n\
                       event: message\r\ndata: {\"id\":1,\"result\":{}}\r\n\r\n";
        assert_eq!(
            parse_all(&[stream]),
            [
                message("{\"method\":\"notifications/progress\"}"),
                message("{\"id\":1,\"result\":{}}")
            ]
        );
    }

    #[test]
    fn every_split_of_a_stream_parses_the_same() {
        let stream: &[u8] = b"\xEF\xBB\xBF: hello\r\nid: 7\r\nevent: note\r\ndata: a\r\ndata:b\r\n\r\ndata: c\n\ndata: d\r\r";
        let whole = parse_all(&[stream]);
        assert_eq!(
            whole,
            [
                SseEvent {
                    event: "note".into(),
                    data: "a\nb".into(),
                },
                message("c"),
                message("d"),
            ]
        );
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            let mut parser = SseParser::new(1 << 20);
            assert_eq!(parse_with(&mut parser, &[a, b]), whole, "split at {split}");
            assert_eq!(parser.last_event_id(), Some("7"), "split at {split}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(parse_all(&bytes), whole);
    }

    #[test]
    fn a_crlf_split_across_pushes_is_one_line_end_but_cr_cr_is_two() {
        assert_eq!(parse_all(&[b"data: x\r", b"\n\r", b"\n"]), [message("x")]);
        // An empty push between CR and LF changes nothing.
        assert_eq!(
            parse_all(&[b"data: w\r", b"", b"\ndata: v\n\n"]),
            [message("w\nv")]
        );
        // CR then CR: the second CR ends an empty line, which dispatches.
        assert_eq!(parse_all(&[b"data: y\r", b"\r"]), [message("y")]);
        // CR LF LF: a line end and an empty line.
        assert_eq!(parse_all(&[b"data: z\r\n\n"]), [message("z")]);
    }

    #[test]
    fn comments_empty_events_and_unknown_fields_dispatch_nothing() {
        assert!(parse_all(&[b": keepalive\n\nevent: ping\n\nretry: 10\nfoo: bar\n\n"]).is_empty());
        // The event type is reset by the blank line even without data.
        assert_eq!(
            parse_all(&[b"event: ping\n\ndata: after\n\n"]),
            [message("after")]
        );
    }

    #[test]
    fn field_values_keep_everything_but_one_leading_space() {
        assert_eq!(
            parse_all(&[b"data:  two spaces\n\n"]),
            [message(" two spaces")]
        );
        assert_eq!(parse_all(&[b"data: a: b\n\n"]), [message("a: b")]);
        // A bare `data` line is an empty data line: the event has data "".
        assert_eq!(parse_all(&[b"data\n\n"]), [message("")]);
        assert_eq!(parse_all(&[b"data\ndata\n\n"]), [message("\n")]);
    }

    #[test]
    fn an_event_cut_off_by_the_end_of_the_stream_is_not_dispatched() {
        assert_eq!(
            parse_all(&[b"data: complete\n\ndata: partial\n"]),
            [message("complete")]
        );
    }

    #[test]
    fn an_id_with_a_nul_is_ignored() {
        let mut parser = SseParser::new(1 << 20);
        parse_with(&mut parser, &[b"id: 1\nid: a\0b\ndata: x\n\n"]);
        assert_eq!(parser.last_event_id(), Some("1"));
    }

    #[test]
    fn the_last_event_id_is_that_of_the_last_complete_event_even_without_data() {
        let mut parser = SseParser::new(1 << 20);
        assert_eq!(parser.last_event_id(), None);
        // A priming event: an id and empty data.
        assert_eq!(
            parse_with(&mut parser, &[b"id: 1-0\ndata:\n\n"]),
            [message("")]
        );
        assert_eq!(parser.last_event_id(), Some("1-0"));
        // An id with no data at all dispatches nothing, yet counts.
        assert!(parse_with(&mut parser, &[b"id: 1-1\n\n"]).is_empty());
        assert_eq!(parser.last_event_id(), Some("1-1"));
        // The id of an event cut off before its blank line does not.
        parse_with(&mut parser, &[b"id: 1-2\ndata: x\n"]);
        assert_eq!(parser.last_event_id(), Some("1-1"));
    }

    #[test]
    fn retry_takes_only_digits_and_survives_a_restart_with_the_id() {
        let mut parser = SseParser::new(1 << 20);
        assert_eq!(parser.retry(), None);
        parse_with(
            &mut parser,
            &[b"retry: 250\n\nretry: soon\nretry: -1\nretry: +5\nretry:\n\n"],
        );
        assert_eq!(parser.retry(), Some(Duration::from_millis(250)));
        parse_with(&mut parser, &[b"retry: 99999999999999999999999\n\n"]);
        assert_eq!(parser.retry(), Some(Duration::from_millis(u64::MAX)));

        // A connection lost inside an event: the new stream starts clean.
        let mut parser = SseParser::new(1 << 20);
        parse_with(
            &mut parser,
            &[b"retry: 20\nid: 3-1\ndata: one\n\nid: 3-2\nevent: note\ndata: hal"],
        );
        parser.restart();
        assert_eq!(
            parse_with(&mut parser, &[b"data: two\n\n"]),
            [message("two")]
        );
        assert_eq!(parser.last_event_id(), Some("3-1"));
        assert_eq!(parser.retry(), Some(Duration::from_millis(20)));
        // A BOM is allowed again at the start of the new stream.
        parser.restart();
        assert_eq!(
            parse_with(&mut parser, &[b"\xEF\xBB\xBFid: 3-3\ndata: three\n\n"]),
            [message("three")]
        );
        assert_eq!(parser.last_event_id(), Some("3-3"));
    }

    #[test]
    fn lines_and_events_past_the_limit_are_refused() {
        let mut parser = SseParser::new(16);
        let mut out = Vec::new();
        assert_eq!(
            parser.push(&[b'x'; 17], &mut out),
            Err(TooLarge { limit: 16 })
        );
        let mut parser = SseParser::new(16);
        assert!(parser.push(b"data: 0123456\n", &mut out).is_ok());
        assert_eq!(
            parser.push(b"data: 0123456789\n", &mut out),
            Err(TooLarge { limit: 16 })
        );
    }
}
