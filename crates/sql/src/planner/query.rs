//! Planning a `SELECT` as a continuous query: its clauses, its select
//! items, the `WITH` queries in scope, and its output schema.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use datafusion_common::Column;
use datafusion_expr::{Expr, ExprSchemable};
use sqlparser::ast::{self, GroupByExpr, SelectItem, SelectItemQualifiedWildcardKind, SetExpr};

use super::aggregate::{AggregatePlanner, output_arrow_type};
use super::object_name;
use super::source::Source;
use crate::error::{Location, SqlError, SqlErrorKind};
use crate::expr::{
    ExprConverter, Place, df_schema, ident_location, is_scalar_call, location_of, span_location,
};
use crate::parser::written_text;
use crate::plan::{
    AggregateCall, Catalog, QueryPlan, ResultFilter, WrittenParts, aggregate_column,
};

/// The select item that `name` is the alias of, unless a column of the
/// stream has that name (a column wins, as in PostgreSQL).
fn aliased_item<'a>(name: &str, items: &'a [SelectItem], stream: &Schema) -> Option<&'a ast::Expr> {
    if stream
        .fields()
        .iter()
        .any(|f| f.name().eq_ignore_ascii_case(name))
    {
        return None;
    }
    items.iter().find_map(|item| match item {
        SelectItem::ExprWithAlias { expr, alias } if alias.value.eq_ignore_ascii_case(name) => {
            Some(expr)
        }
        _ => None,
    })
}

/// `expr` with every name of a select item's alias replaced by that item's
/// expression (see [`aliased_item`]).
fn with_aliases_expanded(expr: &ast::Expr, items: &[SelectItem], stream: &Schema) -> ast::Expr {
    let mut expanded = expr.clone();
    let _ = sqlparser::ast::visit_expressions_mut(&mut expanded, |e| {
        if let ast::Expr::Identifier(name) = e
            && let Some(item) = aliased_item(&name.value, items, stream)
        {
            *e = ast::Expr::Nested(Box::new(item.clone()));
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    expanded
}

/// A `GROUP BY` key: a position in the select list (`GROUP BY 1`) or the
/// alias of a select item that is not also a column of the stream stands for
/// that item's expression, as in PostgreSQL and DuckDB; anything else is
/// itself.
fn select_item_at<'a>(
    key: &'a ast::Expr,
    items: &'a [SelectItem],
    stream: &Schema,
) -> Result<&'a ast::Expr, SqlError> {
    if let ast::Expr::Identifier(name) = key {
        return Ok(aliased_item(&name.value, items, stream).unwrap_or(key));
    }
    let ast::Expr::Value(value) = key else {
        return Ok(key);
    };
    let ast::Value::Number(number, _) = &value.value else {
        return Ok(key);
    };
    let Ok(position) = number.parse::<usize>() else {
        return Err(SqlError::plan(format!(
            "GROUP BY {number}: a position in the select list is a whole number from 1"
        ))
        .or_at(location_of(key)));
    };
    match position.checked_sub(1).and_then(|i| items.get(i)) {
        Some(SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. }) => Ok(expr),
        Some(_) => Err(SqlError::unsupported(format!(
            "GROUP BY {number}: the item at that position is a wildcard"
        ))
        .or_at(location_of(key))),
        None => Err(SqlError::plan(format!(
            "GROUP BY {number}: the select list has {} items",
            items.len()
        ))
        .or_at(location_of(key))),
    }
}

/// Plans a `SELECT` parsed from `script` as a continuous query.
pub(super) fn plan_query(
    query: &ast::Query,
    script: &str,
    catalog: &dyn Catalog,
) -> Result<QueryPlan, SqlError> {
    plan_query_in(query, script, catalog, &[], 0)
}

/// The most queries one query may read through, one inside the other
/// (subqueries in FROM and WITH queries): each is a stage that every batch
/// goes through, and planning and running them recurse once per stage.
const MAX_NESTED_QUERIES: usize = 64;

/// A common table expression (`WITH name AS (query)`) in scope.
#[derive(Clone, Copy)]
pub(super) struct Cte<'q> {
    pub(super) name: &'q ast::Ident,
    pub(super) query: &'q ast::Query,
}

