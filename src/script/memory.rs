//! The memory guard of scripts: the global allocator counts the bytes held in large blocks,
//! and the engine stops a runbook whose data grows past a limit. A runaway script's arrays and
//! strings each grow as one block (`loop { text += text; }`), so large blocks are what such a
//! loop shows; small ones are not counted, which would cost every allocation a shared atomic
//! add. Rhai's own size limits were dropped because they walk every value a function returns.
#![expect(
    unsafe_code,
    reason = "a GlobalAlloc wrapper is unsafe by definition; it only forwards to the inner allocator"
)]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Blocks from this size up are counted.
const LARGE: usize = 64 * 1024;

/// Past this much in large blocks, a running script is stopped: far above what runbooks hold
/// (a 100,000-pod list is about 100 MB), far below what would exhaust the machine.
pub const MAX_DATA_BYTES: usize = 512 << 20;

static LARGE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Bytes the process holds in large blocks now (0 unless [`CountingAllocator`] is the global
/// allocator, as it is in the `runbook` binary).
pub fn large_bytes() -> usize {
    LARGE_BYTES.load(Ordering::Relaxed)
}

/// Whether the data of the running script has outgrown [`MAX_DATA_BYTES`].
pub(crate) fn over_limit() -> bool {
    large_bytes() > MAX_DATA_BYTES
}

/// Wraps an allocator, counting the bytes of large blocks.
pub struct CountingAllocator<A>(pub A);

fn count(size: usize, add: bool) {
    if size >= LARGE {
        if add {
            LARGE_BYTES.fetch_add(size, Ordering::Relaxed);
        } else {
            LARGE_BYTES.fetch_sub(size, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call is forwarded unchanged to `A`, which upholds GlobalAlloc's contract; the
// counting touches only an atomic.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let block = unsafe { self.0.alloc(layout) };
        if !block.is_null() {
            count(layout.size(), true);
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let block = unsafe { self.0.alloc_zeroed(layout) };
        if !block.is_null() {
            count(layout.size(), true);
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        count(layout.size(), false);
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { self.0.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let moved = unsafe { self.0.realloc(block, layout, new_size) };
        if !moved.is_null() {
            count(layout.size(), false);
            count(new_size, true);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_counted_while_held_and_small_ones_not_at_all() {
        let allocator = CountingAllocator(std::alloc::System);
        let before = large_bytes();
        let small = Layout::from_size_align(64, 8).unwrap();
        let large = Layout::from_size_align(LARGE * 2, 8).unwrap();
        // SAFETY: layouts are non-zero; each block is freed with the layout it was made with.
        unsafe {
            let s = allocator.alloc(small);
            assert_eq!(large_bytes(), before);
            let l = allocator.alloc_zeroed(large);
            assert_eq!(large_bytes(), before + LARGE * 2);
            let grown = allocator.realloc(l, large, LARGE * 4);
            assert_eq!(large_bytes(), before + LARGE * 4);
            allocator.dealloc(grown, Layout::from_size_align(LARGE * 4, 8).unwrap());
            allocator.dealloc(s, small);
        }
        assert_eq!(large_bytes(), before);
    }
}
