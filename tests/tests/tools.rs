//! Tool definitions and content blocks as each revision's clients see them,
//! over real HTTP, every message checked against that revision's schema;
//! and calls refused for their arguments before any handler runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use toolhost::{
    surface_fn, Content, Event, HostConfig, Icon, IconTheme, Role, StaticSurface, Tool,
    ToolAnnotations, ToolHost, ToolOutcome, ToolSession,
};
use toolhost_tests::{
    ask, schema, stateless_post, Conn, EventLog, McpClient, Reply, STATEFUL, STATELESS,
};

fn full_tool() -> Tool {
    let mut meta = Map::new();
    meta.insert("com.example/owner".into(), json!("notes-team"));
    Tool::new(
        "search_notes",
        "Searches the notes and returns the best matches.",
    )
    .title("Search notes")
    .input_schema(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "required": ["query"],
        "additionalProperties": false,
    }))
    .output_schema(json!({
        "type": "object",
        "properties": {"hits": {"type": "array", "items": {"type": "string"}}},
        "required": ["hits"],
    }))
    .annotations(
        ToolAnnotations::new()
            .title("Search")
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
    .icon(
        Icon::new("https://example.com/search.png")
            .mime_type("image/png")
            .sizes(["48x48", "96x96"])
            .theme(IconTheme::Light),
    )
    .icon(Icon::new("data:image/svg+xml;base64,PHN2Zy8+"))
    .meta(meta)
}

#[test]
fn each_tool_field_reaches_exactly_the_revisions_that_know_it() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .tool(full_tool(), |_, _| ToolOutcome::json(json!({"hits": []})))
        .unwrap()
        .tool(Tool::new("bare", "No extras."), |_, _| {
            ToolOutcome::text("ok")
        })
        .unwrap();
    let session = host.open_session(surface);
    for revision in STATEFUL.into_iter().chain([STATELESS]) {
        let list = ask(
            &host,
            &session,
            revision,
            "tools/list",
            json!({}),
            "ListToolsResult",
        );
        let [tool, bare] = [&list["tools"][0], &list["tools"][1]];
        for listed in [tool, bare] {
            schema::assert_valid(revision, "Tool", listed);
        }
        assert_eq!(tool["name"], "search_notes");
        assert_eq!(tool["inputSchema"]["required"], json!(["query"]));
        let since = |first: &str| revision >= first;
        let present = |field: &str| tool.get(field).is_some();
        assert_eq!(present("title"), since("2025-06-18"), "{revision} title");
        assert_eq!(
            present("outputSchema"),
            since("2025-06-18"),
            "{revision} outputSchema"
        );
        assert_eq!(present("_meta"), since("2025-06-18"), "{revision} _meta");
        assert_eq!(
            present("annotations"),
            since("2025-03-26"),
            "{revision} annotations"
        );
        assert_eq!(present("icons"), since("2025-11-25"), "{revision} icons");
        if since("2025-03-26") {
            assert_eq!(
                tool["annotations"],
                json!({"title": "Search", "readOnlyHint": true, "destructiveHint": false,
                       "idempotentHint": true, "openWorldHint": false})
            );
        }
        if since("2025-11-25") {
            assert_eq!(
                tool["icons"],
                json!([
                    {"src": "https://example.com/search.png", "mimeType": "image/png",
                     "sizes": ["48x48", "96x96"], "theme": "light"},
                    {"src": "data:image/svg+xml;base64,PHN2Zy8+"},
                ])
            );
        }
        if since("2025-06-18") {
            assert_eq!(tool["_meta"], json!({"com.example/owner": "notes-team"}));
        }
        let bare_fields: Vec<&String> = bare.as_object().unwrap().keys().collect();
        assert_eq!(
            bare_fields,
            ["description", "inputSchema", "name"],
            "{revision}: unset fields are not sent"
        );
    }
}

fn gallery() -> Vec<Content> {
    vec![
        Content::text("three blocks follow").with_audience([Role::Assistant]),
        Content::image(&[0x89, b'P', b'N', b'G'], "image/png")
            .with_audience([Role::User, Role::Assistant])
            .with_priority(0.9),
        Content::audio(b"RIFF", "audio/wav").with_last_modified("2025-01-12T15:00:58Z"),
        Content::resource_link("file:///notes/today.md", "today.md")
            .with_title("Today's notes")
            .with_mime_type("text/markdown")
            .with_description("The note the search matched best.")
            .with_size(1_234)
            .with_priority(0.5),
        Content::resource_text("file:///notes/a.txt", "text/plain", "hello"),
        Content::resource_blob(
            "file:///notes/a.bin",
            "application/octet-stream",
            &[0, 1, 2, 255],
        )
        .with_last_modified("2025-01-12T15:00:58Z"),
    ]
}

