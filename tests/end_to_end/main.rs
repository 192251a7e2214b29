//! sliq end to end, through the public API of the `sliq` facade.
//!
//! One test binary holds every module: each binary links arrow and
//! DataFusion, so a binary per file would cost a link and about 180 MB of
//! disk each in a debug build.

mod common;

mod duckdb_crosscheck;
mod engine_sql;
mod key_ttl;
mod oracle_queries;
mod paned_sketches;
mod sql_fuzz;
mod subqueries;
