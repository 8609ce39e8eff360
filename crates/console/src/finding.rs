//! One finding of `phonelogs doctor` (and of the checks `setup` and `symbols` add to it), and
//! how findings are shown to a person.

/// One finding of the doctor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// What was checked.
    pub check: String,
    /// Whether it works.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do when it does not work.
    pub fix: Option<String>,
}

impl Finding {
    pub(crate) fn ok(check: &str, detail: impl Into<String>) -> Self {
        Finding {
            check: check.into(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    pub(crate) fn bad(check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            check: check.into(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Renders findings for a person: one line each, with the fix under a problem.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let mark = if finding.ok { "ok " } else { "NO " };
        out.push_str(&format!("{mark} {}: {}\n", finding.check, finding.detail));
        if let Some(fix) = &finding.fix {
            out.push_str(&format!("    fix: {fix}\n"));
        }
    }
    out
}
