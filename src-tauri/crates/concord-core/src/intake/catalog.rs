//! The names the released datasets use, in one table: the MentalBench response sources (release
//! key, display name, model family, and the column names of the MentalBench-100k layout) and the
//! rule that gives an LLM judge its model family from its model id. Self-family exclusion in the
//! MentalAlign method compares these families, so a judge never grades answers of its own family.
//!
//! Family rule for judges: the model id is lower-cased, any `vendor/` prefix dropped, and matched
//! against [`JUDGE_FAMILY_PREFIXES`] in order (longest prefixes first, so `gpt-4o-mini…` is not
//! taken for `gpt-4o`). An id no prefix matches is its own family, so an unknown judge excludes
//! nothing unless a source of exactly that family exists.

use crate::store::SourceKind;

/// One response source of the MentalBench datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceEntry {
    /// The key used in the MentalAlign column names (`human_response_<key>`).
    pub key: &'static str,
    pub name: &'static str,
    pub family: Option<&'static str>,
    pub kind: SourceKind,
    /// The column header of this source in the MentalBench-100k layout.
    pub mentalbench_column: &'static str,
}

/// The ten MentalBench sources: the dataset's original human answer and nine LLMs.
pub const MENTALBENCH_SOURCES: &[SourceEntry] = &[
    SourceEntry {
        key: "original",
        name: "Original human answer",
        family: None,
        kind: SourceKind::Human,
        mentalbench_column: "response",
    },
    SourceEntry {
        key: "claude",
        name: "Claude-3.5-Haiku",
        family: Some("claude"),
        kind: SourceKind::Llm,
        mentalbench_column: "Claude-3.5-Haiku",
    },
    SourceEntry {
        key: "ds_llama",
        name: "DeepSeek-R1-Distill-Llama",
        family: Some("deepseek"),
        kind: SourceKind::Llm,
        mentalbench_column: "deepseek-llama",
    },
    SourceEntry {
        key: "ds_qwen",
        name: "DeepSeek-R1-Distill-Qwen",
        family: Some("deepseek"),
        kind: SourceKind::Llm,
        mentalbench_column: "deepseek-qwen",
    },
    SourceEntry {
        key: "gemini",
        name: "Gemini-2.0-Flash",
        family: Some("gemini"),
        kind: SourceKind::Llm,
        mentalbench_column: "Gemini",
    },
    SourceEntry {
        key: "gpt4o",
        name: "GPT-4o",
        family: Some("gpt-4o"),
        kind: SourceKind::Llm,
        mentalbench_column: "gpt-4o",
    },
    SourceEntry {
        key: "gpt4omini",
        name: "GPT-4o-mini",
        family: Some("gpt-4o-mini"),
        kind: SourceKind::Llm,
        mentalbench_column: "gpt-4omini",
    },
    SourceEntry {
        key: "llama_3",
        name: "LLaMA-3.1-8B",
        family: Some("llama"),
        kind: SourceKind::Llm,
        mentalbench_column: "Llama-3.1",
    },
    SourceEntry {
        key: "qwen_2",
        name: "Qwen2.5-7B",
        family: Some("qwen"),
        kind: SourceKind::Llm,
        mentalbench_column: "Qwen-2.5",
    },
    SourceEntry {
        key: "qwen_3",
        name: "Qwen-3-4B",
        family: Some("qwen"),
        kind: SourceKind::Llm,
        mentalbench_column: "Qwen-3",
    },
];

/// Letters and digits only, lower-cased: how column names are compared across spellings.
pub fn squash(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The source a MentalAlign release key names (`claude`, `ds_llama`…).
pub fn source_by_key(key: &str) -> Option<&'static SourceEntry> {
    let key = squash(key);
    MENTALBENCH_SOURCES.iter().find(|s| squash(s.key) == key)
}

/// The source a MentalBench-100k column header names (`gpt-4omini`, `Llama-3.1`…).
pub fn source_by_mentalbench_column(header: &str) -> Option<&'static SourceEntry> {
    let h = squash(header);
    MENTALBENCH_SOURCES
        .iter()
        .find(|s| squash(s.mentalbench_column) == h)
}

