//! The audit trail as users read it: [`verify`] recomputes the hash chain, checks its checkpoints
//! signed by the lead's key, and the sealed state of
//! the rating tables (see `store/audit.rs` for how entries are sealed), and [`log`] lists entries
//! with rater, item and criterion names attached, filtered by rater, item and time.

use crate::base::clock::Millis;
use crate::store::{AuditEntry, ChainCheck, ChainTrust, Store, StoreError};
use serde::Serialize;

/// Recompute the chain: every link, every entry's hash, the signed checkpoints under the study's
/// lead public key, and the tracked tables against the state the last entry sealed.
pub fn verify(store: &Store) -> Result<ChainCheck, StoreError> {
    store.verify_audit_chain()
}

/// [`verify`], and also what is known outside the file (`trust`): the lead key this machine
/// holds for the study, and a head recorded elsewhere.
pub fn verify_with(store: &Store, trust: &ChainTrust) -> Result<ChainCheck, StoreError> {
    store.verify_audit_chain_with(trust)
}

/// Which entries to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// A rater's name: entries they made or about their ratings.
    pub rater: Option<String>,
    /// An item (response external id, or `<conversation>/<source key>`).
    pub item: Option<String>,
    pub since: Option<Millis>,
    pub until: Option<Millis>,
}

/// One entry with names attached.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LoggedEntry {
    #[serde(flatten)]
    pub entry: AuditEntry,
    pub rater: Option<String>,
    pub item: Option<String>,
    pub criterion: Option<String>,
}

/// Entries matching `filter`, oldest first.
pub fn log(store: &Store, filter: &LogFilter) -> Result<Vec<LoggedEntry>, StoreError> {
    let raters = store.rater_names()?;
    let items = store.response_item_names()?;
    let criteria = store.criterion_names()?;
    let id_of = |v: &serde_json::Value, key: &str| v.get(key).and_then(serde_json::Value::as_i64);
    let mut out = Vec::new();
    for entry in store.audit_entries(filter.since, filter.until)? {
        let rater = id_of(&entry.detail, "rater_id")
            .and_then(|id| raters.get(&id).cloned())
            .or_else(|| {
                entry
                    .detail
                    .get("rater")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            });
        let item = id_of(&entry.detail, "response_id")
            .and_then(|id| items.get(&id).cloned())
            .or_else(|| {
                entry
                    .detail
                    .get("item")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            });
        let criterion = id_of(&entry.detail, "criterion_id")
            .and_then(|id| criteria.get(&id).cloned())
            .or_else(|| {
                entry
                    .detail
                    .get("criterion")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            });
        if let Some(want) = &filter.rater {
            if rater.as_deref() != Some(want.as_str()) && entry.actor != *want {
                continue;
            }
        }
        if let Some(want) = &filter.item {
            if item.as_deref() != Some(want.as_str()) {
                continue;
            }
        }
        out.push(LoggedEntry {
            entry,
            rater,
            item,
            criterion,
        });
    }
    Ok(out)
}

/// Parse a time for a filter: milliseconds since the epoch, or an ISO-8601 UTC date or date-time
/// (`2026-11-30`, `2026-11-30T14:05`, `2026-11-30T14:05:09Z`).
pub fn parse_time(text: &str) -> Option<Millis> {
    let t = text.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Some(ms);
    }
    let t = t.trim_end_matches('Z');
    let (date, time) = t.split_once('T').unwrap_or((t, "00:00:00"));
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let mut hms = time.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let min: i64 = hms.next().unwrap_or("0").parse().ok()?;
    let sec: f64 = hms.next().unwrap_or("0").parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400_000 + h * 3_600_000 + min * 60_000 + (sec * 1000.0).round() as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_times_parse_to_the_same_instant_export_prints() {
        for ms in [0, 1_700_000_000_123, 1_796_055_230_273] {
            let text = crate::base::clock::iso_utc(ms);
            assert_eq!(
                super::parse_time(&text),
                Some(ms),
                "{text} must read back as the instant it was printed from"
            );
        }
        assert_eq!(
            super::parse_time("2026-11-30"),
            super::parse_time("2026-11-30T00:00:00Z"),
            "a bare date is midnight UTC"
        );
        assert_eq!(
            super::parse_time("30/11/2026"),
            None,
            "other forms are refused"
        );
    }
}
