//! A small, bounded reader for what the simulated package manager needs from an APK: the
//! package name, `android:debuggable`, the versions, the target SDK and the launcher activity
//! from the binary `AndroidManifest.xml`, and the app's string resources from `resources.arsc`.
//!
//! An APK is a zip file; both entries are in Android's binary resource format (`ResChunk_header`
//! chunks, a `ResStringPool`, `ResXMLTree` nodes, `ResTable_package` / `ResTable_type` chunks, as
//! AOSP's `frameworks/base/libs/androidfw/include/androidfw/ResourceTypes.h` defines them). The
//! reader checks every offset against the data it has, caps sizes, and never panics: anything it
//! cannot read is an [`Error::Apk`] with the `INSTALL_…` code the real package manager would give.

use std::collections::BTreeMap;

use crate::Error;

/// The most an entry the reader inflates may grow to; real manifests and tables are kilobytes.
const MAX_ENTRY_BYTES: usize = 16 * 1024 * 1024;
/// The most strings one pool may declare.
const MAX_STRINGS: usize = 1 << 20;

/// `android:debuggable`, `android:name` and friends, as their framework resource ids.
const ATTR_NAME: u32 = 0x0101_0003;
const ATTR_DEBUGGABLE: u32 = 0x0101_000f;
const ATTR_VERSION_CODE: u32 = 0x0101_021b;
const ATTR_VERSION_NAME: u32 = 0x0101_021c;
const ATTR_TARGET_SDK: u32 = 0x0101_0270;

/// Chunk types (`ResourceTypes.h`).
const RES_STRING_POOL_TYPE: u16 = 0x0001;
const RES_TABLE_TYPE: u16 = 0x0002;
const RES_XML_TYPE: u16 = 0x0003;
const RES_XML_START_ELEMENT_TYPE: u16 = 0x0102;
const RES_XML_END_ELEMENT_TYPE: u16 = 0x0103;
const RES_XML_RESOURCE_MAP_TYPE: u16 = 0x0180;
const RES_TABLE_PACKAGE_TYPE: u16 = 0x0200;
const RES_TABLE_TYPE_TYPE: u16 = 0x0201;

/// `Res_value` data types.
const TYPE_STRING: u8 = 0x03;
const TYPE_INT_DEC: u8 = 0x10;
const TYPE_INT_HEX: u8 = 0x11;
const TYPE_INT_BOOLEAN: u8 = 0x12;

/// What the package manager read from an APK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApkInfo {
    /// The manifest's `package`.
    pub package: String,
    /// `android:debuggable="true"` on `<application>`.
    pub debuggable: bool,
    /// `android:versionCode` (1 when absent).
    pub version_code: u64,
    /// `android:versionName` when it is a literal string.
    pub version_name: Option<String>,
    /// `android:targetSdkVersion` when it is a literal number.
    pub target_sdk: Option<u32>,
    /// The `android:name` of the activity with a MAIN/LAUNCHER intent filter, as written.
    pub launcher_activity: Option<String>,
    /// The app's `string` resources in their first (default) configuration, by name.
    pub strings: BTreeMap<String, String>,
}

fn not_apk(reason: impl Into<String>) -> Error {
    Error::Apk {
        code: "INSTALL_PARSE_FAILED_NOT_APK",
        reason: reason.into(),
    }
}

fn malformed(reason: impl Into<String>) -> Error {
    Error::Apk {
        code: "INSTALL_PARSE_FAILED_MANIFEST_MALFORMED",
        reason: reason.into(),
    }
}

/// Reads an APK's manifest and string resources.
///
/// ```
/// let error = phonelogs_adbsim::parse_apk(b"not a zip").unwrap_err();
/// assert!(error.to_string().contains("INSTALL_PARSE_FAILED_NOT_APK"));
/// ```
pub fn parse_apk(bytes: &[u8]) -> Result<ApkInfo, Error> {
    let entries = zip_entries(bytes)?;
    let manifest = entries
        .iter()
        .find(|entry| entry.name == "AndroidManifest.xml")
        .ok_or_else(|| not_apk("the archive has no AndroidManifest.xml"))?;
    let manifest = entry_data(bytes, manifest)?;
    let mut info = parse_manifest(&manifest)?;
    // A missing or unreadable resource table leaves the strings empty: the package still installs,
    // as it would on a phone for an app that has no resources.
    if let Some(table) = entries.iter().find(|entry| entry.name == "resources.arsc")
        && let Ok(table) = entry_data(bytes, table)
    {
        info.strings = parse_string_resources(&table).unwrap_or_default();
    }
    Ok(info)
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    let bytes = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([bytes[0], bytes[1]]))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

