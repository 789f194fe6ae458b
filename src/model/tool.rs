//! Tool definitions: what the model sees in `tools/list`.
//!
//! A tool's schemas are compiled when the tool is built (see
//! [`Schema`]) and shared by every clone, so checking a call
//! costs a walk over the compiled nodes and never a parse. A tool read
//! from another server's `tools/list` (`decode.rs`) is compiled on its
//! first check instead: a client that only shows a list never pays for it.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_core::ser::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::arguments::{refusal_text, ArgumentType};
use super::call_line::CallLine;
use super::params::{header_params, HeaderParam};
use super::revision::Revision;
use crate::error::Error;
use crate::schema::Schema;

#[cfg(feature = "client")]
mod decode;
mod presentation;
mod rendered;

pub use presentation::{Icon, IconTheme, ToolAnnotations};
use rendered::Renderings;

/// The longest tool name accepted (MCP 2025-11-25 allows 1 to 128 characters).
pub const MAX_TOOL_NAME_LEN: usize = 128;

/// A tool as the model sees it: name, description, schemas and hints.
///
/// Cheap to clone (the definition and its compiled schemas are shared), so
/// a surface can hand out its list on every request. Build each tool once
/// and hand out clones: building compiles the schemas again, and a
/// [`surface_fn`](crate::surface_fn) list closure runs on every request.
/// Each field is sent to the clients whose revision knows it and left out
/// for the others.
///
/// It is also what [`crate::client`] reads another server's `tools/list`
/// into, so a gateway serves a listed tool as it serves its own.
///
/// ```
/// use serde_json::json;
/// use toolhost::{Icon, Tool, ToolAnnotations};
///
/// let tool = Tool::new("search", "Searches the notes; returns the best matches.")
///     .title("Search notes")
///     .input_schema(json!({
///         "type": "object",
///         "properties": {
///             "query": {"type": "string", "minLength": 1},
///             "limit": {"type": "integer", "minimum": 1, "maximum": 50},
///         },
///         "required": ["query"],
///     }))
///     .annotations(ToolAnnotations::new().read_only(true).open_world(false))
///     .icon(Icon::new("https://example.com/search.png").mime_type("image/png"));
/// assert_eq!(tool.name(), "search");
/// assert!(tool.validate().is_ok());
/// assert!(tool.schema_warnings().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    spec: Arc<ToolSpec>,
}

#[derive(Clone, Debug, PartialEq)]
struct ToolSpec {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    /// `input_schema` compiled, or why it cannot be.
    input: Compiled<Result<Schema, String>>,
    /// The arguments annotated with `x-mcp-header`, or the rule they break.
    header_params: Compiled<Result<Vec<HeaderParam>, String>>,
    output_schema: Option<(Value, Compiled<Result<Schema, String>>)>,
    /// The Rust type a typed handler decodes the arguments into.
    arguments: Option<ArgumentType>,
    annotations: Option<ToolAnnotations>,
    icons: Vec<Icon>,
    meta: Option<Map<String, Value>>,
    required_capabilities: Option<Map<String, Value>>,
    /// Asked on every request: while it says no, the tool is neither
    /// listed nor callable.
    visible: Option<Visibility>,
    /// The line its calls run in instead of the host's call slots.
    line: Option<CallLine>,
    /// The tool as `tools/list` sends it, per view, made on first use.
    rendered: Renderings,
    /// For a tool read from another server's list: the fields of its
    /// definition this crate does not model, as sent (never sent on).
    unmodelled: Option<Map<String, Value>>,
}

/// What is made of a schema (compiled, or its header parameters found):
/// at once for a tool built here, on first use for one read from a list.
#[derive(Clone, Debug)]
struct Compiled<T>(OnceLock<T>);

impl<T> Compiled<T> {
    fn now(value: T) -> Compiled<T> {
        Compiled(OnceLock::from(value))
    }

    // Only a listed tool, read by the client (feature `client`), waits.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    fn later() -> Compiled<T> {
        Compiled(OnceLock::new())
    }

    fn get(&self, make: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(make)
    }
}

