//! CoreDevice's app service (`com.apple.coredevice.appservice`, through RSD): the process list,
//! in the form the service advertises.
//!
//! The RSD handshake lists each service's `Features`. From iOS 26 the app service advertises the
//! streamed `streamprocesslist` and `streamapplist` beside the plain `listprocesses` and
//! `listapps`, and the plain forms never answer there (the stuck call wedges `dtappserviced`:
//! pymobiledevice3 `remote/core_device/app_service.py` `list_apps`, which takes the streamed
//! form whenever it is advertised, as Xcode 26 does). So the form is chosen from the
//! `Features` ([`ListForm::choose`]): the streamed one when advertised, the plain one otherwise,
//! and never the plain one on iOS 26 or later. This driver lists no apps through CoreDevice at
//! all (an app is looked up through installation_proxy), so only the process list has two forms
//! here.
//!
//! Written over idevice's public `RemoteXpcClient` rather than its `AppServiceClient`: idevice
//! 0.1.68 has no `streamprocesslist`, and its streaming call (`invoke_streaming_with_plist`,
//! used by its `stream_apps`) is private to it. The request and the pushed answers are
//! pymobiledevice3's `core_device_service.py` `stream_invoke` (verified there against iOS 26's
//! CoreDeviceUtilities): the input wraps `actualInput` and a `streamProxy` holding a
//! `sideChannel` UUID; the phone pushes messages keyed `CoreDevice.XPCMessageKey.
//! sideChannelStatus` holding `pushing` (`elements`), then `finishStreaming`, or
//! `receivedError`. Sources: `testdata/iossim/README.md`.

use idevice::xpc::{Dictionary, XPCObject};
use idevice::{IdeviceError, ReadWrite, RemoteXpcClient};

use crate::services::ProcessEntry;
use crate::sources::IosVersion;

/// The prefix of every CoreDevice feature's name.
const FEATURE: &str = "com.apple.coredevice.feature.";
/// The plain process list.
pub(crate) const LIST_PROCESSES: &str = "com.apple.coredevice.feature.listprocesses";
/// The streamed process list (iOS 26).
pub(crate) const STREAM_PROCESS_LIST: &str = "com.apple.coredevice.feature.streamprocesslist";
/// The CoreDevice version our requests name (idevice's `CORE_SERVICE_VERSION`).
const CORE_DEVICE_VERSION: [u64; 2] = [629, 3];
/// The key of a streamed answer's status.
const STREAM_STATUS: &str = "CoreDevice.XPCMessageKey.sideChannelStatus";
/// The most elements one streamed list may hold (a phone runs a few hundred processes): a
/// device that pushes without end is cut off, not followed.
const MAX_ELEMENTS: usize = 100_000;

/// How the process list is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListForm {
    /// `listprocesses`: one request, one reply.
    Plain,
    /// `streamprocesslist`: one request, pushed batches, then `finishStreaming`.
    Streamed,
}

impl ListForm {
    /// The form to use, from the app service's advertised `Features` (`None`: it advertised
    /// none) and the phone's version: the streamed one when advertised; else the plain one,
    /// unless the phone runs iOS 26 or later, where the plain one never answers (then the
    /// error says so).
    ///
    /// ```
    /// use phonelogs_ios::coredevice::ListForm;
    /// use phonelogs_ios::sources::IosVersion;
    /// let v26 = IosVersion::parse("26.1");
    /// let both = ["com.apple.coredevice.feature.listprocesses".to_owned(),
    ///             "com.apple.coredevice.feature.streamprocesslist".to_owned()];
    /// assert_eq!(ListForm::choose(Some(&both), v26), Ok(ListForm::Streamed));
    /// assert_eq!(ListForm::choose(Some(&both[..1]), IosVersion::parse("18.6")), Ok(ListForm::Plain));
    /// assert_eq!(ListForm::choose(None, IosVersion::parse("17.4")), Ok(ListForm::Plain));
    /// assert!(ListForm::choose(Some(&both[..1]), v26).is_err());
    /// ```
    pub fn choose(
        features: Option<&[String]>,
        version: Option<IosVersion>,
    ) -> Result<ListForm, String> {
        let has = |name: &str| features.is_some_and(|f| f.iter().any(|x| x == name));
        if has(STREAM_PROCESS_LIST) {
            return Ok(ListForm::Streamed);
        }
        if version.is_some_and(|v| v.major >= 26) {
            return Err(format!(
                "CoreDevice's app service does not advertise {STREAM_PROCESS_LIST}, and on iOS 26 \
                 and later the plain listprocesses never answers"
            ));
        }
        match features {
            Some(list) if !list.is_empty() && !has(LIST_PROCESSES) => Err(format!(
                "CoreDevice's app service advertises neither {LIST_PROCESSES} nor \
                 {STREAM_PROCESS_LIST}"
            )),
            // A service that advertises no features is not taken to lack one
            // (pymobiledevice3 `require_feature` does the same).
            _ => Ok(ListForm::Plain),
        }
    }
}