fn usize_at(data: &[u8], at: usize) -> Option<usize> {
    u32_at(data, at).and_then(|value| usize::try_from(value).ok())
}

/// One file of the zip's central directory.
struct ZipEntry {
    name: String,
    method: u16,
    compressed: usize,
    size: usize,
    local_header: usize,
}

/// The central directory, found from the end-of-central-directory record (APPNOTE.TXT 4.3.16).
fn zip_entries(bytes: &[u8]) -> Result<Vec<ZipEntry>, Error> {
    const EOCD: u32 = 0x0605_4b50;
    const CENTRAL: u32 = 0x0201_4b50;
    if bytes.len() < 22 {
        return Err(not_apk("too short to be a zip archive"));
    }
    // The record is 22 bytes plus a comment of at most 65535 bytes.
    let lowest = bytes.len().saturating_sub(22 + 65_535);
    let eocd = (lowest..=bytes.len() - 22)
        .rev()
        .find(|&at| u32_at(bytes, at) == Some(EOCD))
        .ok_or_else(|| not_apk("no zip end-of-central-directory record"))?;
    let count = u16_at(bytes, eocd + 10).unwrap_or(0) as usize;
    let mut at = usize_at(bytes, eocd + 16).ok_or_else(|| not_apk("bad central directory"))?;
    let mut entries = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        let bad = || not_apk("truncated zip central directory");
        if u32_at(bytes, at) != Some(CENTRAL) {
            return Err(bad());
        }
        let method = u16_at(bytes, at + 10).ok_or_else(bad)?;
        let compressed = usize_at(bytes, at + 20).ok_or_else(bad)?;
        let size = usize_at(bytes, at + 24).ok_or_else(bad)?;
        let name_len = u16_at(bytes, at + 28).ok_or_else(bad)? as usize;
        let extra_len = u16_at(bytes, at + 30).ok_or_else(bad)? as usize;
        let comment_len = u16_at(bytes, at + 32).ok_or_else(bad)? as usize;
        let local_header = usize_at(bytes, at + 42).ok_or_else(bad)?;
        let name = bytes.get(at + 46..at + 46 + name_len).ok_or_else(bad)?;
        entries.push(ZipEntry {
            name: String::from_utf8_lossy(name).into_owned(),
            method,
            compressed,
            size,
            local_header,
        });
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(entries)
}

/// An entry's bytes, inflated when it is deflated.
fn entry_data(bytes: &[u8], entry: &ZipEntry) -> Result<Vec<u8>, Error> {
    const LOCAL: u32 = 0x0403_4b50;
    let bad = || not_apk(format!("cannot read {} from the archive", entry.name));
    if u32_at(bytes, entry.local_header) != Some(LOCAL) || entry.size > MAX_ENTRY_BYTES {
        return Err(bad());
    }
    let name_len = u16_at(bytes, entry.local_header + 26).ok_or_else(bad)? as usize;
    let extra_len = u16_at(bytes, entry.local_header + 28).ok_or_else(bad)? as usize;
    let start = entry.local_header + 30 + name_len + extra_len;
    let data = bytes
        .get(start..start.checked_add(entry.compressed).ok_or_else(bad)?)
        .ok_or_else(bad)?;
    match entry.method {
        0 => Ok(data.to_vec()),
        8 => miniz_oxide::inflate::decompress_to_vec_with_limit(data, MAX_ENTRY_BYTES)
            .map_err(|_| bad()),
        _ => Err(bad()),
    }
}

/// A `ResStringPool` chunk starting at `at`: its strings, decoded.
fn string_pool(data: &[u8], at: usize) -> Option<Vec<String>> {
    if u16_at(data, at)? != RES_STRING_POOL_TYPE {
        return None;
    }
    let header_size = u16_at(data, at + 2)? as usize;
    let chunk_size = usize_at(data, at + 4)?;
    let chunk = data.get(at..at.checked_add(chunk_size)?)?;
    let count = usize_at(chunk, 8)?;
    let utf8 = u32_at(chunk, 16)? & (1 << 8) != 0;
    let strings_start = usize_at(chunk, 20)?;
    if count > MAX_STRINGS || count.checked_mul(4)? > chunk.len() {
        return None;
    }
    let mut strings = Vec::with_capacity(count);
    for index in 0..count {
        let offset = usize_at(chunk, header_size.checked_add(index * 4)?)?;
        let start = strings_start.checked_add(offset)?;
        let text = if utf8 {
            utf8_string(chunk, start)
        } else {
            utf16_string(chunk, start)
        };
        // An unreadable string stays empty rather than losing the indexes after it.
        strings.push(text.unwrap_or_default());
    }
    Some(strings)
}

