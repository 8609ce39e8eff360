//! The whole `phone_logs` call: the arguments, the policy from the app's id, the phone and the
//! person, the read, and the layout within the result cap.

use phonelogs_driver::{AppId, AppLogger, ErrorKind, LogLevel, LogLine, LogNotice, LogQuery};
use phonelogs_policy::Action;
use time::OffsetDateTime;

use crate::catalog;
use crate::cursor::CursorRefusal;
use crate::live::{Ending, LiveHooks, On, WAIT_TIMEOUTS, Wait, wait_for_line, wait_for_report};
use crate::permission::{Ask, Gate};
use crate::session::{Session, Target, driver_error_status};
use crate::types::{LogsKind, LogsRequest, LogsResponse, Status, StepArgs};
use phonelogs_view::held::Held;
use phonelogs_view::mask::Masker;
use phonelogs_view::masked::{MaskedRead, Piece, ShownLine};
use phonelogs_view::place::Position;
use phonelogs_view::place::whole_ms;
use phonelogs_view::render::{LineView, RenderedLines, lay_out_lines};
use phonelogs_view::rows::RowOptions;
use phonelogs_view::select::Selection;
use phonelogs_view::select::awaited_at;
use phonelogs_view::since::{SincePlace, parse_since, since_place};

/// The precision of the times a build floor is compared with: lines print to the
/// millisecond, reports to the second ([`Session::build_window`]).
const MS: time::Duration = time::Duration::MILLISECOND;
const SECOND: time::Duration = time::Duration::SECOND;

/// The default and largest `limit` for lines.
pub const LOG_LIMITS: (u32, u32) = (200, 500);
/// The default and largest `limit` for crash reports.
pub const CRASH_LIMITS: (u32, u32) = (3, 10);
/// A `phone_logs` call with its arguments checked.
pub(crate) struct LogsCall {
    pub(crate) args: StepArgs,
    pub(crate) app: AppId,
    pub(crate) kind: LogsKind,
    pub(crate) level: Option<LogLevel>,
    pub(crate) limit: usize,
    /// The time `since` names (the task's start when it names a place or nothing).
    pub(crate) since: OffsetDateTime,
    /// `since: "last"` or `"cursor:<value>"`.
    pub(crate) place: Option<SincePlace>,
    /// `filter`, `exclude` and `tag`, applied here to the masked lines (never by the driver,
    /// which would match the raw text).
    pub(crate) selection: Selection,
    /// Whether repeats are folded.
    pub(crate) fold: bool,
    pub(crate) wait: Option<Wait>,
    /// Kind crashes: the seconds of the app's lines to add under each report.
    pub(crate) context: Option<u32>,
    approval_id: Option<String>,
}

impl Session {
    /// The whole `phone_logs` call. It never fails: every outcome is a status and a message.
    ///
    /// The arguments are checked first, then the policy from the app's id, then the phone and
    /// the person ([`crate::permission`]), then the read. When the driver finds the app changed
    /// under the call (a release build installed over the debug build it had seen), the phone
    /// and the person are asked again, once, in the same call.
    pub async fn logs(&self, request: LogsRequest) -> LogsResponse {
        self.logs_live(request, &LiveHooks::default()).await
    }

    /// [`Session::logs`] with hooks for a wait (`wait_for`): progress about once a second, and a
    /// cancellation that ends the wait at once with what came.
    pub async fn logs_live(&self, request: LogsRequest, hooks: &LiveHooks) -> LogsResponse {
        let mut response = self.logs_call(request, hooks).await;
        // Every message and rule within its bound, whatever it quotes: the result's size is
        // the cap plus these (what the MCP server declares to clients).
        response.message = phonelogs_view::render::bounded_message(response.message);
        response.rule = response
            .rule
            .as_deref()
            .map(phonelogs_view::render::heading_part);
        response
    }

