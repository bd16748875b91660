//! From stored runs to comparable points: resolve each run's platform ([`platform`]), select the
//! measurement points and the metric to compare ([`points`]), and aggregate repeated runs of the
//! same point with polars ([`aggregate`]).

pub mod aggregate;
pub mod platform;
pub mod points;
