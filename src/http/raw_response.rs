//! Raw responses: complete responses written by hand on the request's
//! connection, as the same bytes tiny_http would write.
//!
//! tiny_http's `Request::respond` costs a small JSON answer as much as the
//! whole protocol work of a tool call (BENCHMARKS.md): it
//! formats the `Date` afresh, builds a header object per line, inserts
//! `Server` and `Date` at the front of the list, and writes the head in a
//! dozen small writes, each through its locks. Here the head is built in
//! the body's buffer with the `Date` kept per thread for the second it
//! names, and goes out in one `write` + `flush`, as the event streams
//! already do (see `sse`).
//!
//! Only the responses whose framing tiny_http would not vary are written
//! so: a body with its `Content-Length`, a status that carries one, a
//! request that is not `HEAD` and sends no `TE` (which may ask for chunks).
//! Everything else — and a header tiny_http would drop — goes through
//! tiny_http, which frames it (see [`fits`]).

use std::cell::Cell;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::model::http::HttpResponse;

/// The value of tiny_http's `Server` header, kept so that a client sees the
/// same head whichever path wrote it.
const SERVER: &str = "tiny-http (Rust)";

/// Whether `response` to `request` can be written here: tiny_http would
/// frame it with its `Content-Length`, and no body is left to read.
/// `body_read`: the request's body has been read to its end.
///
/// Taking the connection drops the request, and tiny_http reads what is
/// left of a body when a request is dropped: with a body still on its
/// way, that would hold the answer back until the client has sent it all
/// (tiny_http's own `respond` writes first, and drains after).
pub(super) fn fits(request: &tiny_http::Request, response: &HttpResponse, body_read: bool) -> bool {
    (body_read || nothing_unread(request)) && plain(request, response)
}

/// Writes `response` in one piece, with every header it has: as tiny_http
/// would for a pair that [`fits`]; else for an answer whose body was read
/// off first (or had none) and whose headers tiny_http would not all
/// write — `Connection: close` above all. A `HEAD` gets the head alone.
pub(super) fn write(request: tiny_http::Request, response: &HttpResponse) {
    let version = request.http_version();
    let (major, minor) = (version.0, version.1);
    let mut head = head(major, minor, response);
    if *request.method() != tiny_http::Method::Head {
        head.extend_from_slice(&response.body);
    }
    let mut writer = request.into_writer();
    // A client that hung up is no fault of ours; there is no one to tell.
    let _ = writer.write_all(&head).and_then(|()| writer.flush());
}

/// Whether tiny_http holds the whole body already (it reads one of up to
/// 1 KiB with the head, unless the client waits for `100 Continue`), or
/// there is none.
fn nothing_unread(request: &tiny_http::Request) -> bool {
    let has = |name: &'static str| request.headers().iter().any(|h| h.field.equiv(name));
    if has("Transfer-Encoding") || has("Expect") {
        return false;
    }
    request.body_length().is_none_or(|len| len <= 1024)
}

/// Whether tiny_http would frame `response` to `request` with its
/// `Content-Length` and the body, and keep every header of it.
fn plain(request: &tiny_http::Request, response: &HttpResponse) -> bool {
    // 1xx, 204 and 304 carry no body; HEAD gets none either.
    let bodied = matches!(response.status, 200..=203 | 205..=303 | 305..=599);
    bodied
        && *request.method() != tiny_http::Method::Head
        && !request.headers().iter().any(|h| h.field.equiv("TE"))
        && response.headers.iter().all(|(name, value)| {
            // tiny_http drops a header that is not ASCII and adds its own
            // `Server` and `Date` only when the response has none.
            name.is_ascii()
                && value.is_ascii()
                && !name.eq_ignore_ascii_case("date")
                && !name.eq_ignore_ascii_case("server")
        })
}

/// The head tiny_http writes: status line, `Server`, `Date`, the
/// response's headers in order, `Content-Length`.
fn head(major: u8, minor: u8, response: &HttpResponse) -> Vec<u8> {
    let headers: usize = response
        .headers
        .iter()
        .map(|(name, value)| name.len() + value.len() + 4)
        .sum();
    let mut head = Vec::with_capacity(128 + headers + response.body.len());
    // Numbers by hand: `write!` costs more than the rest of the head.
    head.extend_from_slice(b"HTTP/");
    decimal(&mut head, u64::from(major));
    head.push(b'.');
    decimal(&mut head, u64::from(minor));
    head.push(b' ');
    decimal(&mut head, u64::from(response.status));
    head.push(b' ');
    let reason = tiny_http::StatusCode(response.status).default_reason_phrase();
    head.extend_from_slice(reason.as_bytes());
    head.extend_from_slice(b"\r\nServer: ");
    head.extend_from_slice(SERVER.as_bytes());
    head.extend_from_slice(b"\r\nDate: ");
    head.extend_from_slice(&date_now());
    head.extend_from_slice(b"\r\n");
    for (name, value) in &response.headers {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Content-Length: ");
    decimal(&mut head, response.body.len() as u64);
    head.extend_from_slice(b"\r\n\r\n");
    head
}

/// Appends `n` in decimal.
fn decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) is always this long.
const DATE_LEN: usize = 29;

