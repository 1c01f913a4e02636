//! What the server says, in the expert's language: English or Simplified Chinese, as the
//! request's `Accept-Language` asks (the page sends the language the expert chose with every
//! call; a browser's own header is followed before that). Every answer is made inside
//! [`follow_language`], which holds the request's language for the code that words the answer
//! ([`current`]): the API's errors ([`crate::error`]), the `Host` check, the size and time limits
//! and a missing file. The core words its errors in English; their Chinese is written here, one
//! text for every [`ErrorCode`] (the match has no catch-all, so a new code needs its Chinese
//! before the server builds) and a text of its own for each refusal of the first minute — the
//! invitation, the login and the web passphrase ([`access_zh`]). English answers are written as
//! sentences (a capital, a full stop: [`sentence`]).

use axum::http::{header, HeaderMap, HeaderValue};
use concord_core::app::web::MIN_PASSPHRASE_CHARS;
use concord_core::base::error_code::ErrorCode;
use concord_core::workflow::web_access::WebAccessError;

/// The languages the server answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// The language an `Accept-Language` header prefers among English and Chinese: the one of
    /// the higher weight (`q`), the earlier at equal weight; English when it names neither.
    pub fn preferred(accept: &str) -> Lang {
        let mut best: Option<(f32, Lang)> = None;
        for part in accept.split(',') {
            let mut pieces = part.split(';');
            let tag = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = pieces
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            let primary = tag.split('-').next().unwrap_or("");
            let lang = match primary {
                "zh" => Lang::Zh,
                "en" => Lang::En,
                _ => continue,
            };
            if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, lang));
            }
        }
        best.map_or(Lang::En, |(_, l)| l)
    }

    /// The language of a request's headers.
    pub fn of(headers: &HeaderMap) -> Lang {
        headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .map_or(Lang::En, Lang::preferred)
    }

    /// The language tag an answer carries in `Content-Language`.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }
}

tokio::task_local! {
    static LANG: Lang;
}

/// The language of the request being answered (English outside [`follow_language`]).
pub fn current() -> Lang {
    LANG.try_with(|l| *l).unwrap_or(Lang::En)
}

/// The outermost layer: answer the request in the language it asks for, and say that the
/// answer depends on it (`Vary: Accept-Language`); a refusal names its language
/// (`Content-Language`).
pub async fn follow_language(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let lang = Lang::of(request.headers());
    let mut response = LANG.scope(lang, next.run(request)).await;
    let refused = response.status().is_client_error() || response.status().is_server_error();
    let headers = response.headers_mut();
    headers.append(header::VARY, HeaderValue::from_static("Accept-Language"));
    if refused {
        headers
            .entry(header::CONTENT_LANGUAGE)
            .or_insert(HeaderValue::from_static(lang.tag()));
    }
    response
}

/// `text` as an English sentence: its first letter a capital, ending in a full stop (or the
/// question or exclamation mark it has).
pub fn sentence(text: &str) -> String {
    let text = text.trim();
    let mut chars = text.chars();
    let mut out = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
        None => return String::new(),
    };
    if !out.ends_with(['.', '?', '!']) {
        out.push('.');
    }
    out
}

/// The server's own messages (not a core refusal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// No session, or one that ended.
    NotLoggedIn,
    /// A write without the session's CSRF token.
    NoCsrf,
    /// Guesses at this login must wait.
    Wait { seconds: u64 },
    /// A failure whose reason is in the server's log.
    SeeTheLog,
    /// A failure of the server itself.
    Failed,
    /// An `/api/` path that is no route.
    NoRoute,
    /// A file the UI build does not have.
    NoFile,
    /// A `Host` that is not this server's.
    WrongHost,
    /// A body over the limit.
    TooLarge { limit: usize },
    /// A request over the time limit.
    TooSlow,
}

