//! Reading an event stream as it arrives, chunk by chunk, over a raw
//! connection: for tests that must act between events.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// What arrives on a stream.
#[derive(Debug, PartialEq)]
pub enum Item {
    Message(Value),
    Comment,
    End,
}

/// Reads an event stream as it arrives, chunk by chunk.
pub struct Events {
    reader: BufReader<TcpStream>,
    pending: String,
}

impl Events {
    /// Sends `head_and_body` and reads the response head, which must open
    /// an event stream.
    pub fn open(addr: std::net::SocketAddr, request: &str) -> Events {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut content_type = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-type") {
                    content_type = Some(value.trim().to_owned());
                }
            }
        }
        assert_eq!(content_type.as_deref(), Some("text/event-stream"));
        Events {
            reader,
            pending: String::new(),
        }
    }

    /// The next event, comment or end of stream (bounded by the read timeout).
    pub fn next(&mut self) -> Item {
        loop {
            if let Some(at) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..at + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if data.is_empty() {
                    return Item::Comment;
                }
                return Item::Message(serde_json::from_str(&data.join("\n")).unwrap());
            }
            let mut size = String::new();
            self.reader
                .read_line(&mut size)
                .expect("the stream stays readable");
            let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
            if size == 0 {
                return Item::End;
            }
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).unwrap();
            self.pending
                .push_str(std::str::from_utf8(&chunk[..size]).unwrap());
        }
    }

    /// The next message, skipping keep-alive comments.
    pub fn next_message(&mut self) -> Option<Value> {
        loop {
            match self.next() {
                Item::Message(message) => return Some(message),
                Item::Comment => continue,
                Item::End => return None,
            }
        }
    }
}
