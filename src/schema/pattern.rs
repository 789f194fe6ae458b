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

/// The largest program a pattern may compile to. It bounds the work per
/// character; `{n,m}` copies its operand, so counted repetition is what
/// usually reaches it.
const MAX_PROGRAM: usize = 2_000;

/// The largest count a `{n,m}` quantifier may name.
const MAX_REPEAT: u32 = 1_000;

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

#[derive(Clone, Debug)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Class),
    Assert(Assertion),
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
    },
}

const DIGIT: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
/// ECMA-262 `WhiteSpace` and `LineTerminator`.
const SPACE: &[(char, char)] = &[
    ('\t', '\r'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];

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
        let chars: Vec<char> = source.chars().collect();
        let mut parser = Parser { chars, at: 0 };
        let node = parser.alternation()?;
        if parser.at < parser.chars.len() {
            return Err(PatternError::Invalid(format!(
                "unmatched ')' at character {}",
                parser.at + 1
            )));
        }
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

/// Whether every branch of the pattern begins with `^`.
fn starts_anchored(node: &Node) -> bool {
    match node {
        Node::Assert(Assertion::Start) => true,
        Node::Concat(items) => items.first().is_some_and(starts_anchored),
        Node::Alternate(branches) => branches.iter().all(starts_anchored),
        _ => false,
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

struct Parser {
    chars: Vec<char>,
    at: usize,
}

fn unsupported(what: &str) -> PatternError {
    PatternError::Unsupported(format!("{what} is outside the supported pattern subset"))
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Result<Node, PatternError> {
        let mut branches = vec![self.concatenation()?];
        while self.eat('|') {
            branches.push(self.concatenation()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alternate(branches)
        })
    }

    fn concatenation(&mut self) -> Result<Node, PatternError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, PatternError> {
        let start = self.at;
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => match self.counted()? {
                Some(bounds) => bounds,
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        if self.at == start {
            self.at += 1;
        }
        self.eat('?'); // lazy: same set of matching strings
        if matches!(atom, Node::Assert(_) | Node::Empty) {
            return Err(PatternError::Invalid(format!(
                "nothing to repeat before character {}",
                start + 1
            )));
        }
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            return Err(PatternError::Invalid(format!(
                "a quantifier follows a quantifier at character {}",
                self.at + 1
            )));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
        })
    }

    /// `{n}`, `{n,}` or `{n,m}` at the cursor, consumed; `Err` for a `{`
    /// that is not a quantifier (a syntax error in Unicode-mode patterns).
    fn counted(&mut self) -> Result<Option<(u32, Option<u32>)>, PatternError> {
        let open = self.at;
        self.at += 1;
        let min = self.number();
        let max = if self.eat(',') {
            if self.peek() == Some('}') {
                None
            } else {
                Some(self.number())
            }
        } else {
            Some(min)
        };
        let (Some(min), true) = (min, self.eat('}')) else {
            return Err(PatternError::Invalid(format!(
                "'{{' at character {} does not start a quantifier {{n}}, {{n,}} or {{n,m}}; write \\{{ for a literal brace",
                open + 1
            )));
        };
        let max = match max {
            None => None,
            Some(Some(max)) => Some(max),
            Some(None) => {
                return Err(PatternError::Invalid(format!(
                    "malformed quantifier at character {}",
                    open + 1
                )))
            }
        };
        if max.is_some_and(|max| max < min) {
            return Err(PatternError::Invalid(format!(
                "quantifier at character {} has its numbers out of order",
                open + 1
            )));
        }
        if min > MAX_REPEAT || max.is_some_and(|max| max > MAX_REPEAT) {
            return Err(unsupported(&format!(
                "a repetition count above {MAX_REPEAT}"
            )));
        }
        Ok(Some((min, max)))
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.at;
        let mut value: u32 = 0;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(digit);
            self.at += 1;
        }
        (self.at > start).then_some(value)
    }

    fn atom(&mut self) -> Result<Node, PatternError> {
        let Some(c) = self.peek() else {
            return Ok(Node::Empty);
        };
        self.at += 1;
        match c {
            '.' => Ok(Node::Any),
            '^' => Ok(Node::Assert(Assertion::Start)),
            '$' => Ok(Node::Assert(Assertion::End)),
            '(' => self.group(),
            '[' => self.class().map(Node::Class),
            '\\' => self.escape(false),
            '*' | '+' | '?' => Err(PatternError::Invalid(format!(
                "nothing to repeat before character {}",
                self.at
            ))),
            '{' => Err(PatternError::Invalid(format!(
                "'{{' at character {} has nothing to repeat; write \\{{ for a literal brace",
                self.at
            ))),
            '}' | ']' => Err(PatternError::Invalid(format!(
                "unmatched '{c}' at character {}; escape it as \\{c}",
                self.at
            ))),
            c => Ok(Node::Char(c)),
        }
    }

    fn group(&mut self) -> Result<Node, PatternError> {
        if self.eat('?') {
            if self.eat(':') {
                // non-capturing: nothing to do
            } else if self.peek() == Some('<')
                && !matches!(self.chars.get(self.at + 1), Some('=' | '!'))
            {
                self.at += 1;
                while let Some(c) = self.peek() {
                    self.at += 1;
                    if c == '>' {
                        break;
                    }
                }
            } else {
                return Err(unsupported("lookaround ((?=, (?!, (?<=, (?<!)"));
            }
        }
        let inner = self.alternation()?;
        if !self.eat(')') {
            return Err(PatternError::Invalid("a '(' is never closed".into()));
        }
        Ok(inner)
    }

    /// After a `\`. In a class, `\b` is a backspace and `\B` an error.
    fn escape(&mut self, in_class: bool) -> Result<Node, PatternError> {
        let Some(c) = self.peek() else {
            return Err(PatternError::Invalid(
                "the pattern ends with a lone '\\'".into(),
            ));
        };
        self.at += 1;
        let class = |ranges: &[(char, char)], negate: bool| {
            let class = Class::new(ranges.to_vec());
            Node::Class(if negate { class.negated() } else { class })
        };
        Ok(match c {
            'd' => class(DIGIT, false),
            'D' => class(DIGIT, true),
            'w' => class(WORD, false),
            'W' => class(WORD, true),
            's' => class(SPACE, false),
            'S' => class(SPACE, true),
            'b' if in_class => Node::Char('\u{8}'),
            'b' => Node::Assert(Assertion::WordBoundary),
            'B' if !in_class => Node::Assert(Assertion::NotWordBoundary),
            't' => Node::Char('\t'),
            'n' => Node::Char('\n'),
            'r' => Node::Char('\r'),
            'v' => Node::Char('\u{b}'),
            'f' => Node::Char('\u{c}'),
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => Node::Char('\0'),
            'x' => Node::Char(self.hex(2)?),
            'u' if self.eat('{') => {
                let start = self.at;
                while self.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                    self.at += 1;
                }
                let digits: String = self.chars[start..self.at].iter().collect();
                let code = u32::from_str_radix(&digits, 16).ok();
                match (code.and_then(char::from_u32), self.eat('}')) {
                    (Some(c), true) => Node::Char(c),
                    _ => return Err(PatternError::Invalid("malformed \\u{…} escape".into())),
                }
            }
            'u' => Node::Char(self.hex(4)?),
            '1'..='9' => return Err(unsupported("a backreference (\\1 … \\9)")),
            'k' => return Err(unsupported("a named backreference (\\k<…>)")),
            'p' | 'P' => return Err(unsupported("a Unicode property escape (\\p{…})")),
            'c' => return Err(unsupported("a control escape (\\c…)")),
            c if "^$\\.*+?()[]{}|/-".contains(c) => Node::Char(c),
            c => return Err(PatternError::Invalid(format!("unknown escape \\{c}"))),
        })
    }

    fn hex(&mut self, digits: usize) -> Result<char, PatternError> {
        let end = self.at + digits;
        let text: String = self.chars.get(self.at..end).unwrap_or(&[]).iter().collect();
        let code = (text.len() == digits)
            .then(|| u32::from_str_radix(&text, 16).ok())
            .flatten()
            .and_then(char::from_u32);
        match code {
            Some(c) => {
                self.at = end;
                Ok(c)
            }
            None => Err(unsupported(
                "a hex escape that is not a whole Unicode scalar value",
            )),
        }
    }

    /// After a `[`.
    fn class(&mut self) -> Result<Class, PatternError> {
        let negate = self.eat('^');
        let mut ranges = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(PatternError::Invalid("a '[' is never closed".into()));
            };
            if c == ']' {
                self.at += 1;
                break;
            }
            let lo = self.class_atom()?;
            let is_range = self.peek() == Some('-')
                && self.chars.get(self.at + 1).is_some_and(|&next| next != ']');
            match lo {
                ClassAtom::Char(lo) if is_range => {
                    self.at += 1;
                    match self.class_atom()? {
                        ClassAtom::Char(hi) if lo <= hi => ranges.push((lo, hi)),
                        ClassAtom::Char(_) => {
                            return Err(PatternError::Invalid(
                                "a class range has its ends out of order".into(),
                            ))
                        }
                        ClassAtom::Set(_) => {
                            return Err(PatternError::Invalid(
                                "a class range cannot end in a class escape".into(),
                            ))
                        }
                    }
                }
                ClassAtom::Char(c) => ranges.push((c, c)),
                ClassAtom::Set(_) if is_range => {
                    return Err(PatternError::Invalid(
                        "a class range cannot start with a class escape".into(),
                    ));
                }
                ClassAtom::Set(set) => ranges.extend(set.0),
            }
        }
        let class = Class::new(ranges);
        Ok(if negate { class.negated() } else { class })
    }

    fn class_atom(&mut self) -> Result<ClassAtom, PatternError> {
        let Some(c) = self.peek() else {
            return Err(PatternError::Invalid("a '[' is never closed".into()));
        };
        self.at += 1;
        if c != '\\' {
            return Ok(ClassAtom::Char(c));
        }
        match self.escape(true)? {
            Node::Char(c) => Ok(ClassAtom::Char(c)),
            Node::Class(set) => Ok(ClassAtom::Set(set)),
            _ => Err(PatternError::Invalid("\\B cannot appear in a class".into())),
        }
    }
}

enum ClassAtom {
    Char(char),
    Set(Class),
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
