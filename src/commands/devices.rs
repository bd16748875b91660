//! `linkperf devices`: RDMA devices and ports as `ibv_devinfo -v` shows them.

use crate::cli::DevicesArgs;
use crate::exit::ExitStatus;
use anyhow::Result;

#[cfg(feature = "verbs")]
pub fn run(args: &DevicesArgs) -> Result<ExitStatus> {
    use crate::cli::DevicesFormat;
    let devices = crate::verbs::query::list_devices(args.device.as_deref())?;
    match args.format {
        DevicesFormat::Json => outln!("{}", serde_json::to_string_pretty(&devices)?)?,
        DevicesFormat::Text => {
            for d in &devices {
                out!("{}", d.render())?;
            }
        }
    }
    Ok(ExitStatus::Success)
}

#[cfg(not(feature = "verbs"))]
pub fn run(_args: &DevicesArgs) -> Result<ExitStatus> {
    Err(super::shared::not_built("devices"))
}
