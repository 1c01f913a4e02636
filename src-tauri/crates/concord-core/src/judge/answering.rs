//! Which model actually answered a run. Every reply names the model that produced it (`model`;
//! OpenAI-compatible replies may add a `system_fingerprint`, the backend configuration), and each
//! call keeps both. A run's answering models are those names with their numbers of calls, and the
//! run's model *changed* when its calls were not all answered by the model it asked for in one
//! configuration:
//! - its replies name more than one model, or more than one fingerprint (an alias moved to
//!   another snapshot mid-run, a router sent some calls elsewhere, the backend was reconfigured);
//! - or a reply names a model that is not the one asked for nor a version of it. A version of
//!   the asked name is that name (less a trailing `-latest` or `:latest`) followed by `-`, `:` or
//!   `@` and then a digit or `latest` — `gpt-4o` answered by `gpt-4o-2024-08-06`, `llama3` by
//!   `llama3:latest`, `claude-sonnet-4-latest` by `claude-sonnet-4-20250514` — compared without
//!   regard to case; `gpt-4o` answered by `gpt-4o-mini` is a change.
//!
//! A reply that names nothing (many local servers) is no evidence either way: it neither counts
//! as a change nor appears among the answering models.

use super::ledger::RunStatus;
use super::JudgeError;
use crate::store::{AnsweringModel, Store};
use serde::Serialize;
use std::collections::BTreeSet;

/// The models that answered a run's calls and whether they were other than the one asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAnswering {
    /// Each (model, fingerprint) the replies named, with its number of calls, in the order the
    /// calls first named it.
    pub answering_models: Vec<AnsweringModel>,
    /// See the module docs: more than one model or fingerprint, or a model not the asked one.
    pub model_changed: bool,
}

/// The answering models of `run` (its status gives the model it asked for).
pub fn answering(store: &Store, run: &RunStatus) -> Result<RunAnswering, JudgeError> {
    let answering_models = store.answering_models(run.id)?;
    let model_changed = model_changed(&run.model, &answering_models);
    Ok(RunAnswering {
        answering_models,
        model_changed,
    })
}

/// Whether calls named `answered` when `asked` was asked for mean the model changed.
pub fn model_changed(asked: &str, answered: &[AnsweringModel]) -> bool {
    let models: BTreeSet<String> = answered
        .iter()
        .filter_map(|a| a.model.as_deref())
        .map(str::to_lowercase)
        .collect();
    let fingerprints: BTreeSet<&str> = answered
        .iter()
        .filter_map(|a| a.system_fingerprint.as_deref())
        .collect();
    models.len() > 1
        || fingerprints.len() > 1
        || models.iter().any(|m| !names_the_asked_model(asked, m))
}

/// Whether `answered` is `asked` or a version of it (see the module docs).
pub fn names_the_asked_model(asked: &str, answered: &str) -> bool {
    let asked = asked.trim().to_lowercase();
    let answered = answered.trim().to_lowercase();
    if asked == answered {
        return true;
    }
    let base = asked
        .strip_suffix("-latest")
        .or_else(|| asked.strip_suffix(":latest"))
        .unwrap_or(&asked);
    if answered == base {
        return true;
    }
    let Some(rest) = answered.strip_prefix(base) else {
        return false;
    };
    let mut chars = rest.chars();
    matches!(chars.next(), Some('-' | ':' | '@'))
        && (chars.clone().next().is_some_and(|c| c.is_ascii_digit()) || chars.as_str() == "latest")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(model: Option<&str>, fp: Option<&str>, calls: i64) -> AnsweringModel {
        AnsweringModel {
            model: model.map(str::to_string),
            system_fingerprint: fp.map(str::to_string),
            calls,
        }
    }

    #[test]
    fn a_dated_snapshot_of_the_asked_alias_is_the_asked_model() {
        for (asked, answered) in [
            ("gpt-4o", "gpt-4o"),
            ("gpt-4o", "gpt-4o-2024-08-06"),
            ("GPT-4o", "gpt-4o-2024-08-06"),
            ("llama3", "llama3:latest"),
            ("llama3:latest", "llama3"),
            ("claude-sonnet-4-latest", "claude-sonnet-4-20250514"),
            ("mistral", "mistral@2407"),
        ] {
            assert!(
                names_the_asked_model(asked, answered),
                "{answered} is what a provider names when asked for {asked}: no change"
            );
        }
        for (asked, answered) in [
            ("gpt-4o", "gpt-4o-mini"),
            ("gpt-4o", "gpt-4o-mini-2024-07-18"),
            ("gpt-4", "gpt-4o"),
            ("llama3", "qwen2:7b"),
            ("gpt-4o", "gpt-4"),
        ] {
            assert!(
                !names_the_asked_model(asked, answered),
                "{answered} is another model than {asked}, not a version of it"
            );
        }
    }

    #[test]
    fn a_change_is_several_names_or_another_model_and_silence_is_none() {
        assert!(
            !model_changed("m", &[]),
            "a provider that names nothing gives no evidence of a change"
        );
        assert!(
            !model_changed("m", &[named(Some("m-2025-01-01"), Some("fp_a"), 10)]),
            "one version of the asked model in one configuration answered every call"
        );
        assert!(
            model_changed(
                "m",
                &[
                    named(Some("m"), None, 4),
                    named(Some("m-2025-01-01"), None, 6)
                ]
            ),
            "two models answered one run, even if both are versions of the asked one"
        );
        assert!(
            model_changed(
                "m",
                &[
                    named(Some("m"), Some("fp_a"), 4),
                    named(Some("m"), Some("fp_b"), 6)
                ]
            ),
            "the backend configuration changed mid-run"
        );
        assert!(
            !model_changed(
                "m",
                &[named(Some("m"), Some("fp_a"), 4), named(Some("m"), None, 6)]
            ),
            "a reply without a fingerprint is silent on it, not a second configuration"
        );
        assert!(
            model_changed("m", &[named(Some("other"), None, 10)]),
            "a model other than the asked one answered"
        );
        assert!(
            !model_changed("m", &[named(None, Some("fp_a"), 10)]),
            "a fingerprint alone names no other model"
        );
    }
}
