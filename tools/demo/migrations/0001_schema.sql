-- The demo food and wellness app behind the built-in tools (DESIGN §8):
-- profiles, recipes with full-text search, the allergen map and meal logs.
-- Everything lives in schema demo, which the migrator creates with the
-- set's own schema_migrations; a deployment without the demo has neither.

CREATE TABLE demo.profiles (
    user_id       text PRIMARY KEY,
    display_name  text NOT NULL DEFAULT '',
    diet          text NOT NULL DEFAULT 'none'
                  CHECK (diet IN ('none', 'vegetarian', 'vegan', 'pescatarian', 'gluten_free', 'dairy_free')),
    -- What the user said they are allergic to, in their words; the
    -- allergen map turns it into recipe allergen groups.
    allergies     text[] NOT NULL DEFAULT '{}',
    language      text NOT NULL DEFAULT 'en',
    units         text NOT NULL DEFAULT 'metric' CHECK (units IN ('metric', 'imperial')),
    -- {"primary": "lose_weight|build_muscle|endurance|general_fitness",
    --  "daily_calories": 2000, "protein_g": 120}
    goals         jsonb NOT NULL DEFAULT '{}',
    fitness_level text NOT NULL DEFAULT 'beginner'
                  CHECK (fitness_level IN ('beginner', 'intermediate', 'advanced')),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The allergen map: every way a user may name an allergy, to the group
-- recorded on recipes.allergens. search_recipes refuses to return recipes
-- to a user with allergies when this map cannot be read.
CREATE TABLE demo.allergen_groups (
    term     text NOT NULL CHECK (term = lower(term)),
    allergen text NOT NULL,
    PRIMARY KEY (term, allergen)
);

INSERT INTO demo.allergen_groups (term, allergen) VALUES
('peanut', 'peanut'), ('peanuts', 'peanut'), ('groundnut', 'peanut'), ('groundnuts', 'peanut'),
('peanut butter', 'peanut'),
('nut', 'tree_nut'), ('nuts', 'tree_nut'), ('tree nut', 'tree_nut'), ('tree nuts', 'tree_nut'),
('tree_nut', 'tree_nut'), ('almond', 'tree_nut'), ('almonds', 'tree_nut'), ('walnut', 'tree_nut'),
('walnuts', 'tree_nut'), ('cashew', 'tree_nut'), ('cashews', 'tree_nut'), ('pecan', 'tree_nut'),
('pecans', 'tree_nut'), ('hazelnut', 'tree_nut'), ('hazelnuts', 'tree_nut'), ('pistachio', 'tree_nut'),
('pistachios', 'tree_nut'), ('macadamia', 'tree_nut'), ('brazil nut', 'tree_nut'),
('brazil nuts', 'tree_nut'), ('pine nut', 'tree_nut'), ('pine nuts', 'tree_nut'),
-- "Nuts" alone is ambiguous, so it excludes peanuts too.
('nut', 'peanut'), ('nuts', 'peanut'),
('dairy', 'dairy'), ('milk', 'dairy'), ('lactose', 'dairy'), ('cheese', 'dairy'), ('butter', 'dairy'),
('cream', 'dairy'), ('yogurt', 'dairy'), ('yoghurt', 'dairy'), ('casein', 'dairy'), ('whey', 'dairy'),
('cow''s milk', 'dairy'),
('egg', 'egg'), ('eggs', 'egg'),
('gluten', 'gluten'), ('wheat', 'gluten'), ('barley', 'gluten'), ('rye', 'gluten'), ('spelt', 'gluten'),
('oats', 'gluten'), ('celiac', 'gluten'), ('coeliac', 'gluten'),
('soy', 'soy'), ('soya', 'soy'), ('soybean', 'soy'), ('soybeans', 'soy'), ('tofu', 'soy'),
('fish', 'fish'), ('salmon', 'fish'), ('tuna', 'fish'), ('cod', 'fish'), ('anchovy', 'fish'),
('anchovies', 'fish'),
('shellfish', 'shellfish'), ('crustacean', 'shellfish'), ('crustaceans', 'shellfish'),
('prawn', 'shellfish'), ('prawns', 'shellfish'), ('shrimp', 'shellfish'), ('crab', 'shellfish'),
('lobster', 'shellfish'), ('mussels', 'shellfish'), ('clams', 'shellfish'), ('oysters', 'shellfish'),
('scallops', 'shellfish'), ('mollusc', 'shellfish'), ('molluscs', 'shellfish'), ('seafood', 'shellfish'),
('seafood', 'fish'),
('sesame', 'sesame'), ('tahini', 'sesame'),
('mustard', 'mustard'),
('celery', 'celery'), ('celeriac', 'celery');

CREATE TABLE demo.recipes (
    id              integer PRIMARY KEY,
    slug            text NOT NULL UNIQUE,
    title           text NOT NULL,
    summary         text NOT NULL,
    cuisine         text NOT NULL,
    course          text NOT NULL,
    total_minutes   integer NOT NULL CHECK (total_minutes > 0),
    difficulty      text NOT NULL CHECK (difficulty IN ('easy', 'medium', 'hard')),
    servings        integer NOT NULL CHECK (servings > 0),
    ingredients     text[] NOT NULL, -- with quantities, for people
    ingredient_names text[] NOT NULL, -- bare names, for matching allergies the map lacks
    steps           text[] NOT NULL,
    allergens       text[] NOT NULL, -- groups, as in allergen_groups.allergen
    diets           text[] NOT NULL, -- vegan, vegetarian, pescatarian, gluten_free, dairy_free
    tags            text[] NOT NULL,
    kcal            integer NOT NULL,
    protein_g       numeric(6,1) NOT NULL,
    carbs_g         numeric(6,1) NOT NULL,
    fat_g           numeric(6,1) NOT NULL,
    fiber_g         numeric(6,1) NOT NULL,
    nutrition_score integer NOT NULL CHECK (nutrition_score BETWEEN 0 AND 100),
    -- Cuisine, course, tags, diets and ingredient names as plain text: a
    -- generated column may only use immutable functions, and
    -- array_to_string is not one.
    keywords        text NOT NULL,
    search          tsvector GENERATED ALWAYS AS (
                        setweight(to_tsvector('english'::regconfig, title), 'A') ||
                        setweight(to_tsvector('english'::regconfig, keywords), 'B') ||
                        setweight(to_tsvector('english'::regconfig, summary), 'C')) STORED
);

CREATE INDEX recipes_search ON demo.recipes USING gin (search);

CREATE TABLE demo.meals (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text NOT NULL,
    name       text NOT NULL,
    meal_type  text NOT NULL CHECK (meal_type IN ('breakfast', 'lunch', 'dinner', 'snack')),
    calories   numeric(7,1) NOT NULL,
    protein_g  numeric(6,1) NOT NULL,
    carbs_g    numeric(6,1),
    fat_g      numeric(6,1),
    recipe_id  integer REFERENCES demo.recipes (id),
    eaten_at   timestamptz NOT NULL DEFAULT now(),
    -- The tool call that wrote it, for tracing a row back to a conversation.
    call_id    text,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX meals_user_eaten ON demo.meals (user_id, eaten_at DESC);

-- Demo users for `voxgate dev` and the /demo page.
INSERT INTO demo.profiles (user_id, display_name, diet, allergies, language, units, goals, fitness_level) VALUES
('demo', 'Alex Demo', 'none', '{peanuts}', 'en', 'metric',
 '{"primary": "general_fitness", "daily_calories": 2200, "protein_g": 110}', 'intermediate'),
('demo-vegan', 'Sam Green', 'vegan', '{}', 'en', 'metric',
 '{"primary": "endurance", "daily_calories": 2400, "protein_g": 90}', 'advanced'),
('demo-coeliac', 'Maria Lopez', 'gluten_free', '{gluten,shellfish}', 'es', 'metric',
 '{"primary": "lose_weight", "daily_calories": 1800, "protein_g": 100}', 'beginner');