/// Not made yet equals anything: what is made later is made from the
/// schema beside it, which the definition's equality compares. (The one
/// value not made from the schema, a derived schema refused, is set at
/// once, on a tool built here.)
impl<T: PartialEq> PartialEq for Compiled<T> {
    fn eq(&self, other: &Compiled<T>) -> bool {
        match (self.0.get(), other.0.get()) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        }
    }
}

impl ToolSpec {
    /// `input_schema` compiled, or why it cannot be.
    fn input(&self) -> &Result<Schema, String> {
        self.input
            .get(|| compile_object_schema(&self.input_schema, "inputSchema"))
    }

    /// The arguments annotated with `x-mcp-header`, or the rule they break.
    fn header_params(&self) -> &Result<Vec<HeaderParam>, String> {
        self.header_params.get(|| header_params(&self.input_schema))
    }

    /// The output schema compiled, or why it cannot be, when there is one.
    fn output(&self) -> Option<&Result<Schema, String>> {
        self.output_schema.as_ref().map(|(schema, compiled)| {
            compiled.get(|| compile_object_schema(schema, "outputSchema"))
        })
    }
}

/// A tool's visibility predicate (see [`Tool::visible_when`]).
#[derive(Clone)]
struct Visibility(Arc<dyn Fn() -> bool + Send + Sync>);

/// Two tools gated alike share one predicate; a closure has no other
/// equality.
impl PartialEq for Visibility {
    fn eq(&self, other: &Visibility) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Visibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a visibility predicate")
    }
}

/// Compiles a tool schema, which must describe an object at its root: tool
/// arguments are always an object, and before 2026-07-28 so is
/// `structuredContent`.
fn compile_object_schema(schema: &Value, which: &str) -> Result<Schema, String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "an {which} must be a JSON object with \"type\": \"object\""
        ));
    }
    Schema::compile(schema).map_err(|err| match err {
        Error::InvalidSchema { at, problem } => format!("at {at}: {problem}"),
        other => other.to_string(),
    })
}

