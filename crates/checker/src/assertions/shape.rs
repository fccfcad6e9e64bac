//! The shape of a JSONPath (RFC 9535): the parts its cost depends on,
//! read from the path's text.
//!
//! `serde_json_path` keeps its parsed query private (`JsonPath(Query)`
//! with no accessor; only its `Debug` form shows it), so the budget cannot
//! walk the crate's own tree. This reader recovers what the cost bound
//! needs instead: each segment (child or descendant) and its selectors
//! (name, index, slice, wildcard, filter), and for a filter every query
//! in it (relative `@` or absolute `$`, with their own segments), its
//! comparisons and its function calls. It only ever reads a path that
//! `JsonPath::parse` accepted, so it checks no grammar: it follows the
//! structure (string literals skipped with their escapes, brackets,
//! parentheses, commas) and fails, making the caller refuse the path,
//! on anything it does not recognise, never guessing a cheaper shape.

/// A query: `$` or `@` and its segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Query {
    /// `$` (from the root) rather than `@` (from the node a filter tests).
    pub(super) absolute: bool,
    pub(super) segments: Vec<Segment>,
}

/// `.name`, `.*`, `[…]`, or with `..` before it, a descendant segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) descendant: bool,
    pub(super) selectors: Vec<Selector>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Selector {
    /// A name or an index: at most one child per node.
    One,
    /// A wildcard or a slice: any number of children, each at most once.
    Many,
    /// A filter: tests each child.
    Filter(Filter),
}

/// What a filter runs for each child it tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Filter {
    /// Every query in the filter, in function arguments too.
    pub(super) queries: Vec<Query>,
    /// Comparisons and function calls: constant work each.
    pub(super) steps: u64,
    /// Comparisons of two values that may both be arrays or objects
    /// (queries or `value()`), which compare whole subtrees; `true` when
    /// one side is relative (`@`), so its subtree lies in the tested child's.
    pub(super) deep_comparisons: Vec<bool>,
}

/// Why a path's shape could not be read, or is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// `match()` and `search()` compile a regular expression for every node
    /// they test, from a pattern that may even come from the body, with the
    /// `regex` crate's default limits and no cache.
    #[error(
        "JSONPath function {0}() is not supported: select the value and use \
         the matches comparison instead"
    )]
    RegexFunction(&'static str),
    /// A path `JsonPath::parse` accepted but this reader does not follow:
    /// its cost cannot be bounded, so it is not run.
    #[error("its cost cannot be estimated (unexpected {0:?} at byte {1})")]
    Unreadable(char, usize),
}

/// How deeply brackets and parentheses nest in `path`, outside string
/// literals. `serde_json_path`'s parser backtracks through nested filters
/// in time exponential in their depth (about twice as long per level: 16
/// deep takes a third of a second, 50 deep longer than anyone waits, in
/// under 200 characters) and recurses once per level, so a path is
/// measured by this before it is parsed.
pub(super) fn nesting(path: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote = None;
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '(') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, ']' | ')') => depth = depth.saturating_sub(1),
            (None, _) => {}
        }
    }
    deepest
}

/// The shape of `path`, a path `serde_json_path::JsonPath::parse` accepted.
pub(super) fn shape_of(path: &str) -> Result<Query, ShapeError> {
    let mut reader = Reader { text: path, at: 0 };
    let query = reader.query()?;
    match reader.peek() {
        None => Ok(query),
        Some(c) => Err(reader.unexpected(c)),
    }
}

/// What stands on one side of a comparison.
#[derive(Clone, Copy)]
enum Operand {
    Literal,
    /// A query, or `value()` of one: may be an array or an object.
    Node {
        relative: bool,
    },
    /// `length()`, `count()`: a number.
    Number,
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn unexpected(&self, c: char) -> ShapeError {
        ShapeError::Unreadable(c, self.at)
    }

    fn end(&self) -> ShapeError {
        ShapeError::Unreadable('\0', self.at)
    }

