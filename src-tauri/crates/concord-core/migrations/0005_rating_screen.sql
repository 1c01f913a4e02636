-- Concord study schema, version 5: the expert's rating screen.

-- The rationale a rater writes for an item as a whole, kept with the assignment (so it survives
-- before any value is entered) and copied onto the item's ratings.
ALTER TABLE assignment ADD COLUMN rationale TEXT;

-- Where each rater was when they last left the rating screen (an item number, 1-based), so a
-- relaunch resumes exactly there.
CREATE TABLE rater_session (
    rater_id    INTEGER PRIMARY KEY REFERENCES rater(id) ON DELETE CASCADE,
    item        INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;
