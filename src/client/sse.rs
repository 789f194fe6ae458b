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

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The event type; `message` when the server named none.
    pub(crate) event: String,
    /// The data lines joined with `\n`.
    pub(crate) data: String,
    /// The last event id seen on the stream, if any.
    pub(crate) id: Option<String>,
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
    last_id: Option<String>,
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
            after_cr: false,
            at_start: true,
            limit,
        }
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
                // `retry` tunes reconnection, which this client does not do;
                // unknown fields are ignored, as the standard says.
                _ => {}
            }
        }
        // Keep the buffer's allocation for the next line.
        line.clear();
        self.line = line;
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
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
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new(1 << 20);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk, &mut out).unwrap();
        }
        out
    }

    fn message(data: &str) -> SseEvent {
        SseEvent {
            event: "message".into(),
            data: data.into(),
            id: None,
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
                    id: Some("7".into())
                },
                SseEvent {
                    event: "message".into(),
                    data: "c".into(),
                    id: Some("7".into())
                },
                SseEvent {
                    event: "message".into(),
                    data: "d".into(),
                    id: Some("7".into())
                },
            ]
        );
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(parse_all(&[a, b]), whole, "split at {split}");
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
        let events = parse_all(&[b"id: 1\nid: a\0b\ndata: x\n\n"]);
        assert_eq!(events[0].id.as_deref(), Some("1"));
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