    async fn logs_call(&self, request: LogsRequest, hooks: &LiveHooks) -> LogsResponse {
        let call = match self.prepare(&request) {
            Ok(call) => call,
            Err(response) => return *response,
        };
        // A warm call is decided on the facts the driver holds from its last round trip, which
        // its read confirms; a change it finds is decided again on facts read fresh.
        let mut again = true;
        loop {
            let target = match self.admit(&call, request.device.as_deref(), again).await {
                Ok(target) => target,
                Err(response) => return *response,
            };
            let read = match call.kind {
                LogsKind::Logs => self.read_lines(&target, &call, hooks).await,
                LogsKind::Crashes => self.read_reports(&target, &call, hooks).await,
            };
            self.after_read(&target).await;
            match read {
                Ok(response) => return response,
                Err(error) if error.kind() == ErrorKind::Changed && again => {
                    tracing::info!(%error, "the app changed under the call; deciding again");
                    again = false;
                }
                Err(error) => return self.driver_failed(&call.args, &target, error),
            }
        }
    }

    /// Checks the call's arguments and the policy from the app's id, before anything touches a
    /// phone.
    fn prepare(&self, request: &LogsRequest) -> Result<LogsCall, Box<LogsResponse>> {
        if self.ended() {
            return Err(Box::new(LogsResponse::bare(
                Status::Error,
                catalog::task_ended(),
            )));
        }
        let app = AppId::parse(&request.app)
            .map_err(|error| Box::new(LogsResponse::bare(Status::Error, error.to_string())))?;
        let level = level_of(request);
        let place = since_place(request.since.as_deref());
        let since = match place {
            Some(_) => Ok(self.started_at()),
            None => parse_since(
                request.since.as_deref(),
                self.gateway().now(),
                self.gateway().local_offset(),
                self.started_at(),
            )
            .map_err(|error| catalog::view_error(&error)),
        };
        let args = step_args(request, place.as_ref(), &since, &level);
        let fail = |message: String| {
            let mut response = self.failed(&args, None, app.as_str(), Status::Error, message);
            response.error_code = Some(crate::types::LogsErrorCode::InvalidArgument);
            Box::new(response)
        };
        let level = level.map_err(fail)?;
        let (default_limit, max_limit) = match request.kind {
            LogsKind::Logs => LOG_LIMITS,
            LogsKind::Crashes => CRASH_LIMITS,
        };
        let limit = request.limit.unwrap_or(default_limit);
        if limit == 0 || limit > max_limit {
            return Err(fail(catalog::limit_error(
                request.kind.as_str(),
                limit,
                max_limit,
            )));
        }
        if place.is_some() && request.kind == LogsKind::Crashes {
            return Err(fail(catalog::place_for_crashes()));
        }
        let since = since.map_err(fail)?;
        let wait = wait_of(request).map_err(fail)?;
        let selection = Selection::parse(
            request.filter.as_deref(),
            request.exclude.as_deref(),
            request.tag.as_deref(),
        )
        .map_err(|error| fail(catalog::view_error(&error)))?;
        let context = crate::symbols::context_of(request).map_err(fail)?;
        // The policy first, from the app's id alone: an agent that may not read this app gets
        // the same answer whether it is installed or not, and no phone is asked anything.
        if let Some(response) = self.check_app(Action::Logs, &app, &args) {
            return Err(Box::new(response));
        }
        Ok(LogsCall {
            args,
            app,
            kind: request.kind,
            level,
            limit: limit as usize,
            since,
            place,
            selection,
            fold: request.fold.unwrap_or(true),
            wait,
            context,
            approval_id: request.approval_id.clone(),
        })
    }

