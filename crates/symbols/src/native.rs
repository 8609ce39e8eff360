//! Native symbolication: function, file, line and inlined frames from the DWARF of an
//! unstripped ELF `.so` (matched by its GNU build id) or of a `.dSYM`'s Mach-O (matched by its
//! UUID), with `addr2line` over `gimli` and `object`, and the symbol table when a frame has no
//! DWARF.
//!
//! Every file is read whole into memory (this crate forbids `unsafe`, so no memory map) and
//! parsed by `object`, which bounds-checks everything: a hostile file is an error, never a
//! panic.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::{Object as _, ObjectSection as _, ObjectSegment as _, ObjectSymbol as _};

type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// One debug file, parsed once and kept for every lookup.
pub struct DebugFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The GNU build id (ELF) or the UUID (Mach-O), lower-case hex without dashes.
    pub id: Option<String>,
    /// The `__TEXT` segment's address (Mach-O), which `.ips` offsets are relative to.
    pub text_base: u64,
    context: Option<addr2line::Context<Reader>>,
    symbols: Vec<(u64, u64, String)>,
}

impl std::fmt::Debug for DebugFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugFile")
            .field("path", &self.path)
            .field("id", &self.id)
            .field("has_dwarf", &self.context.is_some())
            .field("symbols", &self.symbols.len())
            .finish()
    }
}

/// One symbolicated frame: a function, and where in the source, innermost first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceFrame {
    /// The function's (demangled) name, `??` when unknown.
    pub function: String,
    /// The source file, when the DWARF says.
    pub file: Option<String>,
    /// The line, when the DWARF says.
    pub line: Option<u32>,
    /// Whether this frame was inlined into the next one.
    pub inlined: bool,
}

/// Why a file could not be used as a debug file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

impl DebugFile {
    /// Reads a debug file from disk.
    pub fn open(path: &Path) -> Result<DebugFile, ParseError> {
        let bytes = std::fs::read(path).map_err(|e| ParseError(e.to_string()))?;
        let mut file = DebugFile::parse(&bytes, None)?;
        file.path = path.to_owned();
        Ok(file)
    }

    /// Parses an ELF or a thin Mach-O; for a fat Mach-O, the slice whose UUID is `want_uuid`
    /// (or the first one).
    pub fn parse(bytes: &[u8], want_uuid: Option<&str>) -> Result<DebugFile, ParseError> {
        let kind = object::FileKind::parse(bytes).map_err(|e| ParseError(e.to_string()))?;
        match kind {
            object::FileKind::MachOFat32 | object::FileKind::MachOFat64 => {
                let slices = fat_slices(bytes, kind)?;
                let mut first = None;
                for slice in slices {
                    let parsed = DebugFile::parse_one(slice)?;
                    if want_uuid.is_none_or(|want| parsed.id.as_deref() == Some(want)) {
                        return Ok(parsed);
                    }
                    first.get_or_insert(parsed);
                }
                first.ok_or_else(|| ParseError("an empty fat Mach-O".to_owned()))
            }
            _ => DebugFile::parse_one(bytes),
        }
    }