impl Said {
    /// The message in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        match (self, lang) {
            (Said::NotLoggedIn, Lang::En) => {
                "You are not logged in, or your session has ended. Log in again.".into()
            }
            (Said::NotLoggedIn, Lang::Zh) => "您尚未登录，或会话已结束。请重新登录。".into(),
            (Said::NoCsrf, Lang::En) => {
                "This request lacks the session's security token. Reload the page.".into()
            }
            (Said::NoCsrf, Lang::Zh) => "此请求缺少会话的安全令牌。请重新加载页面。".into(),
            (Said::Wait { seconds }, Lang::En) => format!(
                "Too many wrong passphrases. Try again in {} or ask the study lead.",
                wait_en(*seconds)
            ),
            (Said::Wait { seconds }, Lang::Zh) => format!(
                "口令错误次数过多。请在{}后再试，或联系研究负责人。",
                wait_zh(*seconds)
            ),
            (Said::SeeTheLog, Lang::En) => {
                "The server could not do this. The study lead can see why in its log.".into()
            }
            (Said::SeeTheLog, Lang::Zh) => {
                "服务器无法完成此操作。研究负责人可以在服务器日志中查看原因。".into()
            }
            (Said::Failed, Lang::En) => "The server could not do this. Try again.".into(),
            (Said::Failed, Lang::Zh) => "服务器无法完成此操作。请重试。".into(),
            (Said::NoRoute, Lang::En) => "There is no such address on this server.".into(),
            (Said::NoRoute, Lang::Zh) => "此服务器上没有这个地址。".into(),
            (Said::NoFile, Lang::En) => "Not found.".into(),
            (Said::NoFile, Lang::Zh) => "未找到。".into(),
            (Said::WrongHost, Lang::En) => "This request names another host than this server's. Reach it by its address or the name the study lead gave you.".into(),
            (Said::WrongHost, Lang::Zh) => "此请求指向的主机名不是本服务器的。请使用研究负责人给您的地址或名称访问。".into(),
            (Said::TooLarge { limit }, Lang::En) => {
                format!("This request is larger than the {limit} bytes the server reads.")
            }
            (Said::TooLarge { limit }, Lang::Zh) => {
                format!("此请求超过了服务器可读取的 {limit} 字节。")
            }
            (Said::TooSlow, Lang::En) => {
                "This request took too long to arrive. Send it again.".into()
            }
            (Said::TooSlow, Lang::Zh) => "此请求传送时间过长。请重新发送。".into(),
        }
    }
}

fn wait_en(seconds: u64) -> String {
    if seconds >= 120 {
        format!("{} minutes", seconds.div_ceil(60))
    } else if seconds == 1 {
        "1 second".into()
    } else {
        format!("{seconds} seconds")
    }
}

fn wait_zh(seconds: u64) -> String {
    if seconds >= 120 {
        format!(" {} 分钟", seconds.div_ceil(60))
    } else {
        format!(" {seconds} 秒")
    }
}

/// Why an invitation link does not open the page that sets a passphrase, for the page to say on
/// the login it leads to: `used`, `expired` or `invalid`.
pub fn invitation_reason(e: &WebAccessError) -> Option<&'static str> {
    match e {
        WebAccessError::InvitationUsed => Some("used"),
        WebAccessError::InvitationExpired { .. } => Some("expired"),
        WebAccessError::Invitation => Some("invalid"),
        _ => None,
    }
}