    /// The phone, the app as the phone describes it, and the person's permission. With `held`,
    /// the facts the driver holds from its last round trip when they let the call go as it
    /// stands (the read then confirms them, [`phonelogs_driver::ConfirmingReader`]); else, and
    /// for any refusal or question, the facts read now.
    async fn admit(
        &self,
        call: &LogsCall,
        device: Option<&str>,
        held: bool,
    ) -> Result<Target, Box<LogsResponse>> {
        let ask = Ask::plain(Action::Logs);
        let approval_id = call.approval_id.as_deref();
        let mut target = self.resolve(device, &call.app, &call.args, held).await?;
        if target.held && !self.permits_held(&target, &ask, approval_id) {
            target = self.resolve(device, &call.app, &call.args, false).await?;
        }
        let capabilities = self.driver(target.driver_index).capabilities();
        let able = match call.kind {
            LogsKind::Logs => capabilities.logs,
            LogsKind::Crashes => capabilities.crashes,
        };
        if !able {
            let message = format!("this phone's driver cannot read {}.", call.kind.as_str());
            return Err(Box::new(self.failed(
                &call.args,
                Some(&target.device),
                &target.label,
                Status::Unsupported,
                message,
            )));
        }
        if !target.held {
            match self.permit(&target, &ask, approval_id, &call.args).await {
                Gate::Go => {}
                Gate::Stop(response) => return Err(response),
            }
        }
        if !self.mark_read(&target).await {
            return Err(Box::new(LogsResponse::bare(
                Status::Error,
                catalog::task_ended(),
            )));
        }
        Ok(target)
    }

    /// Reads and lays out the app's lines: those after the place `since` names (a cursor, the
    /// last line shown), or since its time; with `wait_for`, until one holds the text. The
    /// result's cursor points after the last line shown, which is the newest read (the cut
    /// leaves out older lines only, and says how many), so nothing is skipped between calls.
    async fn read_lines(
        &self,
        target: &Target,
        call: &LogsCall,
        hooks: &LiveHooks,
    ) -> Result<LogsResponse, phonelogs_driver::Error> {
        let start = match self.place_of(target, call) {
            Ok(start) => start,
            Err(message) => {
                let device = Some(&target.device);
                return Ok(self.failed(&call.args, device, &target.label, Status::Error, message));
            }
        };
        let key = (call.selection.key().to_owned(), call.level);
        let masker = self.masker(&target.info.app);
        // Phones print lines to the millisecond (logcat's `-v epoch`), while a task starts at
        // any nanosecond: a line of the task's first millisecond would print as before it.
        // Compare at the lines' resolution.
        let since = start
            .as_ref()
            .map_or(whole_ms(call.since), |place| place.time);
        let (since, built) = self.build_window(target, Action::Logs, since, ("Lines", MS));
        let query = query_of(call, since);
        let driver = self.driver(target.driver_index);
        let mut result = driver
            .own_logs(&target.device, &target.info, &query)
            .await?;
        let notices = std::mem::take(&mut result.notices);
        let read_at = std::time::Instant::now();
        // One line per line of text, so no message forges another line; the limit then counts
        // the lines the agent sees. Borrowed first: only the lines that can be shown are copied.
        // Masked once, over the whole read: everything after sees masked text only.
        let masked = self.masked_read(target, &result.lines, masker);
        let pieces = call.selection.sift(masked.pieces());
        let (mut pieces, mut notes) =
            self.after_start(start.as_ref(), pieces, &key, result.mark.as_ref(), target);
        notes.extend(built);
        // An awaited line already read ends the wait at once (the lines after it are left for
        // the next call).
        let wait = call.wait.as_ref();
        let found = wait.and_then(|wait| awaited_at(&pieces, &wait.text));
        if let Some(at) = found {
            pieces.truncate(at + 1);
        }
        let place = match &start {
            Some(start) => start.advanced(&pieces),
            None => Position::after(&pieces, since, key, None),
        };
        let over = pieces.len().saturating_sub(call.limit);
        let lines: Vec<ShownLine> = pieces[over..].iter().map(|p| p.to_line()).collect();
        drop(pieces);
        drop(masked);
        let mut read = ReadLines {
            lines,
            omitted: result.omitted + over,
            processes: std::mem::take(&mut result.processes),
            notices,
            masker,
        };
        let (place, ending) = match (wait, found) {
            (Some(wait), None) => {
                let (how, place) = self
                    .wait_lines(target, call, hooks, (&query, &place), &mut read, wait)
                    .await?;
                (place, Some(how))
            }
            (Some(_), Some(_)) => (place, Some(Ending::Matched)),
            (None, _) => (place, None),
        };
        let place = place.marked(result.mark.clone(), read_at);
        Ok(self.lay_out_lines(target, call, read, place, notes, ending))
    }

