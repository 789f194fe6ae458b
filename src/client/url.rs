//! Where the client may go: a plain `http://` URL naming this machine.
//!
//! The client speaks unencrypted HTTP, so it refuses anything that would
//! carry a bearer off the machine: `https://` (no TLS here), and any host
//! that is not a loopback address or `localhost` resolving only to loopback.
//! The check happens once, when the client is built, and every later
//! connection goes to the addresses resolved then.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use super::error::ClientError;

/// A parsed endpoint: the loopback addresses to connect to, the `Host`
/// header to send and the request target.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Every loopback address the host name resolved to, in resolver order.
    pub(crate) addrs: Vec<SocketAddr>,
    /// The `Host` header value: the URL's host and the port, always explicit.
    pub(crate) host_header: String,
    /// Path and query, never empty (`/` at least).
    pub(crate) path: String,
}

/// A capability URL's path is its credential: `Debug` redacts the token.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("addrs", &self.addrs)
            .field("host_header", &self.host_header)
            .field("path", &redact_capability(&self.path))
            .finish()
    }
}

/// `text` (a URL or a path) with the token of a capability path
/// (`/cap/<token>/…`) replaced, for `Debug` output.
pub(crate) fn redact_capability(text: &str) -> String {
    match text.split_once("/cap/") {
        Some((before, after)) => {
            let rest = after.find(['/', '?', '#']).map_or("", |at| &after[at..]);
            format!("{before}/cap/<redacted>{rest}")
        }
        None => text.to_owned(),
    }
}

fn invalid(url: &str, problem: impl Into<String>) -> ClientError {
    ClientError::InvalidUrl {
        url: url.to_owned(),
        problem: problem.into(),
    }
}

/// Parses `url` and resolves its host, refusing anything that is not plain
/// HTTP to a loopback address.
pub(crate) fn parse(url: &str) -> Result<Target, ClientError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid(
            url,
            "it has no scheme; write it as http://127.0.0.1:PORT/mcp",
        ));
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(invalid(
            url,
            format!(
                "the scheme is {scheme:?}, but this client speaks plain http:// to this machine only (there is no TLS in toolhost)"
            ),
        ));
    }
    let rest = rest.split('#').next().unwrap_or("");
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(invalid(
            url,
            "credentials in the URL are not supported; pass them with ClientBuilder::bearer or ClientBuilder::header",
        ));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| {
        invalid(
            url,
            "the host or port cannot be read; write it as http://127.0.0.1:PORT/mcp",
        )
    })?;
    let addrs = resolve_loopback(url, host, port)?;
    let path = match path {
        "" => "/".to_owned(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_owned(),
    };
    if path.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
        return Err(invalid(
            url,
            "the path holds spaces, control or non-ASCII characters; percent-encode them",
        ));
    }
    let host_header = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Ok(Target {
        addrs,
        host_header,
        path,
    })
}

/// Splits `host[:port]` or `[v6][:port]`; the port defaults to 80.
fn split_host_port(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, tail) = rest.split_once(']')?;
        match tail {
            "" => (host, None),
            tail => (host, Some(tail.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None => 80,
        Some(port) => port.parse().ok()?,
    };
    Some((host, port))
}

fn resolve_loopback(url: &str, host: &str, port: u16) -> Result<Vec<SocketAddr>, ClientError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        if !ip.is_loopback() {
            return Err(not_loopback(url, host));
        }
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    if !host.eq_ignore_ascii_case("localhost") {
        return Err(not_loopback(url, host));
    }
    let resolved: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|err| invalid(url, format!("localhost does not resolve here: {err}")))?
        .collect();
    // A resolver that maps localhost elsewhere must not receive the bearer.
    let loopback: Vec<SocketAddr> = resolved
        .into_iter()
        .filter(|addr| addr.ip().is_loopback())
        .collect();
    if loopback.is_empty() {
        return Err(invalid(
            url,
            "localhost resolves to no loopback address on this machine; use http://127.0.0.1:PORT",
        ));
    }
    Ok(loopback)
}

fn not_loopback(url: &str, host: &str) -> ClientError {
    invalid(
        url,
        format!(
            "{host} is not a loopback address: this client sends bearers over plain HTTP, so it only talks to 127.0.0.1, [::1] or localhost"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_literals_parse_with_path_and_explicit_port() {
        let target = parse("http://127.0.0.1:4000/mcp").unwrap();
        assert_eq!(target.addrs, ["127.0.0.1:4000".parse().unwrap()]);
        assert_eq!(target.host_header, "127.0.0.1:4000");
        assert_eq!(target.path, "/mcp");

        let v6 = parse("HTTP://[::1]:9/cap/x/mcp?a=b#frag").unwrap();
        assert_eq!(v6.addrs, ["[::1]:9".parse().unwrap()]);
        assert_eq!(v6.host_header, "[::1]:9");
        assert_eq!(v6.path, "/cap/x/mcp?a=b");

        let bare = parse("http://127.0.0.2").unwrap();
        assert_eq!(bare.host_header, "127.0.0.2:80");
        assert_eq!(bare.path, "/");
        assert_eq!(parse("http://127.0.0.1:1?q").unwrap().path, "/?q");
    }

    #[test]
    fn localhost_resolves_to_loopback_addresses_only() {
        let target = parse("http://localhost:5000/mcp").unwrap();
        assert!(!target.addrs.is_empty());
        assert!(target.addrs.iter().all(|a| a.ip().is_loopback()));
        assert_eq!(target.host_header, "localhost:5000");
    }

    #[test]
    fn remote_hosts_tls_and_garbage_are_refused_with_the_reason() {
        let cases = [
            ("https://127.0.0.1:1/mcp", "plain http://"),
            ("http://10.0.0.1:80/mcp", "not a loopback address"),
            ("http://example.com/mcp", "not a loopback address"),
            ("http://[2001:db8::1]:80/", "not a loopback address"),
            ("127.0.0.1:80/mcp", "no scheme"),
            ("http://user:pw@127.0.0.1:1/", "credentials"),
            ("http://127.0.0.1:99999/", "cannot be read"),
            ("http://:80/", "cannot be read"),
            ("http://[::1/", "cannot be read"),
            ("http://127.0.0.1:1/a b", "percent-encode"),
        ];
        for (url, why) in cases {
            let err = parse(url).unwrap_err();
            assert!(
                matches!(err, ClientError::InvalidUrl { .. }),
                "{url}: {err:?}"
            );
            assert!(err.to_string().contains(why), "{url}: {err}");
        }
    }
}
