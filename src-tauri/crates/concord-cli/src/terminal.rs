//! What the `concord` binary writes to a terminal: every human-readable output on stdout and
//! every line on stderr goes through the core's `terminal_text`, so a control character, an
//! escape sequence or a direction override in a name, a file name or a message is spelled out
//! (`<U+001B>`, `<U+202E>`) instead of acted on; `--json` documents go out as serde writes them
//! (JSON-escaped), since a program, not a person, reads them.

use concord_core::base::text::terminal_text;

/// Print a command's output: a JSON document as it is, anything else with hidden characters
/// spelled out. A reader that stops early (`concord … | head`) closes the pipe: the rest is
/// dropped quietly, as other command-line tools do; any other failure to write is said on
/// stderr and ends the program with status 1.
pub fn print_output(out: &str, json: bool) {
    if json {
        write_stdout(out);
    } else {
        write_stdout(&terminal_text(out));
    }
}

/// Write `text` to stdout whole (see [`print_output`] for what a failure does).
pub fn write_stdout(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            say(&format!("concord: cannot write the output: {e}"));
            std::process::exit(1);
        }
    }
}

/// Write one line to stderr with hidden characters spelled out.
pub fn say(line: &str) {
    eprintln!("{}", terminal_text(line));
}
