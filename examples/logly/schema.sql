-- Logly's schema as voxgate's open SQL tool sees it: activities, daily
-- logs and streaks in schema logly, each user's rows behind row-level
-- security keyed on voxgate.user_id, and three security_invoker views that
-- are all the tool may read. Apply it after voxgate has migrated the
-- database once (the core migrations create the voxgate_reader role):
--
--   psql "$VOXGATE_DATABASE_URL" -f examples/logly/schema.sql
--
-- The seed is for dev-user (the user of `voxgate dev`'s token) and one
-- other user, counted back from the day it is applied.

CREATE SCHEMA IF NOT EXISTS logly;

CREATE TABLE logly.activities (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('run', 'walk', 'ride', 'swim', 'strength', 'yoga')),
    minutes     integer NOT NULL CHECK (minutes > 0 AND minutes <= 1440),
    distance_km numeric(6,2) CHECK (distance_km >= 0),
    done_on     date NOT NULL
);

-- One row per user, day and measure: sleep hours, mood 1–5, water litres.
CREATE TABLE logly.logs (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id   text NOT NULL,
    measure   text NOT NULL CHECK (measure IN ('sleep_hours', 'mood', 'water_l')),
    value     numeric(5,2) NOT NULL,
    logged_on date NOT NULL,
    UNIQUE (user_id, measure, logged_on)
);

CREATE TABLE logly.streaks (
    user_id      text NOT NULL,
    habit        text NOT NULL,
    current_days integer NOT NULL CHECK (current_days >= 0),
    longest_days integer NOT NULL CHECK (longest_days >= 0),
    PRIMARY KEY (user_id, habit)
);

CREATE INDEX ON logly.activities (user_id, done_on);
CREATE INDEX ON logly.logs (user_id, logged_on);

-- Four weeks for dev-user: a run every Monday, Wednesday and Saturday-ish
-- (day n with n % 7 in 1, 3, 5), a walk every other day, yoga weekly.
INSERT INTO logly.activities (user_id, kind, minutes, distance_km, done_on)
SELECT 'dev-user', a.kind, a.minutes, a.km, current_date - n
FROM generate_series(1, 28) AS n
CROSS JOIN LATERAL (VALUES
    ('run', 25 + (n % 4) * 5, 4.0 + (n % 3), n % 7 IN (1, 3, 5)),
    ('walk', 45, 3.5, n % 2 = 0),
    ('yoga', 30, NULL, n % 7 = 6)
) AS a(kind, minutes, km, on_day)
WHERE a.on_day;

INSERT INTO logly.logs (user_id, measure, value, logged_on)
SELECT 'dev-user', m.measure, m.value, current_date - n
FROM generate_series(1, 28) AS n
CROSS JOIN LATERAL (VALUES
    ('sleep_hours', 6.5 + (n % 3) * 0.5),
    ('mood', 3 + (n % 3)),
    ('water_l', 1.5 + (n % 2) * 0.5)
) AS m(measure, value);

INSERT INTO logly.streaks VALUES
    ('dev-user', 'move every day', 6, 19),
    ('dev-user', 'eight hours of sleep', 0, 4);

-- Someone else, whom dev-user must never see.
INSERT INTO logly.activities (user_id, kind, minutes, distance_km, done_on)
SELECT 'other-user', 'swim', 60, 2.0, current_date - n FROM generate_series(1, 28) AS n;
INSERT INTO logly.streaks VALUES ('other-user', 'swim daily', 28, 28);

CREATE VIEW logly.my_activities WITH (security_invoker = true) AS
    SELECT id, kind, minutes, distance_km, done_on FROM logly.activities;
CREATE VIEW logly.my_logs WITH (security_invoker = true) AS
    SELECT id, measure, value, logged_on FROM logly.logs;
CREATE VIEW logly.my_streaks WITH (security_invoker = true) AS
    SELECT habit, current_days, longest_days FROM logly.streaks;

ALTER TABLE logly.activities ENABLE ROW LEVEL SECURITY;
ALTER TABLE logly.logs ENABLE ROW LEVEL SECURITY;
ALTER TABLE logly.streaks ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON logly.activities FOR SELECT TO voxgate_reader
    USING (user_id = current_setting('voxgate.user_id', true));
CREATE POLICY own_rows ON logly.logs FOR SELECT TO voxgate_reader
    USING (user_id = current_setting('voxgate.user_id', true));
CREATE POLICY own_rows ON logly.streaks FOR SELECT TO voxgate_reader
    USING (user_id = current_setting('voxgate.user_id', true));

GRANT USAGE ON SCHEMA logly TO voxgate_reader;
GRANT SELECT ON logly.activities, logly.logs, logly.streaks,
    logly.my_activities, logly.my_logs, logly.my_streaks TO voxgate_reader;