/// A UTF-8 pool string: its UTF-16 length, its byte length (each 1 or 2 bytes), the bytes.
fn utf8_string(chunk: &[u8], at: usize) -> Option<String> {
    let length = |at: usize| -> Option<(usize, usize)> {
        let first = *chunk.get(at)? as usize;
        if first & 0x80 != 0 {
            let second = *chunk.get(at + 1)? as usize;
            Some((((first & 0x7f) << 8) | second, 2))
        } else {
            Some((first, 1))
        }
    };
    let (_, skip) = length(at)?;
    let (bytes, skip2) = length(at + skip)?;
    let start = at + skip + skip2;
    let text = chunk.get(start..start.checked_add(bytes)?)?;
    Some(String::from_utf8_lossy(text).into_owned())
}

/// A UTF-16 pool string: its length in units (1 or 2 units), the units.
fn utf16_string(chunk: &[u8], at: usize) -> Option<String> {
    let first = u16_at(chunk, at)? as usize;
    let (units, start) = if first & 0x8000 != 0 {
        let second = u16_at(chunk, at + 2)? as usize;
        ((((first & 0x7fff) << 16) | second), at + 4)
    } else {
        (first, at + 2)
    };
    let raw = chunk.get(start..start.checked_add(units.checked_mul(2)?)?)?;
    let units: Vec<u16> = raw
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    Some(String::from_utf16_lossy(&units))
}

/// One attribute of a start element, as the manifest reader needs it.
struct Attribute {
    name: String,
    resource_id: Option<u32>,
    raw: Option<String>,
    data_type: u8,
    data: u32,
}

impl Attribute {
    fn is(&self, resource_id: u32, name: &str) -> bool {
        self.resource_id == Some(resource_id) || (self.resource_id.is_none() && self.name == name)
    }

    fn string(&self, strings: &[String]) -> Option<String> {
        self.raw.clone().or_else(|| {
            (self.data_type == TYPE_STRING)
                .then(|| strings.get(self.data as usize).cloned())
                .flatten()
        })
    }

    fn number(&self) -> Option<u32> {
        if matches!(self.data_type, TYPE_INT_DEC | TYPE_INT_HEX) {
            return Some(self.data);
        }
        self.raw.as_deref().and_then(|raw| raw.trim().parse().ok())
    }
}