#[test]
fn every_content_type_and_its_annotations_validate_in_every_revision() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .tool(
            Tool::new("gallery", "Returns one block of each type."),
            |_, _| ToolOutcome::content(gallery()),
        )
        .unwrap();
    let session = host.open_session(surface);
    for revision in STATEFUL.into_iter().chain([STATELESS]) {
        let params = json!({"name": "gallery", "arguments": {}});
        let result = ask(
            &host,
            &session,
            revision,
            "tools/call",
            params,
            "CallToolResult",
        );
        let blocks = result["content"].as_array().unwrap();
        let since = |first: &str| revision >= first;
        let types: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
        let audio = if since("2025-03-26") { "audio" } else { "text" };
        let link = if since("2025-06-18") {
            "resource_link"
        } else {
            "text"
        };
        assert_eq!(
            types,
            ["text", "image", audio, link, "resource", "resource"],
            "{revision}"
        );
        assert_eq!(blocks[0]["annotations"], json!({"audience": ["assistant"]}));
        assert_eq!(
            blocks[1]["data"], "iVBORw==",
            "the bytes are base64-encoded"
        );
        assert_eq!(
            blocks[1]["annotations"],
            json!({"audience": ["user", "assistant"], "priority": 0.9})
        );
        assert_eq!(
            blocks[2].get("annotations").is_some(),
            since("2025-06-18"),
            "{revision}: lastModified is the only annotation of the audio block"
        );
        if since("2025-06-18") {
            assert_eq!(
                blocks[3],
                json!({"type": "resource_link", "uri": "file:///notes/today.md", "name": "today.md",
                       "title": "Today's notes", "mimeType": "text/markdown",
                       "description": "The note the search matched best.", "size": 1234,
                       "annotations": {"priority": 0.5}})
            );
            assert_eq!(
                blocks[5]["annotations"]["lastModified"],
                "2025-01-12T15:00:58Z"
            );
        } else {
            assert_eq!(
                blocks[3]["text"],
                "resource today.md (file:///notes/today.md)"
            );
            assert!(blocks[5].get("annotations").is_none());
        }
        assert_eq!(
            blocks[4]["resource"],
            json!({"uri": "file:///notes/a.txt", "mimeType": "text/plain", "text": "hello"})
        );
        assert_eq!(blocks[5]["resource"]["blob"], "AAEC/w==");
    }
}

/// A surface whose `search_notes` handler counts its runs and answers with
/// `answer`.
fn counted_search(answer: Value) -> (StaticSurface, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let surface = StaticSurface::new()
        .tool(full_tool(), move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::json(answer.clone())
        })
        .unwrap();
    (surface, hits)
}

#[test]
fn a_call_whose_arguments_break_the_schema_never_reaches_the_handler() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let (surface, hits) = counted_search(json!({"hits": []}));
    let session = host.open_session(surface);
    for (served, revision) in STATEFUL.into_iter().enumerate() {
        let mut client = McpClient::for_session(&host, &session);
        client.initialize(revision);
        let refused = client.call("search_notes", json!({"limit": -3, "colour": "red"}));
        assert_eq!(refused["isError"], true);
        assert_eq!(
            refused["content"][0]["text"],
            "Invalid arguments for tool \"search_notes\":\n\
             /query: expected string, got nothing (required property is missing)\n\
             /colour: unexpected property (allowed: limit, query)\n\
             /limit: expected integer ≥ 1, got -3"
        );
        let missing = client.request(
            "tools/call",
            json!({"name": "search_notes"}),
            "CallToolResult",
        );
        assert_eq!(
            missing["isError"], true,
            "absent arguments are checked as {{}}"
        );
        assert_eq!(
            hits.load(Ordering::SeqCst),
            served,
            "{revision}: the handler never ran"
        );
        assert_eq!(session.calls_served(), served as u64);
        let fine = client.call("search_notes", json!({"query": "rust", "limit": 3}));
        assert_eq!(fine["isError"], false, "{revision}: a good call still runs");
    }
    let params = json!({"name": "search_notes", "arguments": {"query": ""}});
    let stateless = ask(
        &host,
        &session,
        STATELESS,
        "tools/call",
        params,
        "CallToolResult",
    );
    assert_eq!(stateless["isError"], true);
    assert_eq!(
        stateless["content"][0]["text"],
        "Invalid arguments for tool \"search_notes\":\n/query: expected at least 1 character, got 0 (\"\")"
    );
    assert_eq!(hits.load(Ordering::SeqCst), STATEFUL.len());
    assert_eq!(session.calls_served(), STATEFUL.len() as u64);
}

#[test]
fn a_result_that_breaks_the_output_schema_becomes_a_failure_for_the_hook() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default())).unwrap();
    let (surface, hits) = counted_search(json!({"hits": [1]}));
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let result = client.call("search_notes", json!({"query": "rust"}));
    assert_eq!(result["isError"], true);
    assert!(result.get("structuredContent").is_none(), "{result}");
    assert!(
        !result.to_string().contains("hits"),
        "the model does not see the bad result"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(
        events.failures(),
        ["the structuredContent of tool \"search_notes\" does not match its outputSchema:\n/hits/0: expected string, got 1"]
    );
}

