//! The study as its first screen and `concord overview` show it: the overview counts, the
//! study's title, a rubric name in one language. Reads.

use crate::app::open_study::OpenStudy;
use crate::rubric::LocalText;
use crate::store::{StoreError, StudyOverview};

/// The study's overview: title, file, counts, rubrics, sources and raters.
pub fn overview(study: &OpenStudy) -> Result<StudyOverview, StoreError> {
    study.store().overview()
}

/// The study's title.
pub fn title(study: &OpenStudy) -> Result<String, StoreError> {
    study.store().title()
}

/// A rubric's name in `lang` (English when it has none in `lang`).
pub fn localized<'a>(text: &'a LocalText, lang: &str) -> &'a str {
    crate::rubric::localized(text, lang)
}
