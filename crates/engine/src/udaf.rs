//! User-defined aggregates registered by the embedding program.

use sliq_aggregates::{Aggregate, AggregateVisitor, OutputType, ValueType};
use sliq_sql::UserAggregate;

use crate::operator::{AggregateOperator, BuildOperator, Delay, WindowAlgorithm};

type Factory = dyn Fn(WindowAlgorithm, bool, Delay) -> Box<dyn AggregateOperator> + Send + Sync;

/// An aggregate registered with [`Engine::register_aggregate`](crate::Engine::register_aggregate):
/// its signature for the planner and a factory for its window operator.
pub struct RegisteredAggregate {
    name: String,
    inputs: Vec<ValueType>,
    output: OutputType,
    factory: Box<Factory>,
}

impl RegisteredAggregate {
    /// Wraps `aggregate`, which takes `inputs` and returns `output`.
    pub fn new<A: Aggregate>(
        name: &str,
        inputs: Vec<ValueType>,
        output: OutputType,
        aggregate: A,
    ) -> Self {
        let out = output.clone();
        RegisteredAggregate {
            name: name.to_ascii_lowercase(),
            inputs,
            output,
            factory: Box::new(move |algorithm, unbounded, delay| {
                BuildOperator {
                    algorithm,
                    output: out.clone(),
                    unbounded,
                    delay,
                    frame_rows: None,
                }
                .visit(aggregate.clone())
            }),
        }
    }

    /// A fresh operator running the windows with `algorithm`, or (for an
    /// `UNBOUNDED PRECEDING` frame) a running fold per key, behind `delay`
    /// when the frame ends before the current row.
    pub fn build(
        &self,
        algorithm: WindowAlgorithm,
        unbounded: bool,
        delay: Delay,
    ) -> Box<dyn AggregateOperator> {
        (self.factory)(algorithm, unbounded, delay)
    }
}

impl UserAggregate for RegisteredAggregate {
    fn name(&self) -> &str {
        &self.name
    }
    fn inputs(&self) -> &[ValueType] {
        &self.inputs
    }
    fn output_type(&self) -> &OutputType {
        &self.output
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
