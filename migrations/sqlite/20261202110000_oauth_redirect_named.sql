-- Whether the authorization request named its redirect_uri (OAuth 2.1
-- §4.1.3: the token request must repeat it only then). Rows from before
-- this column count as having named it, the stricter reading.
ALTER TABLE oauth_requests ADD COLUMN redirect_uri_named BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE oauth_grants ADD COLUMN redirect_uri_named BOOLEAN NOT NULL DEFAULT TRUE;