impl Tool {
    /// A tool that takes no arguments until [`Tool::input_schema`] says otherwise.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Tool {
        let input_schema = json!({"type": "object", "properties": {}});
        Tool {
            spec: Arc::new(ToolSpec {
                name: name.into(),
                title: None,
                description: description.into(),
                input: Compiled::now(compile_object_schema(&input_schema, "inputSchema")),
                header_params: Compiled::now(Ok(Vec::new())),
                input_schema,
                output_schema: None,
                arguments: None,
                annotations: None,
                icons: Vec::new(),
                meta: None,
                required_capabilities: None,
                visible: None,
                line: None,
                rendered: Renderings::default(),
                unmodelled: None,
            }),
        }
    }

    /// The definition, to change: unshared first if it is shared, and
    /// without the renderings of what it was.
    fn edit(&mut self) -> &mut ToolSpec {
        let spec = Arc::make_mut(&mut self.spec);
        spec.rendered = Renderings::default();
        spec
    }

    /// A human-friendly display name (sent from revision 2025-06-18 on).
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Tool {
        self.edit().title = Some(title.into());
        self
    }

    /// The JSON Schema of the arguments; it must describe an object
    /// (`"type": "object"`). It is compiled here, once: calls whose arguments
    /// do not match are refused before the handler runs, with a message
    /// that tells the model what to fix. An invalid schema makes
    /// [`Tool::validate`] fail; keywords that are not checked are listed by
    /// [`Tool::schema_warnings`]. [`Schema`] says what is checked.
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Tool {
        let spec = self.edit();
        spec.input = Compiled::now(compile_object_schema(&schema, "inputSchema"));
        spec.header_params = Compiled::now(header_params(&schema));
        spec.input_schema = schema;
        self
    }

    /// The JSON Schema of `structuredContent` in successful results (sent
    /// from revision 2025-06-18 on); it must describe an object. A success
    /// whose structured content does not match is turned into a failure,
    /// reported to the event hook: a handler bug should not reach the model.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Tool {
        let compiled = Compiled::now(compile_object_schema(&schema, "outputSchema"));
        self.edit().output_schema = Some((schema, compiled));
        self
    }

    /// Hints about the tool's behaviour (sent from revision 2025-03-26 on).
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Tool {
        self.edit().annotations = Some(annotations);
        self
    }

    /// Adds an icon a client may show beside the tool (sent from revision
    /// 2025-11-25 on).
    #[must_use]
    pub fn icon(mut self, icon: Icon) -> Tool {
        self.edit().icons.push(icon);
        self
    }

    /// Metadata for clients, sent as the tool's `_meta` (from revision
    /// 2025-06-18 on). Keys under the `io.modelcontextprotocol/` and
    /// `dev.mcp/` prefixes are reserved by MCP.
    #[must_use]
    pub fn meta(mut self, meta: Map<String, Value>) -> Tool {
        self.edit().meta = Some(meta);
        self
    }

    /// Client capabilities the tool cannot work without, as a capabilities
    /// object (for example `{"sampling": {}}`). A call from a client that did
    /// not declare them is refused with 2026-07-28's
    /// `MissingRequiredClientCapabilityError` before the handler runs.
    #[must_use]
    pub fn requires_client_capabilities(mut self, capabilities: Map<String, Value>) -> Tool {
        self.edit().required_capabilities = Some(capabilities);
        self
    }

    /// Lists the tool, and lets it be called, only while `predicate` says
    /// yes. The host asks it itself on every `tools/list` and every
    /// `tools/call`, whichever surface lists the tool and whatever wraps
    /// that surface: a call while it says no is refused as an unknown
    /// tool and its handler never runs. Keep it cheap (it may be asked
    /// more than once a request) and free of panics.
    ///
    /// The host cannot see the predicate change its mind, so tell the
    /// clients when it does: [`StaticSurface::refresh`](crate::StaticSurface::refresh)
    /// or [`ToolRegistry::refresh`](crate::ToolRegistry::refresh) on the
    /// surface that holds the tool (every session serving it hears
    /// `notifications/tools/list_changed`), or
    /// [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed)
    /// for one session.
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
    /// use toolhost::Tool;
    ///
    /// let admin = Arc::new(AtomicBool::new(false));
    /// let flag = Arc::clone(&admin);
    /// let tool = Tool::new("delete_note", "Deletes a note.")
    ///     .visible_when(move || flag.load(Ordering::SeqCst));
    /// assert!(!tool.is_visible());
    /// admin.store(true, Ordering::SeqCst);
    /// assert!(tool.is_visible());
    /// ```
    #[must_use]
    pub fn visible_when(mut self, predicate: impl Fn() -> bool + Send + Sync + 'static) -> Tool {
        self.edit().visible = Some(Visibility(Arc::new(predicate)));
        self
    }

    /// Whether the tool is listed and callable right now: its
    /// [`Tool::visible_when`] predicate says yes, or it has none.
    pub fn is_visible(&self) -> bool {
        self.spec
            .visible
            .as_ref()
            .is_none_or(|visible| (visible.0)())
    }

    /// Runs the tool's calls in `line` instead of the host's call slots:
    /// they wait in its queue and are bounded by its limits and deadline
    /// (see [`CallLine`]), and never take one of the host's slots. For a
    /// tool whose calls wait on something outside the application (a
    /// slow backend; every tool of an
    /// [`McpServerLayer`](crate::McpServerLayer) runs in its server's
    /// line). Like [`Tool::visible_when`], it travels with the tool: the
    /// host reads it from the tool it is about to call, whichever surface
    /// lists the tool and whatever wraps that surface. Tools may share a
    /// line (clone it).
    ///
    /// ```
    /// use toolhost::{CallLine, Tool};
    ///
    /// let line = CallLine::new("the search backend", 2, 16);
    /// let tool = Tool::new("search", "Searches.").runs_in(line.clone());
    /// assert_eq!(tool.call_line(), Some(&line));
    /// assert_eq!(Tool::new("local", "Runs here.").call_line(), None);
    /// ```
    #[must_use]
    pub fn runs_in(mut self, line: CallLine) -> Tool {
        self.edit().line = Some(line);
        self
    }

    /// The line the tool's calls run in ([`Tool::runs_in`]), or `None`
    /// for the host's call slots.
    pub fn call_line(&self) -> Option<&CallLine> {
        self.spec.line.as_ref()
    }

    /// Refuses calls whose arguments do not decode into `arguments`, as
    /// calls that break the input schema are (see [`Tool::check_arguments`]).
    pub(crate) fn decodes_into(mut self, arguments: ArgumentType) -> Tool {
        self.edit().arguments = Some(arguments);
        self
    }

    /// Makes the input schema unusable for `problem`, so that
    /// [`Tool::validate`] refuses the tool; for a derived schema that cannot
    /// be published.
    #[cfg(feature = "schemars")]
    pub(crate) fn refuse_input_schema(mut self, problem: String) -> Tool {
        self.edit().input = Compiled::now(Err(problem));
        self
    }

    /// As [`Tool::refuse_input_schema`], for the output schema.
    #[cfg(feature = "schemars")]
    pub(crate) fn refuse_output_schema(mut self, problem: String) -> Tool {
        if let Some((_, compiled)) = &mut self.edit().output_schema {
            *compiled = Compiled::now(Err(problem));
        }
        self
    }

    /// The client capabilities the tool requires
    /// ([`Tool::requires_client_capabilities`]), if any.
    pub fn required_client_capabilities(&self) -> Option<&Map<String, Value>> {
        self.spec.required_capabilities.as_ref()
    }

    /// The tool's name, as the model calls it.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The display name ([`Tool::title`]), if any.
    pub fn title_text(&self) -> Option<&str> {
        self.spec.title.as_deref()
    }

    /// The description the model reads to decide when to call the tool.
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// The JSON Schema of the arguments, as sent: the one set with
    /// [`Tool::input_schema`] (or derived with `Tool::input_schema_for`),
    /// else `{"type": "object", "properties": {}}`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::Tool;
    ///
    /// let tool = Tool::new("t", "d");
    /// assert_eq!(tool.input_schema_json(), &json!({"type": "object", "properties": {}}));
    /// ```
    pub fn input_schema_json(&self) -> &Value {
        &self.spec.input_schema
    }

    /// The JSON Schema of `structuredContent` ([`Tool::output_schema`]), if any.
    pub fn output_schema_json(&self) -> Option<&Value> {
        self.spec.output_schema.as_ref().map(|(schema, _)| schema)
    }

    /// The behaviour hints ([`Tool::annotations`]), if any.
    pub fn hints(&self) -> Option<&ToolAnnotations> {
        self.spec.annotations.as_ref()
    }

    /// The icons ([`Tool::icon`]), in the order added.
    pub fn icons(&self) -> &[Icon] {
        &self.spec.icons
    }

    /// The `_meta` sent with the tool ([`Tool::meta`]), if any.
    pub fn meta_json(&self) -> Option<&Map<String, Value>> {
        self.spec.meta.as_ref()
    }

    /// For a tool read from another server's `tools/list` (by
    /// [`crate::client`]): the fields of its definition this crate does not
    /// model — a newer revision's, a vendor's, or a known one of the wrong
    /// type — as they were sent. `None` for a tool built here, and for a
    /// listed tool that had none. A host serving the tool does not send
    /// them on: it cannot vouch for fields it does not know.
    pub fn unknown_fields(&self) -> Option<&Map<String, Value>> {
        self.spec.unmodelled.as_ref()
    }

    /// Checks the rules every published tool must meet: a name of 1 to 128
    /// characters from `A-Z a-z 0-9 _ - .`, a valid input schema that
    /// describes an object, and likewise an output schema if there is one.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{Error, Tool};
    ///
    /// let tool = Tool::new("count", "Counts.")
    ///     .input_schema(json!({"type": "object", "properties": {"n": {"minimum": "1"}}}));
    /// let err = tool.validate().unwrap_err();
    /// assert!(matches!(err, Error::InvalidInputSchema { .. }));
    /// assert!(err.to_string().contains("#/properties/n/minimum"), "{err}");
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        let spec = &*self.spec;
        // Asked for every listed tool on every tools/list, and on every
        // call: a definition found valid is marked so (and the mark goes
        // with any change to it).
        if spec.rendered.known_valid() {
            return Ok(());
        }
        let name = &spec.name;
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        // The common case, a good name, in one pass over its bytes (all
        // allowed characters are ASCII): this runs for every listed tool
        // on every tools/list, and on every call.
        let good_name = (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
            && name.bytes().all(|b| allowed(char::from(b)));
        let problem = if good_name {
            None
        } else if name.is_empty() {
            Some("it is empty".to_owned())
        } else if name.chars().count() > MAX_TOOL_NAME_LEN {
            Some(format!(
                "it has {} characters, more than {MAX_TOOL_NAME_LEN}",
                name.chars().count()
            ))
        } else {
            name.chars()
                .find(|&c| !allowed(c))
                .map(|c| format!("it contains {c:?}"))
        };
        if let Some(problem) = problem {
            return Err(Error::InvalidToolName {
                name: name.clone(),
                problem,
            });
        }
        if let Err(problem) = spec.input() {
            return Err(Error::InvalidInputSchema {
                tool: name.clone(),
                problem: problem.clone(),
            });
        }
        if let Err(problem) = spec.header_params() {
            return Err(Error::InvalidInputSchema {
                tool: name.clone(),
                problem: problem.clone(),
            });
        }
        if let Some(Err(problem)) = spec.output() {
            return Err(Error::InvalidOutputSchema {
                tool: name.clone(),
                problem: problem.clone(),
            });
        }
        spec.rendered.mark_valid();
        Ok(())
    }

    /// What the tool's schemas ask for that is not checked, one line each
    /// (`inputSchema #/properties/code/pattern: …`); empty when everything
    /// is checked. Computed once, when the schema was set.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::Tool;
    ///
    /// let tool = Tool::new("t", "d").input_schema(json!({
    ///     "type": "object",
    ///     "properties": {"id": {"type": "string", "pattern": "^(?!tmp-)"}},
    /// }));
    /// let warnings = tool.schema_warnings();
    /// assert_eq!(warnings.len(), 1);
    /// assert!(warnings[0].starts_with("inputSchema #/properties/id/pattern: "));
    /// ```
    pub fn schema_warnings(&self) -> Vec<String> {
        let spec = &*self.spec;
        [
            ("inputSchema", Some(spec.input())),
            ("outputSchema", spec.output()),
        ]
        .into_iter()
        .filter_map(|(which, compiled)| Some((which, compiled?.as_ref().ok()?)))
        .flat_map(|(which, schema)| {
            schema
                .warnings()
                .iter()
                .map(move |warning| format!("{which} {warning}"))
        })
        .collect()
    }

    /// The arguments a 2026-07-28 client repeats in `Mcp-Param-*` headers
    /// (`x-mcp-header`), found once when the schema was set.
    pub(crate) fn header_params(&self) -> &[HeaderParam] {
        self.spec.header_params().as_deref().unwrap_or_default()
    }

    /// Checks a call's arguments (already an object: absent and `null`
    /// arguments are `{}` by then) against the input schema, then, for a
    /// typed tool, that they decode into its type. `Err` is the text for
    /// the model: a header line, then one line per violation.
    pub(crate) fn check_arguments(&self, args: &Value) -> Result<(), String> {
        let spec = &*self.spec;
        match spec.input() {
            Ok(schema) => {
                schema
                    .validate(args)
                    .map_err(|violations| refusal_text(&spec.name, &violations.to_string()))?;
                match &spec.arguments {
                    Some(arguments) => arguments
                        .check(args)
                        .map_err(|problem| refusal_text(&spec.name, &problem)),
                    None => Ok(()),
                }
            }
            Err(problem) => Err(format!(
                "Tool {:?} cannot be called: its inputSchema is unusable ({problem}).",
                spec.name
            )),
        }
    }

    /// Checks a successful result's `structuredContent` against the output
    /// schema, if the tool declares one. `Err` is the detail for the event
    /// hook (the model only hears that the tool failed).
    pub(crate) fn check_structured_output(&self, structured: Option<&Value>) -> Result<(), String> {
        let spec = &*self.spec;
        let Some(compiled) = spec.output() else {
            return Ok(());
        };
        let schema = compiled.as_ref().map_err(|problem| {
            format!(
                "tool {:?} has an unusable outputSchema: {problem}",
                spec.name
            )
        })?;
        let Some(structured) = structured else {
            return Err(format!(
                "tool {:?} declares an outputSchema but its result has no structuredContent",
                spec.name
            ));
        };
        schema.validate(structured).map_err(|violations| {
            format!(
                "the structuredContent of tool {:?} does not match its outputSchema:\n{violations}",
                spec.name
            )
        })
    }

    /// The tool as `tools/list` sends it in the given revision, serialized:
    /// made on first use and kept with the definition, which every clone
    /// shares.
    pub(crate) fn rendered(&self, revision: Revision) -> &RawValue {
        self.spec.rendered.get(revision, || self.to_json(revision))
    }

    /// The tool as `tools/list` shows it in the given revision: fields a
    /// revision does not know are left out for it.
    pub(crate) fn to_json(&self, revision: Revision) -> Value {
        let spec = &*self.spec;
        let mut out = Map::new();
        out.insert("name".into(), spec.name.clone().into());
        if revision.has_structured_content() {
            if let Some(title) = &spec.title {
                out.insert("title".into(), title.clone().into());
            }
        }
        out.insert("description".into(), spec.description.clone().into());
        out.insert("inputSchema".into(), spec.input_schema.clone());
        if revision.has_structured_content() {
            if let Some((schema, _)) = &spec.output_schema {
                out.insert("outputSchema".into(), schema.clone());
            }
        }
        if revision.has_tool_annotations() {
            if let Some(annotations) = spec.annotations.as_ref().filter(|a| !a.is_empty()) {
                out.insert("annotations".into(), annotations.to_json());
            }
        }
        if revision.has_icons() && !spec.icons.is_empty() {
            let icons = spec.icons.iter().map(Icon::to_json).collect();
            out.insert("icons".into(), Value::Array(icons));
        }
        if revision.has_meta() {
            if let Some(meta) = &spec.meta {
                out.insert("_meta".into(), Value::Object(meta.clone()));
            }
        }
        Value::Object(out)
    }
}

