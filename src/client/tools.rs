//! What the server says about tools, read into the crate's own vocabulary:
//! the definitions of `tools/list` as [`Tool`]s, the result of
//! `tools/call` as a [`ToolResult`] — the types a host serves its own
//! tools with, so a gateway passes them on without converting them.
//!
//! Reading is lenient where MCP revisions differ (`resultType` absent means
//! complete, `isError` absent means false, unknown content types and tool
//! fields are kept as JSON) and strict where a missing field would mislead
//! (a tool without a name, a result without `content`).

use std::collections::HashSet;
use std::io;

use serde_json::{Map, Value};

use super::error::ClientError;
use crate::model::tool_result::Unreadable;
use crate::model::{Tool, ToolResult};

/// The most `tools/list` pages followed: a bound on round trips for a
/// server whose pages are empty, which the bounds on tools and bytes
/// never reach.
const MAX_PAGES: usize = 10_000;

/// The default of `max_listed_tools` (over HTTP and stdio alike): 4,096
/// tools in one listing, across its pages. The largest servers in use list
/// a few hundred; every tool listed goes into each request an agent sends
/// its model, and model APIs take a hundred or so per request (OpenAI's
/// caps it at 128). A listing past 4,096 is a server gone wrong, or one
/// that tries to fill the client's memory: 60 pages of 3,000 tools grew a
/// gateway by more than 1 GiB before there was a bound.
pub(crate) const DEFAULT_MAX_LISTED_TOOLS: usize = 4096;

/// The default of `max_listing_bytes`: 16 MiB of tool definitions (as
/// JSON) in one listing, across its pages — as much as one message may
/// carry by default ([`DEFAULT_MAX_MESSAGE_BYTES`](crate::child::DEFAULT_MAX_MESSAGE_BYTES)),
/// so a server that fits its listing into one page fits it into many, and
/// 4,096 tools of 4 KiB each (a large schema) fit too. Read, a listing
/// costs a few times its bytes; this bounds that at some tens of MiB.
pub(crate) const DEFAULT_MAX_LISTING_BYTES: usize = 16 << 20;

/// The bound on one listing, across all its pages, as a client is set up;
/// the setters that change it are named in the error past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ListingBound {
    /// The most tools.
    pub(crate) tools: usize,
    /// The most bytes of tool definitions, as JSON.
    pub(crate) bytes: usize,
    /// The setters of the two, e.g. `ClientBuilder::max_listed_tools`.
    settings: (&'static str, &'static str),
}

impl ListingBound {
    /// The default bound of an HTTP client.
    pub(crate) const HTTP: ListingBound = ListingBound::new(
        "ClientBuilder::max_listed_tools",
        "ClientBuilder::max_listing_bytes",
    );

    /// The default bound of a stdio client.
    pub(crate) const STDIO: ListingBound = ListingBound::new(
        "StdioServer::max_listed_tools",
        "StdioServer::max_listing_bytes",
    );

    const fn new(tools: &'static str, bytes: &'static str) -> ListingBound {
        ListingBound {
            tools: DEFAULT_MAX_LISTED_TOOLS,
            bytes: DEFAULT_MAX_LISTING_BYTES,
            settings: (tools, bytes),
        }
    }
}

/// Every tool a server lists, asking `request` for each page (given the
/// params, with the cursor from the second page on) and following
/// `nextCursor` until the last page — unless the listing runs past
/// `bound`, counted across its pages: then nothing of it is kept, no
/// further page is asked for, and the error names `server` (as the
/// transport names it, e.g. `the stdio MCP server "npx"`), what was
/// counted and the setting. What a listing can cost is so the bound plus
/// one page (itself within the client's message limit).
pub(crate) fn list_pages(
    mut request: impl FnMut(Map<String, Value>) -> Result<Value, ClientError>,
    bound: ListingBound,
    server: impl FnOnce() -> String,
) -> Result<Vec<Tool>, ClientError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut bytes: u64 = 0;
    for pages in 1..=MAX_PAGES {
        let mut params = Map::new();
        if let Some(cursor) = cursor.take() {
            params.insert("cursor".into(), cursor.into());
        }
        let (page, next) = split_tools_page(request(params)?)?;
        bytes += json_bytes(&page);
        let count = tools.len() + page.len();
        let past = if count > bound.tools {
            Some((bound.tools, "tools", bound.settings.0))
        } else if bytes > bound.bytes as u64 {
            Some((bound.bytes, "bytes", bound.settings.1))
        } else {
            None
        };
        if let Some((limit, unit, setting)) = past {
            return Err(ClientError::ListingTooLarge {
                server: server(),
                tools: count,
                bytes,
                pages,
                limit,
                unit,
                setting,
            });
        }
        tools.extend(read_tools(page)?);
        match next {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ClientError::malformed(format!(
                    "tools/list returned the cursor {next:?} twice, which would loop forever"
                )))
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ClientError::malformed(format!(
        "tools/list did not end within {MAX_PAGES} pages"
    )))
}