thread_local! {
    /// The second last formatted on this thread, and its text: a worker
    /// answers thousands of requests a second, all with the same `Date`.
    static DATE: Cell<(u64, [u8; DATE_LEN])> = const { Cell::new((u64::MAX, [0; DATE_LEN])) };
}

/// Now, as the `Date` header's value.
fn date_now() -> [u8; DATE_LEN] {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    date_at(secs)
}

/// The `Date` of second `secs`: the one kept when it is that second's.
fn date_at(secs: u64) -> [u8; DATE_LEN] {
    DATE.with(|kept| {
        let (second, text) = kept.get();
        if second == secs {
            return text;
        }
        let text = imf_fixdate(secs);
        kept.set((secs, text));
        text
    })
}

/// `secs` since the Unix epoch as an IMF-fixdate (RFC 9110, 5.6.7).
fn imf_fixdate(secs: u64) -> [u8; DATE_LEN] {
    const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let days = secs / 86_400;
    let of_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut out = [0u8; DATE_LEN];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    let two = |n: u64| [b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8];
    put(DAYS[(days % 7) as usize]);
    put(b", ");
    put(&two(day));
    put(b" ");
    put(MONTHS[(month - 1) as usize]);
    put(b" ");
    put(&two(year / 100));
    put(&two(year));
    put(b" ");
    put(&two(of_day / 3600));
    put(b":");
    put(&two(of_day / 60 % 60));
    put(b":");
    put(&two(of_day % 60));
    put(b" GMT");
    out
}

/// Year, month (1–12) and day (1–31) of the `days`th day after 1970-01-01
/// in the proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`,
/// for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(secs: u64) -> String {
        String::from_utf8(imf_fixdate(secs).to_vec()).unwrap()
    }

    #[test]
    fn dates_are_spelled_as_imf_fixdates() {
        assert_eq!(date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        // A leap day, the day after it, and the last second of a year.
        assert_eq!(date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(date(951_868_800), "Wed, 01 Mar 2000 00:00:00 GMT");
        assert_eq!(date(1_798_761_599), "Thu, 31 Dec 2026 23:59:59 GMT");
        assert_ne!(date(1_798_761_599), date(1_798_761_600));
    }

    #[test]
    fn a_date_is_kept_for_its_second_and_then_renewed() {
        let secs = 1_798_761_599;
        assert_eq!(date_at(secs), imf_fixdate(secs));
        // What is kept is what is sent within the second...
        DATE.with(|kept| kept.set((secs, [b'x'; DATE_LEN])));
        assert_eq!(date_at(secs), [b'x'; DATE_LEN]);
        // ...and never in the next one.
        assert_eq!(date_at(secs + 1), imf_fixdate(secs + 1));
        assert_eq!(date_at(secs + 1), imf_fixdate(secs + 1));
        let now = String::from_utf8(date_now().to_vec()).unwrap();
        assert!(now.ends_with(" GMT") && now.len() == DATE_LEN, "{now}");
    }

    #[test]
    fn the_head_is_tiny_https_with_every_header_in_order() {
        let mut response = HttpResponse::json_text(200, b"{}".to_vec());
        response.headers.push(("Mcp-Session-Id", "abc".into()));
        let head = String::from_utf8(head(1, 1, &response)).unwrap();
        let (status, rest) = head.split_once("\r\n").unwrap();
        assert_eq!(status, "HTTP/1.1 200 OK");
        let lines: Vec<&str> = rest.trim_end().split("\r\n").collect();
        assert_eq!(lines[0], "Server: tiny-http (Rust)");
        assert!(lines[1].starts_with("Date: ") && lines[1].ends_with(" GMT"));
        assert_eq!(
            &lines[2..],
            [
                "Content-Type: application/json",
                "Mcp-Session-Id: abc",
                "Content-Length: 2"
            ]
        );
        assert!(head.ends_with("\r\n\r\n"));
        let old = String::from_utf8(head_of(1, 0, 404)).unwrap();
        assert!(old.starts_with("HTTP/1.0 404 Not Found\r\n"), "{old}");
        assert!(old.ends_with("\r\nContent-Length: 0\r\n\r\n"), "{old}");
        let mut numbers = Vec::new();
        for n in [0, 7, 10, 1_234_567, u64::MAX] {
            decimal(&mut numbers, n);
            numbers.push(b' ');
        }
        assert_eq!(numbers, b"0 7 10 1234567 18446744073709551615 ");
    }

    fn head_of(major: u8, minor: u8, status: u16) -> Vec<u8> {
        head(major, minor, &HttpResponse::json_text(status, Vec::new()))
    }
}