/// The tool as a client of the newest revision (2026-07-28) reads it in
/// `tools/list`, every field it has; for snapshot tests of a definition
/// (a derived schema above all). The predicate of
/// [`Tool::visible_when`], the line of [`Tool::runs_in`] and the required
/// client capabilities are the host's, not the listing's, and are left
/// out.
///
/// ```
/// use serde_json::json;
/// use toolhost::{Tool, ToolAnnotations};
///
/// let tool = Tool::new("add_note", "Adds a note.")
///     .title("Add note")
///     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .annotations(ToolAnnotations::new().read_only(false));
/// assert_eq!(serde_json::to_value(&tool)?, json!({
///     "name": "add_note",
///     "title": "Add note",
///     "description": "Adds a note.",
///     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
///     "annotations": {"readOnlyHint": false},
/// }));
/// # Ok::<(), serde_json::Error>(())
/// ```
impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json(Revision::V2026_07_28).serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_2025_11_25_rules() {
        for good in ["a", "get_weather", "fs.read-file", &"x".repeat(128)] {
            assert!(Tool::new(good, "d").validate().is_ok(), "{good}");
        }
        for bad in ["", "has space", "emoji😀", "slash/name", &"x".repeat(129)] {
            let err = Tool::new(bad, "d").validate().unwrap_err();
            assert!(matches!(err, Error::InvalidToolName { .. }), "{bad}");
        }
    }

    #[test]
    fn an_input_schema_must_describe_an_object() {
        let err = Tool::new("t", "d")
            .input_schema(json!({"type": "string"}))
            .validate()
            .unwrap_err();
        assert!(err.to_string().contains("\"type\": \"object\""), "{err}");
    }

    /// A tool with every field some revision leaves out.
    fn full_tool() -> Tool {
        let mut meta = Map::new();
        meta.insert("k".into(), json!(1));
        Tool::new("full", "d")
            .title("T")
            .output_schema(json!({"type": "object"}))
            .annotations(ToolAnnotations::new().read_only(true))
            .icon(Icon::new("https://example.com/i.png"))
            .meta(meta)
    }

    #[test]
    fn revisions_share_a_rendering_exactly_when_they_show_a_tool_alike() {
        let tool = full_tool();
        for a in Revision::ALL {
            assert_eq!(
                serde_json::from_str::<Value>(tool.rendered(a).get()).unwrap(),
                tool.to_json(a),
                "{a}"
            );
            for b in Revision::ALL {
                let alike = tool.to_json(a) == tool.to_json(b);
                assert_eq!(rendered::view(a) == rendered::view(b), alike, "{a} {b}");
            }
        }
    }

    #[test]
    fn a_valid_definition_is_marked_once_for_every_clone_and_unmarked_by_a_change() {
        let tool = Tool::new("t", "d").input_schema(json!({"type": "object"}));
        let listed_again = tool.clone();
        assert!(!tool.spec.rendered.known_valid());
        assert!(tool.validate().is_ok());
        assert!(
            listed_again.spec.rendered.known_valid(),
            "one mark per definition"
        );
        assert!(listed_again.validate().is_ok());
        // A change that breaks the definition is seen at once, by the
        // changed tool only.
        let broken = listed_again.clone().input_schema(json!({"type": "string"}));
        assert!(!broken.spec.rendered.known_valid());
        assert!(broken.validate().is_err());
        assert!(
            broken.validate().is_err(),
            "an invalid tool is never marked"
        );
        assert!(tool.validate().is_ok());
        let renamed = Tool::new("bad name", "d");
        assert!(renamed.clone().title("T").validate().is_err());
        let fixed = tool.clone().title("still valid");
        assert!(!fixed.spec.rendered.known_valid());
        assert!(fixed.validate().is_ok());
    }

    #[test]
    fn a_changed_tool_renders_afresh_and_its_original_keeps_its_rendering() {
        let revision = Revision::V2025_11_25;
        let original = Tool::new("t", "before");
        assert!(original.rendered(revision).get().contains("before"));
        let changed = original.clone().title("after");
        assert!(changed.rendered(revision).get().contains("after"));
        assert!(!original.rendered(revision).get().contains("after"));
        // Unshared, the definition is changed in place: its rendering too.
        let alone = Tool::new("t", "d");
        assert!(!alone.rendered(revision).get().contains("title"));
        let alone = alone.title("now");
        assert!(alone.rendered(revision).get().contains("now"));
        let renamed = alone.input_schema(json!({"type": "object", "properties": {"x": {}}}));
        assert!(renamed.rendered(revision).get().contains(r#""x""#));
        assert_eq!(renamed, renamed.clone().title("now"));
    }

    #[test]
    fn a_tool_serializes_as_the_newest_revision_lists_it_and_every_field_has_a_getter() {
        let tool = full_tool()
            .requires_client_capabilities(Map::from_iter([("sampling".to_owned(), json!({}))]))
            .visible_when(|| true)
            .runs_in(CallLine::new("the backend", 1, 0));
        let expected = json!({
            "name": "full",
            "title": "T",
            "description": "d",
            "inputSchema": {"type": "object", "properties": {}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true},
            "icons": [{"src": "https://example.com/i.png"}],
            "_meta": {"k": 1},
        });
        assert_eq!(serde_json::to_value(&tool).unwrap(), expected);
        assert_eq!(tool.to_json(Revision::V2026_07_28), expected);
        assert_eq!(
            serde_json::to_value(tool.hints()).unwrap(),
            expected["annotations"]
        );
        assert_eq!(
            serde_json::to_value(tool.icons()).unwrap(),
            expected["icons"]
        );
        assert_eq!(tool.title_text(), Some("T"));
        assert_eq!(tool.input_schema_json(), &expected["inputSchema"]);
        assert_eq!(tool.output_schema_json(), Some(&expected["outputSchema"]));
        assert_eq!(tool.meta_json().map(|m| m["k"].clone()), Some(json!(1)));
        assert!(tool.required_client_capabilities().is_some());
        assert!(tool.is_visible());
        assert!(!Tool::new("t", "d").visible_when(|| false).is_visible());
        assert_eq!(tool.call_line().map(CallLine::name), Some("the backend"));
    }

    #[test]
    fn title_and_output_schema_are_left_out_before_2025_06_18() {
        let tool = Tool::new("t", "d")
            .title("T")
            .output_schema(json!({"type": "object"}));
        let old = tool.to_json(Revision::V2025_03_26);
        assert!(old.get("title").is_none() && old.get("outputSchema").is_none());
        let new = tool.to_json(Revision::V2025_06_18);
        assert_eq!(new["title"], "T");
        assert_eq!(new["outputSchema"], json!({"type": "object"}));
    }
}
