//! Memory targets for the engine's normal case: many keys, tiny windows.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use sliq_swag::monoids::Sum;
use sliq_swag::{DabaLite, FifoAggregator};

struct CountingAlloc;

static HEAP: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator and only adds bookkeeping.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HEAP.fetch_add(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn heap_now() -> isize {
    HEAP.load(Ordering::SeqCst)
}

// Single test in this binary: other tests would allocate concurrently.
#[test]
fn window_footprints() {
    let inline = std::mem::size_of::<DabaLite<Sum<u64>>>();
    assert!(inline <= 128, "empty DabaLite<Sum<u64>> is {inline} bytes");

    let before = heap_now();
    let mut w = DabaLite::new(Sum::<u64>::default());
    assert_eq!(heap_now() - before, 0, "an empty window allocates nothing");
    w.insert(42);
    let heap = heap_now() - before;
    assert_eq!(w.heap_bytes() as isize, heap);
    let one = inline as isize + heap;
    assert!(one <= 256, "a one-element window costs {one} bytes");
    // Printing allocates, so only after measuring.
    println!("DabaLite<Sum<u64>>: {inline} bytes empty, {one} bytes with one element");

    // Steady sliding allocates nothing once the window has settled.
    let mut big = DabaLite::new(Sum::<u64>::default());
    for i in 0..10_000u64 {
        big.insert(i);
    }
    for i in 0..20_000u64 {
        big.evict();
        big.insert(i);
    }
    let settled = heap_now();
    for i in 0..200_000u64 {
        big.evict();
        big.insert(i);
        assert_eq!(big.query(), big.query());
    }
    assert_eq!(heap_now(), settled, "steady sliding allocated");
}
