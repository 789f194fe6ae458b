//! HTTP as the protocol core sees it: request headers in, a complete
//! response out. Plain data; the shell (`http/`) maps them to tiny_http.

use serde_json::Value;

/// Request headers, looked up case-insensitively. Names and values share
/// one buffer (two allocations per request, not two per header: this runs
/// for every request). Names are kept in lower case, so that a lookup by
/// a lower-case name (every one the host makes of its own) is a plain
/// comparison of bytes rather than a case-folding one letter by letter:
/// a request is looked up in many times. The headers the host itself
/// reads on every request are found once, as they are copied, so a lookup
/// of one of those by its lower-case name is an index, not a walk over
/// every header (what each cost is in BENCHMARKS.md).
#[derive(Debug, Default)]
pub(crate) struct Headers {
    text: String,
    /// Per header, where its name ends and its value ends in `text`; each
    /// name starts where the previous value ended.
    spans: Vec<(usize, usize)>,
    /// Per name of [`KNOWN`], 1 + the position of its first header, or 0.
    known: [u16; KNOWN.len()],
}

/// The headers the host reads on every request, in lower case.
const KNOWN: [&str; 12] = [
    "host",
    "origin",
    "authorization",
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "transfer-encoding",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "expect",
];

/// Where `name` (in lower case) is in [`KNOWN`]. Inlined into a lookup by
/// a literal name, the match folds away.
#[inline]
fn known_slot(name: &str) -> Option<usize> {
    Some(match name {
        "host" => 0,
        "origin" => 1,
        "authorization" => 2,
        "content-type" => 3,
        "accept" => 4,
        "mcp-session-id" => 5,
        "mcp-protocol-version" => 6,
        "transfer-encoding" => 7,
        "mcp-method" => 8,
        "mcp-name" => 9,
        "last-event-id" => 10,
        "expect" => 11,
        _ => return None,
    })
}

impl Headers {
    /// The headers `pairs` (name, value), in order, copied once.
    pub(crate) fn new<'a, I>(pairs: I) -> Headers
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
        I::IntoIter: Clone,
    {
        let pairs = pairs.into_iter();
        let size = pairs.clone().map(|(n, v)| n.len() + v.len()).sum();
        let mut headers = Headers {
            text: String::with_capacity(size),
            spans: Vec::with_capacity(pairs.size_hint().0),
            known: [0; KNOWN.len()],
        };
        for (name, value) in pairs {
            let name_start = headers.text.len();
            headers.text.push_str(name);
            let name_end = headers.text.len();
            headers.text[name_start..name_end].make_ascii_lowercase();
            let position = u16::try_from(headers.spans.len() + 1).ok();
            if let (Some(slot), Some(position)) =
                (known_slot(&headers.text[name_start..name_end]), position)
            {
                if headers.known[slot] == 0 {
                    headers.known[slot] = position;
                }
            }
            headers.text.push_str(value);
            headers.spans.push((name_end, headers.text.len()));
        }
        headers
    }

    /// Every header, in the order received, its name in lower case.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.spans.iter().map(move |&(name_end, value_end)| {
            let pair = (&self.text[start..name_end], &self.text[name_end..value_end]);
            start = value_end;
            pair
        })
    }

    /// How many headers there are.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The first value of header `name` (in any case).
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        let Some(slot) = known_slot(name) else {
            return self.find(name);
        };
        match self.known[slot] {
            // Positions past u16's range are not indexed.
            0 if self.spans.len() >= usize::from(u16::MAX) => self.find(name),
            0 => None,
            position => {
                let (name_end, value_end) = self.spans[usize::from(position) - 1];
                self.text.get(name_end..value_end)
            }
        }
    }

    fn find(&self, name: &str) -> Option<&str> {
        // Lengths first, and bytes: slicing `text` as `str` at every
        // header would check each boundary for UTF-8.
        let (text, wanted) = (self.text.as_bytes(), name.as_bytes());
        let mut start = 0;
        for &(name_end, value_end) in &self.spans {
            if name_end - start == wanted.len() {
                let found = &text[start..name_end];
                if found == wanted || found.eq_ignore_ascii_case(wanted) {
                    return self.text.get(name_end..value_end);
                }
            }
            start = value_end;
        }
        None
    }
}

/// A response to write: status, headers and a complete body.
#[derive(Debug, PartialEq)]
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpResponse {
    pub(crate) fn json(status: u16, body: &Value) -> HttpResponse {
        // Straight into bytes: `to_string` would go through `fmt`.
        // Serializing a `Value` cannot fail (its keys are strings).
        HttpResponse::json_text(status, serde_json::to_vec(body).unwrap_or_default())
    }

    /// A response whose body is JSON text written already.
    pub(crate) fn json_text(status: u16, body: Vec<u8>) -> HttpResponse {
        HttpResponse {
            status,
            headers: vec![("Content-Type", "application/json".into())],
            body,
        }
    }

    pub(crate) fn empty(status: u16) -> HttpResponse {
        HttpResponse {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// An event stream that ends without a response: what a client that
    /// cancelled its request gets.
    pub(crate) fn end_of_stream() -> HttpResponse {
        HttpResponse {
            status: 200,
            headers: vec![("Content-Type", "text/event-stream".into())],
            body: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_found_in_any_case_and_the_first_value_wins() {
        let pairs = [("HOST", "a:1"), ("Mcp-Param-Region", "eu"), ("host", "b:2")];
        let headers = Headers::new(pairs.iter().copied());
        for name in ["host", "Host", "HOST"] {
            assert_eq!(headers.get(name), Some("a:1"), "{name}");
        }
        assert_eq!(headers.get("mcp-param-region"), Some("eu"));
        assert_eq!(headers.get("MCP-PARAM-REGION"), Some("eu"));
        assert_eq!(headers.get("hosts"), None);
        assert_eq!(headers.get("origin"), None);
        let names: Vec<&str> = headers.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["host", "mcp-param-region", "host"]);
        let values: Vec<&str> = headers.iter().map(|(_, value)| value).collect();
        assert_eq!(values, ["a:1", "eu", "b:2"], "values keep their case");
    }

    #[test]
    fn the_indexed_headers_answer_as_a_walk_over_them_would() {
        let pairs = [
            ("Accept", "application/json"),
            ("MCP-Session-Id", "s1"),
            ("X-Other", "x"),
            ("mcp-session-id", "s2"),
            ("ORIGIN", "http://localhost"),
            ("Expect", "100-continue"),
        ];
        let headers = Headers::new(pairs.iter().copied());
        for name in KNOWN {
            assert_eq!(known_slot(name).map(|slot| KNOWN[slot]), Some(name));
            assert_eq!(headers.get(name), headers.find(name), "{name}");
        }
        assert_eq!(headers.get("mcp-session-id"), Some("s1"));
        assert_eq!(headers.get("host"), None);
        assert_eq!(known_slot("x-other"), None);
    }

    #[test]
    fn a_header_past_the_index_is_still_found() {
        let filler = vec![("x-filler", "1"); usize::from(u16::MAX) + 5];
        let pairs: Vec<(&str, &str)> = filler
            .into_iter()
            .chain([("Host", "late:1"), ("host", "later:2")])
            .collect();
        let headers = Headers::new(pairs.iter().copied());
        assert_eq!(headers.get("host"), Some("late:1"));
        assert_eq!(headers.get("origin"), None);
    }
}