    /// The pieces after the place `since` named (a cursor, the last line shown; all of them
    /// without one), and what the read must say of the phone's changes since that place.
    fn after_start<'p>(
        &self,
        start: Option<&Position>,
        pieces: Vec<Piece<'p>>,
        key: &(String, Option<LogLevel>),
        mark: Option<&phonelogs_driver::PhoneMark>,
        target: &Target,
    ) -> (Vec<Piece<'p>>, Vec<String>) {
        let Some(start) = start else {
            return (pieces, Vec::new());
        };
        let (kept, gone) = start.skip_seen(pieces, key);
        let change = start.changes(mark);
        let offset = self.gateway().local_offset();
        let notes =
            crate::cursor::change_sentences(&change, start.time, gone, &target.label, offset);
        (kept, notes)
    }

    /// Waits for new lines after `place` until one holds the awaited text, holding the newest
    /// `limit` of the read's and the wait's lines in `read` (the older ones counted as left
    /// out); the ending, and the place after the lines the wait took.
    async fn wait_lines(
        &self,
        target: &Target,
        call: &LogsCall,
        hooks: &LiveHooks,
        (query, place): (&LogQuery, &Position),
        read: &mut ReadLines<'_>,
        wait: &Wait,
    ) -> Result<(Ending, Position), phonelogs_driver::Error> {
        let masker = read.masker;
        let mut held = Held::new(std::mem::take(&mut read.lines), call.limit);
        let allowed = || self.still_allowed(&target.info.app);
        let on = On {
            driver: self.driver(target.driver_index),
            device: &target.device,
            info: &target.info,
            wait,
            hooks,
            allowed: &allowed,
            selection: &call.selection,
            masker,
            key_blocks: self.key_blocks(),
        };
        let ending = wait_for_line(&on, query, place, &mut held).await;
        let (lines, dropped, taken) = held.finish();
        read.omitted += dropped;
        let place = place.advanced(&lines[lines.len() - taken..]);
        read.lines = lines;
        Ok((ending?, place))
    }

    /// Builds the rows of the newest `limit` lines the read kept (masked, with process markers
    /// and repeats folded), renders them within the cap (the one cut), records the step, and
    /// gives out the cursor after the last line shown.
    fn lay_out_lines(
        &self,
        target: &Target,
        call: &LogsCall,
        read: ReadLines<'_>,
        place: Position,
        mut notes: Vec<String>,
        ending: Option<Ending>,
    ) -> LogsResponse {
        // The read kept the newest `limit` lines and counted the older ones in `omitted`.
        let ReadLines {
            lines,
            omitted,
            processes,
            notices,
            masker,
        } = read;
        let lines = self.symbolicated_lines(target, lines, &mut notes);
        let options = RowOptions {
            fold: call.fold,
            processes: &processes,
            masker,
        };
        let rendered = lay_out_lines(
            lines,
            options,
            self.gateway().local_offset(),
            self.gateway().result_cap(),
        );
        // The driver's count (the limit), the split's and the cap's, so the message's count is
        // of every older line the agent does not see.
        let left_out = omitted + rendered.left_out;
        let shown = rendered.shown;
        let step = if self.is_person() {
            catalog::step_person_read(shown, &target.label)
        } else {
            catalog::step_read_lines(shown, &target.label)
        };
        self.record(&call.args, Some(&target.device), Status::Ok, step);
        let mut message = catalog::lines_message(shown, &target.label, left_out, rendered.cut);
        // Why lines may be missing comes right after the count, before the cursor's notes.
        for note in said_after_count(&notices, &rendered, notes, masker, &target.label) {
            message.push(' ');
            message.push_str(&note);
        }
        if let (Some(how), Some(wait)) = (ending, &call.wait) {
            message.push(' ');
            message.push_str(&catalog::wait_outcome(
                how == Ending::Matched,
                &wait.text,
                wait.seconds,
                how == Ending::Cancelled,
            ));
        }
        let cursor = self
            .cursors()
            .issue(&target.device, &target.info.app, place);
        LogsResponse {
            status: Status::Ok,
            message,
            approval_id: None,
            rule: Some(catalog::names::APP_LOGS.to_owned()),
            log: rendered.log,
            lines: rendered.views,
            reports: Vec::new(),
            shown,
            left_out,
            cut: rendered.cut,
            folded: rendered.folded,
            masked: rendered.masked,
            error_code: None,
            cursor: Some(cursor),
            matched: ending.map(|how| how == Ending::Matched),
        }
    }

    /// The place `since` names: after a cursor of this task for this app and phone, after the
    /// last line shown (`last`; the time `since` would name when none was), or none.
    fn place_of(&self, target: &Target, call: &LogsCall) -> Result<Option<Position>, String> {
        let (device, app) = (&target.device, &target.info.app);
        match &call.place {
            None => Ok(None),
            Some(SincePlace::Last) => Ok(self.cursors().last(device, app)),
            Some(SincePlace::Cursor(value)) => self
                .cursors()
                .open(value, device, app)
                .map(Some)
                .map_err(|refusal| match refusal {
                    CursorRefusal::Unknown => catalog::cursor_unknown(),
                    CursorRefusal::Elsewhere { app, device } => {
                        catalog::cursor_elsewhere(app.as_str(), device.as_str())
                    }
                }),
        }
    }

    /// With `wait_for`, waits for a report after `first` (the read's reports) and returns the
    /// last read and how the wait ended; without, `first` as it is.
    async fn wait_reports(
        &self,
        target: &Target,
        call: &LogsCall,
        hooks: &LiveHooks,
        since: OffsetDateTime,
        first: phonelogs_driver::CrashResult,
    ) -> Result<(phonelogs_driver::CrashResult, Option<Ending>), phonelogs_driver::Error> {
        let Some(wait) = &call.wait else {
            return Ok((first, None));
        };
        let allowed = || self.still_allowed(&target.info.app);
        let on = On {
            driver: self.driver(target.driver_index),
            device: &target.device,
            info: &target.info,
            wait,
            hooks,
            allowed: &allowed,
            selection: &call.selection,
            masker: None,
            key_blocks: self.key_blocks(),
        };
        let build = self.kept_build(target);
        let of_build = |r: &_| build.is_none_or(|b| phonelogs_view::builds::of_build(r, b));
        let (last, how) = wait_for_report(&on, since, (call.limit, &of_build), first).await?;
        Ok((last, Some(how)))
    }

    /// Reads and lays out the app's crash reports.
    async fn read_reports(
        &self,
        target: &Target,
        call: &LogsCall,
        hooks: &LiveHooks,
    ) -> Result<LogsResponse, phonelogs_driver::Error> {
        let driver = self.driver(target.driver_index);
        let (since, built) =
            self.build_window(target, Action::Logs, call.since, ("Reports", SECOND));
        let result = driver
            .own_crash_result(&target.device, &target.info, since, call.limit)
            .await?;
        let (mut result, ending) = self
            .wait_reports(target, call, hooks, since, result)
            .await?;
        let other = self.drop_other_builds(target, &mut result.reports);
        let cap = self.gateway().result_cap();
        let masker = self.masker(&target.info.app);
        let laid = self
            .symbolicated_reports(target, call.context, result.reports, masker)
            .await?;
        let mut message = laid.message(&target.label, cap);
        message.push(' ');
        message.push_str(&match masker {
            Some(_) => catalog::masked_sentence(laid.masked).unwrap_or_default(),
            None => catalog::unmasked_sentence(&target.label),
        });
        let mut message = message.trim_end().to_owned();
        let (rendered, shown) = (laid.rendered, laid.shown);
        // Reports the driver could not confirm as the app's own (not its copy in another user)
        // are left out, and the message says how many; so are an earlier build's.
        let unconfirmed = catalog::unconfirmed_reports(result.unconfirmed, &target.label);
        for left_out in [unconfirmed, built, other].into_iter().flatten() {
            message.push(' ');
            message.push_str(&left_out);
        }
        if let (Some(how), Some(wait)) = (ending, &call.wait) {
            message.push(' ');
            message.push_str(&catalog::crash_wait_outcome(
                how == crate::live::Ending::Matched,
                wait.seconds,
                how == crate::live::Ending::Cancelled,
            ));
        }
        self.record(
            &call.args,
            Some(&target.device),
            Status::Ok,
            catalog::step_read_reports(shown, &target.label),
        );
        Ok(LogsResponse {
            status: Status::Ok,
            message,
            approval_id: None,
            rule: Some(catalog::names::APP_LOGS.to_owned()),
            log: rendered.log,
            lines: Vec::new(),
            reports: rendered.views,
            shown,
            left_out: laid.left_out,
            cut: rendered.cut,
            folded: 0,
            masked: laid.masked,
            error_code: None,
            cursor: None,
            matched: ending.map(|how| how == crate::live::Ending::Matched),
        })
    }

    pub(crate) fn driver_failed(
        &self,
        args: &StepArgs,
        target: &Target,
        error: phonelogs_driver::Error,
    ) -> LogsResponse {
        let (status, message) = driver_error_status(&error, &target.info.app, &target.device);
        self.failed(args, Some(&target.device), &target.label, status, message)
    }
}

