//! `linkperf store info|compact|migrate`: the store's housekeeping commands.

use crate::cli::StoreCommand;
use crate::exit::ExitStatus;
use crate::store::{migrate, Store};
use anyhow::Result;
use std::path::Path;
use std::time::Instant;

pub fn run(store_dir: &Path, cmd: &StoreCommand) -> Result<ExitStatus> {
    match cmd {
        StoreCommand::Info { format } => {
            let info = Store::open(store_dir, false)?.info()?;
            if *format == crate::cli::TextOrJson::Json {
                outln!("{}", serde_json::to_string_pretty(&info)?)?;
            } else {
                out!("{}", info.to_text(store_dir))?;
            }
        }
        StoreCommand::Compact => {
            let store = Store::open(store_dir, false)?;
            let start = Instant::now();
            let o = store.compact()?;
            let info = store.info()?;
            outln!(
                "compacted {} batch(es) of {} month(s) into {} chunk(s) in {:.2} s; the store now \
                 has {} run(s), {} row(s) in {} file(s), {} bytes",
                o.batches_merged,
                o.months,
                o.chunks_written,
                start.elapsed().as_secs_f64(),
                info.runs,
                info.rows,
                info.files,
                info.bytes
            )?;
        }
        StoreCommand::Migrate => {
            let o = migrate::migrate(store_dir)?;
            if o.from_version == u64::from(crate::store::frames::SCHEMA_VERSION) {
                outln!(
                    "{}: already at schema version {}",
                    store_dir.display(),
                    o.from_version
                )?;
            } else {
                outln!(
                    "{}: migrated schema version {} to {}: {} run(s) in {} batch(es)",
                    store_dir.display(),
                    o.from_version,
                    crate::store::frames::SCHEMA_VERSION,
                    o.runs,
                    o.batches
                )?;
            }
        }
    }
    Ok(ExitStatus::Success)
}
