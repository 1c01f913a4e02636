-- Concord study schema, version 24: evidence spans marked in replies.
-- `span`: a part of a rated reply's text (a `response` with text: a reply at a turn, a candidate,
-- or an earlier release's single-turn answer) that a rater marked with one of the rubric's codes.
-- `char_start`, `char_end`: `[start, end)` in Unicode scalar values of the reply's text (not bytes,
-- not UTF-16 units). A judge's quote that could not be found in the reply is kept unlocated: both
-- offsets NULL and the quote kept in `quote` (never guessed). `severity`: one of the code's
-- declared levels, or NULL. `origin`: how the span came in (`import`, `judge`, `screen`, `web`,
-- `package`, `sheet`); `call_id`: the judge call whose reply gave it. The audit chain seals every
-- row, as it seals ratings.
CREATE TABLE span (
    id          INTEGER PRIMARY KEY,
    response_id INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    rater_id    INTEGER NOT NULL REFERENCES rater(id),
    code        TEXT NOT NULL,
    char_start  INTEGER CHECK (char_start IS NULL OR char_start >= 0),
    char_end    INTEGER CHECK (char_end IS NULL OR char_end > char_start),
    severity    TEXT,
    quote       TEXT,
    origin      TEXT NOT NULL,
    call_id     INTEGER REFERENCES judge_call(id) ON DELETE SET NULL,
    CHECK ((char_start IS NULL) = (char_end IS NULL)),
    CHECK (char_start IS NOT NULL OR quote IS NOT NULL)
) STRICT;
CREATE INDEX span_by_response ON span(response_id, rater_id);
CREATE INDEX span_by_rater ON span(rater_id);
