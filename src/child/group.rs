//! A child process and everything it starts (an ACP agent, a stdio MCP
//! server): spawned as a group of its own, ended as a group.
//!
//! Such programs are often a launcher (`npx`, a shell script, a Node
//! wrapper) that starts the real program as a child. Ending only the direct
//! child leaves the real one running, parented to init and holding the
//! pipes open, so that a caller waiting for the output to end waits
//! forever. So on Unix the child leads a new process group
//! (`process_group(0)`), which its children join, and [`Group::end`]
//! signals the whole group: closed stdin first (how both ACP and MCP's
//! stdio transport say goodbye), a grace period (none when the child has
//! already exited), then `SIGTERM`, then `SIGKILL`, then the child is
//! reaped. The signals go through `kill(1)`, which std can start
//! without `unsafe`; a process that leaves the group on purpose (`setsid`,
//! a daemon) is beyond its reach.
//!
//! Whether the group still has members is read from `/proc` on Linux
//! (zombies do not count: they run nothing and hold no pipe, and where
//! init does not reap them they would count forever), and asked of
//! `kill -0` elsewhere.
//!
//! On Windows the child gets a new process group too
//! (`CREATE_NEW_PROCESS_GROUP`), and ending it runs `taskkill /T`, which
//! ends the process tree, first politely, then with `/F` — as long as the
//! child itself still runs: std alone cannot find the children of a child
//! that already exited (a job object would, but needs `unsafe` or a
//! crate). Other platforms get only what std offers: the direct child is
//! killed and reaped.
//!
//! Wine differs here: its `taskkill` (Wine 8, what CI runs the Windows
//! build on) refuses `/T` as an unknown option, so under Wine the direct
//! child is killed (std's `Child::kill`, below) and its children are left
//! running. CI therefore cannot check the tree ending on Windows; it rests
//! on Microsoft's documentation of `taskkill /T`.

use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long the child gets to exit on its own once its stdin is closed,
/// unless [`Group::set_exit_grace`] says otherwise.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long the group gets between `SIGTERM` and `SIGKILL`.
pub(crate) const TERM_GRACE: Duration = Duration::from_secs(1);
/// How long `SIGKILL` gets to take effect before the driver stops looking.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// How often the group is looked at while waiting.
const POLL: Duration = Duration::from_millis(20);

/// The child process, leading a process group of its own.
pub(crate) struct Group {
    child: Child,
    ended: bool,
    exit_grace: Duration,
}

impl Group {
    /// Starts `command` with its stdin, stdout and stderr piped, in a new
    /// process group.
    pub(crate) fn spawn(
        command: &mut Command,
    ) -> io::Result<(Group, ChildStdin, ChildStdout, ChildStderr)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        new_group(command);
        let mut child = command.spawn()?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            let mut group = Group::new(child);
            group.end();
            return Err(io::Error::other("the child's stdio were not piped"));
        };
        Ok((Group::new(child), stdin, stdout, stderr))
    }

    fn new(child: Child) -> Group {
        Group {
            child,
            ended: false,
            exit_grace: EXIT_GRACE,
        }
    }

    /// How long [`Group::end`] waits for the child to leave on its own
    /// before it signals the group.
    #[cfg(feature = "client")]
    pub(crate) fn set_exit_grace(&mut self, grace: Duration) {
        self.exit_grace = grace;
    }

    /// How the child exited, once it has (reaping it); `None` while it
    /// runs. What is left of its group may still run.
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The child's process id, which is also its process group's id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Ends the child and everything in its group; the child's stdin must
    /// already be closed (or about to be). Returns once the direct child is
    /// reaped and the group is gone, or the last grace period has passed.
    pub(crate) fn end(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let group = self.child.id();
        // The grace is the child's, to leave on its own once its input
        // closes; a child already gone needs none, and what it left behind
        // (a launcher's orphan holding the pipes) is signalled at once.
        let grace = match self.child.try_wait() {
            Ok(Some(_)) => Duration::ZERO,
            _ => self.exit_grace,
        };
        if self.wait_for_group(group, grace) {
            return;
        }
        signal_group(group, Signal::Terminate);
        if self.wait_for_group(group, TERM_GRACE) {
            return;
        }
        signal_group(group, Signal::Kill);
        // In case the group could not be signalled at all (no kill(1)):
        // the direct child at least.
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.wait_for_group(group, KILL_GRACE);
    }

    /// Waits up to `grace` for the child to exit (reaping it) and the rest
    /// of its group with it; `true` once both are gone.
    fn wait_for_group(&mut self, group: u32, grace: Duration) -> bool {
        let deadline = Instant::now() + grace;
        loop {
            let child_gone = !matches!(self.child.try_wait(), Ok(None));
            if child_gone && !group_alive(group) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(POLL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.end();
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Terminate,
    Kill,
}

#[cfg(unix)]
fn new_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(unix)]
fn signal_group(group: u32, signal: Signal) {
    let name = match signal {
        Signal::Terminate => "-TERM",
        Signal::Kill => "-KILL",
    };
    // `--` so that the negative number (the group) is not read as an option.
    let _ = quiet(Command::new("kill").args([name, "--", &format!("-{group}")])).status();
}

/// Whether any process of `group` is alive (a zombie is not).
#[cfg(target_os = "linux")]
pub(crate) fn group_alive(group: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return kill_zero(group);
    };
    entries.flatten().any(|entry| {
        let is_pid = entry
            .file_name()
            .to_str()
            .is_some_and(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()));
        is_pid
            && std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| live_member_of(&stat))
                == Some(group)
    })
}

