//! The page's HTML, rendered on the server: the layout and the four views (questions, Always
//! allow, history, phones). Every text that came from the store or a phone goes through
//! [`escape`]; nothing here is inline script or style, which the Content-Security-Policy forbids.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use phonelogs_gateway::catalog::{action_phrase, answer_label};
use phonelogs_gateway::{Answer, Approval, HistoryStep, StandingRule, Status};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use crate::Finding;

/// Escapes text for HTML content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Which view a page shows, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The pending questions.
    Questions,
    /// The Always-allow rules.
    Rules,
    /// The history.
    History,
    /// The doctor's findings.
    Phones,
}

/// A whole page around `body`.
pub fn layout(view: View, title: &str, body: &str) -> String {
    let link = |target: View, href: &str, text: &str| {
        let current = if target == view {
            " aria-current=\"page\""
        } else {
            ""
        };
        format!("<a href=\"{href}\"{current}>{text}</a>")
    };
    let nav = [
        link(View::Questions, "./", "Questions"),
        link(View::Rules, "rules", "Always allow"),
        link(View::History, "history", "History"),
        link(View::Phones, "phones", "Phones"),
    ]
    .join("");
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · phonelogs</title>\
         <link rel=\"icon\" href=\"icon.svg\"><link rel=\"stylesheet\" href=\"page.css\">\
         <script src=\"page.js\" defer></script></head>\
         <body><header><h1>phonelogs</h1><nav>{nav}</nav></header><main>{body}</main>\
         <footer>Served on this computer only. Agents never see this page; the history keeps \
         what was read, never the text.</footer></body></html>\n",
        title = escape(title),
    )
}

/// Times as the person reads them: local time of day (with the date when not today).
pub struct Clock {
    /// Now.
    pub now: OffsetDateTime,
    /// The computer's UTC offset.
    pub offset: UtcOffset,
}

impl Clock {
    /// The clock now.
    pub fn now(offset: UtcOffset) -> Clock {
        Clock {
            now: OffsetDateTime::now_utc(),
            offset,
        }
    }

    fn show(&self, rfc3339: &str) -> String {
        let Ok(at) = OffsetDateTime::parse(rfc3339, &Rfc3339) else {
            return rfc3339.to_owned();
        };
        let at = at.to_offset(self.offset);
        let today = self.now.to_offset(self.offset).date();
        let time = format!("{:02}:{:02}:{:02}", at.hour(), at.minute(), at.second());
        if at.date() == today {
            time
        } else {
            format!("{} {time}", at.date())
        }
    }

    fn waited(&self, rfc3339: &str) -> String {
        let seconds = OffsetDateTime::parse(rfc3339, &Rfc3339)
            .map(|at| (self.now - at).whole_seconds().max(0))
            .unwrap_or(0);
        waited_text(seconds)
    }
}

/// "12 s", "3 min 5 s", "2 h 10 min": the same words the page's script writes each second.
fn waited_text(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

fn hidden(name: &str, value: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
        escape(value)
    )
}

fn phone(id: &str, models: &HashMap<String, String>) -> String {
    match models.get(id) {
        Some(model) => format!("{} <span class=\"id\">{}</span>", escape(model), escape(id)),
        None => format!("<span class=\"id\">{}</span>", escape(id)),
    }
}

/// The list of pending questions: the part the page replaces live.
pub fn questions(
    pending: &[Approval],
    models: &HashMap<String, String>,
    csrf: &str,
    clock: &Clock,
) -> String {
    if pending.is_empty() {
        return "<p class=\"empty\">No questions are waiting for you.</p>".to_owned();
    }
    let mut out = String::new();
    for approval in pending {
        let buttons: String = [Answer::Once, Answer::Task, Answer::Always, Answer::Deny]
            .into_iter()
            .map(|answer| {
                format!(
                    "<button type=\"submit\" name=\"answer\" value=\"{}\" class=\"{}\">{}</button>",
                    answer.as_str(),
                    answer.as_str(),
                    answer_label(answer)
                )
            })
            .collect();
        let _ = write!(
            out,
            "<article class=\"question\" data-id=\"{id}\" data-question=\"{question}\">\
             <h2>{question}</h2><dl>\
             <dt>Agent</dt><dd>{agent}</dd>\
             <dt>Phone</dt><dd>{phone}</dd>\
             <dt>App</dt><dd>{label} <span class=\"id\">{app}</span></dd>\
             <dt>Action</dt><dd>{action} <span class=\"id\">{action_id}</span></dd>\
             <dt>Waiting</dt><dd><span class=\"waited\" data-since=\"{since}\">{waited}</span> \
             (asked at {asked})</dd></dl>\
             <form method=\"post\" action=\"answer\">{csrf}{hidden_id}{buttons}</form></article>",
            id = escape(&approval.id),
            question = escape(&approval.question),
            agent = escape(&approval.agent),
            phone = phone(&approval.device, models),
            label = escape(&approval.app_label),
            app = escape(&approval.app),
            action = approval.action.map_or_else(
                || "an action this phonelogs does not know".to_owned(),
                |action| escape(&action_phrase(action, &approval.app_label))
            ),
            action_id = approval.action.map_or("unknown", |action| action.as_str()),
            since = escape(&approval.created_at),
            waited = clock.waited(&approval.created_at),
            asked = clock.show(&approval.created_at),
            csrf = hidden("csrf", csrf),
            hidden_id = hidden("id", &approval.id),
        );
    }
    out
}

