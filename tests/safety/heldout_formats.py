"""A second held-out corpus of credential formats: none of them is in scanner_formats.py or the older safety tests.

Formats are facts taken from Nosey Parker's builtin rules, Yelp detect-secrets' plugins, secretlint's rules and
keyhog's detectors (each section names its source); no rule text is copied. Values come from a seeded generator.
`FORMATS` maps a name to (text, body) as in scanner_formats.py; `FIRST_MISSED` is what scrub missed when first run.
"""

from __future__ import annotations

import base64
import random
import string

_rng = random.Random(20261207)
_A = string.ascii_letters + string.digits
_L = string.ascii_lowercase + string.digits
_U = string.ascii_uppercase + string.digits
_H = "0123456789abcdef"
_W = _A + "-_"
_B64 = _A + "+/"
_PW = _A + "!#%*"


def _r(n: int, alphabet: str = _A) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _uuid() -> str:
    return "-".join(_r(n, _H) for n in (8, 4, 4, 4, 12))


def _b64key(raw: int) -> str:
    return base64.b64encode(_rng.randbytes(raw)).decode()


def _case(template: str, body: str) -> tuple[str, str]:
    return template.format(body), body


_SESSION = "IQoJb3JpZ2luX2VjE" + _r(300, _B64)
_SHA512CRYPT = "$6$" + _r(16, _A + "./") + "$" + _r(86, _A + "./")