/// The process group of a live process, from its `/proc/PID/stat` line;
/// `None` for a zombie or a line that cannot be read.
#[cfg(target_os = "linux")]
fn live_member_of(stat: &str) -> Option<u32> {
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and
    // parentheses, so the fields are counted after its last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    (state != "Z" && state != "X").then_some(pgrp)
}

#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn group_alive(group: u32) -> bool {
    kill_zero(group)
}

/// Asks `kill -0` whether `group` has members.
#[cfg(unix)]
fn kill_zero(group: u32) -> bool {
    quiet(Command::new("kill").args(["-0", "--", &format!("-{group}")]))
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(windows)]
fn new_group(command: &mut Command) {
    use std::os::windows::process::CommandExt;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    command.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

#[cfg(windows)]
fn signal_group(group: u32, signal: Signal) {
    let pid = group.to_string();
    let mut taskkill = Command::new("taskkill");
    taskkill.args(["/PID", &pid, "/T"]);
    if let Signal::Kill = signal {
        taskkill.arg("/F");
    }
    let _ = quiet(&mut taskkill).status();
}

#[cfg(windows)]
pub(crate) fn group_alive(_group: u32) -> bool {
    // std cannot see a tree without its root; once the root is reaped
    // (which `wait_for_group` checks first), taskkill /T has done what it
    // can.
    false
}

#[cfg(not(any(unix, windows)))]
fn new_group(_command: &mut Command) {}

#[cfg(not(any(unix, windows)))]
fn signal_group(_group: u32, _signal: Signal) {}

#[cfg(not(any(unix, windows)))]
pub(crate) fn group_alive(_group: u32) -> bool {
    false
}

/// `command` with no input and its output thrown away.
#[cfg(any(unix, windows))]
fn quiet(command: &mut Command) -> &mut Command {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_the_group_of_a_live_process_only() {
        assert_eq!(live_member_of("42 (sh) S 1 42 42 0 -1"), Some(42));
        assert_eq!(live_member_of("43 (my (odd) name) R 42 42 42 0"), Some(42));
        assert_eq!(live_member_of("44 (gone) Z 1 42 42 0"), None);
        assert_eq!(live_member_of("garbage"), None);
    }

    #[test]
    fn a_group_with_a_grandchild_ends_whole_even_when_its_leader_ignores_stdin() {
        // sh leads the group, starts a sleeping grandchild, and ignores
        // the end of its input.
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 60 & sleep 60"]);
        let (mut group, stdin, _stdout, _stderr) = Group::spawn(&mut command).expect("sh");
        let id = group.id();
        thread::sleep(Duration::from_millis(100));
        assert!(group_alive(id), "the group runs");
        drop(stdin);
        group.end();
        assert!(!group_alive(id), "nothing of the group is left");
        assert!(group.child.try_wait().expect("status").is_some(), "reaped");
    }
}