/// The common table expressions a query may read, outermost first, then its
/// own `WITH` list: each of them may read only the ones before it (no
/// recursion), and a later one hides an earlier one, or a stream, of the
/// same name.
fn scope_with<'q>(query: &'q ast::Query, outer: &[Cte<'q>]) -> Result<Vec<Cte<'q>>, SqlError> {
    let mut scope = outer.to_vec();
    let Some(with) = &query.with else {
        return Ok(scope);
    };
    if with.recursive {
        return Err(SqlError::unsupported("WITH RECURSIVE").or_at(location_of(with)));
    }
    for cte in &with.cte_tables {
        if !cte.alias.columns.is_empty() {
            return Err(SqlError::unsupported(
                "column names after a WITH query's name (alias them in its SELECT)",
            )
            .or_at(location_of(&cte.alias)));
        }
        if cte.materialized.is_some() || cte.from.is_some() {
            return Err(SqlError::unsupported(format!("{cte}")).or_at(location_of(&cte.alias)));
        }
        scope.push(Cte {
            name: &cte.alias.name,
            query: &cte.query,
        });
    }
    Ok(scope)
}

/// The relations `query` reads anywhere (its WITH queries included), by
/// lower-cased name.
fn relations_read(query: &ast::Query) -> HashSet<String> {
    let mut read = HashSet::new();
    let _ = ast::visit_relations(query, |relation| {
        read.insert(object_name(relation).to_lowercase());
        std::ops::ControlFlow::<()>::Continue(())
    });
    read
}

/// Plans `query`, parsed from `script`, with the common table expressions
/// `outer` in scope; `depth` queries read its results, one inside the other.
pub(super) fn plan_query_in<'q>(
    query: &'q ast::Query,
    script: &str,
    catalog: &dyn Catalog,
    outer: &[Cte<'q>],
    depth: usize,
) -> Result<QueryPlan, SqlError> {
    if depth > MAX_NESTED_QUERIES {
        return Err(SqlError::unsupported(format!(
            "reading through more than {MAX_NESTED_QUERIES} nested queries (subqueries and WITH queries)"
        ))
        .or_at(location_of(query)));
    }
    let scope = scope_with(query, outer)?;
    plan_unread_ctes(query, script, catalog, &scope, outer.len(), depth)?;
    let limit = limit_of(query)?;
    refuse_query_clauses(query)?;
    let select = match query.body.as_ref() {
        SetExpr::Select(select) => select,
        SetExpr::Query(inner) => return plan_query_in(inner, script, catalog, &scope, depth),
        body => {
            let what = match body {
                SetExpr::SetOperation { .. } => "set operations (UNION, INTERSECT, EXCEPT)",
                SetExpr::Values(_) => "VALUES as a query (INSERT INTO stream VALUES … adds rows)",
                _ => "WITH before a statement other than SELECT",
            };
            // At the query's start: its WITH, when one comes before an INSERT.
            return Err(SqlError::unsupported(what).or_at(location_of(query)));
        }
    };
    if select.distinct.is_some() {
        return Err(SqlError::unsupported("SELECT DISTINCT")
            .or_at(span_location(select.select_token.0.span)));
    }
    refuse_select_clauses(select)?;
    let table = only_relation(select)?;
    let source = Source::resolve(&table.relation, script, catalog, &scope, depth)?;
    let input_schema = Arc::clone(&source.schema);
    let converter = match &source.input {
        None => {
            ExprConverter::new(df_schema(&input_schema)?, &source.stream).aliased(&source.qualifier)
        }
        Some(_) => ExprConverter::for_subquery(df_schema(&input_schema)?, &source.qualifier),
    }
    .with_catalog(catalog);

    // WHERE and GROUP BY are planned before the SELECT list, which comes
    // first in the text: an unknown column written in the SELECT list
    // before their error is the query's first mistake.
    let first_mistake = |err: SqlError| match err.location() {
        Some(at) => unknown_column_before(&converter, &select.projection, at).unwrap_or(err),
        None => err,
    };
    let filter = match &select.selection {
        Some(w) => {
            let e = converter
                .convert_in(w, Place::Where)
                .map_err(first_mistake)?;
            Some(
                converter
                    .cast_to(e, &DataType::Boolean)
                    .map_err(|err| err.or_at(location_of(w)))?,
            )
        }
        None => None,
    };

    let group_by = group_by_items(select, &input_schema)?;
    let group_keys = group_by
        .iter()
        .map(|e| converter.convert_in(e, Place::GroupBy))
        .collect::<Result<Vec<_>, _>>()
        .map_err(first_mistake)?;
    let group_names: Vec<String> = group_by.iter().map(|e| e.to_string()).collect();

    let named_windows: HashMap<String, &ast::NamedWindowExpr> = select
        .named_window
        .iter()
        .map(|w| (w.0.value.to_ascii_lowercase(), &w.1))
        .collect();

    let mut planner = AggregatePlanner {
        converter: &converter,
        catalog,
        stream_event_time: source.event_time.clone(),
        no_event_time: source.no_event_time(),
        group_keys: &group_keys,
        group_names: &group_names,
        named_windows: &named_windows,
        windows: Vec::new(),
        aggregates: Vec::new(),
    };

    let SelectItems {
        items,
        written: written_items,
    } = select_items(&mut planner, select, &input_schema, &source.qualifier)?;
    // QUALIFY: over the row and its aggregates, like a select item; it may
    // name select items by their aliases (as in DuckDB and Snowflake).
    // HAVING is the same filter here: each row emits its group's aggregates
    // as they stand after it, and HAVING keeps the rows where they meet the
    // condition, as a streaming engine (Flink, ksqlDB) filters a group's
    // updates. Both given, a row must pass both.
    let written = [("Having", &select.having), ("Qualify", &select.qualify)]
        .map(|(clause, condition)| condition.as_ref().map(|c| (clause, c)));
    let clauses = match written {
        [Some(_), Some(_)] => "Having and Qualify",
        [Some((clause, _)), None] | [None, Some((clause, _))] => clause,
        [None, None] => "",
    };
    let conditions = written
        .into_iter()
        .flatten()
        .map(|(_, q)| {
            let q = with_aliases_expanded(q, &select.projection, &input_schema);
            let e = planner.convert_item(&q)?;
            converter
                .cast_to(e, &DataType::Boolean)
                .map_err(|err| err.or_at(location_of(&q)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let result_filter = conditions
        .into_iter()
        .reduce(Expr::and)
        .map(|condition| ResultFilter { clauses, condition });
    let AggregatePlanner {
        windows,
        aggregates,
        ..
    } = planner;

    let (intermediate_schema, output_schema) = result_schemas(&input_schema, &aggregates, &items)?;
    let outputs: Vec<(String, Expr)> = output_schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .zip(items.into_iter().map(|(_, e)| e))
        .collect();

    // The result column passing the event time on: under its own name if
    // it keeps it, else the first that renames it.
    let output_event_time = source.event_time.as_ref().and_then(|event_time| {
        outputs
            .iter()
            .filter(|(_, e)| matches!(e, Expr::Column(c) if c.name == *event_time))
            .map(|(name, _)| name)
            .min_by_key(|name| *name != event_time)
            .cloned()
    });
    Ok(QueryPlan {
        sql: written_text(query, script),
        stream: source.stream,
        input: source.input,
        input_schema,
        output_event_time,
        filter,
        windows,
        aggregates,
        intermediate_schema,
        result_filter,
        outputs,
        output_schema,
        limit,
        written: WrittenParts {
            filter: select.selection.as_ref().map(ToString::to_string),
            outputs: written_items,
        },
    })
}

/// The first column name in `projection`, before `at` in the text, that the
/// query's input does not have: its error, as the SELECT list would give it.
fn unknown_column_before(
    converter: &ExprConverter<'_>,
    projection: &[SelectItem],
    at: Location,
) -> Option<SqlError> {
    projection.iter().find_map(|item| {
        let mut found = None;
        let _ = ast::visit_expressions(item, |e| {
            let name = matches!(
                e,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            );
            // A name converts alone (the place only words refused calls).
            if name
                && location_of(e).is_some_and(|here| here < at)
                && let Err(err) = converter.convert_in(e, Place::Values)
                && matches!(
                    err.kind(),
                    SqlErrorKind::UnknownColumn { .. } | SqlErrorKind::UnknownStream { .. }
                )
            {
                found = Some(err);
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        found
    })
}

/// The column name of an unaliased select item: a column's name, or the
/// call as written without its `OVER` clause.
fn item_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => i.value.clone(),
        ast::Expr::CompoundIdentifier(parts) => {
            parts.last().map(|p| p.value.clone()).unwrap_or_default()
        }
        ast::Expr::Function(f) => {
            let mut bare = f.clone();
            bare.over = None;
            bare.to_string()
        }
        other => other.to_string(),
    }
}

/// Plans the `WITH` queries of `query` (those of `scope` past `outer`) that
/// nothing reads: a WITH query is planned where it is read, and one read
/// nowhere is planned here, so that its errors are reported all the same.
fn plan_unread_ctes(
    query: &ast::Query,
    script: &str,
    catalog: &dyn Catalog,
    scope: &[Cte<'_>],
    outer: usize,
    depth: usize,
) -> Result<(), SqlError> {
    let read = if scope.len() > outer {
        relations_read(query)
    } else {
        HashSet::new()
    };
    for (i, cte) in scope.iter().enumerate().skip(outer) {
        if !read.contains(&cte.name.value.to_lowercase()) {
            plan_query_in(cte.query, script, catalog, &scope[..i], depth + 1)?;
        }
    }
    Ok(())
}

/// The row limit of `query` (`LIMIT n`), refusing the clauses that order or
/// skip results, which a continuous query cannot.
fn limit_of(query: &ast::Query) -> Result<Option<u64>, SqlError> {
    if let Some(order_by) = &query.order_by {
        return Err(
            SqlError::unsupported("ORDER BY outside OVER (results come in arrival order)")
                .or_at(location_of(order_by)),
        );
    }
    if let Some(fetch) = &query.fetch {
        return Err(
            SqlError::unsupported("FETCH (use LIMIT n to stop after n rows)")
                .or_at(location_of(fetch)),
        );
    }
    Ok(match &query.limit_clause {
        None => None,
        Some(ast::LimitClause::LimitOffset {
            limit: Some(n),
            offset: None,
            limit_by,
        }) if limit_by.is_empty() => match n {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(text, _) => Some(text.parse::<u64>().map_err(|_| {
                    SqlError::at(
                        SqlErrorKind::Plan(format!("LIMIT needs a whole number, got {text}")),
                        location_of(n),
                    )
                })?),
                other => {
                    return Err(SqlError::at(
                        SqlErrorKind::Plan(format!("LIMIT needs a whole number, got {other}")),
                        location_of(n),
                    ));
                }
            },
            other => {
                return Err(SqlError::at(
                    SqlErrorKind::Plan(format!(
                        "LIMIT needs a constant number of rows, got {other}"
                    )),
                    location_of(n),
                ));
            }
        },
        Some(other) => {
            let written = other.to_string();
            return Err(
                SqlError::unsupported(format!("{} (only LIMIT n)", written.trim()))
                    .or_at(location_of(other)),
            );
        }
    })
}

/// Refuses the clauses of `query` that mean nothing to a continuous query
/// and would otherwise be dropped unread (`FOR UPDATE`, `SETTINGS`, …).
/// `ORDER BY`, `LIMIT` and `FETCH` are checked by [`limit_of`].
fn refuse_query_clauses(query: &ast::Query) -> Result<(), SqlError> {
    let what = if !query.locks.is_empty() {
        "FOR UPDATE and FOR SHARE (a stream has no rows to lock)"
    } else if query.for_clause.is_some() {
        "FOR XML and FOR JSON"
    } else if query.settings.is_some() {
        "SETTINGS"
    } else if query.format_clause.is_some() {
        "FORMAT (the output format is the subscriber's)"
    } else if !query.pipe_operators.is_empty() {
        "pipe operators (|>)"
    } else {
        return Ok(());
    };
    Err(SqlError::unsupported(what).or_at(location_of(query)))
}

/// Refuses the clauses of `select` that sliq has no meaning for and would
/// otherwise drop unread (`TOP`, `INTO`, Hive's and ClickHouse's clauses);
/// the clauses it reads are checked where they are planned.
fn refuse_select_clauses(select: &ast::Select) -> Result<(), SqlError> {
    let what = if select.top.is_some() {
        "TOP (use LIMIT n to stop after n rows)"
    } else if select.into.is_some() {
        "SELECT … INTO (a query's results go to its subscriber)"
    } else if select.select_modifiers.is_some() {
        "SELECT modifiers"
    } else if select.exclude.is_some() {
        "EXCLUDE in the select list"
    } else if !select.lateral_views.is_empty() {
        "LATERAL VIEW"
    } else if select.prewhere.is_some() {
        "PREWHERE (use WHERE)"
    } else if !select.connect_by.is_empty() {
        "CONNECT BY"
    } else if !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
        || !select.sort_by.is_empty()
    {
        "CLUSTER BY, DISTRIBUTE BY and SORT BY"
    } else if select.value_table_mode.is_some() {
        "SELECT AS STRUCT and SELECT AS VALUE"
    } else {
        return Ok(());
    };
    Err(SqlError::unsupported(what).or_at(span_location(select.select_token.0.span)))
}

/// The one relation `select` reads: joins and several relations are refused.
fn only_relation(select: &ast::Select) -> Result<&ast::TableWithJoins, SqlError> {
    match select.from.as_slice() {
        [t] if t.joins.is_empty() => Ok(t),
        [] => Err(SqlError::plan("a continuous query needs FROM <stream>")),
        [t] => {
            let join = t.joins.first().and_then(|j| location_of(&j.relation));
            Err(SqlError::unsupported("joins").or_at(join))
        }
        [_, second, ..] => Err(SqlError::unsupported("joins").or_at(location_of(second))),
    }
}

/// The expressions of `select`'s `GROUP BY`, positions and aliases of
/// select items replaced by the items (see [`select_item_at`]). `GROUP BY
/// ALL` is every select item without an aggregate, as in DuckDB.
fn group_by_items<'a>(
    select: &'a ast::Select,
    input_schema: &Schema,
) -> Result<Vec<&'a ast::Expr>, SqlError> {
    match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs
            .iter()
            .map(|e| select_item_at(e, &select.projection, input_schema))
            .collect(),
        GroupByExpr::All(modifiers) if modifiers.is_empty() => select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    (!has_aggregate(e)).then_some(Ok(e))
                }
                other => Some(Err(SqlError::unsupported(
                    "GROUP BY ALL with * (name the keys)",
                )
                .or_at(location_of(other)))),
            })
            .collect(),
        GroupByExpr::Expressions(..) | GroupByExpr::All(_) => {
            Err(SqlError::unsupported("GROUP BY modifiers").or_at(location_of(&select.group_by)))
        }
    }
}