FORMATS: dict[str, tuple[str, str]] = {
    # Nosey Parker, crates/noseyparker/data/default/builtin/rules/*.yml
    "azure-iot-hub-conn": _case('"IOTHUB": "HostName=acme-iot.azure-devices.net;SharedAccessKeyName=iothubowner;'
                                'SharedAccessKey={}"', _b64key(32)),
    "azure-app-config-conn": _case("az appconfig kv list --connection-string 'Endpoint=https://acme-cfg.azconfig.io;"
                                   "Id=Xy1z-l0-s0:" + _r(20) + ";Secret={}'", _b64key(32)),
    "blynk-device": _case("curl 'https://fra1.blynk.cloud/external/api/get?token={}&V1' returns 400 when offline",
                          _r(32, _W)),
    "blynk-oauth-client": _case("curl -X POST -u oa2-client-id_" + _r(32, _W) + ":{} "
                                "https://fra1.blynk.cloud/oauth2/token?grant_type=client_credentials", _r(40, _W)),
    "dependency-track": _case("curl -H 'X-Api-Key: odt_{}' https://dtrack.acme.io/api/v1/bom", _r(32)),
    "doppler-cli": _case("doppler configure set token dp.ct.{} --scope /srv/app", _r(43)),
    "doppler-service-account": _case("DOPPLER_TOKEN=dp.sa.{} doppler secrets download --no-file", _r(43)),
    "jina": _case("reranker = JinaRerank(api_key='jina_{}')", _r(60)),
    "kubeadm-bootstrap": _case("kubeadm join 10.0.0.5:6443 --token " + _r(6, _L) + ".{} "
                               "--discovery-token-unsafe-skip-ca-verification", _r(16, _L)),
    "newrelic-admin": _case("the admin key NRAA-{} only works on the REST v2 API", _r(27, _H)),
    "newrelic-rest": _case("curl -H 'X-Api-Key: NRRA-{}' https://api.newrelic.com/v2/applications.json",
                           _r(42, _H)),
    "pixie-api": _case("px auth login --api_key px-api-{}", _uuid()),
    "particle-io": _case("curl https://api.particle.io/v1/devices -d access_token={}", _r(40, _H)),
    "sauce-labs": _case("sauce: the tunnel started after SAUCE_ACCESS_KEY was set to {}", _uuid()),
    "stackhawk": _case("hawk scan --api-key hawk.{}", _r(20, _W) + "." + _r(20, _W)),
    "tavily": _case("search = TavilySearchResults(tavily_api_key='tvly-{}')", _r(32)),
    "teamcity": _case("curl -H 'Authorization: Bearer eyJ0eXAiOiAiVENWMiJ9.{}' https://ci.acme.io/app/rest/builds",
                      _r(36, _W) + "." + _r(48, _W)),
    "thingsboard-device": _case("curl -X POST https://thingsboard.cloud/api/v1/{}/telemetry -d '{{\"t\":21}}'",
                                _r(20, _L)),
    "thingsboard-provision": _case('{{"deviceName": "pump-7", "provisionDeviceKey": "' + _r(20, _L)
                                   + '", "provisionDeviceSecret": "{}"}}', _r(20, _L)),
    "truenas": _case("curl -H 'Authorization: Bearer 1-{}' https://nas.lan/api/v2.0/pool", _r(64)),
    "wireguard-private": _case("[Interface]\nAddress = 10.8.0.2/32\nPrivateKey = {}\nDNS = 1.1.1.1", _b64key(32)),
    "wireguard-preshared": _case("[Peer]\nPublicKey = " + _b64key(32) + "\nPresharedKey = {}\nAllowedIPs = 0.0.0.0/0",
                                 _b64key(32)),
    "phpmailer": _case("$mail->Username = 'alerts@acme.io';\n$mail->Password = '{}';", _r(14, _PW)),
    "psexec": _case("psexec \\\\build-07 -u ACME\\svc-deploy -p {} cmd /c deploy.bat", _r(14, _PW)),
    "vmware-viserver": _case("Connect-VIServer -Server vc01.acme.lan -User administrator@vsphere.local "
                             "-Password '{}'", _r(14, _PW)),
    "aws-appsync": _case("x-api-key: da2-{} on the GraphQL endpoint", _r(26, string.ascii_lowercase)),
    "amazon-mws": _case("MWS_AUTH_TOKEN=amzn.mws.{}", _uuid()),
    "aws-session-token": _case("[default]\naws_session_token = {}\n", _SESSION),
    "codeclimate-reporter": _case("env:\n  CC_TEST_REPORTER_ID: {}\n", _r(64, _H)),
    "gitalk": _case("new Gitalk({{ clientID: '" + _r(20, _H) + "', clientSecret: '{}', repo: 'blog' }})", _r(40, _H)),
    "jenkins-api-token": _case("curl -u ci-bot:{} https://jenkins.acme.io/job/app/build", "11" + _r(32, _H)),
    "sha512crypt": _case("root:{}:19700:0:99999:7:::", _SHA512CRYPT),
    "netcredential": _case('var cred = new NetworkCredential("svc-report", "{}");', _r(14, _PW)),
    # Yelp detect-secrets, detect_secrets/plugins/*.py
    "ibm-cloud-iam": _case('ibm_cloud_iam_api_key = "{}"', _r(44, _W)),
    "ibm-cos-hmac": _case("cos_hmac_keys:\n  access_key_id: " + _r(32, _H) + "\n  secret_access_key: {}\n",
                          _r(48, _H)),
    "cloudant": _case("COUCH_URL=https://acme-app:{}@acme-app.cloudant.com/orders", _r(64, _H)),
    "softlayer": _case("SOFTLAYER_API_KEY={} slcli vs list", _r(64, string.ascii_lowercase + string.digits)),
    "artifactory-password": _case("jf rt ping --user ci --password AP{}", "6" + _r(58)),
    # secretlint, packages/@secretlint/secretlint-rule-*/src/index.ts
    "vercel-pat": _case("VERCEL_TOKEN=vcp_{} vercel pull --yes", _r(40)),
    "secp256k1-hardhat": _case("accounts: [\"0x{}\"], // hardhat deployer", _r(64, _H)),
    # keyhog, detectors/*.toml
    "render": _case("curl -H 'Authorization: Bearer rnd_{}' https://api.render.com/v1/services", _r(24)),
    "upstash-redis": _case('UPSTASH_REDIS_REST_TOKEN="{}"', "AX" + _r(58, _W)),
    "buildkite-agent": _case("BUILDKITE_AGENT_TOKEN={} buildkite-agent start", _r(40, _L)),
    "algolia-admin": _case("ALGOLIA_ADMIN_KEY={}", _r(32, _H)),
    "fastly": _case("curl -H 'Fastly-Key: {}' -X POST https://api.fastly.com/service/x/purge_all", _r(32, _W)),
    "razorpay-secret": _case("razorpay.Client(auth=('rzp_live_" + _r(14) + "', '{}'))", _r(24)),
    "deepgram": _case("DEEPGRAM_API_KEY={}", _r(40, _H)),
    "rollbar": _case("curl -H 'X-Rollbar-Access-Token: {}' https://api.rollbar.com/api/1/items", _r(32, _H)),
    "codecov": _case("codecov upload-process -t {}", _uuid()),
    "launchdarkly-sdk": _case("ldclient.set_config(Config('sdk-{}'))", _uuid()),
    "airtable-pat": _case("Airtable(api_key='pat" + _r(14) + ".{}')", _r(64, _H)),
    "mailjet-secret": _case("MJ_APIKEY_PUBLIC=" + _r(32, _H) + "\nMJ_APIKEY_PRIVATE={}", _r(32, _H)),
    "wandb": _case("WANDB_API_KEY={} python train.py", _r(40, _H)),
    "zendesk-token": _case("curl -u agent@acme.io/token:{} https://acme.zendesk.com/api/v2/tickets.json", _r(40)),
}

# scrub() on this corpus at its first run, before any rule was written for it.
FIRST_MISSED: frozenset[str] = frozenset({
    "algolia-admin", "codeclimate-reporter", "codecov", "fastly", "kubeadm-bootstrap", "launchdarkly-sdk",
    "netcredential", "pixie-api", "psexec", "sauce-labs", "secp256k1-hardhat", "sha512crypt", "thingsboard-device",
    "vmware-viserver",
})


def leaked(cleaned: str, body: str) -> bool:
    """True when a 12-character run of the secret's random part survived scrubbing."""
    width = min(12, len(body))
    return any(body[i:i + width] in cleaned for i in range(len(body) - width + 1))
