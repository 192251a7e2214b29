//! Panics sliq catches and reports as errors.
//!
//! A panic in an expression kernel (a bug, or a kernel's refusal of a size,
//! such as a `repeat` past arrow's 2 GiB of text) costs its batch's values
//! or its query, never the engine; a function's trial run at plan time (see
//! the binder's check of constant arguments) that panics gives no verdict.
//! Each is caught here and reported with its message. The process's panic
//! hook still runs first, before anything can catch the panic; a hook that
//! asks [`panic_is_caught`] can stay quiet about these, since sliq reports
//! them itself. (The engine re-exports these; they live here because the
//! planner is the first to catch.)

use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    /// How many [`catching`] calls the current thread is inside.
    static CATCHING: Cell<usize> = const { Cell::new(0) };
}

/// Whether a panic raised now, on the current thread, will be caught by
/// sliq and reported as an error (in a query's statistics, or as the error
/// that stops one query) or ignored (a trial run at plan time). For panic
/// hooks: the CLI's prints nothing for such panics.
pub fn panic_is_caught() -> bool {
    CATCHING.with(|depth| depth.get() > 0)
}

/// Runs `f`; a panic in it becomes `Err` with the panic's message.
pub fn catching<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    /// Leaves the region on every way out, the unwinding one included.
    struct Region;
    impl Drop for Region {
        fn drop(&mut self) {
            CATCHING.with(|depth| depth.set(depth.get() - 1));
        }
    }
    CATCHING.with(|depth| depth.set(depth.get() + 1));
    let region = Region;
    let result = catch_unwind(AssertUnwindSafe(f));
    drop(region);
    result.map_err(|panic| panic_message(panic.as_ref()))
}

/// The message of a panic's payload: its text, or "no message".
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_is_known_to_the_hook_and_returned_as_its_message() {
        let previous = std::panic::take_hook();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let this_test = std::thread::current().id();
        // Other tests may panic on their threads meanwhile: only this
        // thread's panics are recorded.
        std::panic::set_hook(Box::new(move |_| {
            if std::thread::current().id() == this_test
                && let Ok(mut seen) = record.lock()
            {
                seen.push(panic_is_caught());
            }
        }));
        let outer: Result<Result<(), String>, String> = catching(|| catching(|| panic!("inner")));
        let after_inner = panic_is_caught();
        let plain = catch_unwind(|| panic!("{}", String::from("outside")));
        std::panic::set_hook(previous);

        assert_eq!(outer, Ok(Err("inner".to_string())));
        assert!(!after_inner, "the region ends with the call");
        assert_eq!(
            panic_message(plain.unwrap_err().as_ref()),
            "outside".to_string()
        );
        assert_eq!(*seen.lock().unwrap(), vec![true, false]);
        assert_eq!(catching(|| 7), Ok(7));
        assert_eq!(panic_message(&5_u8), "no message");
    }
}
