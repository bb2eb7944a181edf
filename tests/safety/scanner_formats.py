"""Token formats from public secret-scanning rule lists, none of them in the older safety tests.

Formats (prefixes, lengths, alphabets, checksums) are facts taken from gitleaks' config/gitleaks.toml,
trufflehog's pkg/detectors and GitHub's "Supported secret scanning patterns" page; no rule text is copied.
Every value is drawn from a seeded generator, so it has the vendor's shape without being anyone's key.
`FORMATS` maps a format's name to (text, body): scrub must leave no 12-character run of `body` in the text.
The names are split once, at random (seed 20261206), into `TUNING` and `HELD_OUT`; rules may be tuned on
the first half only (docs/guarantees.md, "No secret leaves through memory").
"""

from __future__ import annotations

import base64
import random
import string
import zlib

_rng = random.Random(20261206)
_A = string.ascii_letters + string.digits
_L = string.ascii_lowercase + string.digits
_U = string.ascii_uppercase + string.digits
_H = "0123456789abcdef"
_W = _A + "-_"
_B64 = _A + "+/"


def _r(n: int, alphabet: str = _A) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _uuid() -> str:
    return "-".join(_r(n, _H) for n in (8, 4, 4, 4, 12))


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _pem(label: str, der: bytes) -> str:
    body = _b64(der)
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def _openssh_key() -> tuple[str, str]:
    def field(raw: bytes) -> bytes:
        return len(raw).to_bytes(4, "big") + raw
    public = field(b"ssh-ed25519") + field(_rng.randbytes(32))
    check = _rng.randbytes(4)
    private = check + check + public + field(_rng.randbytes(64)) + field(b"ci@build-01")
    private += bytes(range(1, 1 + (-len(private)) % 8))
    raw = b"openssh-key-v1\0" + field(b"none") + field(b"none") + field(b"") + (1).to_bytes(4, "big")
    raw += field(public) + field(private)
    body = _b64(raw)
    lines = [body[i:i + 70] for i in range(0, len(body), 70)]
    text = "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *lines, "-----END OPENSSH PRIVATE KEY-----"])
    return text, body[-120:]


def _ec_key() -> tuple[str, str]:
    der = bytes.fromhex("30770201010420") + _rng.randbytes(32) + bytes.fromhex("a00a06082a8648ce3d030107a144034200")
    der += b"\x04" + _rng.randbytes(64)
    text = _pem("EC PRIVATE KEY", der)
    return text, _b64(der)[9:60]


def _pgp_key() -> tuple[str, str]:
    body = _b64(bytes.fromhex("9503980463") + _rng.randbytes(300))
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    crc = "=" + _b64(_rng.randbytes(3))
    text = "\n".join(["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", *lines, crc, "-----END PGP PRIVATE KEY BLOCK-----"])
    return text, body[64:200]


def _atlassian_admin() -> str:
    head = "ATCTT3xFfG" + _r(170, _W) + "="
    return head + f"{zlib.crc32(head.encode()):08X}"


def _grafana_legacy() -> str:
    return _b64(('{"k":"' + _r(32) + '","n":"ci-deploy","id":1}').encode())


def _artifactory_reference() -> str:
    return _b64(f"reftkn:01:{_rng.randrange(1750000000, 1900000000)}:{_r(30)}".encode())[:64]


_GL_SESSION = _r(32, _H)
_OPENSSH = _openssh_key()
_EC = _ec_key()
_PGP = _pgp_key()


def _case(template: str, body: str) -> tuple[str, str]:
    return template.format(body), body


