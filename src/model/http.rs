//! HTTP as the protocol core sees it: request headers in, a complete
//! response out. Plain data; the shell (`http/`) maps them to tiny_http.

use serde_json::Value;

/// Request headers, looked up case-insensitively. Names and values share
/// one buffer (two allocations per request, not two per header: this runs
/// for every request). Names are kept in lower case, so that a lookup by
/// a lower-case name (every one the host makes of its own) is a plain
/// comparison of bytes: ~18 lookups a request compared each header's name
/// letter by letter, ~3,000 instructions.
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
            let name_start = headers.text.len();
            headers.text.push_str(name);
            let name_end = headers.text.len();
            headers.text[name_start..name_end].make_ascii_lowercase();
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
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
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
}
