//! Long-form score tables (one row per target × rater × score) read from CSV for the
//! `concord stats` commands, with errors that name the file, line and column.