_BODIES = {
    "adafruit-io": _r(28), "alibaba-key-id": _r(20), "clojars": _r(60, _L), "do-oauth": _r(64, _H),
    "do-refresh": _r(64, _H), "frameio": _r(64, _W), "gitlab-deploy": _r(20, _W), "gitlab-feed": _r(20, _W),
    "gitlab-mail": _r(25, _L), "gitlab-agent": _r(50, _W), "gitlab-trigger": _r(40, _H), "gitlab-scim": _r(20, _W),
    "prefect": _r(36), "readme": _r(70, _L), "rubygems": _r(48, _H), "settlemint": _r(16), "shippo": _r(40, _H),
    "shopify-custom": _r(32, _H), "shopify-private": _r(32, _H), "square-oauth": _r(22, _W), "vault-legacy": _r(24),
    "yandex-api": _r(35, _W), "yandex-static": _r(38, _W), "twilio-key": _r(32, _H), "okta": _r(40, _W),
    "langfuse": _uuid(), "posthog": _r(43), "nvidia": _r(64, _W), "dockerhub-oat": _r(32, _W), "ramp": _r(48),
    "rootly": _r(64, _H), "sonarqube-cloud": _r(59), "robinhood": _uuid(), "notion-legacy": _r(43),
    "flexport": _r(40, _W), "elevenlabs": _r(48, _H), "portainer": _r(44, _W), "fleetbase": _r(20),
    "pagarme": _r(30), "cody": _r(64, _H), "endor": _r(16, _W), "contentful-pat": _r(43, _W),
    "newrelic-insert": _r(32, _W), "newrelic-query": _r(32, _W), "easypost-test": _r(54, _A),
}

