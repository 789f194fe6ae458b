//! A small stand-in for libtest, for the test binaries that are also the
//! programs they run (`harness = false`): such a binary's `main` first
//! looks at how it was started and becomes the program, else runs its
//! tests through [`run_tests`].

use std::panic;
use std::process::{self, ExitCode};
use std::thread;
use std::time::Duration;

/// A test: its name (a sentence) and its body, which panics to fail.
pub type Test = (&'static str, fn());

/// Runs the tests `args` select, in order, and reports in libtest's words.
/// It understands the arguments `cargo test` passes on (name filters,
/// `--exact`, `--skip`, `--list`, `--ignored`) and ignores the rest.
///
/// Each test runs programs, and one that hangs must not hang the suite:
/// past `give_up_after` the binary prints that it gave up and exits 101.
pub fn run_tests(tests: &[Test], args: &[String], give_up_after: Duration) -> ExitCode {
    let (mut filters, mut skips) = (Vec::new(), Vec::new());
    let (mut exact, mut list, mut ignored_only) = (false, false, false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--exact" => exact = true,
            "--list" => list = true,
            "--ignored" => ignored_only = true,
            "--skip" => skips.extend(args.next()),
            "--test-threads" | "--format" | "--color" | "--logfile" | "--shuffle-seed" | "-Z" => {
                args.next();
            }
            flag if flag.starts_with('-') => {}
            filter => filters.push(filter),
        }
    }
    let selected: Vec<_> = tests
        .iter()
        .filter(|(name, _)| {
            let matches = |f: &&str| if exact { name == f } else { name.contains(f) };
            !ignored_only
                && (filters.is_empty() || filters.iter().any(matches))
                && !skips.iter().any(|s| name.contains(s.as_str()))
        })
        .collect();
    if list {
        for (name, _) in &selected {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    thread::spawn(move || {
        thread::sleep(give_up_after);
        eprintln!("still running after {give_up_after:?}; giving up");
        process::exit(101);
    });
    println!("\nrunning {} tests", selected.len());
    let mut failed = Vec::new();
    for (name, test) in &selected {
        let passed = panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if passed { "ok" } else { "FAILED" });
        if !passed {
            failed.push(*name);
        }
    }
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        selected.len() - failed.len(),
        failed.len(),
        tests.len() - selected.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}
