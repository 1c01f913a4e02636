-- Concord study schema, version 13: rating counts kept per rater.
-- The first screen shows each rater's first-occasion ratings with a value and the responses they
-- rated (a first-occasion rating, with a value or missing); counting them by scanning takes half
-- a second at 2.8 million ratings. They are kept here instead, by the store's writes of `rating`
-- (store/rating.rs; no trigger, so a bulk import adds its counts once per import). A rater without
-- a row has no first-occasion rating. Derived from `rating`: `Store::kept_count_differences`
-- recounts and compares.

CREATE TABLE rating_count (
    rater_id  INTEGER PRIMARY KEY REFERENCES rater(id) ON DELETE CASCADE,
    ratings   INTEGER NOT NULL,
    responses INTEGER NOT NULL
) STRICT;

INSERT INTO rating_count(rater_id, ratings, responses)
SELECT rater_id, COUNT(value), COUNT(DISTINCT response_id)
FROM rating WHERE occasion = 0 GROUP BY rater_id;