#[test]
fn opening_a_session_reports_the_schema_keywords_left_unchecked() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default())).unwrap();
    let surface = StaticSurface::new()
        .tool(
            Tool::new("typo", "A schema with a misspelled keyword.").input_schema(json!({
                "type": "object", "properties": {"a": {"type": "string"}}, "requried": ["a"]})),
            |_, _| ToolOutcome::text("ok"),
        )
        .unwrap()
        .tool(
            Tool::new("clean", "A schema with nothing unchecked."),
            |_, _| ToolOutcome::text("ok"),
        )
        .unwrap();
    let _session = host.open_session(surface);
    let reported = events.pick(|e| match e {
        Event::SchemaWarnings { tool, warnings } => Some((tool.clone(), warnings.clone())),
        _ => None,
    });
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0].0, "typo");
    assert!(
        reported[0].1.iter().any(|w| w.contains("requried")),
        "{reported:?}"
    );
}

/// The tools/list response of `revision` on a fresh connection, and the
/// tools in it; the message and the list checked against the revision's
/// schema, and the body sent whole with its length.
fn long_list(host: &ToolHost, session: &ToolSession, revision: &str) -> Vec<Value> {
    let reply: Reply = if revision == STATELESS {
        let mut conn = Conn::open(host.local_addr()).unwrap();
        stateless_post(
            &mut conn,
            &session.authorization(),
            1,
            "tools/list",
            json!({}),
            json!({}),
        )
    } else {
        let mut client = McpClient::for_session(host, session);
        client.initialize(revision);
        client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    };
    assert_eq!(reply.status, 200, "{revision}");
    assert_eq!(reply.header("transfer-encoding"), None, "{revision}");
    let length: usize = reply.header("content-length").unwrap().parse().unwrap();
    assert_eq!(length, reply.body.len(), "{revision}");
    let message = reply.json();
    schema::assert_valid(revision, "JSONRPCResponse", &message);
    schema::assert_valid(revision, "ListToolsResult", &message["result"]);
    message["result"]["tools"].as_array().unwrap().clone()
}

#[test]
fn a_thousand_tools_are_listed_whole_in_every_revision_and_as_the_surface_lists_them_now() {
    let tools: Vec<Tool> = (0..1000)
        .map(|n| {
            Tool::new(format!("tool_{n:04}"), "One of many.")
                .title(format!("Tool {n}"))
                .input_schema(json!({"type": "object", "properties": {"n": {"const": n}}}))
        })
        .collect();
    let listed = Arc::new(AtomicUsize::new(tools.len()));
    let now = Arc::clone(&listed);
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(surface_fn(
        move || tools[..now.load(Ordering::SeqCst)].to_vec(),
        |_, _, _| ToolOutcome::text("ok"),
    ));
    for revision in STATEFUL.into_iter().chain([STATELESS]) {
        listed.store(1000, Ordering::SeqCst);
        let all = long_list(&host, &session, revision);
        assert_eq!(all.len(), 1000, "{revision}");
        for (n, tool) in all.iter().enumerate() {
            assert_eq!(tool["name"], format!("tool_{n:04}"));
            assert_eq!(tool["inputSchema"]["properties"]["n"]["const"], n);
            let titled = revision >= "2025-06-18";
            assert_eq!(tool.get("title").is_some(), titled, "{revision}");
        }
        // The same tools, asked again after the surface withdrew most:
        // only what it lists now.
        listed.store(3, Ordering::SeqCst);
        let names: Vec<Value> = long_list(&host, &session, revision)
            .iter()
            .map(|tool| tool["name"].clone())
            .collect();
        assert_eq!(names, ["tool_0000", "tool_0001", "tool_0002"], "{revision}");
    }
}

#[test]
fn a_batch_answers_a_long_list_beside_its_other_replies() {
    let surface = (0..300).fold(StaticSurface::new(), |surface, n| {
        surface
            .tool(Tool::new(format!("t{n}"), "d"), |_, _| {
                ToolOutcome::text("ok")
            })
            .unwrap()
    });
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-03-26");
    let reply = client.post(&json!([
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
        {"jsonrpc": "2.0", "id": "bad", "method": "tools/list", "params": {"cursor": "x"}},
    ]));
    assert_eq!(reply.status, 200);
    let batch = reply.json();
    schema::assert_valid("2025-03-26", "JSONRPCBatchResponse", &batch);
    let replies = batch.as_array().unwrap();
    assert_eq!(replies.len(), 3);
    let by_id = |id: &str| replies.iter().find(|m| m["id"] == id).unwrap();
    schema::assert_valid("2025-03-26", "ListToolsResult", &by_id("list")["result"]);
    let tools = by_id("list")["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 300);
    assert_eq!(tools[299]["name"], "t299");
    assert_eq!(by_id("ping")["result"], json!({}));
    assert!(by_id("bad").get("result").is_none());
    assert_eq!(by_id("bad")["error"]["code"], -32602);
}
