//! Setting a host up and reaching it the way a first program does: the
//! listen address as text, the bare bearer token, and a client given the
//! token with or without its `Bearer ` scheme.

use std::net::{Ipv4Addr, TcpListener};

use serde_json::json;
use toolhost::client::{Client, ClientError};
use toolhost::{Error, HostConfig, StaticSurface, Tool, ToolHost};

#[test]
fn bind_addr_takes_text_tuples_and_socket_addresses() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = listener.local_addr().unwrap();
    for config in [
        HostConfig::default().bind_addr("127.0.0.1:0"),
        HostConfig::default().bind_addr(("127.0.0.1", 0)),
        HostConfig::default().bind_addr((Ipv4Addr::LOCALHOST, 0)),
        HostConfig::default().bind_addr(String::from("localhost:0")),
        // Two addresses: the taken one is skipped, the free one used.
        HostConfig::default().bind_addr(&[taken, "127.0.0.1:0".parse().unwrap()][..]),
    ] {
        let host = ToolHost::bind(config).unwrap();
        assert!(host.local_addr().ip().is_loopback());
        assert_ne!(host.local_addr(), taken);
        assert_ne!(host.local_addr().port(), 0);
    }
}

#[test]
fn an_address_that_cannot_be_listened_on_fails_at_bind_with_a_clear_error() {
    let err = ToolHost::bind(HostConfig::default().bind_addr("127.0.0.1:http")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidConfig {
                setting: "bind_addr",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("invalid bind_addr: \"127.0.0.1:http\" is not an address to listen on ("),
        "{err}"
    );
    let empty: &[std::net::SocketAddr] = &[];
    let none = ToolHost::bind(HostConfig::default().bind_addr(empty)).unwrap_err();
    assert_eq!(
        none.to_string(),
        "invalid bind_addr: [] resolves to no address"
    );
    let wide = ToolHost::bind(HostConfig::default().bind_addr("0.0.0.0:0")).unwrap_err();
    assert!(matches!(wide, Error::NonLoopback { .. }), "{wide:?}");

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = listener.local_addr().unwrap();
    let busy = ToolHost::bind(HostConfig::default().bind_addr(taken)).unwrap_err();
    assert!(
        matches!(busy, Error::Bind { addr, .. } if addr == taken),
        "{busy:?}"
    );
}

#[test]
fn the_bare_token_and_the_header_value_both_connect_a_client() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .tool(Tool::new("ping", "Answers pong."), |_args, _ctx| "pong")
        .unwrap();
    let session = host.open_session(surface);
    let token = session.bearer_token().to_owned();
    assert!(token.starts_with("th_"));
    assert!(
        !format!("{session:?}").contains(&token),
        "Debug hides the token"
    );
    for given in [token.clone(), session.authorization()] {
        let mut client = Client::builder(&session.url())
            .bearer(&given)
            .connect()
            .unwrap();
        let pong = client.call_tool("ping", json!({})).unwrap();
        assert_eq!(pong.text(), "pong");
    }
    assert_eq!(session.calls_served(), 2);

    let wrong = Client::builder(&session.url())
        .bearer(&format!("Bearer {token}x"))
        .connect()
        .unwrap_err();
    assert!(
        matches!(wrong, ClientError::Unauthorized { .. }),
        "{wrong:?}"
    );
    drop(session);
    let revoked = Client::builder(&host.url())
        .bearer(&token)
        .connect()
        .unwrap_err();
    assert!(
        matches!(revoked, ClientError::Unauthorized { .. }),
        "{revoked:?}"
    );
}

#[test]
fn no_client_debug_shows_the_bearer_or_the_capability_token() {
    let host = ToolHost::bind(HostConfig::default().capability_urls(true)).unwrap();
    let surface = StaticSurface::new()
        .tool(Tool::new("ping", "Answers pong."), |_args, _ctx| "pong")
        .unwrap();
    let session = host.open_session(surface);
    let token = session.bearer_token().to_owned();
    let secret = token.trim_start_matches("th_");
    let builder = session.client_builder();
    let mut client = session.client_builder().connect().unwrap();
    // A request has gone out, so the client's buffers have held the header.
    client.call_tool("ping", json!({})).unwrap();
    let capability = session.capability_url().unwrap();
    let cap_builder = Client::builder(&capability);
    let mut cap_client = Client::builder(&capability).connect().unwrap();
    cap_client.call_tool("ping", json!({})).unwrap();
    for shown in [
        format!("{builder:?}"),
        format!("{client:?}"),
        format!("{cap_builder:?}"),
        format!("{cap_client:?}"),
    ] {
        assert!(!shown.contains(secret), "{shown}");
        assert!(
            shown.contains("redacted") || shown.contains("Authorization"),
            "{shown}"
        );
    }
    // What Debug leaves out is still what the clients send: both work.
    assert_eq!(session.calls_served(), 2);
}
