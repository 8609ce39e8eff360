//! Finding a button on screen from `uiautomator dump` output, to tap it with `input tap`.
//!
//! `uiautomator dump` writes the active window as XML: nested `<node …>` elements whose
//! attributes include `text`, `resource-id`, `class`, `package`, `clickable` and
//! `bounds="[left,top][right,bottom]"` in screen pixels (AOSP's `AccessibilityNodeInfoDumper`).
//! This module reads only those attributes; it never panics on malformed input, it just finds
//! nothing.

/// A node's rectangle on screen, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Left edge.
    pub left: i32,
    /// Top edge.
    pub top: i32,
    /// Right edge (exclusive).
    pub right: i32,
    /// Bottom edge (exclusive).
    pub bottom: i32,
}

impl Bounds {
    /// Parses `[left,top][right,bottom]`.
    pub fn parse(text: &str) -> Option<Self> {
        let inner = text.strip_prefix('[')?.strip_suffix(']')?;
        let (first, second) = inner.split_once("][")?;
        let (left, top) = first.split_once(',')?;
        let (right, bottom) = second.split_once(',')?;
        let bounds = Self {
            left: left.trim().parse().ok()?,
            top: top.trim().parse().ok()?,
            right: right.trim().parse().ok()?,
            bottom: bottom.trim().parse().ok()?,
        };
        (bounds.right > bounds.left && bounds.bottom > bounds.top).then_some(bounds)
    }

    /// The point `input tap` should touch: the middle.
    pub fn center(self) -> (i32, i32) {
        (
            self.left + (self.right - self.left) / 2,
            self.top + (self.bottom - self.top) / 2,
        )
    }
}

/// One `<node>` of a dump, with the attributes this crate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The `text` attribute, XML entities decoded.
    pub text: String,
    /// The `resource-id` attribute, such as `dev.phonelogs.crashtest:id/crash`.
    pub resource_id: String,
    /// The `package` attribute.
    pub package: String,
    /// Where it is on screen.
    pub bounds: Option<Bounds>,
}

/// Every node of a dump, in document order. Text before or after the XML (adb's
/// "UI hierchary dumped to:" line) is ignored.
pub fn nodes(dump: &str) -> Vec<Node> {
    let mut found = Vec::new();
    let mut rest = dump;
    while let Some(start) = rest.find("<node ") {
        let after = &rest[start + "<node ".len()..];
        let Some(end) = tag_end(after) else { break };
        let attributes = &after[..end];
        found.push(Node {
            text: attribute(attributes, "text").unwrap_or_default(),
            resource_id: attribute(attributes, "resource-id").unwrap_or_default(),
            package: attribute(attributes, "package").unwrap_or_default(),
            bounds: attribute(attributes, "bounds").and_then(|b| Bounds::parse(&b)),
        });
        rest = &after[end..];
    }
    found
}

/// The node whose `resource-id` is `resource_id`, else the first whose text is `text` (ignoring
/// case, as some themes show button labels in capitals), that has bounds on screen.
pub fn find(dump: &str, resource_id: &str, text: &str) -> Option<Node> {
    let all = nodes(dump);
    let by_id = all
        .iter()
        .find(|node| node.resource_id == resource_id && node.bounds.is_some());
    by_id
        .or_else(|| {
            all.iter()
                .find(|node| node.text.eq_ignore_ascii_case(text) && node.bounds.is_some())
        })
        .cloned()
}

/// The end of a tag's attributes: the first `>` outside a quoted value.
fn tag_end(text: &str) -> Option<usize> {
    let mut quoted = false;
    for (index, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '>' if !quoted => return Some(index),
            _ => {}
        }
    }
    None
}

/// The value of `name="…"` in a tag's attribute text, entities decoded.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let mut rest = attributes;
    loop {
        let at = rest.find(name)?;
        let before = rest[..at].chars().next_back();
        let after = &rest[at + name.len()..];
        // The name must stand alone: "text" must not match inside "content-desc" or "text2".
        let starts_alone = before.is_none_or(char::is_whitespace);
        if starts_alone && let Some(value) = after.strip_prefix("=\"") {
            let end = value.find('"')?;
            return Some(decode(&value[..end]));
        }
        rest = after;
    }
}

fn decode(value: &str) -> String {
    value
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#10;", "\n")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: &str = include_str!("../testdata/crashtest-screen.xml");
    const DIALOG: &str = include_str!("../testdata/crash-dialog.xml");

    #[test]
    fn finds_both_buttons_of_the_crash_test_screen() {
        let crash = find(SCREEN, "dev.phonelogs.crashtest:id/crash", "Crash").unwrap();
        assert_eq!(crash.text, "Crash");
        assert_eq!(crash.bounds.unwrap().center(), (540, 516));
        let hang = find(SCREEN, "dev.phonelogs.crashtest:id/hang", "Hang").unwrap();
        assert_eq!(hang.bounds.unwrap().center(), (540, 705));
        assert_eq!(nodes(SCREEN).len(), 10);
    }

    #[test]
    fn falls_back_to_the_text_in_any_case() {
        let node = find(SCREEN, "no:id/such", "CRASH").unwrap();
        assert_eq!(node.resource_id, "dev.phonelogs.crashtest:id/crash");
    }

    #[test]
    fn the_crash_dialog_has_no_crash_test_buttons_but_a_close_button() {
        assert!(find(DIALOG, "dev.phonelogs.crashtest:id/crash", "Crash").is_none());
        let close = find(DIALOG, "android:id/aerr_close", "Close app").unwrap();
        assert_eq!(close.package, "android");
    }

    #[test]
    fn adb_chatter_around_the_xml_is_ignored() {
        let dump = format!("{SCREEN}UI hierchary dumped to: /dev/tty\n");
        assert!(find(&dump, "dev.phonelogs.crashtest:id/hang", "Hang").is_some());
    }

    #[test]
    fn attributes_match_whole_names_and_decode_entities() {
        let dump =
            r#"<node content-text="no" text="A &amp; &quot;B&quot;" bounds="[0,0][10,10]" />"#;
        let all = nodes(dump);
        assert_eq!(all[0].text, "A & \"B\"");
    }

    #[test]
    fn malformed_input_finds_nothing_and_does_not_panic() {
        for dump in [
            "",
            "<node ",
            "<node text=\"Crash",
            "<node text=\"Crash\" bounds=\"[1,2][3]\">",
            "<node text=\"Crash\" bounds=\"[5,5][1,1]\">",
            "<node text=\"Crash\" bounds=\"[a,b][c,d]\">",
        ] {
            assert!(find(dump, "x", "Crash").is_none(), "{dump}");
        }
    }
}
