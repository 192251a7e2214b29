//! Turning query text into sqlparser statements.
//!
//! sliq's dialect is PostgreSQL-like. Two forms sqlparser's grammar lacks
//! are added at the token level, so every token keeps its position for
//! error messages: `CREATE STREAM` / `DROP STREAM` (read as their `TABLE`
//! forms) and the frame shorthand `RANGE '10s'` (read as
//! `RANGE '10s' PRECEDING`).

use std::ops::ControlFlow;

use sqlparser::ast::{self, Spanned, Statement, Visit, Visitor};
use sqlparser::dialect::Dialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{self, Token, TokenWithSpan, Tokenizer};

use crate::error::{Location, SqlError, SqlErrorKind};

/// sliq's SQL dialect.
#[derive(Debug, Default, Clone, Copy)]
pub struct SliqDialect;

impl Dialect for SliqDialect {
    fn is_identifier_start(&self, ch: char) -> bool {
        ch.is_alphabetic() || ch == '_'
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        ch.is_alphanumeric() || ch == '_' || ch == '$'
    }

    fn supports_window_clause_named_window_reference(&self) -> bool {
        true
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        true
    }

    /// `first_value(x IGNORE NULLS)`, DuckDB's and BigQuery's place for the
    /// clause, besides the standard `first_value(x) IGNORE NULLS`.
    fn supports_window_function_null_treatment_arg(&self) -> bool {
        true
    }

    /// `SELECT * EXCLUDE (a, b)`, as in DuckDB and Snowflake.
    fn supports_select_wildcard_exclude(&self) -> bool {
        true
    }

    /// `SELECT * REPLACE (v * 2 AS v)`, as in DuckDB and BigQuery.
    fn supports_select_wildcard_replace(&self) -> bool {
        true
    }
}

/// How deep expressions may nest (`a OR b OR c` is three deep:
/// `(a OR b) OR c`, then `a`). Planning, compiling (DataFusion) and
/// evaluating an expression recurse once per level: a query with a chain of
/// 500 ran on a thread with a 2 MiB stack (the default for spawned threads),
/// one of 1,000 overflowed it.
const MAX_EXPRESSION_DEPTH: usize = 256;

/// How many set operations (`UNION`, …) one query may chain. sliq refuses
/// them all, but a long chain must be refused before anything walks it.
const MAX_SET_OPERATIONS: usize = 64;

/// Texts up to this long are parsed on the caller's thread: no tree they
/// hold is deep enough to strain its stack while it is checked and dropped.
const SMALL_SQL_BYTES: usize = 16 << 10;

/// The longest text parsed in one call.
const MAX_SQL_BYTES: usize = 32 << 20;

/// The least stack of the thread that parses a long text: a main thread's
/// default, so that a text just over [`SMALL_SQL_BYTES`] (512 KiB by the
/// per-byte rule) never gets less stack than a caller's thread would give.
const MIN_PARSER_STACK: usize = 8 << 20;

/// Stack per byte of text for the thread that parses a long text: a chain
/// `a + b + …` is one tree level per 2 to 4 bytes, and dropping such a tree
/// takes a few dozen bytes of stack per level.
const PARSER_STACK_PER_BYTE: usize = 32;

