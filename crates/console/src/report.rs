//! `phonelogs report`: reads report and log files offline and prints each report's heading and
//! cut text, or one JSON object per report.

use std::io::Write;
use std::path::PathBuf;

use phonelogs_crash::Format;

use crate::{Doing, Result};

/// Reads each file, detecting its format unless `format` names one, and prints what it holds.
/// Every file is tried; the command fails at the end if any could not be read.
pub fn run(files: &[PathBuf], format: Option<&str>, json: bool) -> Result<()> {
    let format = format
        .map(|name| name.parse::<Format>())
        .transpose()
        .doing(|| "--format".to_owned())?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = 0usize;
    for file in files {
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("phonelogs: cannot read {}: {error}", file.display());
                failed += 1;
                continue;
            }
        };
        match phonelogs_crash::parse_any(&bytes, format) {
            Ok(parsed) => {
                if json {
                    for line in parsed.json_lines() {
                        writeln!(out, "{line}")?;
                    }
                } else {
                    if files.len() > 1 {
                        writeln!(out, "==> {} <==", file.display())?;
                    }
                    write!(out, "{}", parsed.render_text())?;
                }
            }
            Err(error) => {
                eprintln!("phonelogs: {}: {error}", file.display());
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(crate::Error::Refused(format!(
            "{failed} of {} files could not be read",
            files.len()
        )));
    }
    Ok(())
}
