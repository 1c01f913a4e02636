//! **Row 1** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the hardened readers of files from
//! outside. Every dataset, rating sheet, rubric or score table is hostile until read here: sizes a
//! file declares are never trusted ([`bounds`]), CSV is read as a stream of checked rows in bounded
//! memory ([`csv_rows`]), JSON Lines as a stream of objects ([`json_lines`]), CSV, JSON Lines and XLSX become raw rows through one reader ([`table`]),
//! JSON through one strict reader ([`json`]), and every problem carries its file, sheet, row and
//! column ([`Issue`], [`Location`]). Nothing here knows what a study or a rubric is. The one
//! writer of outside files is here too ([`output`]): every file Concord writes is judged, staged
//! `0600` beside its destination and renamed into place.
//!
//! Imports only `base`; never the rubric, the store or anything above.

pub mod bounds;
pub mod csv_rows;
mod encoding;
pub mod json;
pub mod json_lines;
mod located;
pub mod output;
pub mod score_table;
pub mod table;

pub use located::{column_letters, Issue, Location, Severity};