/// Whether `e` calls an aggregate or a window function anywhere.
fn has_aggregate(e: &ast::Expr) -> bool {
    let found = ast::visit_expressions(e, |e| match e {
        ast::Expr::Function(f) if f.over.is_some() || !is_scalar_call(f) => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// The intermediate schema (the input's columns, then one column per
/// aggregate, which the select items are computed over) and the output
/// schema (one column per item, duplicate names suffixed).
fn result_schemas(
    input_schema: &Schema,
    aggregates: &[AggregateCall],
    items: &[(String, Expr)],
) -> Result<(SchemaRef, SchemaRef), SqlError> {
    let mut fields: Vec<Field> = input_schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    for (i, a) in aggregates.iter().enumerate() {
        fields.push(Field::new(
            aggregate_column(i),
            output_arrow_type(a.function.output_type()),
            true,
        ));
    }
    let intermediate_schema = Arc::new(Schema::new(fields));
    let intermediate_df = df_schema(&intermediate_schema)?;
    let mut out_fields = Vec::new();
    let mut seen = HashMap::new();
    for (name, e) in items {
        let (_, field) = e
            .to_field(&intermediate_df)
            .map_err(|err| SqlError::plan(format!("column {name}: {err}")))?;
        // A computed value is NULL on a row where it fails (division by
        // zero, a failing CAST), whatever DataFusion infers for it.
        let nullable = field.is_nullable() || !matches!(e, Expr::Column(_));
        let t = field.data_type().clone();
        // Duplicate names get a suffix, as DuckDB does (`m`, `m_1`).
        let n = seen.entry(name.clone()).or_insert(0usize);
        let unique = if *n == 0 {
            name.clone()
        } else {
            format!("{name}_{n}")
        };
        *n += 1;
        out_fields.push(Field::new(unique, t, nullable));
    }
    Ok((intermediate_schema, Arc::new(Schema::new(out_fields))))
}

/// The columns `*` stands for, less those its `EXCLUDE` names, and with
/// those its `REPLACE` names computed instead (`* REPLACE (v * 2 AS v)`), as
/// in DuckDB. Each name must be a column of the input, named once.
fn wildcard_items(
    planner: &mut AggregatePlanner<'_>,
    options: &ast::WildcardAdditionalOptions,
    input_schema: &Schema,
) -> Result<Vec<(String, Expr)>, SqlError> {
    let written_columns: Vec<&ast::ObjectName> = match &options.opt_exclude {
        None => Vec::new(),
        Some(ast::ExcludeSelectItem::Single(name)) => vec![name],
        Some(ast::ExcludeSelectItem::Multiple(names)) => names.iter().collect(),
    };
    // Each column named, with its replacement (`None`: excluded).
    let mut named: Vec<(String, Option<Expr>)> = Vec::new();
    let replacements = options.opt_replace.iter().flat_map(|r| &r.items);
    let written = written_columns
        .into_iter()
        .map(|name| {
            (
                name.0
                    .iter()
                    .filter_map(|p| p.as_ident().cloned())
                    .collect(),
                None,
            )
        })
        .chain(replacements.map(|r| (vec![r.column_name.clone()], Some(&r.expr))));
    for (parts, replacement) in written {
        let location = parts.last().and_then(|p: &ast::Ident| ident_location(p));
        let column = match parts.as_slice() {
            [one] => ast::Expr::Identifier(one.clone()),
            _ => ast::Expr::CompoundIdentifier(parts),
        };
        let Expr::Column(resolved) = planner.convert_item(&column)? else {
            return Err(SqlError::plan(format!("{column} is not a column")).or_at(location));
        };
        if named.iter().any(|(n, _)| *n == resolved.name) {
            return Err(
                SqlError::plan(format!("the column {column} is named twice after *"))
                    .or_at(location),
            );
        }
        let computed = replacement.map(|e| planner.convert_item(e)).transpose()?;
        named.push((resolved.name, computed));
    }
    let mut items = Vec::new();
    for f in input_schema.fields() {
        match named.iter().find(|(n, _)| n == f.name()) {
            Some((_, None)) => {}
            Some((_, Some(replaced))) => items.push((f.name().clone(), replaced.clone())),
            None => items.push((
                f.name().clone(),
                Expr::Column(Column::new_unqualified(f.name())),
            )),
        }
    }
    Ok(items)
}

/// The select items of `select` by name, aggregate calls replaced by
/// intermediate columns; `*` and `x.*` stand for every input column, where
/// `x` is `visible_name` (the alias, which hides the stream's name).
fn select_items(
    planner: &mut AggregatePlanner<'_>,
    select: &ast::Select,
    input_schema: &Schema,
    visible_name: &str,
) -> Result<SelectItems, SqlError> {
    let mut items: Vec<(String, Expr)> = Vec::new();
    let mut written = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(name), _)
                if !object_name(name).eq_ignore_ascii_case(visible_name) =>
            {
                return Err(SqlError::plan(format!(
                    "{name}.* names no stream here; write {visible_name}.*"
                ))
                .or_at(location_of(item)));
            }
            SelectItem::Wildcard(options)
            | SelectItem::QualifiedWildcard(
                SelectItemQualifiedWildcardKind::ObjectName(_),
                options,
            ) => {
                let columns = wildcard_items(planner, options, input_schema)?;
                written.extend(columns.iter().map(|_| None));
                items.extend(columns);
            }
            SelectItem::UnnamedExpr(e) => {
                let converted = planner.convert_item(e)?;
                items.push((item_name(e), converted));
                written.push(Some(e.to_string()));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                let converted = planner.convert_item(expr)?;
                items.push((alias.value.clone(), converted));
                written.push(Some(expr.to_string()));
            }
            other => {
                return Err(SqlError::unsupported(format!("the select item {other}"))
                    .or_at(location_of(other)));
            }
        }
    }
    Ok(SelectItems { items, written })
}

/// A query's select items, `*` expanded: each with its name, and as written
/// (`None` for a column `*` brought).
struct SelectItems {
    items: Vec<(String, Expr)>,
    written: Vec<Option<String>>,
}
