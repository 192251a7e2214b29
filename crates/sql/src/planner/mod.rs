//! Binding statements to the catalog and planning continuous queries.
//!
//! This module dispatches each statement; `query` plans a `SELECT`, reading
//! its `FROM` through `source`, its aggregate calls through `aggregate` and
//! their `OVER` clauses through `window`; `streams` plans `CREATE STREAM` and
//! `INSERT`.

mod aggregate;
mod query;
mod source;
mod streams;
mod window;

use sqlparser::ast::{self, ObjectName};

use self::query::plan_query;
use self::streams::{create_stream, plan_insert};
use crate::error::{SqlError, SqlErrorKind, closest};
use crate::expr::location_of;
use crate::parser::parse_statements;
use crate::plan::{Catalog, Statement};

pub use self::aggregate::output_arrow_type;
pub(crate) use self::window::interval_ms;

/// Parses and plans every statement of `sql`.
pub fn plan_sql(sql: &str, catalog: &dyn Catalog) -> Result<Vec<Statement>, SqlError> {
    let statements = parse_statements(sql)?;
    statements
        .iter()
        .map(|s| plan_parsed(s, sql, catalog))
        .collect()
}

/// Plans one statement that [`parse_statements`] read from `sql`; an error
/// points into `sql` (its line and column, with that line shown), so a
/// script's later statements are planned against the catalog as the earlier
/// ones left it and still report where they are in the script.
pub fn plan_parsed(
    statement: &ast::Statement,
    sql: &str,
    catalog: &dyn Catalog,
) -> Result<Statement, SqlError> {
    plan_statement(statement, sql, catalog).map_err(|e| e.with_source(sql))
}

fn object_name(name: &ObjectName) -> String {
    name.0
        .iter()
        .map(|p| {
            p.as_ident()
                .map(|i| i.value.clone())
                .unwrap_or_else(|| p.to_string())
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Plans `stmt`, one of the statements parsed from `script`.
fn plan_statement(
    stmt: &ast::Statement,
    script: &str,
    catalog: &dyn Catalog,
) -> Result<Statement, SqlError> {
    use ast::Statement as S;
    match stmt {
        S::Query(query) => Ok(Statement::Query(Box::new(plan_query(
            query, script, catalog,
        )?))),
        S::Explain {
            analyze,
            estimate,
            format,
            options,
            statement,
            ..
        } => match statement.as_ref() {
            // VERBOSE and QUERY PLAN ask for no more than EXPLAIN shows.
            _ if *analyze || options.is_some() => Err(SqlError::unsupported(
                "EXPLAIN ANALYZE and EXPLAIN (options) (a continuous query never ends: \
                 EXPLAIN shows its plan, and its statistics count what it has done)",
            )),
            _ if *estimate || format.is_some() => Err(SqlError::unsupported(
                "EXPLAIN ESTIMATE and EXPLAIN FORMAT (EXPLAIN writes its plan as text)",
            )),
            S::Query(query) => Ok(Statement::Explain(Box::new(plan_query(
                query, script, catalog,
            )?))),
            other => Err(SqlError::unsupported(format!("EXPLAIN of {other}"))),
        },
        S::CreateTable(create) => create_stream(create),
        S::Drop {
            object_type: ast::ObjectType::Table,
            names,
            if_exists,
            restrict,
            ..
        } => match names.as_slice() {
            [name] => {
                let stream = object_name(name);
                if !*if_exists && catalog.stream(&stream).is_none() {
                    return Err(unknown_stream(&stream, catalog, location_of(name)));
                }
                Ok(Statement::DropStream {
                    name: stream,
                    if_exists: *if_exists,
                    restrict: *restrict,
                })
            }
            _ => Err(SqlError::unsupported(
                "dropping several streams in one statement",
            )),
        },
        S::ShowVariable { variable } => match variable
            .iter()
            .map(|i| i.value.to_ascii_uppercase())
            .collect::<Vec<_>>()
            .as_slice()
        {
            [s] if s == "STREAMS" => Ok(Statement::ShowStreams),
            [q] if q == "QUERIES" => Ok(Statement::ShowQueries),
            [a] if a == "ALL" => Ok(Statement::Show { name: None }),
            [setting] => Ok(Statement::Show {
                name: Some(setting.to_ascii_lowercase()),
            }),
            _ => Err(SqlError::unsupported(format!(
                "{stmt} (try SHOW STREAMS, SHOW QUERIES or SHOW ALL)"
            ))),
        },
        S::Reset(ast::ResetStatement { reset }) => Ok(Statement::Reset {
            name: match reset {
                ast::Reset::ALL => None,
                ast::Reset::ConfigurationParameter(name) => {
                    Some(object_name(name).to_ascii_lowercase())
                }
            },
        }),
        S::ShowTables { show_options, .. } => match show_options {
            ast::ShowStatementOptions {
                show_in: None,
                starts_with: None,
                limit: None,
                limit_from: None,
                filter_position: None,
            } => Ok(Statement::ShowStreams),
            _ => Err(SqlError::unsupported(format!(
                "{stmt} (SHOW STREAMS lists every stream)"
            ))),
        },
        S::ShowColumns { show_options, .. } => match show_options {
            ast::ShowStatementOptions {
                show_in:
                    Some(ast::ShowStatementIn {
                        parent_name: Some(table_name),
                        ..
                    }),
                starts_with: None,
                limit: None,
                limit_from: None,
                filter_position: None,
            } => describe(table_name, catalog),
            _ => Err(SqlError::unsupported(format!(
                "{stmt} (SHOW COLUMNS FROM s, or DESCRIBE s, lists every column)"
            ))),
        },
        S::ShowFunctions { filter } => match filter {
            None => Ok(Statement::ShowFunctions { like: None }),
            Some(
                ast::ShowStatementFilter::Like(p)
                | ast::ShowStatementFilter::ILike(p)
                | ast::ShowStatementFilter::NoKeyword(p),
            ) => Ok(Statement::ShowFunctions {
                like: Some(p.clone()),
            }),
            Some(other) => Err(SqlError::unsupported(format!(
                "SHOW FUNCTIONS {other} (only LIKE 'pattern')"
            ))),
        },
        S::ExplainTable { table_name, .. } => describe(table_name, catalog),
        S::Set(ast::Set::SingleAssignment {
            variable, values, ..
        }) => {
            let value = match values.as_slice() {
                [ast::Expr::Value(v)] => match &v.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                },
                [ast::Expr::Identifier(i)] => i.value.clone(),
                _ => return Err(SqlError::plan(format!("SET {variable} takes one value"))),
            };
            Ok(Statement::Set {
                name: object_name(variable).to_ascii_lowercase(),
                value,
            })
        }
        S::Insert(insert) => plan_insert(insert, catalog),
        other => Err(SqlError::unsupported(format!(
            "the statement {}",
            first_words(&other.to_string())
        ))),
    }
}

/// `DESCRIBE table_name`, which must be a stream.
fn describe(table_name: &ast::ObjectName, catalog: &dyn Catalog) -> Result<Statement, SqlError> {
    let name = object_name(table_name);
    if catalog.stream(&name).is_none() {
        return Err(unknown_stream(&name, catalog, location_of(table_name)));
    }
    Ok(Statement::Describe(name))
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

fn unknown_stream(
    name: &str,
    catalog: &dyn Catalog,
    location: Option<crate::error::Location>,
) -> SqlError {
    let names = catalog.stream_names();
    SqlError::at(
        SqlErrorKind::UnknownStream {
            name: name.to_string(),
            suggestion: closest(name, names.iter().map(String::as_str)),
        },
        location,
    )
}