FORMATS: dict[str, tuple[str, str]] = {
    # gitleaks config/gitleaks.toml
    "adafruit-io": _case("Adafruit IO calls 401'd until the feed client got the new key aio_{} from io.adafruit.com.",
                         _BODIES["adafruit-io"]),
    "alibaba-key-id": _case("10:14:07Z ERROR oss PutObject InvalidAccessKeyId AccessKeyId=LTAI{} bucket=logs",
                            _BODIES["alibaba-key-id"]),
    "artifactory-reference": _case("jf config add art --url https://acme.jfrog.io --access-token {} --overwrite",
                                   _artifactory_reference()),
    "clojars": _case("The Clojars deploy token CLOJARS_{} goes into ~/.lein/credentials.clj.gpg, not project.clj.",
                     _BODIES["clojars"]),
    "do-oauth": _case("doctl auth init --context ci -t doo_v1_{}", _BODIES["do-oauth"]),
    "do-refresh": _case('oauth callback body: {{"token_type": "bearer", "refresh_token": "dor_v1_{}"}}',
                        _BODIES["do-refresh"]),
    "defined-networking": _case("Enrolling the lighthouse needs an API key: dnkey-{} from admin.defined.net.",
                                _r(26, _U) + "-" + _r(52, _U)),
    "dropbox-short-lived": _case("dbx = dropbox.Dropbox('sl.B{}')", _r(134, _W)),
    "easypost-test": _case("client = EasyPost::Client.new(api_key: 'EZTK{}')", _BODIES["easypost-test"]),
    "facebook-page": _case("curl 'https://graph.facebook.com/v19.0/me/accounts?access_token=EAAC{}'", _r(180)),
    "flyio-macaroon": _case("fly deploy --access-token 'FlyV1 fm2_lJPE{}'", _r(220, _B64)),
    "frameio": _case("FRAMEIO_TOKEN=fio-u-{} python upload_dailies.py", _BODIES["frameio"]),
    "gitlab-deploy": _case("docker login registry.gitlab.com -u gitlab+deploy-token-7 -p gldt-{}",
                           _BODIES["gitlab-deploy"]),
    "gitlab-feed": _case("Subscribe to https://gitlab.example.com/dashboard/issues.atom?feed_token=glft-{}&state=all",
                         _BODIES["gitlab-feed"]),
    "gitlab-incoming-mail": _case("Mail incoming+acme-web-17-glimt-{}-issue@gitlab.example.com to open an issue.",
                                  _BODIES["gitlab-mail"]),
    "gitlab-agent": _case("helm upgrade --install k8s-agent gitlab/gitlab-agent --set config.token=glagent-{}",
                          _BODIES["gitlab-agent"]),
    "gitlab-trigger": _case("curl -X POST -F token=glptt-{} -F ref=main https://gitlab.example.com/api/v4/projects/9/"
                            "trigger/pipeline", _BODIES["gitlab-trigger"]),
    "gitlab-scim": _case("Okta's SCIM app for GitLab uses glsoat-{}; it stops syncing when that is rotated.",
                         _BODIES["gitlab-scim"]),
    "gitlab-session-cookie": _case("GET /api/v4/user 200 Cookie: _gitlab_session={}; preferred_language=en",
                                   _GL_SESSION),
    "gitlab-job-token": _case('curl --header "JOB-TOKEN: glcbt-64_{}" "$CI_API_V4_URL/projects/9/packages"',
                              _r(20, _W)),
    "grafana-legacy-key": _case("grafana:\n  url: https://grafana.internal\n  api_key: {}\n", _grafana_legacy()),
    "harness-pat": _case("The Harness token pat.{} belongs to the release bot.",
                         _r(22, _W) + "." + _r(24) + "." + _r(20)),
    "intra42": _case("42 API: the new client secret for the intra app is s-s4t2ud-{}", _r(64, _H)),
    "newrelic-insert": _case("curl -X POST -H 'X-Insert-Key: NRII-{}' https://insights-collector.newrelic.com/v1/"
                             "accounts/1/events", _BODIES["newrelic-insert"]),
    "newrelic-query": _case("the dashboard reads events with the query key NRIQ-{}", _BODIES["newrelic-query"]),
    "prefect": _case("prefect cloud login -k pnu_{} --workspace acme/prod", _BODIES["prefect"]),
    "readme": _case("npx rdme openapi openapi.json --key=rdme_{} --id=64f0", _BODIES["readme"]),
    "rubygems": _case("gem push failed: token rubygems_{} lacks the push_rubygem scope", _BODIES["rubygems"]),
    "settlemint": _case("SettleMint CLI logged in with sm_pat_{}, then the deploy worked.", _BODIES["settlemint"]),
    "shippo": _case("shippo.config.api_key = 'shippo_live_{}'", _BODIES["shippo"]),
    "shopify-custom-app": _case("curl -H 'X-Shopify-Access-Token: shpca_{}' https://acme.myshopify.com/admin/api/"
                                "2024-10/orders.json", _BODIES["shopify-custom"]),
    "shopify-private-app": _case("The old private app password shppa_{} still works on the admin API.",
                                 _BODIES["shopify-private"]),
    "slack-workspace-app": _case("Legacy workspace app token: xoxa-2-{}", _r(48)),
    "slack-legacy-user": _case("slack export ran as xoxs-{}", "-".join(_r(n, "0123456789") for n in (10, 11, 12))
                               + "-" + _r(64, _H)),
    "square-oauth": _case("WARN square: 401 UNAUTHORIZED for sq0atp-{} on /v2/payments", _BODIES["square-oauth"]),
    "vault-legacy-token": _case("vault login s.{}", _BODIES["vault-legacy"]),
    "yandex-api-key": _case("curl -H 'Authorization: Api-Key AQVN{}' https://llm.api.cloud.yandex.net/foundationModels/"
                            "v1/completion", _BODIES["yandex-api"]),
    "yandex-static-secret": _case("[yandex]\naws_access_key_id = YCAJE" + _r(20, _W) + "\naws_secret_access_key = YC{}",
                                  _BODIES["yandex-static"]),
    "twilio-api-key": _case("The Twilio API key SK{} was created for the SMS worker.", _BODIES["twilio-key"]),
    "okta-ssws": _case("curl -H 'Authorization: SSWS 00{}' https://acme.okta.com/api/v1/users?limit=25",
                       _BODIES["okta"]),
    "twitter-bearer": _case("The X API bearer for the mentions bot is AAAAAAAAAAAAAAAAAAAAA{}",
                            _r(20) + "%2B" + _r(20) + "%3D" + _r(50)),
    "mailgun-signing-key": _case("mailgun webhooks are verified against {} (not the sending key)",
                                 _r(32, _H) + "-" + _r(8, _H) + "-" + _r(8, _H)),
    "mailchimp": _case("client.setConfig({{ apiKey: '{}', server: 'us21' }});", _r(32, _H) + "-us21"),
    "teams-webhook": _case("teams_url: https://acme.webhook.office.com/webhookb2/{}\n",
                           f"{_uuid()}@{_uuid()}/IncomingWebhook/{_r(32, _H)}/{_uuid()}"),
    "sidekiq-gems-url": _case('source "https://{}@gems.contribsys.com/" do\n  gem "sidekiq-pro"\nend',
                              _r(8, _H) + ":" + _r(8, _H)),
    # trufflehog pkg/detectors
    "discord-webhook": _case("curl -H 'Content-Type: application/json' -d '{{\"content\":\"deploy ok\"}}' "
                             "https://discord.com/api/webhooks/{}", str(_rng.randrange(10**17, 10**18)) + "/"
                             + _r(68, _W)),
    "zapier-webhook": _case("Our form posts to https://hooks.zapier.com/hooks/catch/{}/ and Zapier fans it out.",
                            str(_rng.randrange(10**6, 10**7)) + "/" + _r(8, _L)),
    "tines-webhook": _case("alerts go to https://acme-corp.tines.com/webhook/{}", _r(32, _H) + "/" + _r(32, _H)),
    "langfuse-secret": _case("Traces vanished because sk-lf-{} belongs to the staging project.", _BODIES["langfuse"]),
    "posthog-personal": _case("POSTHOG_PERSONAL_API_KEY=phx_{} npm run sync-flags", _BODIES["posthog"]),
    "pinecone": _case("pc = Pinecone(api_key=\"pcsk_{}\")", _r(6) + "_" + _r(63)),
    "nvidia": _case("curl https://integrate.api.nvidia.com/v1/models -H 'Authorization: Bearer nvapi-{}'",
                    _BODIES["nvidia"]),
    "azure-acr-password": _case("docker login acmeprod.azurecr.io -u acmeprod -p {}", _r(42, _B64) + "+ACR" + _r(6)),
    "azure-redis-conn": _case('"Redis": "acme.redis.cache.windows.net:6380,password={},ssl=True,abortConnect=False"',
                              _r(43, _B64) + "="),
    "ngrok-authtoken": _case("ngrok config add-authtoken {}", "2" + _r(26) + "_" + _r(1, "0123456789") + _r(20)),
    "atlassian-admin": _case("Org admin API key for the audit export: {}", _atlassian_admin()),
    "bitbucket-dc-token": _case("Bitbucket Server HTTP access token BBDC-{} (project read) for the mirror job",
                                _r(44, _A + "+/@_-")),
    "dockerhub-oat": _case("echo dckr_oat_{} | docker login -u acme --password-stdin", _BODIES["dockerhub-oat"]),
    "ramp-secret": _case("ramp client secret ramp_sec_{}", _BODIES["ramp"]),
    "rootly": _case("ROOTLY_API_TOKEN: rootly_{}", _BODIES["rootly"]),
    "sonarqube-cloud": _case("sonar-scanner -Dsonar.host.url=https://sonarcloud.io -Dsonar.token=sqco_{}",
                             _BODIES["sonarqube-cloud"]),
    "robinhood-crypto": _case("Robinhood crypto trading API key rh-api-{} is read-only", _BODIES["robinhood"]),
    "notion-legacy": _case("notion = Client(auth='secret_{}')", _BODIES["notion-legacy"]),
    "flexport": _case("Flexport API v2 calls use shltm_{} from the developer portal", _BODIES["flexport"]),
    "salesforce-session": _case("sf org login access-token --instance-url https://acme.my.salesforce.com 00D{}",
                                _r(12) + "!AQ" + _r(94, _A + "._")),
    "salesforce-refresh": _case("refresh_token=5AEP861{}", _r(80, _A + "._")),
    "circleci-pat": _case("curl -H 'Circle-Token: CCIPAT_{}' https://circleci.com/api/v2/me",
                          _r(22) + "_" + _r(40, _H)),
    "pagerduty": _case("curl -H 'Authorization: Token token=u+{}' https://api.pagerduty.com/incidents", _r(18, _W)),
    "twitch-irc": _case("PASS oauth:{}\nNICK acme_bot", _r(30, _L)),
    "elevenlabs": _case("tts = ElevenLabs(api_key='sk_{}')", _BODIES["elevenlabs"]),
    "vercel": _case("vercel deploy --prod --token {}", _r(24)),
    # The API key before ":" is an id the console shows; the API secret after it is the credential.
    "cloudinary-url": _case("CLOUDINARY_URL=cloudinary://" + str(_rng.randrange(10**14, 10**15)) + ":{}@acme-media",
                            _r(27, _W)),
    "plaid-access": _case("plaid item ok, access token access-production-{} stored in the vault", _uuid()),
    "postmark": _case("curl -H 'X-Postmark-Server-Token: {}' https://api.postmarkapp.com/email", _uuid()),
    "sumologic": _case("collector config: accessid=su" + _r(12) + " accesskey={}", _r(64)),
    "sqlserver-conn": _case('"Db": "Server=tcp:acme.database.windows.net,1433;Initial Catalog=app;User ID=app;'
                            'Password={};Encrypt=True;"', _r(18, _A + "!#%")),
    "ldap-bind": _case("ldapsearch -x -H ldaps://ldap.acme.org -D 'cn=admin,dc=acme,dc=org' -w '{}' -b dc=acme,dc=org",
                       _r(16, _A + "!#%")),
    "mongodb-uri": _case("MongoServerSelectionError connecting to mongodb://app:{}@db1.acme.internal:27017,"
                         "db2.acme.internal:27017/app?replicaSet=rs0", _r(20)),
    "rediss-url": _case("celery -b rediss://default:{}@redis-12345.c1.us-east-1-2.ec2.cloud.redislabs.com:12345/0 "
                        "worker", _r(32)),
    "amqps-url": _case("BROKER_URL = 'amqps://orders:{}@b-1f2e.mq.us-east-1.amazonaws.com:5671/'", _r(24)),
    "fleetbase": _case("fleetbase live key flb_live_{}", _BODIES["fleetbase"]),
    "pagarme": _case("pagarme secret ak_live_{} in the checkout service", _BODIES["pagarme"]),
    "sourcegraph-cody": _case("cody auth login --access-token slk_{}", _BODIES["cody"]),
    "endor-labs": _case("endorctl scan --api-key endr+{}", _BODIES["endor"]),
    "portainer": _case("curl -H 'X-API-Key: ptr_{}' https://portainer.acme.io/api/stacks", _BODIES["portainer"]),
    "contentful-pat": _case("contentful login --management-token CFPAT-{}", _BODIES["contentful-pat"]),
    # GitHub secret scanning, non-provider patterns and google_oauth_refresh_token
    "openssh-private-key": (f"The deploy key that finally worked:\n{_OPENSSH[0]}\n", _OPENSSH[1]),
    "ec-private-key": (f"signing key for the webhook service:\n{_EC[0]}", _EC[1]),
    "pgp-private-key": (f"gpg --import <<'EOF'\n{_PGP[0]}\nEOF", _PGP[1]),
    "google-refresh-token": _case("gcloud kept prompting until I pasted the refresh token 1//0g{}", _r(99, _W)),
}

_names = sorted(FORMATS)
random.Random(20261206).shuffle(_names)
TUNING: list[str] = sorted(_names[: len(_names) // 2])
HELD_OUT: list[str] = sorted(_names[len(_names) // 2:])


def leaked(cleaned: str, body: str) -> bool:
    """True when a 12-character run of the secret's random part survived scrubbing."""
    width = min(12, len(body))
    return any(body[i:i + width] in cleaned for i in range(len(body) - width + 1))
