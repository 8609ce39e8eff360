//! `phonelogs devices`: every phone the adb servers and usbmuxd reach, named as the MCP server
//! names them, and the sources that did not answer.

use phonelogs_phones::Phones;

/// Prints every phone (as JSON with `json`); a source that did not answer is said on standard
/// error.
pub async fn run(json: bool, phones: &Phones) -> crate::Result<()> {
    let list = phones.list().await?;
    let problems: Vec<String> = list
        .failures
        .iter()
        .map(|failure| {
            let platform = match failure.platform {
                phonelogs_driver::Platform::Android => "Android",
                phonelogs_driver::Platform::Ios => "iPhone",
            };
            match &failure.source {
                Some(source) => format!("{platform} ({source}): {}", failure.error),
                None => format!("{platform}: {}", failure.error),
            }
        })
        .collect();
    if json {
        let devices: Vec<serde_json::Value> = list
            .devices
            .iter()
            .map(|device| {
                let mut value = serde_json::to_value(&device.info).unwrap_or_default();
                if let Some(object) = value.as_object_mut() {
                    object.insert("source".into(), serde_json::json!(device.source));
                    object.insert("serial".into(), serde_json::json!(device.serial));
                }
                value
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "devices": devices, "problems": problems })
            )?
        );
        return Ok(());
    }
    if list.devices.is_empty() {
        println!("No devices.");
    }
    for device in &list.devices {
        println!(
            "{}  {}  {}  {:?}  via {}",
            device.info.id,
            device.info.platform,
            device.info.model.as_deref().unwrap_or("?"),
            device.info.state,
            device.source.as_deref().unwrap_or("?")
        );
    }
    for problem in &problems {
        eprintln!("phonelogs: {problem}");
    }
    Ok(())
}