/// The bytes of the definitions `tools` written as JSON (each alone, so
/// an empty page counts nothing), counted without writing them.
fn json_bytes(tools: &[Value]) -> u64 {
    struct Count(u64);
    impl io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    for tool in tools {
        // Writing a Value cannot fail, and the counter never does.
        let _ = serde_json::to_writer(&mut count, tool);
    }
    count.0
}

/// One page of `tools/list` taken apart: the tools as sent, and the
/// cursor of the next page.
fn split_tools_page(result: Value) -> Result<(Vec<Value>, Option<String>), ClientError> {
    let Value::Object(mut result) = result else {
        return Err(ClientError::malformed(
            "the tools/list result is not an object",
        ));
    };
    let Some(Value::Array(tools)) = result.remove("tools") else {
        return Err(ClientError::malformed(
            "the tools/list result has no tools array",
        ));
    };
    let cursor = match result.remove("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor),
        Some(other) => {
            return Err(ClientError::malformed(format!(
                "nextCursor must be a string, got {other}"
            )))
        }
    };
    Ok((tools, cursor))
}

/// The tools of a page, read.
fn read_tools(tools: Vec<Value>) -> Result<Vec<Tool>, ClientError> {
    tools
        .into_iter()
        .map(|tool| Tool::from_listed(tool).map_err(ClientError::malformed))
        .collect()
}

