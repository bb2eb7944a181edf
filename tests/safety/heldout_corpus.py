"""A held-out corpus for the secret rules, written after commit 2c96d19 froze them.

Never tune the rules on it: a fix that needs these texts needs a new held-out corpus too
(docs/guarantees.md, "No secret leaves through memory"). Key bodies are drawn from a seeded
generator so they look random without being anyone's key.
"""

from __future__ import annotations

import base64
import random

_rng = random.Random(20261130)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_HEX = "0123456789abcdef"


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _zw(text: str, at: int) -> str:
    return text[:at] + "\u200b" + text[at:]


def _full(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


_GH = "ghp_" + _r(36)
_OPENAI = "sk-proj-" + _r(48)
_STRIPE = "sk_live_" + _r(24)
_ANT = "sk-ant-api03-" + _r(40)
_SLACK = "xoxb-" + _r(11, "0123456789") + "-" + _r(12, "0123456789") + "-" + _r(24)
_NPM = "npm_" + _r(36)
_HF = "hf_" + _r(34)
_GLPAT = "glpat-" + _r(20)
_AWS = "AKIA" + _r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
_AWS_SECRET = _r(40, _ALNUM + "/+")
_SG = "SG." + _r(22) + "." + _r(43)
_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiYWRtaW4iOnRydWV9." + _r(43)

SECRETS: list[str] = [
    f"export GH_TOKEN={_GH} before running the release script",
    f"the OpenAI key {_zw(_OPENAI, 12)} is in the notebook",
    f"Stripe live key: {_full(_STRIPE)}",
    f"When pushing fails, set the token to {_GH[:20]}\n{_GH[20:]} and retry",
    f"curl -H 'x-api-key: {_ANT[:25]} {_ANT[25:]}' https://api.anthropic.com",
    "echo " + base64.b64encode(f"AWS_SECRET_ACCESS_KEY={_AWS_SECRET}".encode()).decode() + " | base64 -d",
    "SLACK='" + "".join(f"\\x{ord(c):02x}" for c in _SLACK) + "'",
    f"the npm token, written backwards so the scanner misses it: {_NPM[::-1]}",
    '{"web": {"client_id": "1234.apps.googleusercontent.com", "client_secret": "GOCSPX-' + _r(28) + '"}}',
    f"my DO token: dop_v1_{_r(64, _HEX)}",
    f"curl -H 'X-Shopify-Access-Token: shpat_{_r(32, _HEX)}' https://shop.myshopify.com/admin",
    f"databricks configure --token dapi{_r(32, _HEX)}-2",
    f"requests.post(url, auth=('api', 'key-{_r(32, _HEX)}'))",
    f"NEW_RELIC_LICENSE_KEY={_r(36, _HEX)}NRAL",
    f"newrelic user key NRAK-{_r(27, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}",
    "the password is Tr0ub4dor&3",
    "the db password for staging is s3cr3t-Pa55",
    "Log in with the password 'correct horse battery staple'",
    "The admin PIN is 482913",
    f"my api key is {_r(32, _HEX)}",
    f"open https://example.com/cb?q={''.join(f'%{ord(c):02X}' for c in _GH)}",
    f"TWILIO_AUTH_TOKEN={_r(32, _HEX)}",
    "HEROKU_API_KEY=3f9a1c2e-7b4d-4e8a-9c1f-2d6b8e0a4c7f",
    f"client secret for the Azure app: {_r(3)}8Q~{_r(34, _ALNUM + '_~.-')}",
    f"gitlab token {_GLPAT[:12]} {_GLPAT[12:]}",
    "the wifi password is: Blue-Falcon-88",
    f"slack:\n  bot_token: {_SLACK}",
    "DATABASE_URL=postgres://app:9xK2mQ7vL4@db.internal:5432/app",
    f"key id reversed: {_AWS[::-1]}",
    "apiVersion: v1\nkind: Secret\ndata:\n  token: " + base64.b64encode(_GH.encode()).decode(),
    f"HF_TOKEN is {_zw(_zw(_HF, 5), 15)}",
    f"the bot token is MTA5ODc2NTQzMjEwOTg3NjU0Mw.G{_r(5)}.{_r(38)}",
    f"telegram: {_r(9, '0123456789')}:AA{_r(33)}",
    f"CF_API_TOKEN={_r(40)}",
    f"DD_API_KEY={_r(32, _HEX)}",
    "Set the SMTP password to Zq8#mP2!vL before sending",
    "credentials: admin / P4ssw0rd!",
    f"auth header was Bearer {_JWT[:40]}\n{_JWT[40:]}",
    f"LINEAR_KEY lin_api_{_r(40)}",
    f"doppler run --token dp.st.prd.{_r(43)}",
    f"AGE-SECRET-KEY-1{_r(58, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L')}",
    f"restricted stripe key rk_live_{_r(24)}",
    "SENDGRID=\"" + "".join(f"\\x{ord(c):02x}" for c in _SG) + "\"",
    f"ghp_ {_GH[4:13]} {_GH[13:22]} {_GH[22:31]} {_GH[31:]}",
    "echo " + base64.b64encode(_OPENAI.encode()).decode(),
    "mysql://root:p%40ss%21w0rd@localhost/shop",
    f"token=ya29.a0A{_r(60)}",
    f"SENTRY_DSN=https://{_r(32, _HEX)}@o12345.ingest.sentry.io/67890",
    f"MAPBOX_SECRET=sk.eyJ1Ijoi{_r(30)}.{_r(22)}",
    f"groq key gsk_{_r(52)}",
    "the passphrase for the deploy key is 'blue tiger 77 lamp'",
    "le mot de passe est Xy7!kq9",
    f"reversed oauth secret: {('GOCSPX-' + _r(28))[::-1]}",
    f"{_full('AKIA')}{_AWS[4:]} is the key id",
    f"pip config set global.index-url https://__token__:pypi-AgEIcHlwaS5vcmc{_r(60)}@upload.pypi.org/simple",
    f"openai_key = \"{_OPENAI[:20]}\" + \"{_OPENAI[20:]}\"",
]

ORDINARY: list[str] = [
    "When the build fails after a dependency bump, clear DerivedData and rebuild.",
    "the password is stored in Vault; read it with vault kv get",
    "the token expires after 3600 seconds, so refresh it before long jobs",
    "rotate the API key when a contractor leaves the team",
    "pin numpy to 1.26.4 and scipy to 1.11.4 before running the notebook",
    "the request id 3f9a1c2e-7b4d-4e8a-9c1f-2d6b8e0a4c7f shows the retry in the logs",
    "use the token from ~/.npmrc instead of pasting one",
    "the PIN is required on first login to the kiosk",
    "a key-value store is enough here; skip the relational schema",
    "call getAccessTokenSilently before fetchUserProfile",
    "the brand colour is #1a7f37 and the error colour #cf222e",
    "pull python@sha256:4f2a9c1e4b5d6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f to pin the image",
    "Base64-encode the payload before putting it in the header",
    "the fixtures live in tests/fixtures/payments/2024-03/refunds.json",
    "bisect between 3f2a9c1 and 8e7d6c5 to find the regression",
    "ERROR 1045 (28000): Access denied for user 'app'@'localhost' means the grant is missing",
    "the password field is empty when autofill is off; check the form state",
    "the password is hashed with bcrypt before storage, never compare plain text",
    "the secret is to run migrations before seeding",
    "the key is idempotency: retry only requests that carry an idempotency key",
    "the token was revoked, so ask the owner to issue a new one",
    "when the login is slow, check the LDAP timeout first",
    "retry 3 times with 200ms 400ms 800ms backoff",
    "upgrade from 2.4.1 to 2.5.0 then 3.0.0, never straight to 3.0.0",
    "the credentials are in the team's 1Password vault under Staging",
    "set API_KEY=<your key> in .env and never commit .env",
    "export OPENAI_API_KEY=${OPENAI_API_KEY} in CI from the secret store",
    "the hash of the lockfile changed: sha512-Xk3n8QmP0vR2tY5uW7eA9cB1dF4gH6jL8nM0pQ2rS4tU6vW8x",
    "sk-learn is not a package; install scikit-learn",
    "the task-runner on desk-lamp 3f2a1c9e needs a restart after deploy",
    "version 1.2.3 4.5.6 build 77 88 all fail the same smoke test",
    "the UUID column should be uuid, not varchar(36)",
    "when tests hang, run pytest -x -p no:cacheprovider to see the first failure",
    "the commit 9b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c fixed the flaky test",
    "the auth token lives in the keychain item com.example.cli",
    "the password reset link expires after 24 hours",
    "the api key is passed in the X-Api-Key header, read from the environment",
    "the access key must belong to the deploy role, not a person",
    "When the migration fails with a lock timeout, run it outside business hours.",
    "When the Xcode build fails with missing module maps, delete the module cache.",
    "When the linter flags E501, wrap the line rather than disabling the rule.",
    "When CI is red after a bump, read the changelog of the bumped package first.",
    "When the docker build is slow, order the Dockerfile so dependencies cache.",
    "When the user asks for a refactor, keep the public API unchanged.",
    "When a test is flaky, fix the race instead of adding a retry.",
    "When the API returns 429, back off exponentially and respect Retry-After.",
    "When the model: field in config.yaml is wrong, fall back to the default model.",
    "When deploying to staging, run the smoke tests against https://staging.example.com/health.",
    "When Postgres reports too many connections, lower the pool size to 10.",
    "When the page renders blank, check the console for a CSP violation.",
    "When the JSON has a trailing comma, the parser fails at line 12 column 3.",
    "When a secret is committed by mistake, rotate it first, then rewrite history.",
    "When the token count exceeds 8000, split the prompt into batches.",
    "When the Redis cache is cold, warm it with the top 1000 keys.",
    "When pip resolves slowly, pass --use-deprecated=legacy-resolver only as a last resort.",
    "When the cron job overlaps, add a lock file in /var/run/report.lock.",
    "When the S3 upload fails with SignatureDoesNotMatch, check the clock skew.",
    "When the Terraform plan shows drift, import the resource instead of recreating it.",
    "When a Swift package fails to resolve, delete Package.resolved and resolve again.",
    "When the Go build says module not found, run go mod tidy.",
    "When the Rust build runs out of memory, set CARGO_BUILD_JOBS=2.",
    "When the npm install fails with EACCES, fix the prefix instead of using sudo.",
    "When the webhook times out, acknowledge it first and process it in a queue.",
    "When Kubernetes pods crash loop, read the previous container's logs with --previous.",
    "When a query is slow, EXPLAIN ANALYZE it before adding an index.",
    "When the OAuth callback fails, compare the redirect URI character by character.",
    "When GitHub Actions cannot push, grant contents: write to the workflow.",
    "When the SSH key is rejected, check the key's permissions are 600.",
    "When the certificate expired, renew it with certbot renew --dry-run first.",
    "When the feature flag is off, the new code path must not run at all.",
    "When the build number is 20261130.4, the artifact is in builds/20261130/4.",
    "When the hex dump shows 7f454c46, the file is an ELF binary, not a script.",
    "When the base64 string ends with ==, the input length was not a multiple of 3.",
    "When the regex uses \\d{4}-\\d{2}-\\d{2}, dates in other formats slip through.",
    "When the locale is tr_TR, uppercase i becomes a dotted capital I.",
    "When a user pastes a password into the chat, tell them to rotate it.",
    "When the login page says the password is wrong, check caps lock before resetting.",
    "When the config says password: ${DB_PASSWORD}, the value comes from the environment.",
    "When the PIN is 4 digits, the lockout must trigger after 5 failures.",
]