/// One connection to the app service.
#[derive(Debug)]
pub(crate) struct AppService {
    xpc: RemoteXpcClient<Box<dyn ReadWrite>>,
    form: ListForm,
}

impl AppService {
    /// The RemoteXPC handshake on a new connection to the service.
    pub(crate) async fn new(
        stream: Box<dyn ReadWrite>,
        form: ListForm,
    ) -> Result<Self, IdeviceError> {
        let mut xpc = RemoteXpcClient::new(stream).await?;
        xpc.do_handshake().await?;
        Ok(AppService { xpc, form })
    }

    /// The running processes, by the form this connection was opened for.
    ///
    /// idevice's `RemoteXpcClient` numbers every request the same, so an answer that comes
    /// after its caller gave up would be read as the next request's: a connection whose call
    /// did not finish must not be used again (the caller drops it).
    pub(crate) async fn processes(&mut self) -> Result<Vec<ProcessEntry>, IdeviceError> {
        let tokens = match self.form {
            ListForm::Plain => {
                let output = self.invoke(LIST_PROCESSES, Dictionary::new()).await?;
                match output.as_dictionary().and_then(|d| d.get("processTokens")) {
                    Some(plist::Value::Array(tokens)) => tokens.clone(),
                    _ => {
                        return Err(IdeviceError::UnexpectedResponse(
                            "listprocesses answered without processTokens".into(),
                        ));
                    }
                }
            }
            ListForm::Streamed => self.streamed(STREAM_PROCESS_LIST).await?,
        };
        Ok(tokens.iter().filter_map(process_entry).collect())
    }

    async fn invoke(
        &mut self,
        feature: &str,
        input: Dictionary,
    ) -> Result<plist::Value, IdeviceError> {
        let request = request(feature, XPCObject::Dictionary(input), 0);
        self.xpc.send_object(request, true).await?;
        let answer = self.xpc.recv().await?;
        let mut answer = match answer {
            plist::Value::Dictionary(d) => d,
            _ => return Err(unexpected(feature, "an answer that is not a dictionary")),
        };
        match answer.remove("CoreDevice.output") {
            Some(output) => Ok(output),
            None => Err(device_said(feature, answer.get("CoreDevice.error"))),
        }
    }

    async fn streamed(&mut self, feature: &str) -> Result<Vec<plist::Value>, IdeviceError> {
        let mut proxy = Dictionary::new();
        proxy.insert("sideChannel".into(), XPCObject::Uuid(uuid::Uuid::new_v4()));
        let mut input = Dictionary::new();
        input.insert("actualInput".into(), Dictionary::new().into());
        input.insert("streamProxy".into(), proxy.into());
        let request = request(feature, input.into(), 2);
        self.xpc.send_object(request, true).await?;
        let mut elements = Vec::new();
        loop {
            let answer = self.xpc.recv_root().await?;
            let Some(answer) = answer.as_dictionary() else {
                return Err(unexpected(feature, "a push that is not a dictionary"));
            };
            let Some(status) = answer.get(STREAM_STATUS).and_then(|s| s.as_dictionary()) else {
                return Err(device_said(feature, answer.get("CoreDevice.error")));
            };
            if let Some(error) = status.get("receivedError") {
                return Err(device_said(feature, Some(error)));
            }
            if status.contains_key("finishStreaming") {
                return Ok(elements);
            }
            let pushed = status
                .get("pushing")
                .and_then(|p| p.as_dictionary())
                .and_then(|p| p.get("elements"))
                .and_then(|e| e.as_array())
                .ok_or_else(|| unexpected(feature, "a push without elements"))?;
            if elements.len() + pushed.len() > MAX_ELEMENTS {
                return Err(unexpected(feature, "more than 100,000 elements"));
            }
            elements.extend(pushed.iter().cloned());
        }
    }
}

