//! Binding statements to the catalog and planning continuous queries.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use datafusion_common::Column;
use datafusion_expr::{Expr, ExprSchemable};
use sliq_aggregates::registry::{self, CallOptions};
use sliq_aggregates::{ArgType, FixedFrame, Literal, OutputType, ValueType};
use sqlparser::ast::{
    self, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, NullTreatment, ObjectName,
    SelectItem, SelectItemQualifiedWildcardKind, SetExpr, TableFactor, WindowFrameBound,
    WindowFrameUnits, WindowType,
};

use crate::error::{SqlError, SqlErrorKind, closest};
use crate::expr::{
    ExprConverter, SUBQUERY_IN_EXPRESSION, df_schema, ident_location, literal, location_of,
    span_location,
};
use crate::parser::{DurationError, duration_ms, parse_statements};
use crate::plan::{
    AggregateCall, AggregateFunction, Catalog, Frame, QueryPlan, Statement, StreamDefinition,
    WindowGroup, aggregate_column,
};
use crate::types::{arrow_type, canonical_arrow_type, value_type};

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
    plan_statement(statement, catalog).map_err(|e| e.with_source(sql))
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

fn plan_statement(stmt: &ast::Statement, catalog: &dyn Catalog) -> Result<Statement, SqlError> {
    use ast::Statement as S;
    match stmt {
        S::Query(query) => Ok(Statement::Query(Box::new(plan_query(
            query,
            &stmt.to_string(),
            catalog,
        )?))),
        S::Explain { statement, .. } => match statement.as_ref() {
            S::Query(query) => Ok(Statement::Explain(Box::new(plan_query(
                query,
                &statement.to_string(),
                catalog,
            )?))),
            other => Err(SqlError::unsupported(format!("EXPLAIN of {other}"))),
        },
        S::CreateTable(create) => create_stream(create),
        S::Drop {
            object_type: ast::ObjectType::Table,
            names,
            if_exists,
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
            _ => Err(SqlError::unsupported(format!(
                "{stmt} (try SHOW STREAMS or SHOW QUERIES)"
            ))),
        },
        S::ShowTables { .. } => Ok(Statement::ShowStreams),
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
        S::ExplainTable { table_name, .. } => {
            let name = object_name(table_name);
            if catalog.stream(&name).is_none() {
                return Err(unknown_stream(&name, catalog, location_of(table_name)));
            }
            Ok(Statement::Describe(name))
        }
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

fn create_stream(create: &ast::CreateTable) -> Result<Statement, SqlError> {
    if create.columns.is_empty() {
        return Err(SqlError::plan("CREATE STREAM needs at least one column"));
    }
    let mut fields = Vec::new();
    for col in &create.columns {
        let data_type =
            arrow_type(&col.data_type).map_err(|e| e.or_at(ident_location(&col.name)))?;
        let not_null = col
            .options
            .iter()
            .any(|o| matches!(o.option, ast::ColumnOption::NotNull));
        if fields
            .iter()
            .any(|f: &Field| f.name().eq_ignore_ascii_case(&col.name.value))
        {
            return Err(SqlError::at(
                SqlErrorKind::Plan(format!("column '{}' is declared twice", col.name.value)),
                ident_location(&col.name),
            ));
        }
        fields.push(Field::new(&col.name.value, data_type, !not_null));
    }
    let mut options = Vec::new();
    if let ast::CreateTableOptions::With(with) = &create.table_options {
        for option in with {
            match option {
                ast::SqlOption::KeyValue { key, value } => {
                    let value = match value {
                        ast::Expr::Value(v) => match &v.value {
                            ast::Value::SingleQuotedString(s)
                            | ast::Value::DoubleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        other => other.to_string(),
                    };
                    options.push((key.value.to_ascii_lowercase(), value));
                }
                other => return Err(SqlError::unsupported(format!("the stream option {other}"))),
            }
        }
    }
    let schema = Arc::new(Schema::new(fields));
    if let Some((_, col)) = options.iter().find(|(k, _)| k == "event_time") {
        match schema.field_with_name(col) {
            Ok(f)
                if matches!(
                    f.data_type(),
                    DataType::Timestamp(_, _) | DataType::Int64 | DataType::Int32
                ) => {}
            Ok(f) => {
                return Err(SqlError::plan(format!(
                    "event_time column '{col}' is {}; it must be TIMESTAMP or BIGINT (epoch milliseconds)",
                    f.data_type()
                )));
            }
            Err(_) => {
                return Err(SqlError::plan(format!(
                    "event_time names '{col}', which is not a column of the stream"
                )));
            }
        }
    }
    Ok(Statement::CreateStream(StreamDefinition {
        name: object_name(&create.name),
        schema,
        options,
    }))
}

fn plan_insert(insert: &ast::Insert, catalog: &dyn Catalog) -> Result<Statement, SqlError> {
    let ast::TableObject::TableName(name) = &insert.table else {
        let other = &insert.table;
        return Err(SqlError::unsupported(format!("INSERT INTO {other}")));
    };
    let stream = object_name(name);
    let Some((schema, _)) = catalog.stream(&stream) else {
        return Err(unknown_stream(&stream, catalog, location_of(name)));
    };
    let Some(source) = &insert.source else {
        return Err(SqlError::plan("INSERT needs VALUES"));
    };
    let SetExpr::Values(values) = source.body.as_ref() else {
        return Err(SqlError::unsupported(
            "INSERT … SELECT (use INSERT … VALUES)",
        ));
    };
    let columns: Vec<usize> = if insert.columns.is_empty() {
        (0..schema.fields().len()).collect()
    } else {
        insert
            .columns
            .iter()
            .map(|c| {
                let name = c.to_string();
                schema.index_of(&name).map_err(|_| {
                    let names = schema.fields().iter().map(|f| f.name().as_str());
                    SqlError::at(
                        SqlErrorKind::UnknownColumn {
                            name: name.clone(),
                            relation: format!("stream '{stream}'"),
                            suggestion: closest(&name, names),
                        },
                        location_of(c),
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    let empty = Arc::new(Schema::empty());
    let empty_df = df_schema(&empty)?;
    let converter = ExprConverter::new(empty_df, &stream);
    let mut rows = Vec::new();
    for row in &values.rows {
        if row.len() != columns.len() {
            let error = SqlError::plan(format!(
                "INSERT row has {} values for {} columns",
                row.len(),
                columns.len()
            ));
            return Err(error.or_at(row.first().and_then(location_of)));
        }
        let mut out: Vec<Expr> = schema
            .fields()
            .iter()
            .map(|f| Expr::Literal(null_of(f.data_type()), None))
            .collect();
        for (value, &col) in row.iter().zip(&columns) {
            let e = converter.convert(value, &mut None)?;
            out[col] = converter
                .cast_to(e, schema.field(col).data_type())
                .map_err(|e| e.or_at(location_of(value)))?;
        }
        rows.push(out);
    }
    Ok(Statement::Insert { stream, rows })
}

fn null_of(t: &DataType) -> datafusion_common::ScalarValue {
    datafusion_common::ScalarValue::try_from(t).unwrap_or(datafusion_common::ScalarValue::Null)
}

/// Plans a `SELECT` as a continuous query.
fn plan_query(query: &ast::Query, sql: &str, catalog: &dyn Catalog) -> Result<QueryPlan, SqlError> {
    plan_query_in(query, sql, catalog, &[], 0)
}

/// The most queries one query may read through, one inside the other
/// (subqueries in FROM and WITH queries): each is a stage that every batch
/// goes through, and planning and running them recurse once per stage.
const MAX_NESTED_QUERIES: usize = 64;

/// A common table expression (`WITH name AS (query)`) in scope.
#[derive(Clone, Copy)]
struct Cte<'q> {
    name: &'q ast::Ident,
    query: &'q ast::Query,
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

/// Plans `query` with the common table expressions `outer` in scope;
/// `depth` queries read its results, one inside the other.
fn plan_query_in<'q>(
    query: &'q ast::Query,
    sql: &str,
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
    // A WITH query is planned where it is read; one read nowhere is planned
    // here, so that its errors are reported all the same.
    let read = if scope.len() > outer.len() {
        relations_read(query)
    } else {
        HashSet::new()
    };
    for (i, cte) in scope.iter().enumerate().skip(outer.len()) {
        if !read.contains(&cte.name.value.to_lowercase()) {
            let sql = cte.query.to_string();
            plan_query_in(cte.query, &sql, catalog, &scope[..i], depth + 1)?;
        }
    }
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
    let limit = match &query.limit_clause {
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
                    return Err(SqlError::plan(format!(
                        "LIMIT needs a whole number, got {other}"
                    )));
                }
            },
            other => {
                return Err(SqlError::plan(format!(
                    "LIMIT needs a constant number of rows, got {other}"
                )));
            }
        },
        Some(other) => {
            return Err(
                SqlError::unsupported(format!("{other} (only LIMIT n)")).or_at(location_of(other))
            );
        }
    };
    let select = match query.body.as_ref() {
        SetExpr::Select(select) => select,
        SetExpr::Query(inner) => return plan_query_in(inner, sql, catalog, &scope, depth),
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
    if let Some(having) = &select.having {
        return Err(SqlError::unsupported(
            "HAVING (every row emits its own result; QUALIFY keeps the rows whose \
             aggregates meet a condition)",
        )
        .or_at(location_of(having)));
    }
    let table = match select.from.as_slice() {
        [t] if t.joins.is_empty() => t,
        [] => return Err(SqlError::plan("a continuous query needs FROM <stream>")),
        [t] => {
            let join = t.joins.first().and_then(|j| location_of(&j.relation));
            return Err(SqlError::unsupported("joins").or_at(join));
        }
        [_, second, ..] => {
            return Err(SqlError::unsupported("joins").or_at(location_of(second)));
        }
    };
    let source = Source::resolve(&table.relation, catalog, &scope, depth)?;
    let input_schema = Arc::clone(&source.schema);
    let converter = match &source.input {
        None => {
            ExprConverter::new(df_schema(&input_schema)?, &source.stream).aliased(&source.qualifier)
        }
        Some(_) => ExprConverter::for_subquery(df_schema(&input_schema)?, &source.qualifier),
    };

    let filter = match &select.selection {
        Some(w) => {
            let e = converter.convert(w, &mut None)?;
            Some(
                converter
                    .cast_to(e, &DataType::Boolean)
                    .map_err(|err| err.or_at(location_of(w)))?,
            )
        }
        None => None,
    };

    let group_by: Vec<&ast::Expr> = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs
            .iter()
            .map(|e| select_item_at(e, &select.projection, &input_schema))
            .collect::<Result<_, _>>()?,
        GroupByExpr::Expressions(..) => {
            return Err(
                SqlError::unsupported("GROUP BY modifiers").or_at(location_of(&select.group_by))
            );
        }
        GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    let group_keys = group_by
        .iter()
        .map(|e| converter.convert(e, &mut None))
        .collect::<Result<Vec<_>, _>>()?;
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

    // Select items, with aggregate calls replaced by intermediate columns.
    let mut items: Vec<(String, Expr)> = Vec::new();
    // What `x.*` may qualify: the alias, which hides the stream's name.
    let visible_name = source.qualifier.as_str();
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
            // SliqDialect parses no wildcard options (EXCLUDE, REPLACE, …).
            SelectItem::Wildcard(_)
            | SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(_), _) => {
                for f in input_schema.fields() {
                    items.push((
                        f.name().clone(),
                        Expr::Column(Column::new_unqualified(f.name())),
                    ));
                }
            }
            SelectItem::UnnamedExpr(e) => {
                let converted = planner.convert_item(e)?;
                items.push((item_name(e), converted));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                let converted = planner.convert_item(expr)?;
                items.push((alias.value.clone(), converted));
            }
            other => {
                return Err(SqlError::unsupported(format!("the select item {other}"))
                    .or_at(location_of(other)));
            }
        }
    }
    // QUALIFY: over the row and its aggregates, like a select item; it may
    // name select items by their aliases (as in DuckDB and Snowflake).
    let qualify = select
        .qualify
        .as_ref()
        .map(|q| {
            let q = with_aliases_expanded(q, &select.projection, &input_schema);
            let e = planner.convert_item(&q)?;
            converter
                .cast_to(e, &DataType::Boolean)
                .map_err(|err| err.or_at(location_of(&q)))
        })
        .transpose()?;
    let AggregatePlanner {
        windows,
        aggregates,
        ..
    } = planner;

    // The intermediate schema: input columns, then one column per aggregate.
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
    for (name, e) in &items {
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
    let output_schema = Arc::new(Schema::new(out_fields));
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
        sql: sql.to_string(),
        stream: source.stream,
        input: source.input,
        input_schema,
        output_event_time,
        filter,
        windows,
        aggregates,
        intermediate_schema,
        qualify,
        outputs,
        output_schema,
        limit,
    })
}

/// What a query reads: a stream's rows, or the results of a subquery (in
/// `FROM (SELECT …)` or a `WITH` query), which run first on each batch.
struct Source {
    /// The stream the rows come from, through any subqueries.
    stream: String,
    /// The columns as this query sees them.
    schema: arrow_schema::SchemaRef,
    /// The event-time column: the stream's, or the subquery's result column
    /// that passes the stream's event time through unchanged.
    event_time: Option<String>,
    /// The name that may qualify columns (`s.v`, `d.*`): the stream's name,
    /// or the alias, which hides it; a subquery's alias or `WITH` name
    /// (empty for a subquery without an alias: nothing qualifies).
    qualifier: String,
    /// The subquery, when the rows are its results.
    input: Option<Box<QueryPlan>>,
}

impl Source {
    /// Resolves `FROM relation` against the catalog and the `WITH` queries in
    /// `scope` (which hide streams of the same name), for a query that
    /// `depth` queries read.
    fn resolve(
        relation: &TableFactor,
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
                let alias = alias_name(alias)?;
                let stream = object_name(name);
                let cte = scope
                    .iter()
                    .rposition(|c| c.name.value.eq_ignore_ascii_case(&stream));
                if let Some(i) = cte {
                    let alias = alias.or_else(|| Some(scope[i].name.value.clone()));
                    let plan = plan_query_in(
                        scope[i].query,
                        &scope[i].query.to_string(),
                        catalog,
                        &scope[..i],
                        depth + 1,
                    )?;
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
                ..
            } => {
                if *lateral {
                    return Err(SqlError::unsupported("LATERAL").or_at(location_of(relation)));
                }
                let plan =
                    plan_query_in(subquery, &subquery.to_string(), catalog, scope, depth + 1)?;
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
    fn no_event_time(&self) -> String {
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

/// The Arrow type of an aggregate result.
pub fn output_arrow_type(t: &OutputType) -> DataType {
    match t {
        OutputType::Scalar(v) => canonical_arrow_type(*v),
        OutputType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|(name, v)| Arc::new(Field::new(*name, canonical_arrow_type(*v), true)))
                .collect(),
        ),
    }
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

struct AggregatePlanner<'a> {
    converter: &'a ExprConverter<'a>,
    catalog: &'a dyn Catalog,
    stream_event_time: Option<String>,
    /// Why a RANGE frame without `ORDER BY` has no event time.
    no_event_time: String,
    group_keys: &'a [Expr],
    group_names: &'a [String],
    named_windows: &'a HashMap<String, &'a ast::NamedWindowExpr>,
    windows: Vec<WindowGroup>,
    aggregates: Vec<AggregateCall>,
}

impl AggregatePlanner<'_> {
    fn convert_item(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        let converter = self.converter;
        let mut hook = |f: &ast::Function| self.aggregate(f);
        let mut hook_ref: Option<&mut crate::expr::AggregateHook<'_>> = Some(&mut hook);
        converter.convert(e, &mut hook_ref)
    }

    fn aggregate(&mut self, f: &ast::Function) -> Result<Expr, SqlError> {
        let name = object_name(&f.name).to_ascii_lowercase();
        let user = self.catalog.user_aggregate(&name);
        if user.is_none() {
            let reason = match name.as_str() {
                "lead" => {
                    Some("lead (a stream cannot wait for later rows; lag reads earlier ones)")
                }
                "rank" | "dense_rank" | "percent_rank" | "cume_dist" | "ntile" | "nth_value" => {
                    Some("this window function (row_number, lag and the aggregates are)")
                }
                "median" | "percentile_cont" | "percentile_disc" | "quantile" | "mode" => Some(
                    "exact order statistics, which no window keeps in constant time per row \
                     (try approx_median or approx_percentile)",
                ),
                _ => None,
            };
            if let Some(reason) = reason {
                return Err(SqlError::unsupported(reason).or_at(location_of(&f.name)));
            }
        }
        if user.is_none() && !registry::is_aggregate(&name) {
            let names: Vec<&str> = crate::expr::function_names().collect();
            return Err(SqlError::at(
                SqlErrorKind::UnknownFunction {
                    name: name.clone(),
                    suggestion: closest(&name, names),
                },
                location_of(&f.name),
            ));
        }
        let list = match &f.args {
            FunctionArguments::List(list) => Some(list),
            FunctionArguments::None => None,
            FunctionArguments::Subquery(_) => {
                return Err(SqlError::unsupported(SUBQUERY_IN_EXPRESSION));
            }
        };
        if list.is_some_and(|l| l.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct)) {
            return Err(SqlError::unsupported(format!(
                "{name}(DISTINCT …) (try approx_count_distinct)"
            )));
        }
        let mut ignore_nulls = matches!(f.null_treatment, Some(NullTreatment::IgnoreNulls));
        if let Some(l) = list {
            for clause in &l.clauses {
                match clause {
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(
                        NullTreatment::IgnoreNulls,
                    ) => ignore_nulls = true,
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(
                        NullTreatment::RespectNulls,
                    ) => {}
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "{other} in an aggregate call"
                        )));
                    }
                }
            }
        }
        // Arguments: expressions become typed columns, literals stay constants.
        let mut arg_types = Vec::new();
        let mut arg_exprs = Vec::new();
        for arg in list.map(|l| l.args.as_slice()).unwrap_or_default() {
            let e = match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => e,
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "count" => continue,
                other => return Err(SqlError::unsupported(format!("the argument {other}"))),
            };
            let converted = self.converter.convert(e, &mut None)?;
            let literal_value = match e {
                ast::Expr::Value(v) => Some(to_literal(&literal(&v.value)?)),
                ast::Expr::UnaryOp {
                    op: ast::UnaryOperator::Minus,
                    expr,
                } => match expr.as_ref() {
                    ast::Expr::Value(v) => Some(negate(to_literal(&literal(&v.value)?))),
                    _ => None,
                },
                _ => None,
            };
            let t = self.converter.type_of(&converted)?;
            let ty = value_type(&t).ok_or_else(|| {
                SqlError::at(
                    SqlErrorKind::Plan(format!("{name} cannot take a {t} argument ({e})")),
                    location_of(e),
                )
            })?;
            arg_types.push(match literal_value {
                Some(l) => ArgType {
                    ty: if l == Literal::Null {
                        ty
                    } else {
                        ArgType::literal(l.clone()).ty
                    },
                    literal: Some(l),
                },
                None => ArgType::column(ty),
            });
            arg_exprs.push(converted);
        }
        let function = match user {
            Some(u) => {
                let given: Vec<ValueType> = arg_types.iter().map(|a| a.ty).collect();
                if given.len() != u.inputs().len() {
                    let expected: Vec<String> =
                        u.inputs().iter().map(ToString::to_string).collect();
                    return Err(SqlError::at(
                        SqlErrorKind::Plan(format!(
                            "{name} takes ({}), got {} arguments",
                            expected.join(", "),
                            given.len()
                        )),
                        location_of(&f.name),
                    ));
                }
                AggregateFunction::User(u)
            }
            None => AggregateFunction::Builtin(
                registry::resolve(&name, &arg_types, CallOptions { ignore_nulls })
                    .map_err(|e| SqlError::at(SqlErrorKind::Aggregate(e), location_of(&f.name)))?,
            ),
        };
        let inputs = function.inputs().to_vec();
        let args = arg_exprs
            .into_iter()
            .zip(&inputs)
            .map(|(e, ty)| self.converter.cast_to(e, &canonical_arrow_type(*ty)))
            .collect::<Result<Vec<_>, _>>()?;
        let filter = f
            .filter
            .as_deref()
            .map(|p| {
                let e = self.converter.convert(p, &mut None)?;
                self.converter
                    .cast_to(e, &DataType::Boolean)
                    .map_err(|err| err.or_at(location_of(p)))
            })
            .transpose()?;
        let fixed_frame = match &function {
            AggregateFunction::Builtin(resolved) => resolved.fixed_frame(),
            AggregateFunction::User(_) => None,
        };
        if let (Some(_), Some(filter)) = (fixed_frame, &f.filter) {
            // As in PostgreSQL: FILTER belongs to aggregates, and lag or
            // row_number count rows whatever a filter would leave out.
            return Err(SqlError::unsupported(format!(
                "FILTER on the window function {name} (only aggregates take it)"
            ))
            .or_at(location_of(filter.as_ref())));
        }
        let window = self.window(f, fixed_frame)?;
        let mut display = f.clone();
        display.over = None;
        let display = display.to_string();
        // The same call over the same window (in a select item and in
        // QUALIFY, say) is computed once.
        let same = self.aggregates.iter().position(|a| {
            a.window == window && a.display == display && a.args == args && a.filter == filter
        });
        let index = match same {
            Some(index) => index,
            None => {
                self.converter.add_column(
                    &aggregate_column(self.aggregates.len()),
                    output_arrow_type(function.output_type()),
                )?;
                self.aggregates.push(AggregateCall {
                    function,
                    args,
                    filter,
                    window,
                    display,
                });
                self.aggregates.len() - 1
            }
        };
        Ok(Expr::Column(Column::new_unqualified(aggregate_column(
            index,
        ))))
    }

    /// The window group of a call's `OVER` clause (found or added).
    /// `fixed` (from `lag`, `row_number`) replaces the frame the call names.
    fn window(&mut self, f: &ast::Function, fixed: Option<FixedFrame>) -> Result<usize, SqlError> {
        let spec = match &f.over {
            None => None,
            Some(WindowType::WindowSpec(spec)) => Some(self.resolve_named(spec)?),
            Some(WindowType::NamedWindow(name)) => {
                match self.named_windows.get(&name.value.to_ascii_lowercase()) {
                    Some(ast::NamedWindowExpr::WindowSpec(spec)) => Some(self.resolve_named(spec)?),
                    Some(ast::NamedWindowExpr::NamedWindow(other)) => {
                        return Err(SqlError::unsupported(format!(
                            "window {name} defined as another window {other}"
                        )));
                    }
                    None => {
                        return Err(SqlError::at(
                            SqlErrorKind::Plan(format!(
                                "unknown window '{name}': define it with WINDOW {name} AS (…)"
                            )),
                            ident_location(name),
                        ));
                    }
                }
            }
        };
        let (keys, key_names) = match &spec {
            Some(s) if !s.partition_by.is_empty() => (
                s.partition_by
                    .iter()
                    .map(|e| self.converter.convert(e, &mut None))
                    .collect::<Result<Vec<_>, _>>()?,
                s.partition_by.iter().map(ToString::to_string).collect(),
            ),
            _ => (self.group_keys.to_vec(), self.group_names.to_vec()),
        };
        let order_column = match &spec {
            Some(s) => match s.order_by.as_slice() {
                [] => None,
                [o] => match &o.expr {
                    ast::Expr::Identifier(i) => {
                        let column = self.converter.convert(&o.expr, &mut None)?;
                        if o.options.asc == Some(false) {
                            return Err(SqlError::unsupported(
                                "ORDER BY … DESC in a window (streams arrive in ascending time)",
                            ));
                        }
                        self.check_window_order(i, &column)?;
                        Some(i.value.clone())
                    }
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "ORDER BY {other} in a window (order by a column)"
                        )));
                    }
                },
                _ => {
                    return Err(SqlError::unsupported(
                        "ORDER BY several columns in a window",
                    ));
                }
            },
            None => None,
        };
        let frame = match (fixed, spec.as_ref().and_then(|s| s.window_frame.as_ref())) {
            (Some(FixedFrame::Rows(n)), _) => Frame::Rows(n),
            (Some(FixedFrame::Unbounded), _) | (None, None) => Frame::Unbounded,
            (None, Some(frame)) => self.frame(frame)?,
        };
        let event_time = match frame {
            Frame::Range(_) => {
                let column = order_column
                    .or_else(|| self.stream_event_time.clone())
                    .ok_or_else(|| SqlError::plan(self.no_event_time.clone()))?;
                let e = self
                    .converter
                    .convert(&ast::Expr::Identifier(ast::Ident::new(&column)), &mut None)?;
                match self.converter.type_of(&e)? {
                    DataType::Timestamp(_, _) | DataType::Int64 | DataType::Int32 => Some(column),
                    other => {
                        return Err(SqlError::plan(format!(
                            "the event-time column '{column}' is {other}; RANGE needs TIMESTAMP or BIGINT (epoch milliseconds)"
                        )));
                    }
                }
            }
            _ => None,
        };
        let existing = self.windows.iter().position(|w| {
            w.frame == frame && w.event_time == event_time && w.key_names == key_names
        });
        Ok(existing.unwrap_or_else(|| {
            self.windows.push(WindowGroup {
                keys,
                key_names,
                frame,
                event_time,
            });
            self.windows.len() - 1
        }))
    }

    /// A window's rows are its stream's rows in arrival order, so `ORDER BY`
    /// in `OVER` may only name the column that order follows: the stream's
    /// event-time column, or, when it declares none, a time or sequence
    /// column (TIMESTAMP or integer; for RANGE frames it becomes the event
    /// time). Ordering by anything else would silently differ from SQL.
    fn check_window_order(&self, column: &ast::Ident, converted: &Expr) -> Result<(), SqlError> {
        let name = &column.value;
        let refused = match &self.stream_event_time {
            Some(event_time) if !event_time.eq_ignore_ascii_case(name) => format!(
                "ORDER BY {name} in a window: rows are windowed in arrival order, which follows \
                 the stream's event-time column '{event_time}'; write ORDER BY {event_time} or \
                 leave ORDER BY out"
            ),
            Some(_) => return Ok(()),
            None => match self.converter.type_of(converted)? {
                DataType::Timestamp(_, _) | DataType::Date32 | DataType::Date64 => return Ok(()),
                t if t.is_integer() => return Ok(()),
                other => format!(
                    "ORDER BY {name} ({other}) in a window: rows are windowed in arrival order; \
                     ORDER BY may name the time or sequence column (TIMESTAMP or integer) they \
                     arrive in"
                ),
            },
        };
        Err(SqlError::at(
            SqlErrorKind::Unsupported(refused),
            ident_location(column),
        ))
    }

    /// A spec that names a base window (`OVER (w ROWS …)`) is not supported;
    /// a plain spec is returned as is.
    fn resolve_named(&self, spec: &ast::WindowSpec) -> Result<ast::WindowSpec, SqlError> {
        match &spec.window_name {
            None => Ok(spec.clone()),
            Some(name) => match self.named_windows.get(&name.value.to_ascii_lowercase()) {
                Some(ast::NamedWindowExpr::WindowSpec(base))
                    if spec.window_frame.is_none() && spec.partition_by.is_empty() =>
                {
                    Ok(base.clone())
                }
                _ => Err(SqlError::unsupported(format!(
                    "refining the named window {name}"
                ))),
            },
        }
    }

    fn frame(&self, frame: &ast::WindowFrame) -> Result<Frame, SqlError> {
        match &frame.end_bound {
            None | Some(WindowFrameBound::CurrentRow) => {}
            Some(WindowFrameBound::Following(_)) => {
                return Err(SqlError::unsupported(
                    "FOLLOWING bounds (a stream cannot wait for later rows)",
                ));
            }
            Some(WindowFrameBound::Preceding(_)) => {
                return Err(SqlError::unsupported(
                    "frames ending before the current row",
                ));
            }
        }
        let bound = match &frame.start_bound {
            WindowFrameBound::CurrentRow => {
                return Ok(match frame.units {
                    WindowFrameUnits::Range => Frame::Range(0),
                    _ => Frame::Rows(0),
                });
            }
            WindowFrameBound::Following(_) => {
                return Err(SqlError::unsupported(
                    "FOLLOWING bounds (a stream cannot wait for later rows)",
                ));
            }
            WindowFrameBound::Preceding(None) => return Ok(Frame::Unbounded),
            WindowFrameBound::Preceding(Some(b)) => b.as_ref(),
        };
        match frame.units {
            WindowFrameUnits::Rows => match bound {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n.parse::<u64>().map(Frame::Rows).map_err(|_| {
                        SqlError::at(
                            SqlErrorKind::Plan(format!(
                                "ROWS needs a whole number of rows, got {n}"
                            )),
                            location_of(bound),
                        )
                    }),
                    other => Err(SqlError::at(
                        SqlErrorKind::Plan(format!("ROWS needs a number of rows, got {other}")),
                        location_of(bound),
                    )),
                },
                other => Err(SqlError::at(
                    SqlErrorKind::Plan(format!(
                        "ROWS needs a constant number of rows, got {other}"
                    )),
                    location_of(bound),
                )),
            },
            WindowFrameUnits::Range => {
                let ms = match bound {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => duration_ms(n),
                        ast::Value::SingleQuotedString(s) => duration_ms(s),
                        _ => Err(DurationError::Malformed),
                    },
                    ast::Expr::Interval(interval) => interval_ms(interval),
                    _ => Err(DurationError::Malformed),
                };
                ms.map(Frame::Range).map_err(|e| {
                    let message = match e {
                        DurationError::TooLong => "RANGE: the duration is longer than a \
                             window can span (at most 2^62 ms, about 146 million years)"
                            .to_string(),
                        DurationError::Malformed => format!(
                            "RANGE needs a duration such as '10s', '1m30s' or INTERVAL '10' SECOND, got {bound}"
                        ),
                    };
                    SqlError::at(SqlErrorKind::Plan(message), location_of(bound))
                })
            }
            WindowFrameUnits::Groups => Err(SqlError::unsupported("GROUPS frames")),
        }
    }
}

