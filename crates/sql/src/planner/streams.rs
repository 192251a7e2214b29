//! Statements that define or feed streams: `CREATE STREAM` and
//! `INSERT INTO … VALUES`.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use datafusion_expr::Expr;
use sqlparser::ast::{self, SetExpr};

use super::{object_name, unknown_stream};
use crate::error::{SqlError, SqlErrorKind, closest, did_you_mean};
use crate::expr::{ExprConverter, Place, df_schema, ident_location, location_of, span_location};
use crate::plan::{Catalog, Statement, StreamDefinition, StreamOption, column_position};
use crate::types::{arrow_type, sql_type_name};

pub(super) fn create_stream(create: &ast::CreateTable) -> Result<Statement, SqlError> {
    refuse_create_clauses(create)?;
    if create.columns.is_empty() {
        return Err(SqlError::plan("CREATE STREAM needs at least one column"));
    }
    let mut fields = Vec::new();
    for col in &create.columns {
        let data_type =
            arrow_type(&col.data_type).map_err(|e| e.or_at(ident_location(&col.name)))?;
        let mut not_null = false;
        for o in &col.options {
            match &o.option {
                ast::ColumnOption::NotNull => not_null = true,
                ast::ColumnOption::Null | ast::ColumnOption::Comment(_) => {}
                other => {
                    return Err(SqlError::unsupported(format!(
                        "the column option {other} (a stream checks its columns' types and \
                         NOT NULL only)"
                    ))
                    .or_at(ident_location(&col.name)));
                }
            }
        }
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
                ast::SqlOption::KeyValue {
                    key,
                    value: written,
                } => {
                    let value = match written {
                        ast::Expr::Value(v) => match &v.value {
                            ast::Value::SingleQuotedString(s)
                            | ast::Value::DoubleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        other => other.to_string(),
                    };
                    if options
                        .iter()
                        .any(|o: &StreamOption| o.key.eq_ignore_ascii_case(&key.value))
                    {
                        return Err(SqlError::at(
                            SqlErrorKind::Plan(format!(
                                "the option '{}' is given twice",
                                key.value
                            )),
                            ident_location(key),
                        ));
                    }
                    options.push(StreamOption {
                        key: key.value.to_ascii_lowercase(),
                        value,
                        key_at: ident_location(key),
                        value_at: location_of(written),
                    });
                }
                other => return Err(SqlError::unsupported(format!("the stream option {other}"))),
            }
        }
    }
    let definition = StreamDefinition {
        name: object_name(&create.name),
        schema: Arc::new(Schema::new(fields)),
        options,
        if_not_exists: create.if_not_exists,
    };
    if let Some(col) = definition.option("event_time") {
        match definition.schema.field_with_name(col) {
            Ok(f)
                if matches!(
                    f.data_type(),
                    DataType::Timestamp(_, _) | DataType::Int64 | DataType::Int32
                ) => {}
            Ok(f) => {
                return Err(definition.value_error(
                    "event_time",
                    format!(
                        "event_time column '{col}' is {}; it must be TIMESTAMP or BIGINT (epoch milliseconds)",
                        sql_type_name(f.data_type())
                    ),
                ));
            }
            Err(_) => {
                let names = definition.schema.fields().iter().map(|f| f.name().as_str());
                let hint = did_you_mean(&closest(col, names));
                return Err(definition.value_error(
                    "event_time",
                    format!("event_time names '{col}', which is not a column of the stream{hint}"),
                ));
            }
        }
    }
    Ok(Statement::CreateStream(definition))
}

/// Refuses what `CREATE STREAM` (or `CREATE TABLE`) may carry besides
/// columns and `WITH` options, which would otherwise be dropped unread.
fn refuse_create_clauses(create: &ast::CreateTable) -> Result<(), SqlError> {
    let what = if create.query.is_some() {
        "CREATE STREAM … AS SELECT (a stream is fed by its source or by INSERT; \
         a SELECT over it is a query)"
    } else if create.like.is_some() || create.clone.is_some() {
        "CREATE STREAM … LIKE and CLONE (declare the columns)"
    } else if create.or_replace {
        "CREATE OR REPLACE (DROP STREAM, then CREATE STREAM)"
    } else if let Some(constraint) = create.constraints.first() {
        return Err(SqlError::unsupported(
            "constraints (a stream checks its columns' types and NOT NULL only)",
        )
        .or_at(location_of(constraint)));
    } else {
        return Ok(());
    };
    Err(SqlError::unsupported(what).or_at(location_of(&create.name)))
}

/// Refuses the clauses of `INSERT` that mean nothing to a stream (it has no
/// keys to conflict on and no rows to return or overwrite) and would
/// otherwise be dropped unread.
fn refuse_insert_clauses(insert: &ast::Insert) -> Result<(), SqlError> {
    let what = if insert.or.is_some() || insert.replace_into {
        "INSERT OR REPLACE and REPLACE INTO (a stream has no keys to conflict on)"
    } else if insert.ignore {
        "INSERT IGNORE (a stream has no keys to conflict on)"
    } else if insert.on.is_some() {
        "ON CONFLICT and ON DUPLICATE KEY UPDATE (a stream has no keys to conflict on)"
    } else if insert.returning.is_some() || insert.output.is_some() {
        "RETURNING and OUTPUT (a query over the stream sees the rows)"
    } else if insert.overwrite {
        "INSERT OVERWRITE (a stream's rows cannot be replaced)"
    } else if !insert.assignments.is_empty() {
        "INSERT … SET (use INSERT … VALUES)"
    } else if insert.partitioned.is_some() || !insert.after_columns.is_empty() {
        "PARTITION in INSERT"
    } else if insert.settings.is_some() || insert.format_clause.is_some() {
        "SETTINGS and FORMAT in INSERT"
    } else if insert.multi_table_insert_type.is_some() {
        "inserting into several streams at once"
    } else {
        return Ok(());
    };
    Err(SqlError::unsupported(what).or_at(span_location(insert.insert_token.0.span)))
}

pub(super) fn plan_insert(
    insert: &ast::Insert,
    catalog: &dyn Catalog,
) -> Result<Statement, SqlError> {
    refuse_insert_clauses(insert)?;
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
    let mut columns: Vec<usize> = Vec::new();
    for c in &insert.columns {
        let name = object_name(c);
        let Some(i) = column_position(schema.fields(), &name) else {
            let names = schema.fields().iter().map(|f| f.name().as_str());
            return Err(SqlError::at(
                SqlErrorKind::UnknownColumn {
                    name: name.clone(),
                    relation: format!("stream '{stream}'"),
                    suggestion: closest(&name, names.clone()),
                    columns: names.map(str::to_string).collect(),
                },
                location_of(c),
            ));
        };
        if columns.contains(&i) {
            return Err(SqlError::plan(format!(
                "column '{}' is given twice in the INSERT",
                schema.field(i).name()
            ))
            .or_at(location_of(c)));
        }
        columns.push(i);
    }
    if insert.columns.is_empty() {
        columns = (0..schema.fields().len()).collect();
    }
    if let Some(left_out) =
        (0..schema.fields().len()).find(|i| !columns.contains(i) && !schema.field(*i).is_nullable())
    {
        return Err(SqlError::plan(format!(
            "INSERT gives no value for column '{}', which is NOT NULL",
            schema.field(left_out).name()
        ))
        .or_at(insert.columns.first().and_then(location_of)));
    }
    let empty = Arc::new(Schema::empty());
    let empty_df = df_schema(&empty)?;
    let converter = ExprConverter::new(empty_df, &stream).with_catalog(catalog);
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
            let e = converter.convert_in(value, Place::Values)?;
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
