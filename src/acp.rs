//! Reaching a session from an agent that speaks the Agent Client Protocol
//! (ACP), and from agents set up by file or flag.
//!
//! An ACP agent takes its tools from the `mcpServers` list of `session/new`.
//! [`ToolSession::acp_mcp_servers_for`](crate::ToolSession::acp_mcp_servers_for) chooses the entry from what the
//! agent's `initialize` answered ([`AgentMcpSupport`]): ACP v1 requires every
//! agent to take **stdio** entries and lets it announce more in
//! `agentCapabilities.mcpCapabilities` (`http`, `sse`); the v2 draft moves
//! the announcement to `capabilities.session.mcp` (`stdio` and `http`),
//! drops `sse`, and requires a `type` on every entry. What agents announce
//! and what they do are not always the same:
//!
//! | agent | announces `http` | behaviour seen |
//! | --- | --- | --- |
//! | Claude Code (ACP adapter) | yes | takes the HTTP entry |
//! | codex-acp | yes | early builds dropped `http` entries without a word; fails the whole `session/new` on an `sse` entry |
//! | Gemini CLI | yes | takes the HTTP entry |
//! | Copilot CLI | yes | takes the HTTP entry; rejects `stdio` entries |
//! | goose | yes | takes the HTTP entry; fails the whole `session/new` on an `sse` entry |
//! | OpenCode | yes | takes the HTTP entry |
//! | Kimi CLI | yes | takes the HTTP entry |
//! | Qwen Code | yes (current) | before April 2026, dropped `http` entries without a word |
//!
//! Hence the rule: **HTTP where the agent announces it, else stdio, never
//! SSE** (the host serves no SSE transport, and an `sse` entry can fail a
//! whole session), typed where the agent speaks v2. An agent that drops an
//! entry it announced shows up as a turn in which the host served nothing;
//! force the other kind with [`ToolSession::acp_mcp_servers_using`](crate::ToolSession::acp_mcp_servers_using). The
//! stdio entry starts the running program again as a relay to the session
//! ([`crate::relay`]).
//!
//! With the `acp-driver` feature this module also holds `Agent`, a blocking
//! ACP client that starts an agent in a process group of its own, opens a
//! session with these entries, drives it through prompt turns, and ends
//! the agent with everything it started.
//!
//! The rest are the shapes agents set up by file or flag take (Claude
//! Code, Gemini CLI, Codex, VS Code), built by methods of
//! [`ToolSession`](crate::ToolSession). Every shape carries the same three facts — the server
//! name, the URL and the `Authorization` header value — in the layout its
//! project documents; the source of each layout is cited where it is built.
//! Nothing here validates or escapes per call: the server name was checked
//! once, at [`ToolHost::bind`](crate::ToolHost::bind), so it is a valid JSON
//! key, TOML bare key and tool-name prefix everywhere, and the URL and
//! bearer are made by the host from ASCII letters, digits and `:/._`. In
//! particular no value contains `$`, which Claude Code, Gemini CLI and VS
//! Code would expand as a variable reference.

#[cfg(feature = "acp-driver")]
mod driver;
mod entries;

#[cfg(feature = "acp-driver")]
pub use driver::{
    AcpError, Agent, AuthMethod, PermissionChoice, PermissionOption, PermissionRequest, PlanEntry,
    Prompt, ToolCallReport, TurnCancel, TurnSummary, Update, ACP_VERSION,
    DEFAULT_MAX_MESSAGE_BYTES,
};
#[cfg(all(test, feature = "acp-driver", feature = "client"))]
pub(crate) use driver::{DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT};

pub(crate) use entries::{mcp_servers_using, stdio_relay_entry};
pub use entries::{AgentMcpSupport, McpTransport};

use serde_json::{json, Value};

use crate::error::Error;

