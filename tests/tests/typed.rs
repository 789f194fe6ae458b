//! Typed tools over real HTTP: arguments decoded into a Rust type (or
//! refused before any handler runs), results serialized from one, `?` in
//! handlers, a chain of tools with one `?`, and, with the `schemars`
//! feature, schemas derived from the types.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolhost::{
    CallContext, CallResult, Content, Event, HostConfig, StaticSurface, Tool, ToolError, ToolHost,
    ToolOutcome,
};
use toolhost_tests::{call_in, McpClient, REVISIONS};

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Sum {
    sum: i64,
}

/// `add`'s schema, as a user writes it without the `schemars` feature.
fn add_tool() -> Tool {
    Tool::new("add", "Adds two integers.")
        .input_schema(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        }))
}

/// A host whose events are recorded.
fn recording_host() -> (ToolHost, Arc<Mutex<Vec<Event>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let host = ToolHost::bind(
        HostConfig::default().on_event(move |event| sink.lock().unwrap().push(event.clone())),
    )
    .unwrap();
    (host, events)
}

/// A counter a handler bumps, and a clone for it.
fn counter() -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    (Arc::clone(&runs), runs)
}

#[test]
fn a_typed_tool_takes_its_arguments_as_a_type_and_its_result_is_structured() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .typed(add_tool(), |args: Add, _ctx| {
            Ok(Sum {
                sum: args.a + args.b,
            })
        })
        .unwrap();
    let session = host.open_session(surface);
    for revision in REVISIONS {
        let result = call_in(&host, &session, revision, "add", json!({"a": 2, "b": 40}));
        assert_eq!(result["isError"], false, "{revision}");
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": "{\"sum\":42}"}])
        );
        let structured = result.get("structuredContent");
        if revision >= "2025-06-18" {
            assert_eq!(structured, Some(&json!({"sum": 42})), "{revision}");
        } else {
            assert_eq!(
                structured, None,
                "{revision}: the revision has no structuredContent"
            );
        }
    }
}

/// The arguments of `limit`, stricter than its schema: `u8` refuses 300,
/// and no field but `limit` is allowed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Limit {
    limit: u8,
}

