//! The aggregate functions, grouped by what they compute.
//!
//! NULL handling follows SQL: inputs that are NULL are skipped (their lift
//! is the identity), and a function over a window with no non-NULL input
//! returns NULL — except `count` (0), `maxcount`/`mincount` (0) and
//! `first_value`/`last_value`, which respect NULLs unless called with
//! `IGNORE NULLS`.

mod fold;
mod numeric;
mod order;
mod shape;
mod stats;

pub use fold::{Bitwise, Product};
pub use numeric::{Avg, Count, Counted, PackedI128, Sum, Summable, Wide};
pub use order::{
    ArgExtreme, Extreme, ExtremeCount, FirstLast, FloatExtreme, Lag, M4, M4Output, M4State,
    RankedF64,
};
pub use shape::{HigherMoments, Shape, ShapeKind};
pub use stats::{
    Bivariate, BivariateKind, CoMoments, Geomean, Moments, RelVar, Variance, VarianceKind,
};

/// Combines two optional aggregates: `both` when each holds a value,
/// otherwise whichever does (the empty one is the identity).
#[inline]
fn merge<T: Clone>(a: &Option<T>, b: &Option<T>, both: impl FnOnce(&T, &T) -> T) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(both(x, y)),
        (Some(_), None) => a.clone(),
        (None, _) => b.clone(),
    }
}