/// The result of `tools/call`, complete (a `resultType` other than
/// `"complete"` is for the caller to have handled).
pub(crate) fn read_result(result: Value) -> Result<ToolResult, ClientError> {
    if let Some(kind) = result.get("resultType").and_then(Value::as_str) {
        if kind != "complete" {
            return Err(ClientError::malformed(format!(
                "the tools/call result has resultType {kind:?}, which this client does not handle (only \"complete\")"
            )));
        }
    }
    ToolResult::from_json(result).map_err(|unreadable| {
        ClientError::malformed(match unreadable {
            Unreadable::NotAnObject(_) => "the tools/call result is not an object".to_owned(),
            Unreadable::NoContent(_) => "the tools/call result has no content array".to_owned(),
            Unreadable::IsErrorNotBool(other) => format!("isError must be a boolean, got {other}"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Content;
    use serde_json::json;

    #[test]
    fn every_content_type_of_the_schema_is_read_and_unknown_ones_are_kept() {
        let result = read_result(json!({
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "AAA=", "mimeType": "image/png"},
                {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "file:///y", "mimeType": "text/plain", "text": "why"}},
                {"type": "resource", "resource": {"uri": "file:///z", "mimeType": "application/octet-stream", "blob": "AQI="}},
                {"type": "hologram", "frames": 3},
                {"type": "text"},
            ],
            "structuredContent": {"n": 1},
            "isError": true,
            "resultType": "complete",
            "_meta": {"k": "v"},
        }))
        .unwrap();
        assert_eq!(
            result.content[..6],
            [
                Content::text("a"),
                Content::image_base64("AAA=", "image/png"),
                Content::audio_base64("BBB=", "audio/wav"),
                Content::resource_link("file:///x", "x").with_mime_type("text/plain"),
                Content::resource_text("file:///y", "text/plain", "why"),
                Content::resource_blob("file:///z", "application/octet-stream", &[1, 2]),
            ]
        );
        assert!(result.content[..6].iter().all(|c| c.as_unknown().is_none()));
        assert_eq!(
            result.content[6].as_unknown(),
            Some(&json!({"type": "hologram", "frames": 3}))
        );
        assert_eq!(
            result.content[7].as_unknown(),
            Some(&json!({"type": "text"}))
        );
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        assert!(result.is_error);
        assert_eq!(result.meta.unwrap()["k"], "v");
        assert_eq!(
            read_result(
                json!({"content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]})
            )
            .unwrap()
            .text(),
            "x\ny"
        );
    }

    #[test]
    fn a_result_without_content_or_with_another_result_type_is_malformed() {
        for bad in [
            json!({"isError": false}),
            json!([]),
            json!({"content": [], "isError": "no"}),
            json!({"content": [], "resultType": "incomplete"}),
        ] {
            assert!(
                matches!(read_result(bad.clone()), Err(ClientError::Malformed { .. })),
                "{bad}"
            );
        }
        let minimal = read_result(json!({"content": []})).unwrap();
        assert!(!minimal.is_error && minimal.structured_content.is_none());
    }

    /// A server of `pages` pages of `per_page` tools each; the cursors it
    /// was asked for go into `asked`.
    fn paged(
        pages: usize,
        per_page: usize,
        asked: &mut Vec<Option<String>>,
    ) -> impl FnMut(Map<String, Value>) -> Result<Value, ClientError> + '_ {
        move |params| {
            let cursor = params
                .get("cursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let page: usize = cursor.as_deref().map_or(0, |c| c.parse().unwrap());
            asked.push(cursor);
            let tools: Vec<Value> = (0..per_page)
                .map(|n| json!({"name": format!("t{page}_{n}"), "inputSchema": {"type": "object"}}))
                .collect();
            let mut result = json!({"tools": tools});
            if page + 1 < pages {
                result["nextCursor"] = (page + 1).to_string().into();
            }
            Ok(result)
        }
    }

    fn bound(tools: usize, bytes: usize) -> ListingBound {
        ListingBound {
            tools,
            bytes,
            ..ListingBound::STDIO
        }
    }

    #[test]
    fn a_listing_within_the_bound_is_read_whole_across_its_pages() {
        let mut asked = Vec::new();
        let tools = list_pages(paged(3, 4, &mut asked), bound(12, 1 << 20), || "x".into()).unwrap();
        assert_eq!(tools.len(), 12, "exactly the bound is within it");
        assert_eq!(asked, [None, Some("1".into()), Some("2".into())]);
    }

    #[test]
    fn a_listing_past_its_tool_bound_is_dropped_and_no_later_page_is_asked_for() {
        let mut asked = Vec::new();
        let err = list_pages(paged(100, 4, &mut asked), bound(10, 1 << 20), || {
            "the stdio MCP server \"x\"".into()
        })
        .unwrap_err();
        let ClientError::ListingTooLarge {
            tools,
            pages,
            limit,
            unit,
            setting,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!((*tools, *pages, *limit, *unit), (12, 3, 10, "tools"));
        assert_eq!(*setting, "StdioServer::max_listed_tools");
        assert_eq!(asked.len(), 3, "nothing asked past the page that crossed");
        let text = err.to_string();
        assert!(
            text.starts_with("the stdio MCP server \"x\" listed 12 tools (")
                && text.contains("in 3 pages of tools/list, past the limit of 10 tools")
                && text
                    .ends_with("raise StdioServer::max_listed_tools if it really lists that many"),
            "{text}"
        );
    }

    #[test]
    fn a_listing_past_its_byte_bound_is_dropped_naming_the_byte_setting() {
        let one = json_bytes(&[json!({"name": "t0_0", "inputSchema": {"type": "object"}})]);
        assert_eq!(
            one,
            r#"{"name":"t0_0","inputSchema":{"type":"object"}}"#.len() as u64
        );
        let mut asked = Vec::new();
        let err = list_pages(
            paged(100, 4, &mut asked),
            ListingBound {
                bytes: (one * 6) as usize,
                ..ListingBound::HTTP
            },
            || "the MCP server at 127.0.0.1:1".into(),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                ClientError::ListingTooLarge {
                    tools: 8,
                    pages: 2,
                    unit: "bytes",
                    setting: "ClientBuilder::max_listing_bytes",
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(asked.len(), 2);
        // Empty pages count no bytes: only the page bound ends them.
        let empty = list_pages(paged(5, 0, &mut Vec::new()), bound(0, 0), String::new).unwrap();
        assert!(empty.is_empty());
    }

    /// One page read as `list_pages` reads it.
    fn read_tools_page(result: Value) -> Result<(Vec<Tool>, Option<String>), ClientError> {
        let (tools, cursor) = split_tools_page(result)?;
        Ok((read_tools(tools)?, cursor))
    }

    #[test]
    fn a_tools_page_yields_tools_and_its_cursor() {
        let (tools, cursor) = read_tools_page(json!({
            "tools": [
                {"name": "a", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                {"name": "b", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
            ],
            "nextCursor": "p2",
        }))
        .unwrap();
        assert_eq!(tools[0].name(), "a");
        assert_eq!(
            serde_json::to_value(tools[0].hints()).unwrap(),
            json!({"readOnlyHint": true})
        );
        assert_eq!(tools[0].input_schema_json(), &json!({"type": "object"}));
        assert_eq!(tools[0].output_schema_json(), None);
        assert_eq!(
            tools[1].output_schema_json(),
            Some(&json!({"type": "object"}))
        );
        assert_eq!(cursor.as_deref(), Some("p2"));
        for bad in [
            json!({}),
            json!({"tools": [{"inputSchema": {}}]}),
            json!({"tools": [{"name": "a"}]}),
            json!({"tools": [], "nextCursor": 3}),
        ] {
            assert!(read_tools_page(bad.clone()).is_err(), "{bad}");
        }
    }
}
