-- Activities, and what the open SQL tool query_my_data reads (DESIGN §8):
-- two security_invoker views, my_meals and my_activities, over tables
-- whose row-level-security policies show voxgate_reader (core migration
-- 0055) only the rows of the user the gateway named in voxgate.user_id.
-- The gateway's own role owns the tables and is not subject to the
-- policies, so the other demo tools read and write as before.

CREATE TABLE demo.activities (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('run', 'walk', 'ride', 'swim', 'strength', 'yoga')),
    minutes     integer NOT NULL CHECK (minutes > 0 AND minutes <= 1440),
    distance_km numeric(6,2) CHECK (distance_km >= 0),
    calories    integer CHECK (calories >= 0),
    started_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX activities_user_started ON demo.activities (user_id, started_at DESC);

-- Eight weeks of activities and two weeks of meals for the demo users,
-- counted back from the day this migration runs, so "last week" has
-- answers. The pattern is fixed (day n of the 56 decides), which lets a
-- test compute every answer from the rows.
INSERT INTO demo.activities (user_id, kind, minutes, distance_km, calories, started_at)
SELECT 'demo', a.kind, a.minutes, a.distance_km, a.calories,
       date_trunc('day', now()) - n * interval '1 day' + a.at
FROM generate_series(1, 56) AS n
CROSS JOIN LATERAL (VALUES
    ('run', 30 + (n % 4) * 5, 5.0 + (n % 3), 300 + (n % 4) * 50, interval '7 hours', n % 7 IN (1, 3, 5)),
    ('walk', 40, 3.2, 150, interval '18 hours', n % 2 = 0),
    ('strength', 45, NULL, 220, interval '19 hours', n % 7 = 2),
    ('yoga', 30, NULL, 100, interval '8 hours', n % 7 = 6)
) AS a(kind, minutes, distance_km, calories, at, on_day)
WHERE a.on_day;

INSERT INTO demo.activities (user_id, kind, minutes, distance_km, calories, started_at)
SELECT 'demo-vegan', 'ride', 90, 35.0, 800, date_trunc('day', now()) - n * interval '1 day' + interval '6 hours'
FROM generate_series(1, 56) AS n;

INSERT INTO demo.meals (user_id, name, meal_type, calories, protein_g, carbs_g, fat_g, eaten_at)
SELECT 'demo', m.name, m.meal_type, m.calories, m.protein_g, m.carbs_g, m.fat_g,
       date_trunc('day', now()) - n * interval '1 day' + m.at
FROM generate_series(1, 14) AS n
CROSS JOIN (VALUES
    ('Oatmeal with berries', 'breakfast', 420.0, 14.0, 68.0, 9.0, interval '8 hours'),
    ('Chicken salad', 'lunch', 610.0, 42.0, 30.0, 32.0, interval '13 hours'),
    ('Salmon with rice', 'dinner', 780.0, 45.0, 70.0, 30.0, interval '19 hours 30 minutes')
) AS m(name, meal_type, calories, protein_g, carbs_g, fat_g, at);

CREATE VIEW demo.my_activities WITH (security_invoker = true) AS
    SELECT id, kind, minutes, distance_km, calories, started_at FROM demo.activities;
CREATE VIEW demo.my_meals WITH (security_invoker = true) AS
    SELECT id, name, meal_type, calories, protein_g, carbs_g, fat_g, eaten_at FROM demo.meals;

ALTER TABLE demo.activities ENABLE ROW LEVEL SECURITY;
ALTER TABLE demo.meals ENABLE ROW LEVEL SECURITY;
CREATE POLICY reader_own_rows ON demo.activities FOR SELECT TO voxgate_reader
    USING (user_id = current_setting('voxgate.user_id', true));
CREATE POLICY reader_own_rows ON demo.meals FOR SELECT TO voxgate_reader
    USING (user_id = current_setting('voxgate.user_id', true));

-- security_invoker views read the tables as the reader, so it needs SELECT
-- on them too; the policies above are what it then sees.
GRANT USAGE ON SCHEMA demo TO voxgate_reader;
GRANT SELECT ON demo.activities, demo.meals, demo.my_activities, demo.my_meals TO voxgate_reader;