/// The Chinese of a refusal of the invitation, the login or the web passphrase, said more
/// exactly than its code's ([`code_zh`]).
pub fn access_zh(e: &WebAccessError) -> Option<String> {
    Some(match e {
        WebAccessError::Invitation => "此邀请链接无效（可能已被撤销，或复制时被截断）。请向研究负责人索取新的链接。".into(),
        WebAccessError::InvitationUsed => "此邀请链接已被使用。如果您已用它设置了口令，请用您的姓名和该口令登录；如果没有，请向研究负责人索取新的链接。".into(),
        WebAccessError::InvitationExpired { at } => format!(
            "此邀请链接已于 {}（UTC）过期。请向研究负责人索取新的链接；如果您曾用之前的链接设置过口令，请直接登录。",
            &concord_core::base::clock::iso_utc(*at)[..10]
        ),
        WebAccessError::Credentials => "姓名或口令不正确。".into(),
        WebAccessError::Locked { .. } => "口令错误次数过多，下一次尝试需要等待。请稍后再试，或联系研究负责人。".into(),
        WebAccessError::Unsealed => "此网页登录并非通过本研究负责人的邀请创建（或由旧版 Concord 创建），因此不可信。请向研究负责人索取新的邀请。".into(),
        WebAccessError::Weak => format!(
            "网页口令至少需要 {MIN_PASSPHRASE_CHARS} 个字符，并且不能只有一种字符（例如几个词加一个数字）。"
        ),
        _ => return None,
    })
}

