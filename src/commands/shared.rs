//! Helpers more than one command uses: label arguments, atomic output files, and the message of
//! commands left out of this build.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Parses `KEY=VALUE` label arguments.
pub fn parse_labels(args: &[String]) -> Result<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    for a in args {
        match a.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                labels.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => bail!("--label {a:?}: expected KEY=VALUE"),
        }
    }
    Ok(labels)
}

/// Writes a file through a temporary sibling and a rename, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("out")
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The error of commands that need the `verbs` build feature when it is off.
pub fn not_built(command: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "`linkperf {command}` needs the native verbs runner, and this linkperf was built without it: \
         rebuild with `cargo build --release --features verbs` \
         (needs libibverbs-dev, librdmacm-dev, libclang-dev and pkg-config)"
    )
}