/// Parses `sql` (one or more `;`-separated statements).
///
/// sqlparser builds a chain of operators (`a OR b OR …`, `x::INT::INT…`,
/// `… UNION …`) as a tree one level deeper per operator, in a loop, so the
/// text bounds its depth, not the parser's recursion limit; anything that
/// walks or drops such a tree then recurses once per level. Statements whose
/// expressions nest more than 256 deep are refused here,
/// and a long text is parsed, checked and (when refused) dropped on a thread
/// whose stack fits any tree it can hold, so no input overflows a stack.
pub fn parse_statements(sql: &str) -> Result<Vec<Statement>, SqlError> {
    if sql.len() <= SMALL_SQL_BYTES {
        return parse_and_check(sql);
    }
    if sql.len() > MAX_SQL_BYTES {
        return Err(SqlError::new(SqlErrorKind::Syntax(format!(
            "the text is {} bytes long; at most {} MiB is parsed at a time",
            sql.len(),
            MAX_SQL_BYTES >> 20
        ))));
    }
    std::thread::scope(|scope| {
        let parser = std::thread::Builder::new()
            .name("sliq-parser".into())
            .stack_size((sql.len() * PARSER_STACK_PER_BYTE).max(MIN_PARSER_STACK))
            .spawn_scoped(scope, || parse_and_check(sql))
            .map_err(|e| {
                SqlError::new(SqlErrorKind::Plan(format!(
                    "cannot start a thread to parse {} bytes of SQL: {e}",
                    sql.len()
                )))
            })?;
        parser.join().unwrap_or_else(|_| {
            Err(SqlError::new(SqlErrorKind::Syntax(
                "the SQL parser failed on this text".into(),
            )))
        })
    })
}

/// [`parse_statements`] on the current thread.
fn parse_and_check(sql: &str) -> Result<Vec<Statement>, SqlError> {
    let dialect = SliqDialect;
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| {
            let location = Some(Location {
                line: e.location.line,
                column: e.location.column,
            });
            SqlError::at(SqlErrorKind::Syntax(e.message.clone()), location)
        })
        .map_err(|e| e.with_source(sql))?;
    let tokens = rewrite(tokens);
    let parse = |tokens: Vec<TokenWithSpan>| {
        Parser::new(&dialect)
            .with_tokens_with_locations(tokens)
            .parse_statements()
    };
    let statements = parse(tokens.clone()).map_err(|e| {
        // When the statement after EXPLAIN does not parse, sqlparser tries
        // `EXPLAIN <table>` and reports that attempt's error, which points
        // at the statement's second word. Report the statement's own.
        let error = match without_explain(&tokens).map(parse) {
            Some(Err(inner)) => inner,
            _ => e,
        };
        parser_error(error).with_source(sql)
    })?;
    let starts = statement_starts(&tokens);
    for (i, statement) in statements.iter().enumerate() {
        let mut nesting = Nesting::default();
        if let ControlFlow::Break(too_deep) = statement.visit(&mut nesting) {
            let start = starts.get(i).copied();
            return Err(SqlError::at(SqlErrorKind::Unsupported(too_deep), start).with_source(sql));
        }
    }
    Ok(statements)
}

/// `query` as its author wrote it: the part of `script` (the text it was
/// parsed from) that its span covers, when that part parses back to the same
/// tree, and sqlparser's rendering of the tree otherwise (sqlparser does not
/// span every node). So `SHOW QUERIES` and `EXPLAIN` show `RANGE '10s'`,
/// not `RANGE INTERVAL '10s' PRECEDING`. A query longer than
/// [`SMALL_SQL_BYTES`] is rendered: checking it would parse it again at
/// every level of nesting.
pub(crate) fn written_text(query: &ast::Query, script: &str) -> String {
    let span = query.span();
    let written = byte_offset(script, span.start)
        .zip(byte_offset(script, span.end))
        .and_then(|(start, end)| script.get(start..end))
        .filter(|text| text.len() <= SMALL_SQL_BYTES);
    match written {
        Some(text)
            if matches!(parse_statements(text).as_deref(),
                        Ok([Statement::Query(parsed)]) if **parsed == *query) =>
        {
            text.to_string()
        }
        _ => query.to_string(),
    }
}

