//! HTTP as the protocol core sees it: request headers in, a complete
//! response out. Plain data; the shell (`http/`) maps them to tiny_http.

use serde_json::Value;

/// Request headers, looked up case-insensitively. Names and values share
/// one buffer (two allocations per request, not two per header: this runs
/// for every request).
#[derive(Debug, Default)]
pub(crate) struct Headers {
    text: String,
    /// Per header, where its name ends and its value ends in `text`; each
    /// name starts where the previous value ended.
    spans: Vec<(usize, usize)>,
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
        };
        for (name, value) in pairs {
            headers.text.push_str(name);
            let name_end = headers.text.len();
            headers.text.push_str(value);
            headers.spans.push((name_end, headers.text.len()));
        }
        headers
    }

    /// Every header, in the order received.
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

    /// The first value of header `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
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
        HttpResponse {
            status,
            headers: vec![("Content-Type", "application/json".into())],
            // Straight into bytes: `to_string` would go through `fmt`.
            // Serializing a `Value` cannot fail (its keys are strings).
            body: serde_json::to_vec(body).unwrap_or_default(),
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