    fn parse_one(bytes: &[u8]) -> Result<DebugFile, ParseError> {
        let file = object::File::parse(bytes).map_err(|e| ParseError(e.to_string()))?;
        let id = match file.format() {
            object::BinaryFormat::MachO => file.mach_uuid().ok().flatten().map(|uuid| hex(&uuid)),
            _ => file.build_id().ok().flatten().map(hex),
        };
        let text_base = file
            .segments()
            .find(|s| s.name().ok().flatten() == Some("__TEXT"))
            .map_or(0, |s| s.address());
        let context = load_dwarf(&file).ok().and_then(|dwarf| {
            let has_info = !gimli::Section::reader(&dwarf.debug_info).is_empty();
            if has_info {
                addr2line::Context::from_dwarf(dwarf).ok()
            } else {
                None
            }
        });
        let mut symbols: Vec<(u64, u64, String)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0)
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some((s.address(), s.size(), name.to_owned()))
            })
            .collect();
        symbols.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        symbols.dedup_by(|a, b| a.0 == b.0);
        Ok(DebugFile {
            path: PathBuf::new(),
            id,
            text_base,
            context,
            symbols,
        })
    }

    /// Whether the file carries DWARF line information.
    pub fn has_dwarf(&self) -> bool {
        self.context.is_some()
    }

    /// The frames at `address` (in the file's own address space), innermost first, as
    /// `addr2line -f -i -C` prints them; from the symbol table alone when there is no DWARF for
    /// it; empty when nothing covers the address.
    pub fn frames_at(&self, address: u64) -> Vec<SourceFrame> {
        let mut out = Vec::new();
        if let Some(context) = &self.context
            && let Ok(mut frames) = context.find_frames(address).skip_all_loads()
        {
            while let Ok(Some(frame)) = frames.next() {
                let function = frame
                    .function
                    .as_ref()
                    .and_then(|f| f.demangle().ok().map(Cow::into_owned));
                let (file, line) = frame
                    .location
                    .map_or((None, None), |l| (l.file.map(str::to_owned), l.line));
                out.push(SourceFrame {
                    function: function
                        .or_else(|| self.symbol_at(address))
                        .unwrap_or_else(|| "??".to_owned()),
                    file,
                    line,
                    inlined: true,
                });
                if out.len() > 64 {
                    break;
                }
            }
        }
        if out.is_empty()
            && let Some(name) = self.symbol_at(address)
        {
            out.push(SourceFrame {
                function: name,
                file: None,
                line: None,
                inlined: true,
            });
        }
        if let Some(last) = out.last_mut() {
            last.inlined = false;
        }
        out
    }

    fn symbol_at(&self, address: u64) -> Option<String> {
        let index = self.symbols.partition_point(|s| s.0 <= address);
        let (start, size, name) = self.symbols.get(index.checked_sub(1)?)?;
        if *size != 0 && address >= start.saturating_add(*size) {
            return None;
        }
        Some(addr2line::demangle_auto(Cow::Borrowed(name.as_str()), None).into_owned())
    }
}

fn fat_slices(bytes: &[u8], kind: object::FileKind) -> Result<Vec<&[u8]>, ParseError> {
    use object::read::macho::{FatArch as _, MachOFatFile32, MachOFatFile64};
    let err = |e: object::Error| ParseError(e.to_string());
    let mut out = Vec::new();
    if kind == object::FileKind::MachOFat32 {
        let fat = MachOFatFile32::parse(bytes).map_err(err)?;
        for arch in fat.arches() {
            out.push(arch.data(bytes).map_err(err)?);
        }
    } else {
        let fat = MachOFatFile64::parse(bytes).map_err(err)?;
        for arch in fat.arches() {
            out.push(arch.data(bytes).map_err(err)?);
        }
    }
    Ok(out)
}

fn load_dwarf(file: &object::File<'_>) -> Result<gimli::Dwarf<Reader>, gimli::Error> {
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[]));
        Ok(gimli::EndianArcSlice::new(Arc::from(&*data), endian))
    };
    gimli::Dwarf::load(load)
}

/// Lower-case hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Reads only the GNU build id (ELF) or UUIDs (Mach-O, every slice of a fat one) of a file.
pub fn file_ids(bytes: &[u8]) -> Vec<String> {
    let Ok(kind) = object::FileKind::parse(bytes) else {
        return Vec::new();
    };
    let slices = match kind {
        object::FileKind::MachOFat32 | object::FileKind::MachOFat64 => {
            fat_slices(bytes, kind).unwrap_or_default()
        }
        _ => vec![bytes],
    };
    slices
        .into_iter()
        .filter_map(|slice| {
            let file = object::File::parse(slice).ok()?;
            match file.format() {
                object::BinaryFormat::MachO => file.mach_uuid().ok().flatten().map(|u| hex(&u)),
                object::BinaryFormat::Elf => file.build_id().ok().flatten().map(hex),
                _ => None,
            }
        })
        .collect()
}
