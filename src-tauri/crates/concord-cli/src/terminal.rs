//! What the `concord` binary writes to a terminal: every human-readable output on stdout and
//! every line on stderr goes through the core's `terminal_text`, so a control character, an
//! escape sequence or a direction override in a name, a file name or a message is spelled out
//! (`<U+001B>`, `<U+202E>`) instead of acted on; `--json` documents go out as serde writes them
//! (JSON-escaped), since a program, not a person, reads them.

use concord_core::base::text::terminal_text;

/// Print a command's output: a JSON document as it is, anything else with hidden characters
/// spelled out.
pub fn print_output(out: &str, json: bool) {
    if json {
        print!("{out}");
    } else {
        print!("{}", terminal_text(out));
    }
}

/// Write one line to stderr with hidden characters spelled out.
pub fn say(line: &str) {
    eprintln!("{}", terminal_text(line));
}