/// The Chinese of every error code: what went wrong, said for the person at the page.
pub fn code_zh(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::AlreadyEncrypted => "此研究已经加密。",
        ErrorCode::AlreadyExists => "该文件已存在。",
        ErrorCode::AnswersWithoutText => "此次分配抽到的部分回答在研究中没有文本。",
        ErrorCode::Assignment => "无法按此方式分配条目。",
        ErrorCode::AssignmentExists => "此研究已有分配。",
        ErrorCode::BadGap => "此间隔设置无效。",
        ErrorCode::BadRule => "此规则无效。",
        ErrorCode::CalibrationPending => {
            "请先完成校准条目；通过后（或研究负责人允许后）才会开放正式评分队列。"
        }
        ErrorCode::Converting => "此研究正在转换，请稍后再试。",
        ErrorCode::Damaged => "研究文件已损坏。请联系研究负责人。",
        ErrorCode::Database => "研究数据库出错。请联系研究负责人。",
        ErrorCode::Demo => "无法创建示例研究。",
        ErrorCode::EmptyAdjudicator => "裁定人姓名不能为空。",
        ErrorCode::EmptyExplanation => "请填写说明。",
        ErrorCode::EmptyOverride => "请填写覆盖的理由。",
        ErrorCode::EmptyReason => "请填写理由。",
        ErrorCode::Export => "导出失败。",
        ErrorCode::FolderMissing => "该文件夹不存在。",
        ErrorCode::ForeignSchema => "该文件不是本版本 Concord 的研究文件。",
        ErrorCode::InUse => "研究正被另一个程序使用，请稍后再试。",
        ErrorCode::Incomplete => "尚未完成，无法继续。",
        ErrorCode::Internal => "服务器无法完成此操作。请重试。",
        ErrorCode::Invalid => "输入无效，无法保存。",
        ErrorCode::Io => "读写文件时出错。请联系研究负责人。",
        ErrorCode::JudgeBatch
        | ErrorCode::JudgeBusy
        | ErrorCode::JudgeClient
        | ErrorCode::JudgeEndpoint
        | ErrorCode::JudgeKey
        | ErrorCode::JudgeKeySource
        | ErrorCode::JudgeRubric
        | ErrorCode::JudgeRuntime
        | ErrorCode::JudgeSettings
        | ErrorCode::JudgeTemplate => "模型评审无法运行（此操作不在网页评分中提供）。",
        ErrorCode::LeadPassphrase => "研究负责人口令不正确。",
        ErrorCode::Keyring => {
            "此计算机没有本研究负责人的密钥：请在研究负责人的计算机上运行服务和发送邀请。"
        }
        ErrorCode::MissingSource => "缺少来源。",
        ErrorCode::NewerSchema => "此研究由更新版本的 Concord 创建。",
        ErrorCode::NoLocation => "没有可用的位置。",
        ErrorCode::NoRaterSession => "当前没有评分人会话。",
        ErrorCode::NoStudy => "没有打开的研究。",
        ErrorCode::NoSuchCriterion => "该标准不属于此条目的评分表。",
        ErrorCode::NoSuchItem => "此条目不在您的队列中。",
        ErrorCode::NotAStudy => "该文件不是 Concord 研究。",
        ErrorCode::NotAnExpert => "您不是此研究的专家评分人。",
        ErrorCode::NotEncrypted => "此研究未加密。",
        ErrorCode::NotFound => "未找到。",
        ErrorCode::NotSqlite => "该文件不是 SQLite 数据库。",
        ErrorCode::NothingRated => "还没有任何评分。",
        ErrorCode::OffScale => "该值不在此标准的等级范围内。",
        ErrorCode::Span => "无法这样标注：所选范围须在回复之内，代码与严重程度须为评分标准所列，且每段只能标注一次。",
        ErrorCode::Package => "评分包无效。",
        ErrorCode::PassphraseNeeded => "需要口令才能打开此研究。",
        ErrorCode::PassphraseRefused => "此口令未被接受。",
        ErrorCode::Path => "该路径无法使用。",
        ErrorCode::Plan => "此计划无效。",
        ErrorCode::ProfilesLocked => "研究负责人已锁定评分人名单。",
        ErrorCode::RaterSession => "在浏览器中评分时不能进行此操作。",
        ErrorCode::ReadOnly => "研究以只读方式打开，无法保存。",
        ErrorCode::Rubric => "评分表无效。",
        ErrorCode::StoredRule => "研究中保存的规则无效。",
        ErrorCode::StudyMissing => "找不到研究文件。",
        ErrorCode::Truncated => "研究文件不完整。",
        ErrorCode::UnexpectedSchemaObject => "研究文件包含意外的结构，已拒绝打开。",
        ErrorCode::UnknownCriterion => "未知的标准。",
        ErrorCode::UnknownExpert => "此研究中没有这位专家。",
        ErrorCode::UnknownItem => "未知的条目。",
        ErrorCode::Unreadable => "无法读取该文件。",
        ErrorCode::AlreadyResolved => "此项已处理。",
        ErrorCode::NoPassphrase => "请先设置签署口令。",
        ErrorCode::NothingToSign => "没有可签署的评分。",
        ErrorCode::PhiUnreviewed => "仍有未审核的个人健康信息。",
        ErrorCode::SignedRating => "此评分已签署：修改需要填写理由。",
        ErrorCode::WeakPassphrase => {
            "这个口令太容易被猜到。请换一个更长的口令，例如四五个随机的词再加一个数字。"
        }
        ErrorCode::WrongPassphrase => "口令不正确。",
        ErrorCode::WebInvitation => "此邀请链接无效。请向研究负责人索取新的链接。",
        ErrorCode::WebLocked => "口令错误次数过多，下一次尝试需要等待。",
        ErrorCode::WebLogin => "姓名或口令不正确。",
        ErrorCode::WebSession => "您的登录已结束。请重新登录。",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_s_language_is_read_from_accept_language() {
        for (header, want) in [
            ("zh-CN", Lang::Zh),
            ("zh", Lang::Zh),
            ("en", Lang::En),
            ("zh-CN,zh;q=0.9,en;q=0.8", Lang::Zh),
            ("en-US,en;q=0.9,zh-CN;q=0.8", Lang::En),
            ("fr-FR, zh;q=0.5", Lang::Zh),
            ("de", Lang::En),
            ("", Lang::En),
            ("zh;q=0, en", Lang::En),
        ] {
            assert_eq!(
                Lang::preferred(header),
                want,
                "{header:?} prefers {want:?} of the two languages the server speaks"
            );
        }
    }

    #[test]
    fn english_answers_are_sentences() {
        assert_eq!(
            sentence("the name or the passphrase is not right"),
            "The name or the passphrase is not right.",
            "a capital and a full stop"
        );
        assert_eq!(
            sentence("“x” is off the scale?"),
            "“x” is off the scale?",
            "a sentence that opens with a quote or ends in a question mark is kept"
        );
    }
}