/// Reads the binary `AndroidManifest.xml` (`ResXMLTree`).
fn parse_manifest(data: &[u8]) -> Result<ApkInfo, Error> {
    if u16_at(data, 0) != Some(RES_XML_TYPE) {
        return Err(malformed("AndroidManifest.xml is not binary XML"));
    }
    let header_size = u16_at(data, 2).unwrap_or(8) as usize;
    let total = usize_at(data, 4).unwrap_or(0).min(data.len());
    let mut strings: Vec<String> = Vec::new();
    let mut resource_ids: Vec<u32> = Vec::new();
    let mut info = ApkInfo {
        package: String::new(),
        debuggable: false,
        version_code: 1,
        version_name: None,
        target_sdk: None,
        launcher_activity: None,
        strings: BTreeMap::new(),
    };
    // The element path, and what the current activity and intent filter have shown.
    let mut path: Vec<String> = Vec::new();
    let mut activity: Option<String> = None;
    let (mut main, mut launcher) = (false, false);
    let mut at = header_size;
    while at + 8 <= total {
        let chunk_type = u16_at(data, at).unwrap_or(0);
        let chunk_header = u16_at(data, at + 2).unwrap_or(0) as usize;
        let chunk_size = usize_at(data, at + 4).unwrap_or(0);
        if chunk_size < 8 || at + chunk_size > total {
            return Err(malformed("a binary XML chunk runs past the file"));
        }
        match chunk_type {
            RES_STRING_POOL_TYPE => {
                strings = string_pool(data, at)
                    .ok_or_else(|| malformed("unreadable string pool in the manifest"))?;
            }
            RES_XML_RESOURCE_MAP_TYPE => {
                let ids = data.get(at + chunk_header..at + chunk_size).unwrap_or(&[]);
                resource_ids = ids
                    .chunks_exact(4)
                    .map(|id| u32::from_le_bytes([id[0], id[1], id[2], id[3]]))
                    .collect();
            }
            RES_XML_START_ELEMENT_TYPE => {
                let ext = at + chunk_header;
                let name_index = u32_at(data, ext + 4).unwrap_or(u32::MAX) as usize;
                let element = strings.get(name_index).cloned().unwrap_or_default();
                let attributes = attributes(data, ext, &strings, &resource_ids)
                    .ok_or_else(|| malformed(format!("unreadable attributes on <{element}>")))?;
                let find = |id: u32, name: &str| attributes.iter().find(|a| a.is(id, name));
                match (path.last().map(String::as_str), element.as_str()) {
                    (None, "manifest") => read_manifest(&mut info, &attributes, &strings),
                    (Some("manifest"), "uses-sdk") => {
                        info.target_sdk =
                            find(ATTR_TARGET_SDK, "targetSdkVersion").and_then(Attribute::number);
                    }
                    (Some("manifest"), "application") => {
                        info.debuggable = find(ATTR_DEBUGGABLE, "debuggable").is_some_and(is_true);
                    }
                    (Some("application"), "activity" | "activity-alias") => {
                        activity = find(ATTR_NAME, "name").and_then(|a| a.string(&strings));
                    }
                    (Some("activity" | "activity-alias"), "intent-filter") => {
                        (main, launcher) = (false, false);
                    }
                    (Some("intent-filter"), "action" | "category") => {
                        let value = find(ATTR_NAME, "name").and_then(|a| a.string(&strings));
                        match value.as_deref() {
                            Some("android.intent.action.MAIN") => main = true,
                            Some("android.intent.category.LAUNCHER") => launcher = true,
                            _ => {}
                        }
                        if main && launcher && info.launcher_activity.is_none() {
                            info.launcher_activity = activity.clone();
                        }
                    }
                    _ => {}
                }
                // Deeply nested garbage cannot grow the path without bound.
                if path.len() < 64 {
                    path.push(element);
                }
            }
            RES_XML_END_ELEMENT_TYPE => {
                path.pop();
            }
            _ => {}
        }
        at += chunk_size;
    }
    if info.package.is_empty() {
        return Err(malformed("<manifest> has no package attribute"));
    }
    Ok(info)
}

/// What `<manifest>` says: the package, and its version code and name.
fn read_manifest(info: &mut ApkInfo, attributes: &[Attribute], strings: &[String]) {
    let find = |id: u32, name: &str| attributes.iter().find(|a| a.is(id, name));
    info.package = attributes
        .iter()
        .find(|a| a.name == "package" && a.resource_id.is_none())
        .and_then(|a| a.string(strings))
        .unwrap_or_default();
    if let Some(code) = find(ATTR_VERSION_CODE, "versionCode").and_then(Attribute::number) {
        info.version_code = u64::from(code);
    }
    info.version_name = find(ATTR_VERSION_NAME, "versionName").and_then(|a| a.string(strings));
}

/// A boolean attribute that is true: typed `true`, or the string `"true"`.
fn is_true(attribute: &Attribute) -> bool {
    if attribute.data_type == TYPE_INT_BOOLEAN {
        attribute.data != 0
    } else {
        attribute.raw.as_deref() == Some("true")
    }
}

/// The attributes of the start element whose `ResXMLTree_attrExt` starts at `ext`.
fn attributes(
    data: &[u8],
    ext: usize,
    strings: &[String],
    resource_ids: &[u32],
) -> Option<Vec<Attribute>> {
    let start = u16_at(data, ext + 8)? as usize;
    let size = u16_at(data, ext + 10)? as usize;
    let count = u16_at(data, ext + 12)? as usize;
    if size < 20 {
        return None;
    }
    let mut found = Vec::with_capacity(count);
    for index in 0..count {
        let at = ext + start + index * size;
        let name_index = u32_at(data, at + 4)? as usize;
        let raw = u32_at(data, at + 8)?;
        found.push(Attribute {
            name: strings.get(name_index).cloned().unwrap_or_default(),
            resource_id: resource_ids.get(name_index).copied(),
            raw: (raw != u32::MAX)
                .then(|| strings.get(raw as usize).cloned())
                .flatten(),
            data_type: *data.get(at + 15)?,
            data: u32_at(data, at + 16)?,
        });
    }
    Some(found)
}

