//! `pattern` and `patternProperties`: a safe subset of ECMA-262 regular
//! expressions, matched by a Pike VM.
//!
//! Why a VM and not backtracking: the strings come from a model, possibly a
//! prompt-injected one, and a backtracking matcher on `(a+)+$` can spin for
//! minutes. The VM keeps every live thread in one set, so matching costs at
//! most (program size) × (string length) steps, whatever the pattern.
//!
//! The subset: literals, `.`, classes (`[a-z_]`, `[^…]`), the escapes `\d \D
//! \w \W \s \S \b \B \t \n \r \v \f \0 \xHH \uHHHH \u{H…}` and escaped syntax
//! characters, anchors `^ $`, groups `( )`, `(?: )`, `(?<name> )`,
//! alternation `|`, and the quantifiers `* + ? {n} {n,} {n,m}` (lazy forms
//! too: laziness cannot change whether a string matches). As in JSON Schema,
//! a pattern is unanchored: it matches if it matches anywhere.
//!
//! Outside the subset — lookaround, backreferences, Unicode property
//! escapes, `\c` — is [`PatternError::Unsupported`]: the schema compiler
//! reports it and leaves the keyword unchecked. Broken syntax (an unclosed
//! group, a reversed range) is [`PatternError::Invalid`].

use std::cell::RefCell;
use std::fmt;

mod parse;

use parse::{parse, starts_anchored, Node};

/// The largest program a pattern may compile to. It bounds the work per
/// character; `{n,m}` copies its operand, so counted repetition is what
/// usually reaches it.
const MAX_PROGRAM: usize = 2_000;

/// Why a pattern was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// Valid ECMA-262 syntax outside the subset checked here.
    Unsupported(String),
    /// Not a valid regular expression at all.
    Invalid(String),
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternError::Unsupported(what) | PatternError::Invalid(what) => f.write_str(what),
        }
    }
}

/// A compiled pattern.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pattern {
    program: Vec<Inst>,
    classes: Vec<Class>,
    /// Starts with `^` on every branch, so no thread need start after 0.
    anchored: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inst {
    Char(char),
    /// Any character but a line terminator.
    Any,
    Class(usize),
    Assert(Assertion),
    Split(usize, usize),
    Jump(usize),
    Match,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Assertion {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

/// Sorted, disjoint, inclusive ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Class(Vec<(char, char)>);

impl Class {
    fn new(mut ranges: Vec<(char, char)>) -> Class {
        ranges.sort_unstable();
        let mut merged: Vec<(char, char)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if u32::from(lo) <= u32::from(last.1).saturating_add(1) => {
                    last.1 = last.1.max(hi);
                }
                _ => merged.push((lo, hi)),
            }
        }
        Class(merged)
    }

    fn negated(&self) -> Class {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut next = 0u32;
        for &(lo, hi) in &self.0 {
            if u32::from(lo) > next {
                push_range(&mut out, next, u32::from(lo) - 1);
            }
            next = u32::from(hi) + 1;
        }
        push_range(&mut out, next, u32::from(char::MAX));
        Class(out)
    }

    fn contains(&self, c: char) -> bool {
        self.0
            .binary_search_by(|&(lo, hi)| {
                if hi < c {
                    std::cmp::Ordering::Less
                } else if lo > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }
}

/// Pushes the chars of `lo..=hi`, skipping the surrogate gap.
fn push_range(out: &mut Vec<(char, char)>, lo: u32, hi: u32) {
    let pieces = [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)];
    for (lo, hi) in pieces {
        if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi)) {
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Pattern {
    /// Compiles `source`.
    pub(crate) fn new(source: &str) -> Result<Pattern, PatternError> {
        let node = parse(source)?;
        let anchored = starts_anchored(&node);
        let mut compiler = Compiler {
            program: Vec::new(),
            classes: Vec::new(),
        };
        compiler.emit(&node)?;
        compiler.push(Inst::Match)?;
        Ok(Pattern {
            program: compiler.program,
            classes: compiler.classes,
            anchored,
        })
    }

    /// Whether the pattern matches anywhere in `text`.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        // The thread sets live in a per-thread scratch, so a match allocates
        // nothing once a worker has seen a program this large.
        thread_local! {
            static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
        }
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => self.run(text, &mut scratch),
            Err(_) => self.run(text, &mut Scratch::default()),
        })
    }

    fn run(&self, text: &str, scratch: &mut Scratch) -> bool {
        let n = self.program.len();
        let Scratch {
            current,
            next,
            stack,
        } = scratch;
        current.reset(n);
        next.reset(n);
        let mut prev: Option<char> = None;
        let mut chars = text.chars().peekable();
        loop {
            let here = chars.peek().copied();
            if (prev.is_none() || !self.anchored) && self.add(current, stack, 0, prev, here) {
                return true;
            }
            let Some(c) = here else {
                return false;
            };
            if self.anchored && current.list.is_empty() {
                return false;
            }
            chars.next();
            let after = chars.peek().copied();
            next.clear();
            for i in 0..current.list.len() {
                let pc = current.list[i];
                let step = match self.program[pc] {
                    Inst::Char(want) => want == c,
                    Inst::Any => !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'),
                    Inst::Class(k) => self.classes[k].contains(c),
                    _ => false,
                };
                if step && self.add(next, stack, pc + 1, Some(c), after) {
                    return true;
                }
            }
            std::mem::swap(current, next);
            prev = Some(c);
        }
    }

    /// Adds `pc` and what it reaches without consuming input to `threads`;
    /// `true` when that reaches `Match`. An explicit stack (reused across
    /// steps) keeps deep programs off the call stack.
    fn add(
        &self,
        threads: &mut Threads,
        stack: &mut Vec<usize>,
        pc: usize,
        prev: Option<char>,
        next: Option<char>,
    ) -> bool {
        stack.clear();
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if !threads.insert(pc) {
                continue;
            }
            match self.program[pc] {
                Inst::Match => return true,
                Inst::Jump(to) => stack.push(to),
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Inst::Assert(kind) => {
                    let holds = match kind {
                        Assertion::Start => prev.is_none(),
                        Assertion::End => next.is_none(),
                        Assertion::WordBoundary | Assertion::NotWordBoundary => {
                            let boundary = prev.is_some_and(is_word) != next.is_some_and(is_word);
                            boundary == (kind == Assertion::WordBoundary)
                        }
                    };
                    if holds {
                        stack.push(pc + 1);
                    }
                }
                Inst::Char(_) | Inst::Any | Inst::Class(_) => {}
            }
        }
        false
    }
}

