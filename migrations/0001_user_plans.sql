-- A user's plan, when set by an admin, wins over the JWT plan claim.
CREATE TABLE user_plans (
    user_id    text PRIMARY KEY,
    plan       text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