#[test]
fn arguments_that_pass_the_schema_but_do_not_decode_are_refused_like_a_violation() {
    let (host, events) = recording_host();
    let (runs, seen) = counter();
    let surface = StaticSurface::new()
        .typed(
            Tool::new("limit", "Takes a limit.").input_schema(json!({
                "type": "object", "properties": {"limit": {"type": "integer"}}})),
            move |args: Limit, _ctx| {
                seen.fetch_add(1, Ordering::SeqCst);
                Ok(format!("limit {}", args.limit))
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    let cases = [
        (
            json!({"limit": 300}),
            "/limit: invalid value: integer `300`, expected u8",
        ),
        (json!({}), "/: missing field `limit`"),
        (
            json!({"limit": 1, "colour": "red"}),
            "/colour: unknown field `colour`, expected `limit`",
        ),
    ];
    for revision in REVISIONS {
        for (arguments, problem) in &cases {
            let refused = call_in(&host, &session, revision, "limit", arguments.clone());
            assert_eq!(refused["isError"], true, "{revision} {arguments}");
            assert_eq!(
                refused["content"][0]["text"],
                format!("Invalid arguments for tool \"limit\":\n{problem}"),
                "{revision}"
            );
        }
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(session.calls_served(), 0, "no refused call was admitted");
    let refusals = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| matches!(event, Event::InvalidArguments { tool, .. } if tool == "limit"))
        .count();
    assert_eq!(
        refusals,
        cases.len() * REVISIONS.len(),
        "each refusal is reported as one"
    );
    assert!(!events
        .lock()
        .unwrap()
        .iter()
        .any(|event| matches!(event, Event::CallStarted { .. })));

    let mut client = session.client().unwrap();
    let fine = client.call_tool("limit", json!({"limit": 7})).unwrap();
    assert!(!fine.is_error);
    assert_eq!(fine.text(), "limit 7");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a call that decodes runs");
}

#[test]
fn the_schema_is_checked_first_and_reports_every_violation() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let (runs, seen) = counter();
    let surface = StaticSurface::new()
        .typed(add_tool(), move |args: Add, _ctx| {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok(Sum {
                sum: args.a + args.b,
            })
        })
        .unwrap();
    let session = host.open_session(surface);
    let mut client = session.client().unwrap();
    let refused = client.call_tool("add", json!({"a": "two"})).unwrap();
    assert!(refused.is_error);
    assert_eq!(
        refused.text(),
        "Invalid arguments for tool \"add\":\n\
         /b: expected integer, got nothing (required property is missing)\n\
         /a: expected integer, got \"two\""
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[derive(Deserialize)]
struct Note {
    id: String,
}

#[test]
fn question_mark_declines_with_the_errors_message_and_failed_hides_its_detail() {
    let (host, events) = recording_host();
    let note = Tool::new("read_note", "Reads a note by its numeric id.").input_schema(json!({
        "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}));
    let surface = StaticSurface::builder()
        .typed(note, |args: Note, _ctx| {
            let id: u32 = args.id.parse()?; // declined with the parse error
            if id == 13 {
                return Err(ToolError::failed(
                    "the notes database is locked by pid 4242",
                ));
            }
            if id > 100 {
                return Err(
                    ToolError::declined("no note has an id over 100").with_code(json!("range"))
                );
            }
            Ok(format!("note {id}"))
        })
        .tool(
            Tool::new("read_file", "Reads a file (untyped, io::Error declines)."),
            |args: &Value, _ctx: &CallContext| {
                std::fs::read_to_string(args["path"].as_str().unwrap_or("/nonexistent/toolhost"))
            },
        )
        .build()
        .unwrap();
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");

    let parsed = client.call("read_note", json!({"id": "seven"}));
    assert_eq!(parsed["isError"], true);
    assert_eq!(
        parsed["content"][0]["text"],
        "invalid digit found in string"
    );

    let coded = client.call("read_note", json!({"id": "101"}));
    assert_eq!(coded["content"][0]["text"], "no note has an id over 100");
    assert_eq!(coded["structuredContent"], json!({"code": "range"}));

    let failed = client.call("read_note", json!({"id": "13"}));
    assert_eq!(failed["isError"], true);
    assert!(
        !failed.to_string().contains("4242"),
        "the model does not see the detail: {failed}"
    );

    let fine = client.call("read_note", json!({"id": "7"}));
    assert_eq!(fine["isError"], false);
    assert_eq!(fine["content"][0]["text"], "note 7");
    assert!(
        fine.get("structuredContent").is_none(),
        "a string is text only"
    );

    let io = client.call("read_file", json!({}));
    assert_eq!(io["isError"], true);
    // The operating system's own words ("No such file or directory" on
    // Unix, another sentence on Windows), whatever they are.
    let missing = std::fs::read_to_string("/nonexistent/toolhost").unwrap_err();
    assert_eq!(io["content"][0]["text"], missing.to_string(), "{io}");

    let outcomes: Vec<CallResult> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            Event::CallFinished { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect();
    assert!(
        matches!(&outcomes[0], CallResult::Declined { reason } if reason == "invalid digit found in string")
    );
    assert!(
        matches!(&outcomes[2], CallResult::Failed { detail } if detail == "the notes database is locked by pid 4242"),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[3], CallResult::Success);
}

#[test]
fn a_typed_handler_may_answer_with_any_outcome_and_a_bad_result_fails() {
    let (host, events) = recording_host();
    let surface = StaticSurface::builder()
        .typed(
            Tool::new("picture", "Returns a picture and a caption."),
            |_args: Value, _ctx| {
                Ok(ToolOutcome::content([
                    Content::text("a red pixel"),
                    Content::image(&[0x89, b'P', b'N', b'G'], "image/png"),
                ]))
            },
        )
        .typed(add_tool(), |_args: Add, _ctx| {
            Ok(json!({"sum": "not a number"}))
        })
        .build()
        .unwrap();
    let session = host.open_session(surface);
    let mut client = session.client().unwrap();
    let picture = client.call_tool("picture", json!({})).unwrap();
    assert!(!picture.is_error);
    assert_eq!(picture.content.len(), 2);
    assert_eq!(picture.text(), "a red pixel");

    let bad = client.call_tool("add", json!({"a": 1, "b": 2})).unwrap();
    assert!(bad.is_error, "a result that breaks the output schema fails");
    assert!(bad.structured_content.is_none());
    assert!(events.lock().unwrap().iter().any(|event| matches!(
        event,
        Event::CallFinished { outcome: CallResult::Failed { detail }, .. }
            if detail.contains("does not match its outputSchema")
    )));
}

#[test]
fn a_chain_of_tools_needs_one_question_mark_and_reports_the_first_refusal() {
    let built = StaticSurface::builder()
        .tool(Tool::new("ping", "Answers pong."), |_args, _ctx| "pong")
        .typed(add_tool(), |args: Add, _ctx| {
            Ok(Sum {
                sum: args.a + args.b,
            })
        })
        .build()
        .unwrap();
    assert_eq!(built.len(), 2);

    let refused = StaticSurface::builder()
        .tool(Tool::new("ping", "Answers pong."), |_args, _ctx| "pong")
        .tool(
            Tool::new("two words", "Breaks the name rules."),
            |_args, _ctx| "x",
        )
        .tool(Tool::new("ping", "A second ping."), |_args, _ctx| "pong")
        .build()
        .unwrap_err();
    assert!(
        matches!(&refused, toolhost::Error::InvalidToolName { name, .. } if name == "two words"),
        "the first refusal: {refused}"
    );
}

/// Schemas derived with `schemars` (`cargo test --features schemars`).
#[cfg(feature = "schemars")]
mod derived {
    use super::*;
    use schemars::JsonSchema;
    use std::collections::BTreeMap;
    use toolhost_tests::ask;

    /// Where a note goes.
    #[derive(Deserialize, Serialize, JsonSchema)]
    struct Place {
        folder: String,
        pinned: bool,
    }

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Priority {
        Low,
        High,
    }

    /// A note to add.
    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct AddNote {
        /// The note's title.
        title: String,
        body: Option<String>,
        tags: Vec<String>,
        priority: Priority,
        place: Place,
        stars: u8,
        weight: f64,
        extra: BTreeMap<String, i32>,
    }

    #[derive(Serialize, JsonSchema)]
    struct Added {
        id: u64,
        place: Place,
    }

    /// Actions of different shapes: a tagged enum of struct variants.
    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "action", rename_all = "lowercase")]
    enum Edit {
        Rename { to: String },
        Delete { forever: bool },
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)] // refused before it is ever decoded
    struct Tree {
        children: Vec<Tree>,
    }

    fn sample() -> Value {
        json!({"title": "t", "body": null, "tags": ["a"], "priority": "high",
               "place": {"folder": "inbox", "pinned": false}, "stars": 5, "weight": 0.5,
               "extra": {"k": 1}})
    }

    /// Every key anywhere in `value`.
    fn keys(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map {
                    out.push(key.clone());
                    keys(item, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| keys(item, out)),
            _ => {}
        }
    }

    #[test]
    fn derived_schemas_are_inline_object_schemas_without_a_meta_schema() {
        let tools = [
            Tool::new("add_note", "Adds a note.")
                .input_schema_for::<AddNote>()
                .output_schema_for::<Added>(),
            Tool::new("edit", "Edits a note.").input_schema_for::<Edit>(),
        ];
        for tool in &tools {
            assert!(tool.validate().is_ok(), "{:?}", tool.validate());
            assert_eq!(
                tool.schema_warnings(),
                Vec::<String>::new(),
                "{}",
                tool.name()
            );
        }
        let host = ToolHost::bind(HostConfig::default()).unwrap();
        let surface = StaticSurface::builder()
            .typed(tools[0].clone(), |note: AddNote, _ctx| {
                Ok(Added {
                    id: 1,
                    place: note.place,
                })
            })
            .typed(tools[1].clone(), |edit: Edit, _ctx| {
                Ok(match edit {
                    Edit::Rename { to } => format!("renamed to {to}"),
                    Edit::Delete { forever } => format!("deleted (forever: {forever})"),
                })
            })
            .build()
            .unwrap();
        let session = host.open_session(surface);
        for revision in REVISIONS {
            // `ask` checks the list against the revision's schema.
            let list = ask(
                &host,
                &session,
                revision,
                "tools/list",
                json!({}),
                "ListToolsResult",
            );
            for tool in list["tools"].as_array().unwrap() {
                for schema in [&tool["inputSchema"], &tool["outputSchema"]] {
                    if schema.is_null() {
                        continue;
                    }
                    assert_eq!(schema["type"], "object", "{revision}: {schema}");
                    let mut found = Vec::new();
                    keys(schema, &mut found);
                    for banned in ["$schema", "$ref", "$defs", "definitions"] {
                        assert!(!found.iter().any(|k| k == banned), "{banned} in {schema}");
                    }
                }
            }
        }
        let input = &ask(
            &host,
            &session,
            "2025-11-25",
            "tools/list",
            json!({}),
            "ListToolsResult",
        )["tools"][0]["inputSchema"];
        assert_eq!(
            input["properties"]["title"]["description"],
            "The note's title."
        );
        assert_eq!(input["additionalProperties"], false);

        let oracle = jsonschema::validator_for(input).unwrap();
        assert!(
            oracle.is_valid(&sample()),
            "the derived schema accepts a real value"
        );

        let mut client = session.client().unwrap();
        let added = client.call_tool("add_note", sample()).unwrap();
        assert!(!added.is_error, "{}", added.text());
        assert_eq!(
            added.structured_content,
            Some(json!({"id": 1, "place": {"folder": "inbox", "pinned": false}}))
        );
        let renamed = client
            .call_tool("edit", json!({"action": "rename", "to": "x"}))
            .unwrap();
        assert_eq!(renamed.text(), "renamed to x");
    }

    #[test]
    fn a_derived_schema_refuses_bad_arguments_before_the_handler() {
        let host = ToolHost::bind(HostConfig::default()).unwrap();
        let (runs, seen) = counter();
        let surface = StaticSurface::new()
            .typed(
                Tool::new("add_note", "Adds a note.").input_schema_for::<AddNote>(),
                move |_note: AddNote, _ctx| {
                    seen.fetch_add(1, Ordering::SeqCst);
                    Ok("added")
                },
            )
            .unwrap();
        let session = host.open_session(surface);
        let mut client = session.client().unwrap();
        let mut bad = sample();
        bad["stars"] = json!(300);
        bad["priority"] = json!("urgent");
        let refused = client.call_tool("add_note", bad).unwrap();
        assert!(refused.is_error);
        let text = refused.text();
        assert!(
            text.contains("/stars: expected integer ≤ 255, got 300"),
            "{text}"
        );
        assert!(text.contains("/priority: "), "{text}");
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        assert!(!client.call_tool("add_note", sample()).unwrap().is_error);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_type_whose_schema_cannot_reach_every_agent_is_refused_with_the_reason() {
        let recursive = StaticSurface::new()
            .typed(
                Tool::new("tree", "Takes a tree.").input_schema_for::<Tree>(),
                |_tree: Tree, _ctx| Ok("ok"),
            )
            .unwrap_err();
        assert!(
            recursive
                .to_string()
                .contains("needs a $ref (the type is recursive)"),
            "{recursive}"
        );
        let scalar = Tool::new("count", "Returns a count.")
            .output_schema_for::<u32>()
            .validate()
            .unwrap_err();
        assert!(
            scalar
                .to_string()
                .contains("does not describe a JSON object"),
            "{scalar}"
        );
    }

    #[test]
    fn a_derived_definition_can_be_snapshot_tested_without_listing_it_through_a_client() {
        /// What to search for.
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)] // only its schema is looked at
        struct Search {
            /// Words to look for.
            query: String,
        }
        let tool = Tool::new("search_notes", "Finds notes.").input_schema_for::<Search>();
        let snapshot = json!({
            "name": "search_notes",
            "description": "Finds notes.",
            "inputSchema": {
                "type": "object",
                "description": "What to search for.",
                "properties": {"query": {"type": "string", "description": "Words to look for."}},
                "required": ["query"],
                "title": "Search",
            },
        });
        assert_eq!(serde_json::to_value(&tool).unwrap(), snapshot);
        assert_eq!(tool.input_schema_json(), &snapshot["inputSchema"]);
        // What a client lists is the same definition.
        let host = ToolHost::bind(HostConfig::default()).unwrap();
        let session = host.open_session(StaticSurface::new().tool(tool, |_, _| "found").unwrap());
        let listed = ask(
            &host,
            &session,
            "2026-07-28",
            "tools/list",
            json!({}),
            "ListToolsResult",
        );
        assert_eq!(listed["tools"][0], snapshot);
        assert_ne!(
            listed["tools"][0]["inputSchema"],
            json!({"type": "object", "properties": {}})
        );
    }
}
