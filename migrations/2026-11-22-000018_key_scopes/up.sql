-- Scoped keys (issue 21): a key carries a scope, `read`, `write` or
-- `admin`, never wider than its holder's role allows (the api-gateway
-- checks it when the key is issued and narrows it to the role on every
-- request). Every key from before was a full key of its owner: `admin`.
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin'
    CHECK (scope IN ('read', 'write', 'admin'));
-- New keys always say their scope.
ALTER TABLE api_keys ALTER COLUMN scope DROP DEFAULT;
