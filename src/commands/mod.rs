//! One module per CLI verb: each turns parsed arguments into calls on the library and prints.

pub mod bench;
pub mod compare;
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