    /// RFC 9535's blank space: space, tab, line feed, carriage return.
    fn skip_blank(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.at += 1;
        }
    }

    fn query(&mut self) -> Result<Query, ShapeError> {
        let absolute = match self.bump() {
            Some('$') => true,
            Some('@') => false,
            Some(c) => return Err(self.unexpected(c)),
            None => return Err(self.end()),
        };
        let mut segments = Vec::new();
        loop {
            // Blank space may stand before a child segment; after a query
            // inside a filter, only an operator, `)`, `,` or `]` can follow,
            // none of which starts a segment.
            let before = self.at;
            self.skip_blank();
            if self.rest().starts_with("..") {
                self.at += 2;
                let selectors = match self.peek() {
                    Some('[') => self.bracket()?,
                    Some('*') => {
                        self.at += 1;
                        vec![Selector::Many]
                    }
                    _ => {
                        self.member_name()?;
                        vec![Selector::One]
                    }
                };
                segments.push(Segment {
                    descendant: true,
                    selectors,
                });
            } else if self.rest().starts_with('.') {
                self.at += 1;
                let selector = if self.peek() == Some('*') {
                    self.at += 1;
                    Selector::Many
                } else {
                    self.member_name()?;
                    Selector::One
                };
                segments.push(Segment {
                    descendant: false,
                    selectors: vec![selector],
                });
            } else if self.rest().starts_with('[') {
                let selectors = self.bracket()?;
                segments.push(Segment {
                    descendant: false,
                    selectors,
                });
            } else {
                self.at = before;
                return Ok(Query { absolute, segments });
            }
        }
    }

    /// A dot-notation member name: letters, digits, `_`, non-ASCII.
    fn member_name(&mut self) -> Result<(), ShapeError> {
        let start = self.at;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
                self.at += c.len_utf8();
            } else {
                break;
            }
        }
        if self.at == start {
            return Err(self
                .peek()
                .map_or_else(|| self.end(), |c| self.unexpected(c)));
        }
        Ok(())
    }

    /// `[selector, …]`.
    fn bracket(&mut self) -> Result<Vec<Selector>, ShapeError> {
        self.at += 1; // `[`
        let mut selectors = Vec::new();
        loop {
            self.skip_blank();
            let selector = match self.peek() {
                Some('\'' | '"') => {
                    self.string()?;
                    Selector::One
                }
                Some('*') => {
                    self.at += 1;
                    Selector::Many
                }
                Some('?') => {
                    self.at += 1;
                    let mut filter = Filter::default();
                    self.expression(&mut filter, &[',', ']'])?;
                    Selector::Filter(filter)
                }
                Some(c) if c.is_ascii_digit() || c == '-' || c == ':' => self.index_or_slice(),
                Some(c) => return Err(self.unexpected(c)),
                None => return Err(self.end()),
            };
            selectors.push(selector);
            self.skip_blank();
            match self.bump() {
                Some(',') => {}
                Some(']') => return Ok(selectors),
                Some(c) => return Err(self.unexpected(c)),
                None => return Err(self.end()),
            }
        }
    }

    /// `3`, `-1`, `1:5`, `::-1`: digits, signs, colons and blank space.
    fn index_or_slice(&mut self) -> Selector {
        let start = self.at;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || matches!(c, '-' | ':' | ' ' | '\t' | '\n' | '\r'))
        {
            self.at += 1;
        }
        if self.text[start..self.at].contains(':') {
            Selector::Many
        } else {
            Selector::One
        }
    }

    /// A string literal in single or double quotes, escapes skipped.
    fn string(&mut self) -> Result<(), ShapeError> {
        let quote = self.bump();
        loop {
            match self.bump() {
                Some('\\') => {
                    self.bump();
                }
                Some(c) if Some(c) == quote => return Ok(()),
                Some(_) => {}
                None => return Err(self.end()),
            }
        }
    }

    /// A logical expression (a filter's, or a function's argument), up to
    /// one of `stops` outside parentheses, which is left unread.
    fn expression(&mut self, filter: &mut Filter, stops: &[char]) -> Result<(), ShapeError> {
        let mut parentheses = 0usize;
        // The operand before the last comparison operator, waiting for the
        // one after it.
        let mut last: Option<Operand> = None;
        let mut comparing: Option<Operand> = None;
        loop {
            self.skip_blank();
            let Some(c) = self.peek() else {
                return Err(self.end());
            };
            if parentheses == 0 && stops.contains(&c) {
                return Ok(());
            }
            let operand = match c {
                '$' | '@' => {
                    let query = self.query()?;
                    let relative = !query.absolute;
                    filter.queries.push(query);
                    Some(Operand::Node { relative })
                }
                '\'' | '"' => {
                    self.string()?;
                    Some(Operand::Literal)
                }
                '(' => {
                    self.at += 1;
                    parentheses += 1;
                    None
                }
                ')' if parentheses > 0 => {
                    self.at += 1;
                    parentheses -= 1;
                    None
                }
                '=' | '!' | '<' | '>' => {
                    let two = self.rest().starts_with("==")
                        || self.rest().starts_with("!=")
                        || self.rest().starts_with("<=")
                        || self.rest().starts_with(">=");
                    self.at += if two { 2 } else { 1 };
                    if c != '!' || two {
                        comparing = last.take();
                    }
                    None
                }
                '&' | '|' => {
                    self.at += 2;
                    None
                }
                c if c.is_ascii_digit() || c == '-' => {
                    while matches!(self.peek(), Some(c) if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
                    {
                        self.at += 1;
                    }
                    Some(Operand::Literal)
                }
                c if c.is_ascii_lowercase() => Some(self.word(filter)?),
                c => return Err(self.unexpected(c)),
            };
            if let Some(operand) = operand {
                if let Some(left) = comparing.take() {
                    filter.steps += 1;
                    if let (Operand::Node { relative: a }, Operand::Node { relative: b }) =
                        (left, operand)
                    {
                        filter.deep_comparisons.push(a || b);
                    }
                }
                last = Some(operand);
            }
        }
    }

    /// `true`, `false`, `null`, or a function call and its arguments.
    fn word(&mut self, filter: &mut Filter) -> Result<Operand, ShapeError> {
        let start = self.at;
        while matches!(self.peek(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            self.at += 1;
        }
        let name = &self.text[start..self.at];
        if self.peek() != Some('(') {
            return match name {
                "true" | "false" | "null" => Ok(Operand::Literal),
                _ => Err(ShapeError::Unreadable(
                    name.chars().next().unwrap_or('\0'),
                    start,
                )),
            };
        }
        match name {
            "match" => return Err(ShapeError::RegexFunction("match")),
            "search" => return Err(ShapeError::RegexFunction("search")),
            _ => {}
        }
        self.at += 1; // `(`
        filter.steps += 1;
        let queries_before = filter.queries.len();
        loop {
            self.expression(filter, &[',', ')'])?;
            if self.bump() == Some(')') {
                break;
            }
        }
        let relative = filter.queries[queries_before..].iter().any(|q| !q.absolute);
        Ok(match name {
            // The node its argument selects, when there is one.
            "value" => Operand::Node { relative },
            // `length` (of a string, an array, an object) and `count`.
            _ => Operand::Number,
        })
    }
}

#[cfg(test)]
mod tests;