/// A sparse set of program counters, in insertion order (which is what
/// keeps the simulation linear: each pc enters once per step).
#[derive(Default)]
struct Threads {
    list: Vec<usize>,
    seen: Vec<bool>,
}

impl Threads {
    /// Empties the set and sizes it for a program of `n` instructions.
    fn reset(&mut self, n: usize) {
        self.clear();
        if self.seen.len() < n {
            self.seen.resize(n, false);
        }
    }

    fn insert(&mut self, pc: usize) -> bool {
        if self.seen[pc] {
            return false;
        }
        self.seen[pc] = true;
        self.list.push(pc);
        true
    }

    fn clear(&mut self) {
        for &pc in &self.list {
            self.seen[pc] = false;
        }
        self.list.clear();
    }
}

/// The working memory of one match.
#[derive(Default)]
struct Scratch {
    current: Threads,
    next: Threads,
    stack: Vec<usize>,
}

struct Compiler {
    program: Vec<Inst>,
    classes: Vec<Class>,
}

impl Compiler {
    fn push(&mut self, inst: Inst) -> Result<usize, PatternError> {
        if self.program.len() >= MAX_PROGRAM {
            return Err(PatternError::Unsupported(format!(
                "the pattern compiles to more than {MAX_PROGRAM} steps (counted repetition makes copies)"
            )));
        }
        self.program.push(inst);
        Ok(self.program.len() - 1)
    }

