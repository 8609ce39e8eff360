//! Our skill through the MCP Skills extension (issue 39, item 5): a real client (rmcp's client
//! side) starts `phonelogs-mcp` on stdio, on either wire, finds the extension declared, lists
//! the skill, gets its manifest and reads `SKILL.md`, whose bytes are `docs/SKILL.md` and match
//! the manifest's digest and size.

#![allow(clippy::unwrap_used)]

use std::process::Stdio;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, GetSkillRequestParams, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents, SkillResources,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_phonelogs-mcp");
const SKILL_MD: &str = include_str!("../../../docs/SKILL.md");

#[derive(Clone)]
struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("phonelogs-skills-test", "1.0"),
        )
    }
}

#[tokio::test]
async fn the_skill_is_listed_and_read_on_either_wire() {
    for lifecycle in [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(BIN);
        command
            .arg("--demo=fake")
            .arg("--state-dir")
            .arg(dir.path())
            .stderr(Stdio::null());
        let transport = TokioChildProcess::new(command).unwrap();
        let client = Client
            .serve_with_lifecycle(transport, lifecycle.clone())
            .await
            .unwrap();
        let listed = client.list_skills(None).await.unwrap();
        assert_eq!(listed.skills.len(), 1, "{lifecycle:?}");
        let uri = listed.skills[0].uri.clone();
        assert_eq!(uri, "skill://phonelogs/SKILL.md");
        let skill = client
            .get_skill(GetSkillRequestParams::new(uri.clone()))
            .await
            .unwrap()
            .skill;
        assert_eq!(skill.name(), "phonelogs");
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("{read:?}");
        };
        assert_eq!(text, SKILL_MD, "{lifecycle:?}");
        let SkillResources::Files(files) = &skill.resources else {
            panic!("{skill:?}");
        };
        files[0].verify(text.as_bytes()).unwrap();
        // Nothing else is a resource here.
        assert!(
            client
                .read_resource(ReadResourceRequestParams::new("skill://other/SKILL.md"))
                .await
                .is_err()
        );
        client.cancel().await.unwrap();
    }
}
