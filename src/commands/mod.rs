//! One module per CLI verb: each turns parsed arguments into calls on the library and prints.

pub mod bench;
pub mod compare;
pub mod completions;
pub mod devices;
pub mod export;
pub mod gate;
pub mod history;
pub mod import;
pub mod ls;
pub mod report;
pub mod run;
pub mod selection;
pub mod store;

/// Leaves `value` to the end of the process instead of freeing it. Called by a verb whose work is
/// done: the process exits next, and handing a large selection back to the allocator piece by
/// piece (100,000 runs, millions of provenance strings) takes longer than the query did.
pub(crate) fn free_at_exit<T>(value: T) {
    std::mem::forget(value);
}