/// The longest server name accepted.
///
/// Claude Code and Codex name a server's tools `mcp__<server>__<tool>`, and
/// the model APIs behind them refuse tool names over 64 characters; 32 for
/// the server leaves a tool 25.
pub(crate) const MAX_SERVER_NAME_LEN: usize = 32;

/// Checks a server name once for every client shape: the host's own
/// ([`HostConfig::server_name`](crate::HostConfig::server_name)) and the
/// prefix of a bridged MCP server's tools (`McpServerLayer`, whose
/// `<server>_<tool>` names the agent shows as `mcp__<host>__<server>_<tool>`,
/// so the same splitting concerns apply). One rule, in this one place.
///
/// The rule: 1 to [`MAX_SERVER_NAME_LEN`] characters of `A-Z a-z 0-9 - _`,
/// starting with a letter, with no `__` and no trailing `_`. Why each part:
///
/// - the character set is a TOML bare key (Codex's `[mcp_servers.NAME]`), a
///   plain JSON key, and survives every agent's tool-name sanitising
///   unchanged, so the name the model sees is the name the application set;
/// - a leading letter, because Gemini's function names must start with a
///   letter or `_`, and agents put the server name first;
/// - no `__` and no trailing `_`, because Claude Code and Codex name a
///   tool `mcp__<server>__<tool>` and split it at `__`: `my__app` or
///   `app_` would split wrong;
/// - `_` itself allowed, though Gemini CLI names a tool
///   `mcp_<server>_<tool>` and its policy engine reads the server's name
///   as ending at the first `_` after `mcp_`: under `my_app` the tools
///   still work, but a policy rule written for the server
///   (`mcp_my_app_*`) is read as one for `my` and silently misses. Its
///   docs warn against `_` in a server's name; the docs of
///   [`HostConfig::server_name`](crate::HostConfig::server_name) pass that
///   on rather than refuse names that work everywhere else. A bridged
///   server's name (`McpServerLayer`) is no concern there: it follows the
///   host's name inside the tool's.
pub(crate) fn validate_server_name(name: &str) -> Result<(), Error> {
    let problem = if name.is_empty() {
        Some("it is empty".to_owned())
    } else if name.len() > MAX_SERVER_NAME_LEN {
        Some(format!(
            "it is {} bytes long, over the limit of {MAX_SERVER_NAME_LEN}",
            name.len()
        ))
    } else if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        Some(format!("it contains {bad:?}"))
    } else if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        Some("it does not start with a letter".to_owned())
    } else if name.contains("__") {
        Some("it contains \"__\", the separator of mcp__SERVER__TOOL".to_owned())
    } else if name.ends_with('_') {
        Some("it ends with '_', which runs into the \"__\" separator".to_owned())
    } else {
        None
    };
    match problem {
        Some(problem) => Err(Error::InvalidServerName {
            name: name.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

/// The `mcpServers` array for ACP `session/new`, with one HTTP entry.
///
/// Source: the ACP schema (agentclientprotocol/agent-client-protocol,
/// `schema/v1/schema.json`): `McpServer` is `anyOf` three transports, the
/// HTTP one tagged `"type": "http"` over `McpServerHttp`, which requires
/// `name`, `url` and `headers`, an array of `HttpHeader` `{name, value}`
/// (`docs/protocol/v1/session-setup.mdx`, "HTTP Transport"). Agents take it
/// only when `initialize` answered `mcpCapabilities.http: true`.
pub(crate) fn mcp_servers(name: &str, url: &str, authorization: &str) -> Value {
    json!([{
        "type": "http",
        "name": name,
        "url": url,
        "headers": [{"name": "Authorization", "value": authorization}],
    }])
}

/// Claude Code's MCP configuration: the content of a project's
pub(crate) fn claude_code_config(name: &str, url: &str, authorization: &str) -> Value {
    // Source: Claude Code docs, "Connect Claude Code to tools via MCP"
    // (https://code.claude.com/docs/en/mcp): `.mcp.json` holds
    // `mcpServers`, keyed by server name; a remote server is
    // `"type": "http"` with `url` and a `headers` object. `${VAR}` is
    // expanded in `url` and `headers`, which is why no value may hold `$`.
    json!({
        "mcpServers": {
            name: {
                "type": "http",
                "url": url,
                "headers": {"Authorization": authorization},
            },
        },
    })
}

/// Copilot CLI's MCP configuration: the content of a file for
/// `copilot --additional-mcp-config @FILE`.
pub(crate) fn copilot_cli_config(name: &str, url: &str, authorization: &str) -> Value {
    // Source: GitHub Copilot CLI docs, "Adding MCP servers for GitHub
    // Copilot CLI" (docs.github.com, copilot-cli/customize-copilot): the
    // file has the shape of `~/.copilot/mcp-config.json`, servers under
    // `mcpServers` keyed by name; a remote one is `"type": "http"`
    // (Streamable HTTP) with `url` and a `headers` object, and `tools`
    // lists the tools to offer, `["*"]` for all (required by some
    // versions, so always written). `--additional-mcp-config` takes the
    // JSON itself or, with a leading `@`, a file's path: the file keeps
    // the bearer off the command line.
    json!({
        "mcpServers": {
            name: {
                "type": "http",
                "url": url,
                "headers": {"Authorization": authorization},
                "tools": ["*"],
            },
        },
    })
}

/// Gemini CLI's MCP configuration: an object to merge into
pub(crate) fn gemini_cli_config(name: &str, url: &str, authorization: &str) -> Value {
    // Source: Gemini CLI docs, "MCP servers with Gemini CLI"
    // (google-gemini/gemini-cli, docs/tools/mcp-server.md): servers live
    // under `mcpServers`; `httpUrl` selects Streamable HTTP (`url` would
    // select the legacy SSE transport, which this host does not serve);
    // `headers` is an object used with either.
    json!({
        "mcpServers": {
            name: {
                "httpUrl": url,
                "headers": {"Authorization": authorization},
            },
        },
    })
}

/// VS Code's MCP configuration: the content of a workspace's
pub(crate) fn vscode_config(name: &str, url: &str, authorization: &str) -> Value {
    // Source: VS Code docs, "MCP configuration reference"
    // (https://code.visualstudio.com/docs/copilot/reference/mcp-configuration):
    // the top-level key is `servers` (not `mcpServers`); an HTTP server
    // has `type` ("http" or "sse"), `url`, and optional `headers`.
    json!({
        "servers": {
            name: {
                "type": "http",
                "url": url,
                "headers": {"Authorization": authorization},
            },
        },
    })
}

/// Codex's MCP configuration: a TOML table to append to
pub(crate) fn codex_config_toml(name: &str, url: &str, authorization: &str) -> String {
    // Source: Codex docs, "Config › MCP integration › Streamable HTTP"
    // (openai/codex, docs/config.md): `[mcp_servers.<name>]` with `url`,
    // then either `bearer_token_env_var` (the *name* of a variable that
    // holds the token) or `http_headers`, a table of literal header
    // values. This table is the self-contained form (a 0600 file holds
    // it whole); the variable form is one `-c` flag, which the session's
    // docs and `examples/serve.rs` show, since a bearer in the
    // environment never touches a file.
    format!(
        "[mcp_servers.{name}]\nurl = {url}\nhttp_headers = {{ Authorization = {auth} }}\n",
        name = toml_key(name),
        url = toml_string(url),
        auth = toml_string(authorization),
    )
}

/// A TOML key: bare when it may be (`A-Za-z0-9_-`, non-empty), else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        key.to_owned()
    } else {
        toml_string(key)
    }
}

/// A TOML basic string (TOML 1.0, "String"): `"` and `\` escaped, control
/// characters (U+0000–U+001F and U+007F, which TOML forbids raw) escaped,
/// everything else as is.
fn toml_string(text: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c <= '\u{1f}' || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:40123/mcp";
    const AUTH: &str = "Bearer th_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677";

    /// Serialises and parses back, so the test sees what a reader of the
    /// file would.
    fn reparsed(value: &Value) -> Value {
        serde_json::from_str(&serde_json::to_string_pretty(value).unwrap()).unwrap()
    }

    #[test]
    fn the_acp_entry_is_an_mcp_server_http_and_nothing_more() {
        let name = "myapp";
        let servers = reparsed(&mcp_servers(name, URL, AUTH));
        let entries = servers.as_array().unwrap();
        assert_eq!(entries.len(), 1);
        let entry = entries[0].as_object().unwrap();
        let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["headers", "name", "type", "url"]);
        assert_eq!(entry["type"], "http");
        assert_eq!(entry["name"], "myapp");
        assert_eq!(entry["url"], URL);
        assert_eq!(
            entry["headers"],
            json!([{"name": "Authorization", "value": AUTH}])
        );
        // Not the object form other clients use: ACP headers are a list.
        assert!(entry["headers"].get("Authorization").is_none());
    }

    #[test]
    fn the_claude_code_config_has_one_http_server_with_the_bearer_header() {
        let name = "myapp";
        let config = reparsed(&claude_code_config(name, URL, AUTH));
        assert_eq!(
            config,
            json!({"mcpServers": {"myapp": {
                "type": "http",
                "url": URL,
                "headers": {"Authorization": AUTH},
            }}})
        );
    }

    #[test]
    fn the_copilot_cli_config_has_one_http_server_offering_all_its_tools() {
        let name = "myapp";
        let config = reparsed(&copilot_cli_config(name, URL, AUTH));
        assert_eq!(
            config,
            json!({"mcpServers": {"myapp": {
                "type": "http",
                "url": URL,
                "headers": {"Authorization": AUTH},
                "tools": ["*"],
            }}})
        );
        // Not the legacy SSE transport, which this host does not serve.
        assert_ne!(config["mcpServers"]["myapp"]["type"], "sse");
    }

    #[test]
    fn the_gemini_config_uses_http_url_not_the_sse_url_key() {
        let name = "myapp";
        let config = reparsed(&gemini_cli_config(name, URL, AUTH));
        assert_eq!(
            config,
            json!({"mcpServers": {"myapp": {
                "httpUrl": URL,
                "headers": {"Authorization": AUTH},
            }}})
        );
        assert!(config["mcpServers"]["myapp"].get("url").is_none());
    }

    #[test]
    fn the_vscode_config_lists_the_server_under_servers() {
        let name = "myapp";
        let config = reparsed(&vscode_config(name, URL, AUTH));
        assert_eq!(
            config,
            json!({"servers": {"myapp": {
                "type": "http",
                "url": URL,
                "headers": {"Authorization": AUTH},
            }}})
        );
        assert!(config.get("mcpServers").is_none());
    }

    #[test]
    fn the_codex_config_is_exactly_one_table_with_url_and_a_literal_header() {
        let name = "my-app_2";
        let toml = codex_config_toml(name, URL, AUTH);
        let expected = format!(
            "[mcp_servers.my-app_2]\n\
             url = \"{}\"\n\
             http_headers = {{ Authorization = \"{}\" }}\n",
            URL, AUTH
        );
        assert_eq!(toml, expected);
        // The values needed no escaping, so the text holds them verbatim,
        // and the only quotes are the four that delimit the two strings.
        assert_eq!(toml.matches('"').count(), 4);
        assert!(!toml.contains('\\'));
        assert!(!toml.contains("bearer_token_env_var"));
    }

    #[test]
    fn no_config_value_holds_a_dollar_sign_that_a_client_would_expand() {
        let name = "myapp";
        for text in [
            mcp_servers(name, URL, AUTH).to_string(),
            claude_code_config(name, URL, AUTH).to_string(),
            copilot_cli_config(name, URL, AUTH).to_string(),
            gemini_cli_config(name, URL, AUTH).to_string(),
            vscode_config(name, URL, AUTH).to_string(),
            codex_config_toml(name, URL, AUTH),
        ] {
            assert!(!text.contains('$'), "{text}");
        }
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string(""), r#""""#);
        assert_eq!(toml_string("plain"), r#""plain""#);
        assert_eq!(toml_string(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(toml_string(r"C:\path"), r#""C:\\path""#);
        assert_eq!(
            toml_string("a\tb\nc\rd\u{8}e\u{c}f"),
            r#""a\tb\nc\rd\be\ff""#
        );
        assert_eq!(toml_string("\u{0}\u{1f}\u{7f}"), r#""\u0000\u001F\u007F""#);
        // Non-ASCII text (even U+0080..U+009F, which TOML allows raw) and
        // the characters that are special only in other formats stay as is.
        assert_eq!(toml_string("é ✓ \u{85} ' # $"), "\"é ✓ \u{85} ' # $\"");
    }

    #[test]
    fn toml_strings_round_trip_through_a_reader() {
        for text in [
            "",
            "Bearer th_0123abcd",
            "quote \" backslash \\ both \\\"",
            "line\nbreak\r\n",
            "\u{0}\u{1}\u{1b}[31m\u{7f}",
            "ünïcödé ✓ 🦀",
        ] {
            assert_eq!(read_toml_basic_string(&toml_string(text)), text);
        }
    }

    /// A reader for TOML basic strings, written from the TOML 1.0 spec
    /// independently of the writer, so that the round trip checks one
    /// against the other.
    fn read_toml_basic_string(quoted: &str) -> String {
        let inner = quoted
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .expect("delimited by quotes");
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            assert!(
                c != '"' && (c == '\t' || !(c <= '\u{1f}' || c == '\u{7f}')),
                "raw {c:?} is not allowed in a TOML basic string"
            );
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next().expect("escape") {
                'b' => out.push('\u{8}'),
                't' => out.push('\t'),
                'n' => out.push('\n'),
                'f' => out.push('\u{c}'),
                'r' => out.push('\r'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let code = u32::from_str_radix(&hex, 16).expect("hex");
                    out.push(char::from_u32(code).expect("scalar"));
                }
                other => panic!("unknown escape \\{other}"),
            }
        }
        out
    }

    #[test]
    fn toml_keys_are_bare_only_when_toml_allows_it() {
        assert_eq!(toml_key("myapp"), "myapp");
        assert_eq!(toml_key("my-app_2"), "my-app_2");
        assert_eq!(toml_key("my.app"), r#""my.app""#);
        assert_eq!(toml_key("my app"), r#""my app""#);
        assert_eq!(toml_key(""), r#""""#);
    }

    #[test]
    fn server_names_that_every_client_takes_verbatim_are_accepted() {
        for name in [
            "a",
            "toolhost",
            "my-app",
            "my_app",
            "App2",
            "a-b_c-d",
            &"x".repeat(32),
        ] {
            assert!(validate_server_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn server_names_that_a_client_would_mangle_are_refused_with_the_reason() {
        for (name, reason) in [
            ("", "empty"),
            (&"x".repeat(33) as &str, "over the limit of 32"),
            ("my app", "contains ' '"),
            ("my.app", "contains '.'"),
            ("my/app", "contains '/'"),
            ("appé", "contains 'é'"),
            ("2app", "start with a letter"),
            ("-app", "start with a letter"),
            ("_app", "start with a letter"),
            ("my__app", "\"__\""),
            ("app_", "ends with '_'"),
        ] {
            let err = validate_server_name(name).expect_err(name);
            assert!(
                matches!(&err, Error::InvalidServerName { name: n, .. } if n == name),
                "{err:?}"
            );
            let message = err.to_string();
            assert!(message.contains(reason), "{name:?}: {message}");
            assert!(message.contains("use 1 to 32 characters"), "{message}");
        }
    }
}