    fn emit(&mut self, node: &Node) -> Result<(), PatternError> {
        match node {
            Node::Empty => {}
            Node::Char(c) => {
                self.push(Inst::Char(*c))?;
            }
            Node::Any => {
                self.push(Inst::Any)?;
            }
            Node::Class(class) => {
                self.classes.push(class.clone());
                self.push(Inst::Class(self.classes.len() - 1))?;
            }
            Node::Assert(kind) => {
                self.push(Inst::Assert(*kind))?;
            }
            Node::Concat(items) => {
                for item in items {
                    self.emit(item)?;
                }
            }
            Node::Alternate(branches) => {
                let mut jumps = Vec::new();
                for (i, branch) in branches.iter().enumerate() {
                    if i + 1 < branches.len() {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.emit(branch)?;
                        jumps.push(self.push(Inst::Jump(0))?);
                        let next = self.program.len();
                        self.program[split] = Inst::Split(split + 1, next);
                    } else {
                        self.emit(branch)?;
                    }
                }
                let end = self.program.len();
                for jump in jumps {
                    self.program[jump] = Inst::Jump(end);
                }
            }
            Node::Repeat { node, min, max } => {
                for _ in 0..*min {
                    self.emit(node)?;
                }
                match max {
                    None => {
                        // L: split(body, out); body; jump L
                        let split = self.push(Inst::Split(0, 0))?;
                        self.emit(node)?;
                        self.push(Inst::Jump(split))?;
                        let out = self.program.len();
                        self.program[split] = Inst::Split(split + 1, out);
                    }
                    Some(max) => {
                        let mut splits = Vec::new();
                        for _ in *min..*max {
                            splits.push(self.push(Inst::Split(0, 0))?);
                            self.emit(node)?;
                        }
                        let out = self.program.len();
                        for split in splits {
                            self.program[split] = Inst::Split(split + 1, out);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Pattern::new(pattern).unwrap().is_match(text)
    }

    #[test]
    fn the_subset_matches_like_ecmascript() {
        let table: &[(&str, &str, bool)] = &[
            ("abc", "xxabcxx", true),
            ("^abc$", "xxabcxx", false),
            ("^abc$", "abc", true),
            ("^[a-z_][a-z0-9_]*$", "snake_case9", true),
            ("^[a-z_][a-z0-9_]*$", "9lives", false),
            ("^\\d{4}-\\d{2}-\\d{2}$", "2025-01-12", true),
            ("^\\d{4}-\\d{2}-\\d{2}$", "2025-1-12", false),
            ("^(?:red|green|blue)$", "green", true),
            ("^(?:red|green|blue)$", "greenish", false),
            ("^(?<word>\\w+)\\s+\\w+$", "hello world", true),
            ("colou?r", "color", true),
            ("^a{2,3}$", "aaaa", false),
            ("^a{2,}$", "aaaa", true),
            ("^a{2}$", "aa", true),
            ("^a+?$", "aaa", true),
            ("[^0-9]", "123", false),
            ("[^0-9]", "12a", true),
            ("^\\S+$", "no spaces", false),
            ("\\bcat\\b", "a cat!", true),
            ("\\bcat\\b", "concat", false),
            ("\\Bcat", "concat", true),
            ("^.$", "\n", false),
            ("^.$", "é", true),
            ("^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$", "a.b-c@ex-ample.org", true),
            ("^\\u00e9\\x41\\u{1F600}$", "éA😀", true),
            ("^[\\d\\s]+$", "1 2\t3", true),
            ("a|", "zzz", true),
            ("^$", "", true),
            ("", "anything", true),
            ("^\\$\\d+\\.\\d\\d$", "$10.99", true),
        ];
        for &(pattern, text, expected) in table {
            assert_eq!(matches(pattern, text), expected, "{pattern:?} on {text:?}");
        }
    }

    #[test]
    fn a_catastrophic_backtracking_pattern_runs_in_linear_time() {
        let evil = Pattern::new("^(a+)+$").unwrap();
        let text = format!("{}!", "a".repeat(20_000));
        assert!(!evil.is_match(&text));
    }

    #[test]
    fn syntax_outside_the_subset_is_unsupported_and_broken_syntax_invalid() {
        for pattern in [
            "(?=a)", "(?!a)", "(?<=a)b", "(a)\\1", "\\p{L}", "\\cA", "a{2000}",
        ] {
            assert!(
                matches!(Pattern::new(pattern), Err(PatternError::Unsupported(_))),
                "{pattern}"
            );
        }
        for pattern in [
            "(a", "a)", "[a", "[z-a]", "*a", "a**", "a{2,1}", "\\", "x{", "\\q",
        ] {
            assert!(
                matches!(Pattern::new(pattern), Err(PatternError::Invalid(_))),
                "{pattern}"
            );
        }
    }
}
