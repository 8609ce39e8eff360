//! The secret shapes taken from gitleaks (`config/gitleaks.toml` at commit
//! `b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b`, 2026-07-22; MIT License, Copyright (c) 2019
//! Zachary Rice; see `testdata/secrets/README.md`): every rule whose pattern stands on the
//! secret's own shape (a prefix such as `ghp_`, `AKIA`, `xoxb-`, a private key block),
//! with its id, its keywords and its regular expression as gitleaks writes them. The rules
//! that find a value only by a keyword near it (gitleaks' `generic-api-key` and the
//! `[\w.-]{0,50}?(?:name)…` family) are left out: `super::named` covers named values the way
//! log lines write them. Left out too, with why:
//! - `curl-auth-header`: multi-line curl commands; the `authorization` rule covers the header
//!   itself.
//! - `curl-auth-user`: multi-line curl commands.
//! - `kubernetes-secret-yaml`: a multi-line YAML document, never one log line.
//! - `facebook-access-token`: fifteen digits and a bar or a percent sign: too broad for log
//!   text.
//! - `pkcs12-file`: a file name rule, no pattern.
//! - `jwt`: its match must end at a quote, a space or `;`, so a token in a query (`…&`) or a
//!   list (`,`) was missed; `super` has its own `jwt` rule, keyed on `.ey`.
//!
//! Regenerate from a newer gitleaks with the script in `testdata/secrets/README.md`.

/// One gitleaks rule: its id (the `[redacted:ID]` kind), its keywords (lowercase; the rule runs
/// only on text that holds one, in any case) and its pattern. The secret is the pattern's
/// first capture group when it has one, else the whole match.
pub(super) struct GitleaksRule {
    pub(super) id: &'static str,
    pub(super) keywords: &'static [&'static str],
    pub(super) pattern: &'static str,
}