/// The length of a fixed `INTERVAL` (ms, s, m, h, d) in milliseconds.
pub(crate) fn interval_ms(interval: &ast::Interval) -> Result<i64, DurationError> {
    let text = match interval.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            _ => return Err(DurationError::Malformed),
        },
        _ => return Err(DurationError::Malformed),
    };
    let unit = match &interval.leading_field {
        None => return duration_ms(&text),
        Some(ast::DateTimeField::Millisecond | ast::DateTimeField::Milliseconds) => "ms",
        Some(ast::DateTimeField::Second | ast::DateTimeField::Seconds) => "s",
        Some(ast::DateTimeField::Minute | ast::DateTimeField::Minutes) => "m",
        Some(ast::DateTimeField::Hour | ast::DateTimeField::Hours) => "h",
        Some(ast::DateTimeField::Day | ast::DateTimeField::Days) => "d",
        Some(_) => return Err(DurationError::Malformed),
    };
    let amount: f64 = text.trim().parse().map_err(|_| DurationError::Malformed)?;
    duration_ms(&format!("{amount}{unit}"))
}

fn to_literal(v: &datafusion_common::ScalarValue) -> Literal {
    use datafusion_common::ScalarValue as S;
    match v {
        S::Int64(Some(i)) => Literal::Int64(*i),
        S::Float64(Some(f)) => Literal::Float64(*f),
        S::Utf8(Some(s)) => Literal::Utf8(s.clone()),
        S::Boolean(Some(b)) => Literal::Boolean(*b),
        _ => Literal::Null,
    }
}

fn negate(l: Literal) -> Literal {
    match l {
        Literal::Int64(i) => Literal::Int64(i.wrapping_neg()),
        Literal::Float64(f) => Literal::Float64(-f),
        other => other,
    }
}