/// `sql` on one line, for lists and headers: its tokens as written, with
/// one space wherever it has whitespace or comments (a `--` comment would
/// hide the rest of a line). A string constant keeps its text, line breaks
/// included. Text that does not tokenize is joined line by line.
pub fn single_line(sql: &str) -> String {
    let Ok(tokens) = Tokenizer::new(&SliqDialect, sql).tokenize_with_location() else {
        return sql.split_whitespace().collect::<Vec<_>>().join(" ");
    };
    let mut line = String::with_capacity(sql.len());
    let mut spaced = false;
    let mut at = TextCursor::new(sql);
    for t in &tokens {
        if matches!(t.token, Token::Whitespace(_)) {
            spaced = !line.is_empty();
            continue;
        }
        if std::mem::take(&mut spaced) {
            line.push(' ');
        }
        let written = at
            .advance_to(t.span.start)
            .zip(at.advance_to(t.span.end))
            .and_then(|(start, end)| sql.get(start..end));
        match written {
            Some(text) => line.push_str(text),
            None => line.push_str(&t.token.to_string()),
        }
    }
    line
}

/// The byte offset in `text` of `location` (see [`TextCursor`]).
fn byte_offset(text: &str, location: tokenizer::Location) -> Option<usize> {
    TextCursor::new(text).advance_to(location)
}

/// A position in a text, moving forward to sqlparser's locations: a 1-based
/// line and a 1-based column counted in characters (a span's end is the
/// column after its last character). Locations visited in order cost one
/// pass over the text in all.
struct TextCursor<'a> {
    text: &'a str,
    line: u64,
    column: u64,
    byte: usize,
}

impl<'a> TextCursor<'a> {
    fn new(text: &'a str) -> Self {
        TextCursor {
            text,
            line: 1,
            column: 1,
            byte: 0,
        }
    }

    /// The byte offset of `location`, or `None` when it lies before the
    /// cursor or past the text (the cursor then stays where it was).
    fn advance_to(&mut self, location: tokenizer::Location) -> Option<usize> {
        if (location.line, location.column) < (self.line, self.column) {
            return None;
        }
        let (mut line, mut column, mut byte) = (self.line, self.column, self.byte);
        let mut rest = self.text[byte..].chars();
        while (line, column) < (location.line, location.column) {
            let c = rest.next()?;
            byte += c.len_utf8();
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        (self.line, self.column, self.byte) = (line, column, byte);
        Some(byte)
    }
}

/// Walks a statement's trees no deeper than the limits allow, breaking
/// with what is too deep (before going any deeper).
#[derive(Default)]
struct Nesting {
    expressions: usize,
}

impl Visitor for Nesting {
    type Break = String;

    fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<String> {
        let mut chained = 0;
        let mut body = query.body.as_ref();
        while let ast::SetExpr::SetOperation { left, .. } = body {
            chained += 1;
            if chained > MAX_SET_OPERATIONS {
                return ControlFlow::Break(format!(
                    "more than {MAX_SET_OPERATIONS} set operations (UNION, INTERSECT, EXCEPT) in a row"
                ));
            }
            body = left;
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, _: &ast::Expr) -> ControlFlow<String> {
        self.expressions += 1;
        if self.expressions > MAX_EXPRESSION_DEPTH {
            return ControlFlow::Break(format!(
                "an expression nested more than {MAX_EXPRESSION_DEPTH} deep (a chain of as many operators, \
                 such as a OR b OR …, counts one level per operator)"
            ));
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _: &ast::Expr) -> ControlFlow<String> {
        self.expressions -= 1;
        ControlFlow::Continue(())
    }
}

/// Where each statement of `tokens` starts: its first token after the
/// `;` that ends the one before (a statement's own location would be a
/// walk of its whole tree).
fn statement_starts(tokens: &[TokenWithSpan]) -> Vec<Location> {
    let mut starts = Vec::new();
    let mut at_start = true;
    for t in tokens {
        match &t.token {
            Token::Whitespace(_) => {}
            Token::SemiColon => at_start = true,
            _ if at_start => {
                at_start = false;
                starts.push(Location {
                    line: t.span.start.line,
                    column: t.span.start.column,
                });
            }
            _ => {}
        }
    }
    starts
}

/// `tokens` without the EXPLAIN keywords that start statements, or `None`
/// when there are none.
fn without_explain(tokens: &[TokenWithSpan]) -> Option<Vec<TokenWithSpan>> {
    let mut at_start = true;
    let mut found = false;
    let mut kept = Vec::with_capacity(tokens.len());
    for t in tokens {
        if matches!(t.token, Token::Whitespace(_)) {
            kept.push(t.clone());
            continue;
        }
        if at_start && is_word(&t.token, "EXPLAIN") {
            found = true;
            continue;
        }
        at_start = matches!(t.token, Token::SemiColon);
        kept.push(t.clone());
    }
    found.then_some(kept)
}

fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// Indexes of the non-whitespace tokens.
fn significant(tokens: &[TokenWithSpan]) -> Vec<usize> {
    tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect()
}

fn rewrite(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let sig = significant(&tokens);
    let mut insert_preceding = Vec::new();
    for w in sig.windows(3) {
        let [a, b, c] = [w[0], w[1], w[2]];
        if (is_word(&tokens[a].token, "CREATE") || is_word(&tokens[a].token, "DROP"))
            && is_word(&tokens[b].token, "STREAM")
        {
            tokens[b].token = Token::make_keyword("TABLE");
        }
        if is_word(&tokens[a].token, "RANGE")
            && matches!(tokens[b].token, Token::SingleQuotedString(_))
            && matches!(tokens[c].token, Token::RParen)
        {
            insert_preceding.push(b + 1);
        }
    }
    for &at in insert_preceding.iter().rev() {
        let span = tokens[at - 1].span;
        tokens.insert(
            at,
            TokenWithSpan {
                token: Token::make_keyword("PRECEDING"),
                span,
            },
        );
    }
    tokens
}

/// sqlparser reports locations inside its message: pull them out.
fn parser_error(e: ParserError) -> SqlError {
    let message = match e {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
        ParserError::RecursionLimitExceeded => "the query nests too deeply".to_string(),
    };
    let (text, location) = match message.rfind(" at Line: ") {
        Some(at) => {
            let tail = &message[at + " at Line: ".len()..];
            let mut parts = tail.split(", Column: ");
            let line = parts.next().and_then(|l| l.trim().parse().ok());
            let column = parts.next().and_then(|c| c.trim().parse().ok());
            match (line, column) {
                (Some(line), Some(column)) => {
                    (message[..at].to_string(), Some(Location { line, column }))
                }
                _ => (message.clone(), None),
            }
        }
        None => (message, None),
    };
    SqlError::at(
        SqlErrorKind::Syntax(text.trim_start_matches("sql parser error: ").to_string()),
        location,
    )
}

/// Why a duration's text is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not a duration: no number, an unknown unit, a negative amount.
    Malformed,
    /// A duration, but longer than a window can span (more than about
    /// 146 million years in milliseconds).
    TooLong,
}

/// The longest duration a window takes, in milliseconds: half of `i64`'s
/// range, so that `t - d` never overflows for any event time `t`.
const MAX_DURATION_MS: f64 = i64::MAX as f64 / 2.0;

/// Parses a duration such as `10s`, `1m30s`, `500ms`, `2 hours` or `1d` into
/// milliseconds. A bare number is milliseconds.
pub fn parse_duration_ms(text: &str) -> Option<i64> {
    duration_ms(text).ok()
}

/// Like [`parse_duration_ms`], saying why a text is refused.
pub fn duration_ms(text: &str) -> Result<i64, DurationError> {
    let text = text.trim();
    if let Ok(ms) = text.parse::<i64>() {
        return if ms >= 0 {
            Ok(ms)
        } else {
            Err(DurationError::Malformed)
        };
    }
    let mut total: i64 = 0;
    let mut rest = text;
    let mut any = false;
    while !rest.is_empty() {
        rest = rest.trim_start();
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(DurationError::Malformed);
        }
        let amount: f64 = rest[..digits]
            .parse()
            .map_err(|_| DurationError::Malformed)?;
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].to_ascii_lowercase();
        rest = &rest[unit_len..];
        let scale = match unit.as_str() {
            "ms" | "msec" | "millisecond" | "milliseconds" => 1.0,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000.0,
            "h" | "hr" | "hour" | "hours" => 3_600_000.0,
            "d" | "day" | "days" => 86_400_000.0,
            _ => return Err(DurationError::Malformed),
        };
        let ms = amount * scale;
        if !ms.is_finite() || ms > MAX_DURATION_MS {
            return Err(DurationError::TooLong);
        }
        total = total
            .checked_add(ms.round() as i64)
            .filter(|t| (*t as f64) <= MAX_DURATION_MS)
            .ok_or(DurationError::TooLong)?;
        any = true;
    }
    if any {
        Ok(total)
    } else {
        Err(DurationError::Malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` comparisons joined by OR: a tree `n` deep.
    fn or_chain(n: usize) -> String {
        let terms: Vec<String> = (0..n).map(|i| format!("v > {i}")).collect();
        format!("SELECT v FROM s WHERE {}", terms.join(" OR "))
    }

    /// The text of each statement of `script`, a query each.
    fn written_texts(script: &str) -> Vec<String> {
        parse_statements(script)
            .unwrap()
            .iter()
            .map(|statement| match statement {
                Statement::Query(q) => written_text(q, script),
                other => panic!("not a query: {other}"),
            })
            .collect()
    }

    #[test]
    fn a_query_keeps_its_text_as_written() {
        let script =
            "SELECT 1;\n  select key,  MAX(v) over (range '10s') AS m\n  FROM s GROUP BY key ;";
        assert_eq!(
            written_texts(script),
            [
                "SELECT 1",
                "select key,  MAX(v) over (range '10s') AS m\n  FROM s GROUP BY key"
            ]
        );
        // Characters past ASCII before and inside the query count as one
        // column each.
        assert_eq!(
            written_texts("SELECT 'é;ü';\nSELECT 'ß', v FROM s"),
            ["SELECT 'é;ü'", "SELECT 'ß', v FROM s"]
        );
    }

    #[test]
    fn single_line_keeps_tokens_and_drops_line_breaks_and_comments() {
        assert_eq!(
            single_line("  select key, -- the key\n\tmax(v)  /* peak */ FROM s\r\n"),
            "select key, max(v) FROM s"
        );
        // Constants keep their text, line breaks included.
        assert_eq!(
            single_line("SELECT 'a  b', 'it''s', 'x\ny' FROM s"),
            "SELECT 'a  b', 'it''s', 'x\ny' FROM s"
        );
        assert_eq!(single_line("SELECT 'open"), "SELECT 'open");
        // One pass over the text: a megabyte of tokens over many lines.
        let long = "SELECT v\n, 1 ".repeat(1 << 16);
        assert_eq!(single_line(&long), long.replace('\n', " ").trim_end());
    }

    #[test]
    fn queries_inside_queries_keep_their_text_too() {
        let text = |query: &ast::Query, script: &str| written_text(query, script);
        let script = "WITH w AS (SELECT key, v  FROM s) \
                      SELECT * FROM (select key, max(v) OVER (ROWS 3 PRECEDING) m FROM w) t";
        let Statement::Query(outer) = &parse_statements(script).unwrap()[0] else {
            panic!("not a query");
        };
        assert_eq!(text(outer, script), script);
        assert_eq!(
            text(&outer.with.as_ref().unwrap().cte_tables[0].query, script),
            "SELECT key, v  FROM s"
        );
        let ast::SetExpr::Select(select) = outer.body.as_ref() else {
            panic!("not a SELECT");
        };
        let ast::TableFactor::Derived { subquery, .. } = &select.from[0].relation else {
            panic!("not a subquery");
        };
        assert_eq!(
            text(subquery, script),
            "select key, max(v) OVER (ROWS 3 PRECEDING) m FROM w"
        );
        // A span that does not give the query back falls back to its
        // rendering, and so does a long query.
        assert_eq!(text(subquery, "SELECT 1"), subquery.to_string());
        let long = format!("SELECT v,   '{}' FROM s", "x".repeat(SMALL_SQL_BYTES));
        let Statement::Query(query) = &parse_statements(&long).unwrap()[0] else {
            panic!("not a query");
        };
        assert!(long.len() > SMALL_SQL_BYTES);
        assert_eq!(text(query, &long), query.to_string());
    }

    #[test]
    fn deep_trees_are_refused_before_anything_walks_them() {
        assert!(parse_statements(&or_chain(200)).is_ok());
        // 3,000 terms overflowed the planner's stack; 50,000 (600 KB of
        // text, parsed on a thread of its own) the parser's.
        for n in [300, 3_000, 50_000] {
            let sql = format!("SELECT 1;\n  {}", or_chain(n));
            let error = parse_statements(&sql).unwrap_err();
            assert!(
                error.to_string().starts_with(
                    "not supported in continuous queries: an expression nested more than 256 deep"
                ),
                "{n}: {error}"
            );
            // At the start of the statement that holds it.
            assert_eq!(error.location(), Some(Location { line: 2, column: 3 }));
        }
        let casts = format!("SELECT v{} FROM s", "::BIGINT".repeat(50_000));
        assert!(parse_statements(&casts).is_err());
        let unions = vec!["SELECT v FROM s"; 50_000].join(" UNION ALL ");
        let error = parse_statements(&unions).unwrap_err().to_string();
        assert!(error.contains("more than 64 set operations"), "{error}");
    }

    #[test]
    fn a_long_script_of_shallow_statements_parses() {
        let rows: Vec<String> = (0..5_000)
            .map(|i| format!("({i}, 'k{i}', {i}.5)"))
            .collect();
        let sql = format!("INSERT INTO s VALUES {};\nSELECT 1", rows.join(", "));
        assert!(sql.len() > SMALL_SQL_BYTES);
        assert_eq!(parse_statements(&sql).map(|s| s.len()), Ok(2));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("10s"), Some(10_000));
        assert_eq!(parse_duration_ms("1m30s"), Some(90_000));
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        assert_eq!(parse_duration_ms("2 hours"), Some(7_200_000));
        assert_eq!(parse_duration_ms("1d"), Some(86_400_000));
        assert_eq!(parse_duration_ms("1.5s"), Some(1_500));
        assert_eq!(parse_duration_ms("250"), Some(250));
        assert_eq!(parse_duration_ms("10 parsecs"), None);
        assert_eq!(parse_duration_ms(""), None);
        assert_eq!(parse_duration_ms("-5s"), None);
        assert_eq!(duration_ms("10 parsecs"), Err(DurationError::Malformed));
        assert_eq!(duration_ms("106751991167d"), Err(DurationError::TooLong));
        assert_eq!(duration_ms("1e400s"), Err(DurationError::Malformed));
        assert_eq!(
            duration_ms("60000000000d 60000000000d"),
            Err(DurationError::TooLong)
        );
    }

    #[test]
    fn stream_statements_and_range_shorthand_parse() {
        let stmts = parse_statements(
            "CREATE STREAM s (ts TIMESTAMP, key VARCHAR, v DOUBLE) WITH (event_time = 'ts'); \
             SELECT key, max(v) OVER (RANGE '10s') FROM s GROUP BY key; DROP STREAM s",
        )
        .unwrap();
        assert_eq!(stmts.len(), 3);
        assert!(
            stmts[1].to_string().contains("'10s' PRECEDING"),
            "{}",
            stmts[1]
        );
    }

    #[test]
    fn syntax_errors_carry_their_location() {
        let err = parse_statements("SELECT max(v OVER (ROWS 3 PRECEDING) FROM s").unwrap_err();
        let loc = err.location().expect("location");
        assert_eq!(loc.line, 1);
        assert!(err.to_string().contains('^'), "{err}");
    }
}
