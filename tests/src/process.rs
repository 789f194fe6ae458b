//! What a process costs, read from `/proc` (Linux; `None` elsewhere): the
//! CPU time it has used and its resident memory, for this process or a
//! child, with no crate for it.

use std::time::Duration;

/// Clock ticks per second of the times in `/proc/<pid>/stat`: `USER_HZ`,
/// which Linux fixes at 100 for user space whatever the kernel's own rate.
const TICKS_PER_SECOND: u64 = 100;

/// The CPU time (user and system, of every thread, the ended ones
/// included) process `pid` has used so far; this process is
/// [`std::process::id`].
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields are
    // counted from the last ')'. utime and stime are fields 14 and 15, the
    // 12th and 13th after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (user + system) * 1000 / TICKS_PER_SECOND,
    ))
}

/// The resident set size of process `pid` now, in bytes.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:").map(|kib| kib * 1024)
}

/// The anonymous part of process `pid`'s resident set, in bytes: its heap
/// and stacks, without the pages of the binary and shared libraries that
/// are mapped from files (and shared with every process that maps them).
pub fn anonymous_bytes(pid: u32) -> Option<u64> {
    status_kib(pid, "RssAnon:").map(|kib| kib * 1024)
}

/// The resident part of process `pid`'s own code, in bytes: the pages of
/// the executable mapping of its program file (`/proc/<pid>/exe`), without
/// the shared libraries'. Once a program has run a while this is nearly
/// its whole text: the kernel maps a fault's neighbouring pages too when
/// the file is in the page cache.
pub fn own_code_bytes(pid: u32) -> Option<u64> {
    let program = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let program = program.to_str()?;
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
    let mut in_code = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && first.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
            // A mapping's head: range, permissions, offset, device, inode,
            // path (which may hold spaces).
            let permissions = fields.next().unwrap_or_default();
            let path = fields.skip(3).collect::<Vec<_>>().join(" ");
            in_code = permissions.contains('x') && path == program;
        } else if in_code && first == "Rss:" {
            kib += fields.next()?.parse::<u64>().ok()?;
        }
    }
    Some(kib * 1024)
}

/// A `kB` line of `/proc/<pid>/status`.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The threads process `pid` has now.
pub fn thread_count(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.count())
}

/// The file descriptors process `pid` has open now.
pub fn descriptor_count(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}