/// The rules, in gitleaks' order.
pub(super) const RULES: &[GitleaksRule] = &[
    GitleaksRule {
        id: "1password-secret-key",
        keywords: &["a3-"],
        pattern: r###"\bA3-[A-Z0-9]{6}-(?:(?:[A-Z0-9]{11})|(?:[A-Z0-9]{6}-[A-Z0-9]{5}))-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"###,
    },
    GitleaksRule {
        id: "1password-service-account-token",
        keywords: &["ops_"],
        pattern: r###"ops_eyJ[a-zA-Z0-9+/]{250,}={0,3}"###,
    },
    GitleaksRule {
        id: "adobe-client-secret",
        keywords: &["p8e-"],
        pattern: r###"\b(p8e-(?i)[a-z0-9]{32})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "age-secret-key",
        keywords: &["age-secret-key-1"],
        pattern: r###"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"###,
    },
    GitleaksRule {
        id: "airtable-personnal-access-token",
        keywords: &["airtable"],
        pattern: r###"\b(pat[[:alnum:]]{14}\.[a-f0-9]{64})\b"###,
    },
    GitleaksRule {
        id: "alibaba-access-key-id",
        keywords: &["ltai"],
        pattern: r###"\b(LTAI(?i)[a-z0-9]{20})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "anthropic-admin-api-key",
        keywords: &["sk-ant-admin01"],
        pattern: r###"\b(sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "anthropic-api-key",
        keywords: &["sk-ant-api03"],
        pattern: r###"\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "artifactory-api-key",
        keywords: &["akcp"],
        pattern: r###"\bAKCp[A-Za-z0-9]{69}\b"###,
    },
    GitleaksRule {
        id: "artifactory-reference-token",
        keywords: &["cmvmd"],
        pattern: r###"\bcmVmd[A-Za-z0-9]{59}\b"###,
    },
    GitleaksRule {
        id: "authress-service-client-access-key",
        keywords: &["sc_", "ext_", "scauth_", "authress_"],
        pattern: r###"\b((?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.(?-i:acc)[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "aws-access-token",
        keywords: &["a3t", "akia", "asia", "abia", "acca"],
        pattern: r###"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b"###,
    },
    GitleaksRule {
        id: "aws-amazon-bedrock-api-key-long-lived",
        keywords: &["absk"],
        pattern: r###"\b(ABSK[A-Za-z0-9+/]{109,269}={0,2})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "aws-amazon-bedrock-api-key-short-lived",
        keywords: &["bedrock-api-key-"],
        pattern: r###"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"###,
    },
    GitleaksRule {
        id: "azure-ad-client-secret",
        keywords: &["q~"],
        pattern: r###"(?:^|[\\'"\x60\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"\x60\s<),])"###,
    },
    GitleaksRule {
        id: "clickhouse-cloud-api-secret-key",
        keywords: &["4b1d"],
        pattern: r###"\b(4b1d[A-Za-z0-9]{38})\b"###,
    },
    GitleaksRule {
        id: "clojars-api-token",
        keywords: &["clojars_"],
        pattern: r###"(?i)CLOJARS_[a-z0-9]{60}"###,
    },
    GitleaksRule {
        id: "cloudflare-origin-ca-key",
        keywords: &["cloudflare", "v1.0-"],
        pattern: r###"\b(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "databricks-api-token",
        keywords: &["dapi"],
        pattern: r###"\b(dapi[a-f0-9]{32}(?:-\d)?)(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "digitalocean-access-token",
        keywords: &["doo_v1_"],
        pattern: r###"\b(doo_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "digitalocean-pat",
        keywords: &["dop_v1_"],
        pattern: r###"\b(dop_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "digitalocean-refresh-token",
        keywords: &["dor_v1_"],
        pattern: r###"(?i)\b(dor_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "doppler-api-token",
        keywords: &["dp.pt."],
        pattern: r###"dp\.pt\.(?i)[a-z0-9]{43}"###,
    },
    GitleaksRule {
        id: "duffel-api-token",
        keywords: &["duffel_"],
        pattern: r###"duffel_(?:test|live)_(?i)[a-z0-9_\-=]{43}"###,
    },
    GitleaksRule {
        id: "dynatrace-api-token",
        keywords: &["dt0c01."],
        pattern: r###"dt0c01\.(?i)[a-z0-9]{24}\.[a-z0-9]{64}"###,
    },
    GitleaksRule {
        id: "easypost-api-token",
        keywords: &["ezak"],
        pattern: r###"\bEZAK(?i)[a-z0-9]{54}\b"###,
    },
    GitleaksRule {
        id: "easypost-test-api-token",
        keywords: &["eztk"],
        pattern: r###"\bEZTK(?i)[a-z0-9]{54}\b"###,
    },
    GitleaksRule {
        id: "facebook-page-access-token",
        keywords: &["eaam", "eaac"],
        pattern: r###"\b(EAA[MC](?i)[a-z0-9]{100,})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "flutterwave-encryption-key",
        keywords: &["flwseck_test"],
        pattern: r###"FLWSECK_TEST-(?i)[a-h0-9]{12}"###,
    },
    GitleaksRule {
        id: "flutterwave-public-key",
        keywords: &["flwpubk_test"],
        pattern: r###"FLWPUBK_TEST-(?i)[a-h0-9]{32}-X"###,
    },
    GitleaksRule {
        id: "flutterwave-secret-key",
        keywords: &["flwseck_test"],
        pattern: r###"FLWSECK_TEST-(?i)[a-h0-9]{32}-X"###,
    },
    GitleaksRule {
        id: "flyio-access-token",
        keywords: &["fo1_", "fm1", "fm2_"],
        pattern: r###"\b((?:fo1_[\w-]{43}|fm1[ar]_[a-zA-Z0-9+\/]{100,}={0,3}|fm2_[a-zA-Z0-9+\/]{100,}={0,3}))(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "frameio-api-token",
        keywords: &["fio-u-"],
        pattern: r###"fio-u-(?i)[a-z0-9\-_=]{64}"###,
    },
    GitleaksRule {
        id: "freemius-secret-key",
        keywords: &["secret_key"],
        pattern: r###"(?i)["']secret_key["']\s*=>\s*["'](sk_[\S]{29})["']"###,
    },
    GitleaksRule {
        id: "gcp-api-key",
        keywords: &["aiza"],
        pattern: r###"\b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "github-app-token",
        keywords: &["ghu_", "ghs_"],
        pattern: r###"(?:ghu|ghs)_[0-9a-zA-Z]{36}"###,
    },
    GitleaksRule {
        id: "github-fine-grained-pat",
        keywords: &["github_pat_"],
        pattern: r###"github_pat_\w{82}"###,
    },
    GitleaksRule {
        id: "github-oauth",
        keywords: &["gho_"],
        pattern: r###"gho_[0-9a-zA-Z]{36}"###,
    },
    GitleaksRule {
        id: "github-pat",
        keywords: &["ghp_"],
        pattern: r###"ghp_[0-9a-zA-Z]{36}"###,
    },
    GitleaksRule {
        id: "github-refresh-token",
        keywords: &["ghr_"],
        pattern: r###"ghr_[0-9a-zA-Z]{36}"###,
    },
    GitleaksRule {
        id: "gitlab-cicd-job-token",
        keywords: &["glcbt-"],
        pattern: r###"glcbt-[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-deploy-token",
        keywords: &["gldt-"],
        pattern: r###"gldt-[0-9a-zA-Z_\-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-feature-flag-client-token",
        keywords: &["glffct-"],
        pattern: r###"glffct-[0-9a-zA-Z_\-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-feed-token",
        keywords: &["glft-"],
        pattern: r###"glft-[0-9a-zA-Z_\-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-incoming-mail-token",
        keywords: &["glimt-"],
        pattern: r###"glimt-[0-9a-zA-Z_\-]{25}"###,
    },
    GitleaksRule {
        id: "gitlab-kubernetes-agent-token",
        keywords: &["glagent-"],
        pattern: r###"glagent-[0-9a-zA-Z_\-]{50}"###,
    },
    GitleaksRule {
        id: "gitlab-oauth-app-secret",
        keywords: &["gloas-"],
        pattern: r###"gloas-[0-9a-zA-Z_\-]{64}"###,
    },
    GitleaksRule {
        id: "gitlab-pat",
        keywords: &["glpat-"],
        pattern: r###"glpat-[\w-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-pat-routable",
        keywords: &["glpat-"],
        pattern: r###"\bglpat-[0-9a-zA-Z_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b"###,
    },
    GitleaksRule {
        id: "gitlab-ptt",
        keywords: &["glptt-"],
        pattern: r###"glptt-[0-9a-f]{40}"###,
    },
    GitleaksRule {
        id: "gitlab-rrt",
        keywords: &["gr1348941"],
        pattern: r###"GR1348941[\w-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-runner-authentication-token",
        keywords: &["glrt-"],
        pattern: r###"glrt-[0-9a-zA-Z_\-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-runner-authentication-token-routable",
        keywords: &["glrt-"],
        pattern: r###"\bglrt-t\d_[0-9a-zA-Z_\-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b"###,
    },
    GitleaksRule {
        id: "gitlab-scim-token",
        keywords: &["glsoat-"],
        pattern: r###"glsoat-[0-9a-zA-Z_\-]{20}"###,
    },
    GitleaksRule {
        id: "gitlab-session-cookie",
        keywords: &["_gitlab_session="],
        pattern: r###"_gitlab_session=[0-9a-z]{32}"###,
    },
    GitleaksRule {
        id: "grafana-api-key",
        keywords: &["eyjrijoi"],
        pattern: r###"(?i)\b(eyJrIjoi[A-Za-z0-9]{70,400}={0,3})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "grafana-cloud-api-token",
        keywords: &["glc_"],
        pattern: r###"(?i)\b(glc_[A-Za-z0-9+/]{32,400}={0,3})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "grafana-service-account-token",
        keywords: &["glsa_"],
        pattern: r###"(?i)\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "harness-api-key",
        keywords: &["pat.", "sat."],
        pattern: r###"(?:pat|sat)\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9]{24}\.[a-zA-Z0-9]{20}"###,
    },
    GitleaksRule {
        id: "hashicorp-tf-api-token",
        keywords: &["atlasv1"],
        pattern: r###"(?i)[a-z0-9]{14}\.(?-i:atlasv1)\.[a-z0-9\-_=]{60,70}"###,
    },
    GitleaksRule {
        id: "heroku-api-key-v2",
        keywords: &["hrku-aa"],
        pattern: r###"\b((HRKU-AA[0-9a-zA-Z_-]{58}))(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "huggingface-access-token",
        keywords: &["hf_"],
        pattern: r###"\b(hf_(?i:[a-z]{34}))(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "huggingface-organization-api-token",
        keywords: &["api_org_"],
        pattern: r###"\b(api_org_(?i:[a-z]{34}))(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "infracost-api-token",
        keywords: &["ico-"],
        pattern: r###"\b(ico-[a-zA-Z0-9]{32})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "intra42-client-secret",
        keywords: &["intra", "s-s4t2ud-", "s-s4t2af-"],
        pattern: r###"\b(s-s4t2(?:ud|af)-(?i)[abcdef0123456789]{64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "jwt-base64",
        keywords: &["zxlk"],
        pattern: r###"\bZXlK(?:(?P<alg>aGJHY2lPaU)|(?P<apu>aGNIVWlPaU)|(?P<apv>aGNIWWlPaU)|(?P<aud>aGRXUWlPaU)|(?P<b64>aU5qUWlP)|(?P<crit>amNtbDBJanBi)|(?P<cty>amRIa2lPaU)|(?P<epk>bGNHc2lPbn)|(?P<enc>bGJtTWlPaU)|(?P<jku>cWEzVWlPaU)|(?P<jwk>cWQyc2lPb)|(?P<iss>cGMzTWlPaU)|(?P<iv>cGRpSTZJ)|(?P<kid>cmFXUWlP)|(?P<key_ops>clpYbGZiM0J6SWpwY)|(?P<kty>cmRIa2lPaUp)|(?P<nonce>dWIyNWpaU0k2)|(?P<p2c>d01tTWlP)|(?P<p2s>d01uTWlPaU)|(?P<ppt>d2NIUWlPaU)|(?P<sub>emRXSWlPaU)|(?P<svt>emRuUWlP)|(?P<tag>MFlXY2lPaU)|(?P<typ>MGVYQWlPaUp)|(?P<url>MWNtd2l)|(?P<use>MWMyVWlPaUp)|(?P<ver>MlpYSWlPaU)|(?P<version>MlpYSnphVzl1SWpv)|(?P<x>NElqb2)|(?P<x5c>NE5XTWlP)|(?P<x5t>NE5YUWlPaU)|(?P<x5ts256>NE5YUWpVekkxTmlJNkl)|(?P<x5u>NE5YVWlPaU)|(?P<zip>NmFYQWlPaU))[a-zA-Z0-9\/\\_+\-\r\n]{40,}={0,2}"###,
    },
    GitleaksRule {
        id: "linear-api-key",
        keywords: &["lin_api_"],
        pattern: r###"lin_api_(?i)[a-z0-9]{40}"###,
    },
    GitleaksRule {
        id: "maxmind-license-key",
        keywords: &["_mmk"],
        pattern: r###"\b([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "microsoft-teams-webhook",
        keywords: &["webhook.office.com", "webhookb2", "incomingwebhook"],
        pattern: r###"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[a-z0-9]{8}-([a-z0-9]{4}-){3}[a-z0-9]{12}@[a-z0-9]{8}-([a-z0-9]{4}-){3}[a-z0-9]{12}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9]{8}-([a-z0-9]{4}-){3}[a-z0-9]{12}"###,
    },
    GitleaksRule {
        id: "notion-api-token",
        keywords: &["ntn_"],
        pattern: r###"\b(ntn_[0-9]{11}[A-Za-z0-9]{32}[A-Za-z0-9]{3})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "npm-access-token",
        keywords: &["npm_"],
        pattern: r###"(?i)\b(npm_[a-z0-9]{36})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "nuget-config-password",
        keywords: &["<add key="],
        pattern: r###"(?i)<add key=\"(?:(?:ClearText)?Password)\"\s*value=\"(.{8,})\"\s*/>"###,
    },
    GitleaksRule {
        id: "octopus-deploy-api-key",
        keywords: &["api-"],
        pattern: r###"\b(API-[A-Z0-9]{26})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "openai-api-key",
        keywords: &["t3blbkfj"],
        pattern: r###"\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "openshift-user-token",
        keywords: &["sha256~"],
        pattern: r###"\b(sha256~[\w-]{43})(?:[^\w-]|\z)"###,
    },
    GitleaksRule {
        id: "perplexity-api-key",
        keywords: &["pplx-"],
        pattern: r###"\b(pplx-[a-zA-Z0-9]{48})(?:[\x60'"\s;]|\\[nr]|$|\b)"###,
    },
    GitleaksRule {
        id: "planetscale-api-token",
        keywords: &["pscale_tkn_"],
        pattern: r###"\b(pscale_tkn_(?i)[\w=\.-]{32,64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "planetscale-oauth-token",
        keywords: &["pscale_oauth_"],
        pattern: r###"\b(pscale_oauth_[\w=\.-]{32,64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "planetscale-password",
        keywords: &["pscale_pw_"],
        pattern: r###"(?i)\b(pscale_pw_(?i)[\w=\.-]{32,64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "postman-api-token",
        keywords: &["pmak-"],
        pattern: r###"\b(PMAK-(?i)[a-f0-9]{24}\-[a-f0-9]{34})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "prefect-api-token",
        keywords: &["pnu_"],
        pattern: r###"\b(pnu_[a-zA-Z0-9]{36})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "private-key",
        keywords: &["-----begin"],
        pattern: r###"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----"###,
    },
    GitleaksRule {
        id: "pulumi-api-token",
        keywords: &["pul-"],
        pattern: r###"\b(pul-[a-f0-9]{40})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "pypi-upload-token",
        keywords: &["pypi-ageichlwas5vcmc"],
        pattern: r###"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}"###,
    },
    GitleaksRule {
        id: "readme-api-token",
        keywords: &["rdme_"],
        pattern: r###"\b(rdme_[a-z0-9]{70})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "rubygems-api-token",
        keywords: &["rubygems_"],
        pattern: r###"\b(rubygems_[a-f0-9]{48})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "scalingo-api-token",
        keywords: &["tk-us-"],
        pattern: r###"\b(tk-us-[\w-]{48})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "sendgrid-api-token",
        keywords: &["sg."],
        pattern: r###"\b(SG\.(?i)[a-z0-9=_\-\.]{66})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "sendinblue-api-token",
        keywords: &["xkeysib-"],
        pattern: r###"\b(xkeysib-[a-f0-9]{64}\-(?i)[a-z0-9]{16})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "sentry-org-token",
        keywords: &["sntrys_eyjpyxqio"],
        pattern: r###"\bsntrys_eyJpYXQiO[a-zA-Z0-9+/]{10,200}(?:LCJyZWdpb25fdXJs|InJlZ2lvbl91cmwi|cmVnaW9uX3VybCI6)[a-zA-Z0-9+/]{10,200}={0,2}_[a-zA-Z0-9+/]{43}(?:[^a-zA-Z0-9+/]|\z)"###,
    },
    GitleaksRule {
        id: "sentry-user-token",
        keywords: &["sntryu_"],
        pattern: r###"\b(sntryu_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "settlemint-application-access-token",
        keywords: &["sm_aat"],
        pattern: r###"\b(sm_aat_[a-zA-Z0-9]{16})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "settlemint-personal-access-token",
        keywords: &["sm_pat"],
        pattern: r###"\b(sm_pat_[a-zA-Z0-9]{16})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "settlemint-service-access-token",
        keywords: &["sm_sat"],
        pattern: r###"\b(sm_sat_[a-zA-Z0-9]{16})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "shippo-api-token",
        keywords: &["shippo_"],
        pattern: r###"\b(shippo_(?:live|test)_[a-fA-F0-9]{40})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "shopify-access-token",
        keywords: &["shpat_"],
        pattern: r###"shpat_[a-fA-F0-9]{32}"###,
    },
    GitleaksRule {
        id: "shopify-custom-access-token",
        keywords: &["shpca_"],
        pattern: r###"shpca_[a-fA-F0-9]{32}"###,
    },
    GitleaksRule {
        id: "shopify-private-app-access-token",
        keywords: &["shppa_"],
        pattern: r###"shppa_[a-fA-F0-9]{32}"###,
    },
    GitleaksRule {
        id: "shopify-shared-secret",
        keywords: &["shpss_"],
        pattern: r###"shpss_[a-fA-F0-9]{32}"###,
    },
    GitleaksRule {
        id: "sidekiq-sensitive-url",
        keywords: &["gems.contribsys.com", "enterprise.contribsys.com"],
        pattern: r###"(?i)\bhttps?://([a-f0-9]{8}:[a-f0-9]{8})@(?:gems.contribsys.com|enterprise.contribsys.com)(?:[\/|\#|\?|:]|$)"###,
    },
    GitleaksRule {
        id: "slack-app-token",
        keywords: &["xapp"],
        pattern: r###"(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"###,
    },
    GitleaksRule {
        id: "slack-bot-token",
        keywords: &["xoxb"],
        pattern: r###"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*"###,
    },
    GitleaksRule {
        id: "slack-config-access-token",
        keywords: &["xoxe.xoxb-", "xoxe.xoxp-"],
        pattern: r###"(?i)xoxe.xox[bp]-\d-[A-Z0-9]{163,166}"###,
    },
    GitleaksRule {
        id: "slack-config-refresh-token",
        keywords: &["xoxe-"],
        pattern: r###"(?i)xoxe-\d-[A-Z0-9]{146}"###,
    },
    GitleaksRule {
        id: "slack-legacy-bot-token",
        keywords: &["xoxb"],
        pattern: r###"xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}"###,
    },
    GitleaksRule {
        id: "slack-legacy-token",
        keywords: &["xoxo", "xoxs"],
        pattern: r###"xox[os]-\d+-\d+-\d+-[a-fA-F\d]+"###,
    },
    GitleaksRule {
        id: "slack-legacy-workspace-token",
        keywords: &["xoxa", "xoxr"],
        pattern: r###"xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}"###,
    },
    GitleaksRule {
        id: "slack-user-token",
        keywords: &["xoxp-", "xoxe-"],
        pattern: r###"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}"###,
    },
    GitleaksRule {
        id: "slack-webhook-url",
        keywords: &["hooks.slack.com"],
        pattern: r###"(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}"###,
    },
    GitleaksRule {
        id: "sourcegraph-access-token",
        keywords: &["sgp_", "sourcegraph"],
        pattern: r###"(?i)\b(\b(sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})\b)(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "square-access-token",
        keywords: &["sq0atp-", "eaaa"],
        pattern: r###"\b((?:EAAA|sq0atp-)[\w-]{22,60})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "stripe-access-token",
        keywords: &[
            "sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod",
        ],
        pattern: r###"\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "twilio-api-key",
        keywords: &["sk"],
        pattern: r###"SK[0-9a-fA-F]{32}"###,
    },
    GitleaksRule {
        id: "vault-batch-token",
        keywords: &["hvb."],
        pattern: r###"\b(hvb\.[\w-]{138,300})(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
    GitleaksRule {
        id: "vault-service-token",
        keywords: &["hvs.", "s."],
        pattern: r###"\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)"###,
    },
];