/// What the driver is asked for: lines since `since` of the call's level. The selection is
/// applied by the gateway, to the masked lines, so when there is one the driver reads every
/// line of the level (a count would apply before it).
fn query_of(call: &LogsCall, since: OffsetDateTime) -> LogQuery {
    let count = if call.selection.keeps_all() {
        call.limit
    } else {
        usize::MAX
    };
    let mut query = LogQuery::since(since, count);
    query.level = call.level;
    query
}

impl Session {
    /// `lines` (the app's, oldest first) split one per line of text and masked as one read,
    /// private key blocks followed from what earlier reads of the app on the phone saw.
    pub(crate) fn masked_read<'l>(
        &self,
        target: &Target,
        lines: &'l [LogLine],
        masker: Option<&Masker>,
    ) -> MaskedRead<'l> {
        let memory = (self.key_blocks(), &target.device, &target.info.app);
        MaskedRead::new(phonelogs_view::lines::pieces(lines), masker, Some(memory))
    }
}

/// What a read of lines brought, for the layout.
struct ReadLines<'a> {
    lines: Vec<ShownLine>,
    /// Older lines the driver left out for the count.
    omitted: usize,
    /// What the driver knows of the app's processes, for the markers.
    processes: Vec<phonelogs_driver::ProcessSpan>,
    /// What the driver says the agent must be told with the lines.
    notices: Vec<LogNotice>,
    /// The masker, `None` when the person turned masking off for the app.
    masker: Option<&'a Masker>,
}