/// The questions view around the live list.
pub fn questions_page(list: &str, note: Option<&str>) -> String {
    let note = note.map_or(String::new(), |note| {
        format!("<p class=\"note\" role=\"status\">{}</p>", escape(note))
    });
    format!(
        "<h2 class=\"view\">Questions from agents</h2>{note}\
         <p class=\"hint\">Each question is one agent asking to do one thing to one app on one \
         phone. This list updates by itself. <button type=\"button\" id=\"notify\" hidden>Notify \
         me of new questions</button></p>\
         <section id=\"questions\" aria-live=\"polite\">{list}</section>"
    )
}

/// The Always-allow view: every standing rule with Revoke, the blocked apps, and the apps whose
/// secrets agents see unmasked, each with Mask again.
pub fn rules_page(
    rules: &[StandingRule],
    blocked: &[String],
    unmasked: &[(String, String)],
    models: &HashMap<String, String>,
    csrf: &str,
    clock: &Clock,
) -> String {
    let mut out = String::from("<h2 class=\"view\">Always allow</h2>");
    if rules.is_empty() {
        out.push_str(
            "<p class=\"empty\">No Always-allow rules: every task asks before it reads.</p>",
        );
    } else {
        out.push_str(
            "<table id=\"rules\"><thead><tr><th>Agent</th><th>Phone</th><th>App</th>\
             <th>Allows</th><th>Since</th><th></th></tr></thead><tbody>",
        );
        for rule in rules {
            let _ = write!(
                out,
                "<tr data-id=\"{id}\"><td>{agent}</td><td>{phone}</td><td>{app}</td>\
                 <td>{action}</td><td>{since}</td><td><form method=\"post\" action=\"revoke\">\
                 {csrf}{hidden_id}<button type=\"submit\" class=\"revoke\">Revoke</button></form>\
                 </td></tr>",
                id = escape(&rule.id),
                agent = escape(&rule.agent),
                phone = phone(rule.device.as_str(), models),
                app = escape(rule.app.as_str()),
                action = escape(&action_phrase(rule.action, rule.app.as_str())),
                since = clock.show(&rule.created_at),
                csrf = hidden("csrf", csrf),
                hidden_id = hidden("id", &rule.id),
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("<h2 class=\"view\">Blocked apps</h2>");
    if blocked.is_empty() {
        out.push_str("<p class=\"empty\">No apps are blocked.</p>");
    } else {
        out.push_str("<ul id=\"blocked\">");
        for app in blocked {
            let _ = write!(out, "<li>{}</li>", escape(app));
        }
        out.push_str("</ul><p class=\"hint\">Block and unblock apps with <code>phonelogs rules block</code>.</p>");
    }
    out.push_str(&unmasked_section(unmasked, csrf, clock));
    out
}

/// The apps whose secrets agents see unmasked, each with Mask again.
fn unmasked_section(unmasked: &[(String, String)], csrf: &str, clock: &Clock) -> String {
    let mut out = String::from("<h2 class=\"view\">Secrets shown unmasked</h2>");
    if unmasked.is_empty() {
        out.push_str(
            "<p class=\"empty\">Agents see every app's tokens, passwords, keys and card numbers masked as [redacted:KIND].</p>",
        );
        return out;
    }
    out.push_str(
        "<table id=\"unmasked\"><thead><tr><th>App</th><th>Since</th><th></th></tr></thead><tbody>",
    );
    for (app, since) in unmasked {
        let _ = write!(
            out,
            "<tr data-app=\"{app}\"><td>{app}</td><td>{since}</td><td><form method=\"post\" action=\"mask\">\
             {csrf}{hidden_app}<button type=\"submit\" class=\"mask\">Mask again</button></form></td></tr>",
            app = escape(app),
            since = clock.show(since),
            csrf = hidden("csrf", csrf),
            hidden_app = hidden("app", app),
        );
    }
    out.push_str("</tbody></table><p class=\"hint\">Turn masking off for an app with <code>phonelogs rules unmask APP</code>.</p>");
    out
}

/// The history's filter values, as the person chose them.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct HistoryQuery {
    /// The app's id.
    #[serde(default)]
    pub app: String,
    /// The agent.
    #[serde(default)]
    pub agent: String,
    /// The phone's id.
    #[serde(default)]
    pub device: String,
    /// A status's name.
    #[serde(default)]
    pub status: String,
}

fn select(name: &str, label: &str, chosen: &str, options: &BTreeSet<String>) -> String {
    let mut out = format!(
        "<label>{label} <select name=\"{name}\" id=\"filter-{name}\"><option value=\"\">any</option>"
    );
    for option in options {
        let selected = if option == chosen { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{value}\"{selected}>{value}</option>",
            value = escape(option)
        );
    }
    out.push_str("</select></label>");
    out
}

/// The history view: the filter form (its choices from `all`) and the steps that match, newest
/// first.
pub fn history_page(
    query: &HistoryQuery,
    all: &[HistoryStep],
    shown: &[HistoryStep],
    clock: &Clock,
) -> String {
    let values = |f: fn(&HistoryStep) -> Option<&str>| -> BTreeSet<String> {
        all.iter().filter_map(f).map(str::to_owned).collect()
    };
    let apps = values(|s| Some(&s.args.app));
    let agents = values(|s| Some(&s.agent));
    let devices = values(|s| s.device.as_deref());
    let statuses = values(|s| Some(s.status.as_str()));
    let mut out = format!(
        "<h2 class=\"view\">History</h2><form method=\"get\" action=\"history\" class=\"filters\">\
         {}{}{}{}<button type=\"submit\" id=\"filter\">Filter</button> <a href=\"history\">Clear</a></form>",
        select("app", "App", &query.app, &apps),
        select("agent", "Agent", &query.agent, &agents),
        select("device", "Phone", &query.device, &devices),
        select("status", "Status", &query.status, &statuses),
    );
    if shown.is_empty() {
        out.push_str("<p class=\"empty\">Nothing matches.</p>");
        return out;
    }
    out.push_str(
        "<table id=\"history\"><thead><tr><th>When</th><th>Agent</th><th>Phone</th><th>App</th>\
         <th>Status</th><th>What</th></tr></thead><tbody>",
    );
    for step in shown.iter().rev() {
        let _ = write!(
            out,
            "<tr class=\"status-{status}\"><td>{at}</td><td>{agent}</td><td>{device}</td>\
             <td>{app}</td><td>{status}</td><td>{step}</td></tr>",
            at = clock.show(&step.at),
            agent = escape(&step.agent),
            device = escape(step.device.as_deref().unwrap_or("-")),
            app = escape(&step.args.app),
            status = step.status.as_str(),
            step = escape(&step.step),
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// Reads a status filter; an unknown name filters nothing out.
pub fn status_filter(text: &str) -> Option<Status> {
    Status::parse(text.trim())
}

/// The phones view: the doctor's findings, each with its fix.
pub fn phones_page(findings: &[Finding]) -> String {
    let mut out = String::from(
        "<h2 class=\"view\">Phones</h2><p class=\"hint\">What <code>phonelogs doctor</code> \
         finds: each phone, whether its logs can be read, and what to do when not.</p>\
         <table id=\"phones\"><thead><tr><th></th><th>Check</th><th>Found</th><th>Fix</th></tr>\
         </thead><tbody>",
    );
    for finding in findings {
        let (class, mark) = if finding.ok {
            ("ok", "✓")
        } else {
            ("bad", "✗")
        };
        let _ = write!(
            out,
            "<tr class=\"{class}\"><td>{mark}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&finding.check),
            escape(&finding.detail),
            escape(finding.fix.as_deref().unwrap_or("")),
        );
    }
    out.push_str("</tbody></table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_store_is_escaped() {
        assert_eq!(
            escape("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn waiting_times_read_as_people_say_them() {
        assert_eq!(waited_text(12), "12 s");
        assert_eq!(waited_text(185), "3 min 5 s");
        assert_eq!(waited_text(7800), "2 h 10 min");
    }
}