/// The `string` resources of `resources.arsc`, first configuration first.
fn parse_string_resources(data: &[u8]) -> Option<BTreeMap<String, String>> {
    if u16_at(data, 0)? != RES_TABLE_TYPE {
        return None;
    }
    let total = usize_at(data, 4)?.min(data.len());
    let mut values: Vec<String> = Vec::new();
    let mut found = BTreeMap::new();
    let mut at = u16_at(data, 2)? as usize;
    while at + 8 <= total {
        let chunk_type = u16_at(data, at)?;
        let chunk_size = usize_at(data, at + 4)?;
        if chunk_size < 8 || at + chunk_size > total {
            return None;
        }
        match chunk_type {
            RES_STRING_POOL_TYPE => values = string_pool(data, at)?,
            RES_TABLE_PACKAGE_TYPE => {
                let package = data.get(at..at + chunk_size)?;
                package_strings(package, &values, &mut found)?;
            }
            _ => {}
        }
        at += chunk_size;
    }
    Some(found)
}

/// The string entries of one `ResTable_package` chunk.
fn package_strings(
    package: &[u8],
    values: &[String],
    found: &mut BTreeMap<String, String>,
) -> Option<()> {
    let header_size = u16_at(package, 2)? as usize;
    let type_names = string_pool(package, usize_at(package, 268)?)?;
    let key_names = string_pool(package, usize_at(package, 276)?)?;
    let mut at = header_size;
    while at + 8 <= package.len() {
        let chunk_type = u16_at(package, at)?;
        let chunk_header = u16_at(package, at + 2)? as usize;
        let chunk_size = usize_at(package, at + 4)?;
        if chunk_size < 8 || at + chunk_size > package.len() {
            return None;
        }
        let chunk = package.get(at..at + chunk_size)?;
        let is_string = chunk
            .get(8)
            .and_then(|type_id| (*type_id as usize).checked_sub(1))
            .and_then(|index| type_names.get(index))
            .is_some_and(|name| name == "string");
        // Sparse type chunks (flag 0x01) are written only for large apps; they are skipped.
        let dense = chunk.get(9).is_some_and(|flags| flags & 1 == 0);
        if chunk_type == RES_TABLE_TYPE_TYPE && is_string && dense {
            let count = usize_at(chunk, 12)?.min(chunk.len() / 4);
            let entries_start = usize_at(chunk, 16)?;
            for index in 0..count {
                let offset = u32_at(chunk, chunk_header + index * 4)?;
                if offset == u32::MAX {
                    continue;
                }
                let entry = entries_start.checked_add(offset as usize)?;
                let entry_size = u16_at(chunk, entry)? as usize;
                let flags = u16_at(chunk, entry + 2)?;
                let key = usize_at(chunk, entry + 4)?;
                if flags & 0x0001 != 0 {
                    continue;
                }
                let value = entry + entry_size;
                if *chunk.get(value + 3)? == TYPE_STRING
                    && let (Some(name), Some(text)) =
                        (key_names.get(key), values.get(usize_at(chunk, value + 4)?))
                {
                    found.entry(name.clone()).or_insert_with(|| text.clone());
                }
            }
        }
        at += chunk_size;
    }
    Some(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_an_apk_and_does_not_panic() {
        for bytes in [
            &b""[..],
            b"PK\x03\x04",
            &[0u8; 100],
            b"PK\x05\x06\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\0\0",
        ] {
            let error = parse_apk(bytes).unwrap_err();
            assert!(
                error.to_string().contains("INSTALL_PARSE_FAILED"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_manifest_that_is_not_binary_xml_is_malformed() {
        let error = parse_manifest(b"<manifest package=\"x\"/>").unwrap_err();
        assert!(error.to_string().contains("MANIFEST_MALFORMED"), "{error}");
    }

    #[test]
    fn pool_strings_decode_both_encodings() {
        // UTF-8: UTF-16 length 2, byte length 2, "hi", NUL.
        assert_eq!(
            utf8_string(&[2, 2, b'h', b'i', 0], 0).as_deref(),
            Some("hi")
        );
        // UTF-16: length 2, "hi", NUL.
        assert_eq!(
            utf16_string(&[2, 0, b'h', 0, b'i', 0, 0, 0], 0).as_deref(),
            Some("hi")
        );
        assert_eq!(utf8_string(&[9, 9, b'h'], 0), None);
    }
}