/// The level a request names (`None` for none), or why it names none.
fn level_of(request: &LogsRequest) -> Result<Option<LogLevel>, String> {
    match request.level.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => LogLevel::from_name(text)
            .map(Some)
            .ok_or_else(|| catalog::level_error(text)),
    }
}

/// What the history keeps of a request: what the call read it as, never the agent's words
/// for it (the level's name, the time or place `since` meant); only `filter`, `exclude` and
/// `tag` are the agent's own text, masked and bounded.
fn step_args(
    request: &LogsRequest,
    place: Option<&SincePlace>,
    since: &Result<OffsetDateTime, String>,
    level: &Result<Option<LogLevel>, String>,
) -> StepArgs {
    let bounded = |text: &Option<String>| text.as_deref().map(StepArgs::bounded);
    StepArgs {
        app: request.app.trim().to_owned(),
        kind: request.kind.as_str().to_owned(),
        since: history_since(request.since.as_deref(), place, since),
        filter: bounded(&request.filter),
        exclude: bounded(&request.exclude),
        tags: request
            .tag
            .as_ref()
            .filter(|tags| !tags.is_empty())
            .map(|tags| StepArgs::bounded(&tags.join(", "))),
        level: level.as_ref().map_or_else(
            |_| Some(HISTORY_INVALID.to_owned()),
            |level| level.map(|level| level.name().to_owned()),
        ),
        limit: request.limit,
    }
}

