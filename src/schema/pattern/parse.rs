//! From pattern text to a syntax tree, refusing what the subset leaves out.

use super::{Assertion, Class, PatternError};

/// The largest count a `{n,m}` quantifier may name.
const MAX_REPEAT: u32 = 1_000;

/// A parsed pattern.
#[derive(Clone, Debug)]
pub(super) enum Node {
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

/// Parses a whole pattern.
pub(super) fn parse(source: &str) -> Result<Node, PatternError> {
    let mut parser = Parser {
        chars: source.chars().collect(),
        at: 0,
    };
    let node = parser.alternation()?;
    if parser.at < parser.chars.len() {
        return Err(PatternError::Invalid(format!(
            "unmatched ')' at character {}",
            parser.at + 1
        )));
    }
    Ok(node)
}

/// Whether every branch of the pattern begins with `^`.
pub(super) fn starts_anchored(node: &Node) -> bool {
    match node {
        Node::Assert(Assertion::Start) => true,
        Node::Concat(items) => items.first().is_some_and(starts_anchored),
        Node::Alternate(branches) => branches.iter().all(starts_anchored),
        _ => false,
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
