//! `com.apple.mobile.installation_proxy`: `Browse` (answers in chunks: `Status`
//! `BrowsingApplications` with `CurrentList`, then `Status` `Complete`) and `Lookup` (one
//! answer with `LookupResult`), honouring `ApplicationType`, `BundleIDs` and
//! `ReturnAttributes` (all attributes when it is absent, `Entitlements` included).

use plist::{Dictionary, Value};

use super::{BoxStream, MAX_REQUESTS, dict, read_plist, write_plist};
use crate::model::{App, SimPhone};

/// Apps per `Browse` chunk.
const CHUNK: usize = 3;

fn selected(phone: &SimPhone, options: &Dictionary) -> Vec<Dictionary> {
    let kind = options
        .get("ApplicationType")
        .and_then(Value::as_string)
        .unwrap_or("Any");
    let ids: Option<Vec<&str>> = options
        .get("BundleIDs")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_string).collect());
    let attributes: Option<Vec<&str>> = options
        .get("ReturnAttributes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_string).collect());
    let matches = |app: &App| {
        (kind == "Any" || app.application_type() == kind)
            && ids
                .as_ref()
                .is_none_or(|ids| ids.contains(&app.bundle_id.as_str()))
    };
    phone
        .apps()
        .iter()
        .filter(|a| matches(a))
        .map(|app| {
            let all = app.attributes();
            match &attributes {
                None => all,
                Some(keys) => all
                    .into_iter()
                    .filter(|(k, _)| keys.contains(&k.as_str()))
                    .collect(),
            }
        })
        .collect()
}

pub(crate) async fn serve(phone: &SimPhone, mut stream: BoxStream) -> std::io::Result<()> {
    for _ in 0..MAX_REQUESTS {
        let Some(request) = read_plist(&mut stream).await? else {
            return Ok(());
        };
        let empty = Dictionary::new();
        let options = request
            .get("ClientOptions")
            .and_then(Value::as_dictionary)
            .unwrap_or(&empty);
        match request.get("Command").and_then(Value::as_string) {
            Some("Lookup") => {
                let mut result = Dictionary::new();
                for app in selected(phone, options) {
                    if let Some(id) = app.get("CFBundleIdentifier").and_then(Value::as_string) {
                        result.insert(id.to_owned(), Value::Dictionary(app.clone()));
                    }
                }
                let reply = dict([
                    ("LookupResult", Value::Dictionary(result)),
                    ("Status", Value::from("Complete")),
                ]);
                write_plist(&mut stream, &reply).await?;
            }
            Some("Browse") => {
                let apps = selected(phone, options);
                let total = apps.len();
                for (i, chunk) in apps.chunks(CHUNK).enumerate() {
                    let reply = dict([
                        ("CurrentAmount", Value::from(chunk.len() as u64)),
                        ("CurrentIndex", Value::from((i * CHUNK) as u64)),
                        (
                            "CurrentList",
                            Value::Array(chunk.iter().cloned().map(Value::Dictionary).collect()),
                        ),
                        ("Status", Value::from("BrowsingApplications")),
                        ("Total", Value::from(total as u64)),
                    ]);
                    write_plist(&mut stream, &reply).await?;
                }
                write_plist(&mut stream, &dict([("Status", Value::from("Complete"))])).await?;
            }
            other => {
                let reply = dict([
                    ("Error", Value::from("UnknownCommand")),
                    (
                        "ErrorDescription",
                        Value::from(format!("Unknown command {other:?}")),
                    ),
                ]);
                write_plist(&mut stream, &reply).await?;
            }
        }
    }
    Ok(())
}