/// The driver's notices as sentences of the message: why some of the app's lines may be
/// missing and what fixes it, that it is not running, why some shown values read `<private>`
/// (counted over the log lines the rows shown stand for, their texts masked as shown; a
/// process marker row stands for none).
fn notice_sentences(notices: &[LogNotice], shown: &[LineView], label: &str) -> Vec<String> {
    notices
        .iter()
        .filter_map(|notice| {
            let marked = match notice {
                LogNotice::Redacted { marker, .. } => shown
                    .iter()
                    .filter(|row| row.marker.is_none() && row.text.contains(marker.as_str()))
                    .map(|row| row.lines)
                    .sum(),
                _ => 0,
            };
            catalog::log_notice(notice, label, marked)
        })
        .collect()
}

/// The sentences after the count: the driver's notices (why lines may be missing), then the
/// cursor's and symbols' notes, then what the rows did (repeats folded, secrets masked, or that
/// the person turned masking off).
fn said_after_count(
    notices: &[LogNotice],
    rendered: &RenderedLines,
    notes: Vec<String>,
    masker: Option<&Masker>,
    label: &str,
) -> Vec<String> {
    let mut said = notice_sentences(notices, &rendered.views, label);
    said.extend(notes);
    said.extend(catalog::folded_sentence(rendered.folded));
    said.extend(catalog::hidden_sentence(rendered.hidden));
    said.extend(match masker {
        Some(_) => catalog::masked_sentence(rendered.masked),
        None => Some(catalog::unmasked_sentence(label)),
    });
    said
}

/// The wait a request asks for: `wait_for` with `timeout` (seconds, 10 by default, 60 at most).
fn wait_of(request: &LogsRequest) -> Result<Option<Wait>, String> {
    // An empty text is any line: the wait ends with the next one.
    let Some(text) = request.wait_for.as_deref() else {
        return match request.timeout {
            Some(_) => Err(catalog::timeout_without_wait()),
            None => Ok(None),
        };
    };
    let (default, max) = WAIT_TIMEOUTS;
    let seconds = request.timeout.unwrap_or(default);
    if seconds == 0 || seconds > max {
        return Err(catalog::timeout_error(seconds, max));
    }
    if request.kind == LogsKind::Crashes && !text.trim().eq_ignore_ascii_case("crash") {
        return Err(catalog::crash_wait_error(text));
    }
    Ok(Some(Wait {
        text: text.to_owned(),
        seconds,
    }))
}

/// What the history keeps for a value the agent gave that was not a valid one: a fixed mark,
/// never the agent's text.
pub(crate) const HISTORY_INVALID: &str = "(invalid)";

/// `since` as the history keeps it: `last`, `cursor` (not its value), the time it was read as
/// (RFC 3339, UTC), [`HISTORY_INVALID`], or nothing when the agent gave none.
fn history_since(
    given: Option<&str>,
    place: Option<&SincePlace>,
    since: &Result<OffsetDateTime, String>,
) -> Option<String> {
    given.map(str::trim).filter(|text| !text.is_empty())?;
    Some(match (place, since) {
        (Some(SincePlace::Last), _) => "last".to_owned(),
        (Some(SincePlace::Cursor(_)), _) => "cursor".to_owned(),
        // A time near the ends of the calendar has no UTC form (it would overflow): kept as read.
        (None, Ok(time)) => crate::store::rfc3339(
            time.checked_to_offset(time::UtcOffset::UTC)
                .unwrap_or(*time),
        ),
        (None, Err(_)) => HISTORY_INVALID.to_owned(),
    })
}