/// Model-id prefixes and the family they belong to, checked in order.
pub const JUDGE_FAMILY_PREFIXES: &[(&str, &str)] = &[
    ("gpt-4o-mini", "gpt-4o-mini"),
    ("o4-mini", "gpt-4o-mini"),
    ("gpt-4o", "gpt-4o"),
    ("chatgpt-4o", "gpt-4o"),
    ("claude", "claude"),
    ("anthropic.claude", "claude"),
    ("gemini", "gemini"),
    ("meta-llama", "llama"),
    ("llama", "llama"),
    ("qwen", "qwen"),
    ("deepseek", "deepseek"),
];

/// The model family of a judge from its model id (see the module docs).
pub fn judge_family(model_id: &str) -> String {
    let lower = model_id.trim().to_lowercase();
    let bare = lower.rsplit('/').next().unwrap_or(&lower);
    JUDGE_FAMILY_PREFIXES
        .iter()
        .find(|(prefix, _)| bare.starts_with(prefix))
        .map(|(_, family)| family.to_string())
        .unwrap_or_else(|| bare.to_string())
}

/// The judge model id a MentalAlign sheet name gives. Exports truncate sheet names to 31
/// characters after a `_Final…` suffix (`claude-3-7-sonnet-20250219_Fina`), so the id is the part
/// before the first underscore. Generic names (`Sheet1`) give `None`.
pub fn judge_from_sheet(sheet: &str) -> Option<String> {
    let id = sheet.split('_').next().unwrap_or("").trim();
    let generic = id.is_empty()
        || id.to_ascii_lowercase().starts_with("sheet")
        || id.eq_ignore_ascii_case("data");
    (!generic).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_families_follow_the_product_mapping() {
        assert_eq!(
            judge_family("claude-3-7-sonnet-20250219"),
            "claude",
            "Claude-3.7-Sonnet grades Claude-3.5-Haiku as its own family"
        );
        assert_eq!(judge_family("gpt-4o"), "gpt-4o", "GPT-4o is gpt-4o");
        assert_eq!(
            judge_family("gpt-4o-mini-2024-07-18"),
            "gpt-4o-mini",
            "the longer prefix must win over gpt-4o"
        );
        assert_eq!(
            judge_family("gemini-2.5-flash"),
            "gemini",
            "Gemini-2.5-Flash is gemini"
        );
        assert_eq!(
            judge_family("o4-mini"),
            "gpt-4o-mini",
            "o4-mini is paired with GPT-4o-mini as in the paper"
        );
        assert_eq!(
            judge_family("mistral-large"),
            "mistral-large",
            "an unknown judge is its own family"
        );
        assert_eq!(
            judge_family("meta-llama/Llama-3.3-70B"),
            "llama",
            "vendor prefixes are ignored"
        );
    }

    #[test]
    fn sheet_names_give_model_ids() {
        assert_eq!(
            judge_from_sheet("claude-3-7-sonnet-20250219_Fina").as_deref(),
            Some("claude-3-7-sonnet-20250219"),
            "the truncated export suffix is dropped"
        );
        assert_eq!(
            judge_from_sheet("gpt-4o_Final_dataset_all_llm_ju").as_deref(),
            Some("gpt-4o"),
            "gpt-4o sheet"
        );
        assert_eq!(
            judge_from_sheet("Sheet1"),
            None,
            "a generic sheet name names no judge"
        );
    }

    #[test]
    fn mentalbench_columns_map_to_release_keys() {
        for (column, key) in [
            ("gpt-4omini", "gpt4omini"),
            ("gpt-4o", "gpt4o"),
            ("Llama-3.1", "llama_3"),
            ("deepseek-qwen", "ds_qwen"),
            ("response", "original"),
        ] {
            assert_eq!(
                source_by_mentalbench_column(column).map(|s| s.key),
                Some(key),
                "{column} must meet the MentalAlign key {key}"
            );
        }
    }
}
