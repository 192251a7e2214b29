//! Errors of aggregate resolution and evaluation.

/// What can go wrong when resolving or evaluating an aggregate function.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AggregateError {
    /// No aggregate function has this name.
    #[error("unknown aggregate function '{name}'{}", suggestion_text(.suggestion))]
    UnknownFunction {
        /// The name as written.
        name: String,
        /// The closest known name, if any is close.
        suggestion: Option<String>,
    },
    /// The function exists but not for these arguments.
    #[error("{name}({args}) does not match any signature of {name}: expected {expected}")]
    Signature {
        /// The function's name.
        name: String,
        /// The argument types given, comma-separated.
        args: String,
        /// The accepted signatures.
        expected: String,
    },
    /// A constant argument is out of its range.
    #[error("{name}: {message}")]
    InvalidArgument {
        /// The function's name.
        name: String,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// An exact result does not fit its type.
    #[error("{name} overflowed {what}")]
    Overflow {
        /// The function's name.
        name: &'static str,
        /// The type, and the exact value when it can be shown.
        what: String,
    },
}

fn suggestion_text(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean '{s}'?"),
        None => String::new(),
    }
}