/// A CoreDevice request (idevice `core_device/mod.rs` `invoke_inner`, pymobiledevice3
/// `CoreDeviceService.invoke`; protocol version 2 for the streamed form, as both send it).
fn request(feature: &str, input: XPCObject, protocol: i64) -> XPCObject {
    let mut version = Dictionary::new();
    version.insert(
        "originalComponentsCount".into(),
        XPCObject::Int64(CORE_DEVICE_VERSION.len() as i64),
    );
    version.insert(
        "components".into(),
        XPCObject::Array(
            CORE_DEVICE_VERSION
                .iter()
                .map(|c| XPCObject::UInt64(*c))
                .collect(),
        ),
    );
    version.insert(
        "stringValue".into(),
        XPCObject::String(format!(
            "{}.{}",
            CORE_DEVICE_VERSION[0], CORE_DEVICE_VERSION[1]
        )),
    );
    let mut request = Dictionary::new();
    request.insert(
        "CoreDevice.CoreDeviceDDIProtocolVersion".into(),
        XPCObject::Int64(protocol),
    );
    request.insert("CoreDevice.action".into(), Dictionary::new().into());
    request.insert("CoreDevice.coreDeviceVersion".into(), version.into());
    request.insert(
        "CoreDevice.deviceIdentifier".into(),
        XPCObject::String(uuid::Uuid::new_v4().to_string()),
    );
    request.insert(
        "CoreDevice.featureIdentifier".into(),
        XPCObject::String(feature.to_owned()),
    );
    request.insert("CoreDevice.input".into(), input);
    request.insert(
        "CoreDevice.invocationIdentifier".into(),
        XPCObject::String(uuid::Uuid::new_v4().to_string()),
    );
    request.into()
}

/// A `processToken`: its pid and its executable's `file://` URL (`executableURL.relative`);
/// one without either is skipped.
fn process_entry(token: &plist::Value) -> Option<ProcessEntry> {
    let token = token.as_dictionary()?;
    let pid = token.get("processIdentifier").and_then(|p| {
        p.as_unsigned_integer()
            .or_else(|| p.as_signed_integer().and_then(|n| u64::try_from(n).ok()))
    })?;
    let url = token
        .get("executableURL")
        .and_then(|u| u.as_dictionary())
        .and_then(|u| u.get("relative"))
        .and_then(|r| r.as_string())?;
    Some(ProcessEntry::at(u32::try_from(pid).ok()?, url))
}

fn unexpected(feature: &str, what: &str) -> IdeviceError {
    let short = feature.strip_prefix(FEATURE).unwrap_or(feature);
    IdeviceError::UnexpectedResponse(format!("CoreDevice's {short}: {what}"))
}

fn device_said(feature: &str, error: Option<&plist::Value>) -> IdeviceError {
    let short = feature.strip_prefix(FEATURE).unwrap_or(feature);
    match error {
        Some(error) => IdeviceError::UnexpectedResponse(format!(
            "the iPhone refused CoreDevice's {short}: {error:?}"
        )),
        None => unexpected(feature, "an answer without output"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_streamed_form_is_taken_when_advertised_and_the_plain_never_on_26() {
        let v = |s| IosVersion::parse(s);
        let plain = strings(&[LIST_PROCESSES]);
        let both = strings(&[LIST_PROCESSES, STREAM_PROCESS_LIST]);
        let other = strings(&["com.apple.coredevice.feature.launchapplication"]);
        assert_eq!(
            ListForm::choose(Some(&both), v("18.6")),
            Ok(ListForm::Streamed)
        );
        assert_eq!(
            ListForm::choose(Some(&both), v("26.1")),
            Ok(ListForm::Streamed)
        );
        assert_eq!(
            ListForm::choose(Some(&plain), v("18.6")),
            Ok(ListForm::Plain)
        );
        assert_eq!(ListForm::choose(Some(&[]), None), Ok(ListForm::Plain));
        assert!(ListForm::choose(Some(&plain), v("26.1")).is_err());
        assert!(ListForm::choose(None, v("27.0")).is_err());
        assert!(ListForm::choose(Some(&other), v("18.6")).is_err());
    }

    #[test]
    fn tokens_without_a_pid_or_url_are_skipped() {
        let token = |pid: plist::Value, url: Option<&str>| {
            let mut d = plist::Dictionary::new();
            d.insert("processIdentifier".into(), pid);
            if let Some(url) = url {
                let mut u = plist::Dictionary::new();
                u.insert("relative".into(), url.into());
                d.insert("executableURL".into(), u.into());
            }
            plist::Value::Dictionary(d)
        };
        assert_eq!(
            process_entry(&token(12.into(), Some("file:///a/B.app/B"))),
            Some(ProcessEntry::at(12, "file:///a/B.app/B"))
        );
        assert_eq!(process_entry(&token(12.into(), None)), None);
        assert_eq!(process_entry(&token((-1).into(), Some("file:///x"))), None);
        assert_eq!(process_entry(&plist::Value::from("x")), None);
    }
}
