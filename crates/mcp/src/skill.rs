//! Our skill (`docs/SKILL.md`: how an agent reads a phone's logs with phonelogs) served through
//! the MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): `skills/list` and
//! `skills/get` give its manifest, `resources/read` its bytes, so the instructions reach every
//! client that reads skills, not only Claude Code's plugin.
//!
//! One skill of one file, held in memory: rmcp's `SkillCatalog` serves skills from a directory
//! at run time (its `skills-fs` feature), and the skill is compiled into the binary instead, so
//! nothing depends on where the docs are installed.

use rmcp::ErrorData;
use rmcp::model::{
    GetSkillResult, ListResourcesResult, ListSkillsResult, ReadResourceResult, Resource,
    ResourceContents, Skill, SkillFrontmatter, SkillResource, SkillResources,
};

use crate::Error;

/// Where the skill's `SKILL.md` is served.
pub const SKILL_URI: &str = "skill://phonelogs/SKILL.md";

/// The skill's one file, and its manifest.
#[derive(Debug, Clone)]
pub struct SkillDoc {
    text: String,
    skill: Skill,
}

impl SkillDoc {
    /// The skill whose `SKILL.md` is `text`: its frontmatter's `name` must be `phonelogs` (the
    /// name in [`SKILL_URI`]) and it must have a `description`.
    pub fn parse(text: impl Into<String>) -> Result<SkillDoc, Error> {
        let text = text.into();
        let (name, description) = frontmatter(&text).ok_or_else(|| {
            Error::Skill("SKILL.md has no frontmatter with a name and a description".into())
        })?;
        let resources =
            SkillResources::Files(vec![SkillResource::from_bytes(SKILL_URI, text.as_bytes())]);
        let skill = Skill::new(
            SKILL_URI,
            SkillFrontmatter::new(name, description),
            resources,
        );
        skill
            .validate()
            .map_err(|e| Error::Skill(format!("SKILL.md: {e}")))?;
        Ok(SkillDoc { text, skill })
    }

    /// `skills/list`: the one skill.
    pub fn list(&self) -> ListSkillsResult {
        ListSkillsResult::with_all_items(vec![self.skill.clone()])
    }

    /// `skills/get`: the skill at `uri`, or -32602 for any other URI.
    pub fn get(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        if uri == SKILL_URI {
            Ok(GetSkillResult::new(self.skill.clone()))
        } else {
            Err(not_found(uri))
        }
    }

    /// `resources/list`: the skill's file.
    pub fn resources(&self) -> ListResourcesResult {
        let resource = Resource::new(SKILL_URI, "SKILL.md")
            .with_mime_type("text/markdown")
            .with_size(self.text.len() as u64);
        ListResourcesResult::with_all_items(vec![resource])
    }

    /// `resources/read`: the file's bytes at [`SKILL_URI`], or -32602 (resource not found, with
    /// the URI in `data.uri`) for any other URI.
    pub fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        if uri != SKILL_URI {
            return Err(not_found(uri));
        }
        let contents = ResourceContents::text(self.text.clone(), SKILL_URI);
        let contents = match contents {
            ResourceContents::TextResourceContents {
                uri, text, meta, ..
            } => ResourceContents::TextResourceContents {
                uri,
                mime_type: Some("text/markdown".into()),
                text,
                meta,
            },
            other => other,
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no resource {uri}: this server serves {SKILL_URI} only"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// The `name` and `description` of a `---` frontmatter block. Only these two one-line keys are
/// read, by hand: the dependency graph has no YAML parser (rmcp's comes with `skills-fs`, which
/// serves skills from disk), and our own file is the only input.
fn frontmatter(text: &str) -> Option<(String, String)> {
    let mut lines = text.lines();
    if lines.next()?.trim() != "---" {
        return None;
    }
    let (mut name, mut description) = (None, None);
    for line in lines {
        if line.trim() == "---" {
            return Some((name?, description?));
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().trim_matches('"').to_owned();
            match key.trim() {
                "name" => name = Some(value),
                "description" => description = Some(value),
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "---\nname: phonelogs\ndescription: Read one app's logs.\n---\n\n# Body\n";

    #[test]
    fn the_skill_is_listed_got_and_read_with_its_digest() {
        let doc = SkillDoc::parse(TEXT).unwrap();
        let listed = doc.list();
        assert_eq!(listed.skills.len(), 1);
        let skill = doc.get(SKILL_URI).unwrap().skill;
        assert_eq!(skill.name(), "phonelogs");
        assert_eq!(skill.frontmatter.description, "Read one app's logs.");
        let read = doc.read(SKILL_URI).unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("{read:?}");
        };
        assert_eq!(text, TEXT);
        let SkillResources::Files(files) = &skill.resources else {
            panic!("{skill:?}");
        };
        assert!(files[0].verify(text.as_bytes()).is_ok());
        assert_eq!(
            doc.get("skill://other/SKILL.md").unwrap_err().code.0,
            -32602
        );
        assert_eq!(doc.read("test://nothing").unwrap_err().code.0, -32602);
    }

    #[test]
    fn a_file_without_its_name_or_description_is_refused() {
        assert!(SkillDoc::parse("# no frontmatter\n").is_err());
        assert!(SkillDoc::parse("---\nname: phonelogs\n---\n").is_err());
        assert!(SkillDoc::parse("---\nname: other\ndescription: x\n---\n").is_err());
    }
}
