//! What a query's `FROM` reads: a stream, a subquery or a `WITH` query.

use std::sync::Arc;

use sqlparser::ast::{self, TableFactor};

use super::query::{Cte, plan_query_in};
use super::{object_name, unknown_stream};
use crate::error::SqlError;
use crate::expr::location_of;
use crate::plan::{Catalog, QueryPlan};

/// What a query reads: a stream's rows, or the results of a subquery (in
/// `FROM (SELECT …)` or a `WITH` query), which run first on each batch.
pub(super) struct Source {
    /// The stream the rows come from, through any subqueries.
    pub(super) stream: String,
    /// The columns as this query sees them.
    pub(super) schema: arrow_schema::SchemaRef,
    /// The event-time column: the stream's, or the subquery's result column
    /// that passes the stream's event time through unchanged.
    pub(super) event_time: Option<String>,
    /// The name that may qualify columns (`s.v`, `d.*`): the stream's name,
    /// or the alias, which hides it; a subquery's alias or `WITH` name
    /// (empty for a subquery without an alias: nothing qualifies).
    pub(super) qualifier: String,
    /// The subquery, when the rows are its results.
    pub(super) input: Option<Box<QueryPlan>>,
}

impl Source {
    /// Resolves `FROM relation`, parsed from `script`, against the catalog
    /// and the `WITH` queries in `scope` (which hide streams of the same
    /// name), for a query that `depth` queries read.
    pub(super) fn resolve(
        relation: &TableFactor,
        script: &str,
        catalog: &dyn Catalog,
        scope: &[Cte<'_>],
        depth: usize,
    ) -> Result<Source, SqlError> {
        let alias_name = |alias: &Option<ast::TableAlias>| -> Result<Option<String>, SqlError> {
            match alias {
                None => Ok(None),
                Some(a) if a.columns.is_empty() => Ok(Some(a.name.value.clone())),
                Some(a) => {
                    Err(SqlError::unsupported("column aliases in FROM").or_at(location_of(a)))
                }
            }
        };
        match relation {
            TableFactor::Table { name, alias, .. } => {
                if let Some(what) = unread_table_clause(relation) {
                    return Err(SqlError::unsupported(what).or_at(location_of(name)));
                }
                let alias = alias_name(alias)?;
                let stream = object_name(name);
                let cte = scope
                    .iter()
                    .rposition(|c| c.name.value.eq_ignore_ascii_case(&stream));
                if let Some(i) = cte {
                    let alias = alias.or_else(|| Some(scope[i].name.value.clone()));
                    let plan =
                        plan_query_in(scope[i].query, script, catalog, &scope[..i], depth + 1)?;
                    return Self::subquery(plan, alias, location_of(name));
                }
                let Some((schema, event_time)) = catalog.stream(&stream) else {
                    return Err(unknown_stream(&stream, catalog, location_of(name)));
                };
                Ok(Source {
                    qualifier: alias.unwrap_or_else(|| stream.clone()),
                    stream,
                    schema,
                    event_time,
                    input: None,
                })
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                sample,
            } => {
                if *lateral {
                    return Err(SqlError::unsupported("LATERAL").or_at(location_of(relation)));
                }
                if sample.is_some() {
                    return Err(SqlError::unsupported(TABLESAMPLE).or_at(location_of(relation)));
                }
                let plan = plan_query_in(subquery, script, catalog, scope, depth + 1)?;
                Self::subquery(plan, alias_name(alias)?, location_of(relation))
            }
            other => Err(SqlError::unsupported(format!("FROM {other}")).or_at(location_of(other))),
        }
    }

    /// The results of `plan` as the rows of the query around it.
    fn subquery(
        plan: QueryPlan,
        alias: Option<String>,
        location: Option<crate::error::Location>,
    ) -> Result<Source, SqlError> {
        if let Some(n) = plan.limit {
            return Err(SqlError::unsupported(format!(
                "LIMIT {n} in a subquery (a continuous query may stop after n rows; its subqueries may not)"
            ))
            .or_at(location));
        }
        Ok(Source {
            stream: plan.stream.clone(),
            schema: Arc::clone(&plan.output_schema),
            event_time: plan.output_event_time.clone(),
            qualifier: alias.unwrap_or_default(),
            input: Some(Box::new(plan)),
        })
    }

    /// The error of a RANGE frame that names no `ORDER BY` column when this
    /// source has no event time.
    pub(super) fn no_event_time(&self) -> String {
        match &self.input {
            None => "RANGE frames need an event-time column: declare the stream WITH \
                     (event_time = 'col') or write ORDER BY col in OVER"
                .to_string(),
            Some(_) => format!(
                "RANGE frames need an event-time column, and the subquery passes none \
                 through: select the event-time column of stream '{}' in it as it is (it \
                 may be renamed), or write ORDER BY col in OVER",
                self.stream
            ),
        }
    }
}

/// What [`unread_table_clause`] says of `TABLESAMPLE`.
const TABLESAMPLE: &str =
    "TABLESAMPLE (a query reads every row of its stream; WHERE can pick some)";

/// A clause on a stream's name in `FROM` that sliq does not read and would
/// otherwise drop (`TABLESAMPLE`, a table function's arguments, hints,
/// time travel), named for the error; `None` for a plain name.
fn unread_table_clause(relation: &TableFactor) -> Option<&'static str> {
    let TableFactor::Table {
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_hints,
        ..
    } = relation
    else {
        return None;
    };
    if args.is_some() {
        Some("table functions (FROM name(…))")
    } else if sample.is_some() {
        Some(TABLESAMPLE)
    } else if !with_hints.is_empty() || !index_hints.is_empty() {
        Some("table hints")
    } else if version.is_some() {
        Some("time travel (FOR SYSTEM_TIME AS OF, AT, BEFORE)")
    } else if *with_ordinality {
        Some("WITH ORDINALITY")
    } else if !partitions.is_empty() {
        Some("PARTITION (…) in FROM")
    } else if json_path.is_some() {
        Some("JSON paths in FROM")
    } else {
        None
    }
}
