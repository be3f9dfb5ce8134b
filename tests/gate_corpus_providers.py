"""Provider formats for the gate's generated corpus (registered in `gate_corpus.py`).

Each entry is (format name, variable, service, maker): the maker builds a value of the
provider's documented shape from a seeded `random.Random`, and says which parts are secret.
Nothing here is, or was ever, a real credential. This module imports nothing from
`gate_corpus` (only `corpus_parts`), so either may be imported first.
"""

from __future__ import annotations

import base64
import json
import random

from corpus_parts import ALNUM, B64, B64URL, DIGITS, HEX, Maker, pick, shaped
from corpus_parts import LOWER_ALNUM as LOWER
from corpus_parts import UPPER_ALNUM as UPPER
from corpus_parts import uuid4 as uuid


def whole(maker: Maker) -> Maker:
    """The whole value is the secret (its random groups are too short to check alone)."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        value, _ = maker(rng)
        return value, (value,)

    return make


def unelided(maker: Maker) -> Maker:
    """No run of three dots: the gate reads `...` as an elision (`sk-...`), and a value with
    fewer than 20 characters beside it as a placeholder, by design."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        while True:
            value, secrets = maker(rng)
            if "..." not in value:
                return value, secrets

    return make


def _intercom(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    token = base64.b64encode(f"tok:{uuid(rng)}:1:0".encode()).decode()
    return token, (token,)


def _jwt_base64(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    def segment(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    jwt = ".".join(
        (
            segment({"alg": "HS256", "typ": "JWT"}),
            segment({"sub": pick(rng, HEX, 12), "iat": rng.randrange(10**9, 2 * 10**9)}),
            pick(rng, B64URL, 43),
        )
    )
    encoded = base64.b64encode(jwt.encode()).decode()
    return encoded, (encoded,)


def _teams(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    secret = pick(rng, ALNUM, 32)
    tail = uuid(rng)
    url = (
        f"https://contoso.webhook.office.com/webhookb2/{uuid(rng)}@{uuid(rng)}"
        f"/IncomingWebhook/{secret}/{tail}"
    )
    return url, (secret, tail)


def _pkcs12(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """base64 of a PKCS#12 file (`30 82 len 02 01 03 30 82 ...`), wrapped at 64 columns."""
    body = bytes([0x30, 0x82, 0x06, 0x1F, 0x02, 0x01, 0x03, 0x30, 0x82, 0x05, 0xE5])
    der = body + bytes(rng.randrange(256) for _ in range(1200))
    encoded = base64.b64encode(der).decode()
    lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
    return "\n".join(lines), tuple(line for line in lines if len(line) >= 8)


def _encoded_env_file(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A `.env` in base64 (its lines at a random byte alignment), piped to a file."""
    env = f"{'#' * rng.randrange(3)}APP_ENV=production\nDB_PASSWORD={pick(rng, ALNUM, 20)}\n"
    blob = base64.b64encode(env.encode()).decode()
    return f"echo {blob} | base64 -d > .env", (blob,)


def _kubernetes_secret(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    password = base64.b64encode(pick(rng, ALNUM, 24).encode()).decode()
    token = base64.b64encode(pick(rng, ALNUM, 40).encode()).decode()
    manifest = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-credentials\ntype: Opaque\n"
        f"data:\n  password: {password}\n  api-token: {token}"
    )
    return manifest, (password, token)


def _kubernetes_secret_listed(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """`kubectl get secret -o yaml`: keys in order, so `data:` comes before `kind:`."""
    password = pick(rng, ALNUM, 20)
    encoded = base64.b64encode(password.encode()).decode()
    manifest = (
        f"apiVersion: v1\ndata:\n  password: {encoded}\nkind: Secret\n"
        "metadata:\n  name: db\n  namespace: default\ntype: Opaque"
    )
    return manifest, (encoded,)


def _terraform_output(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """`terraform output -json`: a sensitive output's value in clear beside its flag."""
    password = pick(rng, ALNUM, 20)
    document = {
        "db_password": {"sensitive": True, "type": "string", "value": password},
        "region": {"sensitive": False, "type": "string", "value": "eu-west-1"},
    }
    return json.dumps(document, indent=2), (password,)


# (name, variable, service, maker)
PROVIDER_FORMATS: tuple[tuple[str, str, str, Maker], ...] = (
    # Cloud and hosting
    (
        "alibaba-access-key-id",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "Alibaba",
        shaped("LTAI", (ALNUM, 20)),
    ),
    ("alibaba-secret", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "Alibaba", shaped((ALNUM, 30))),
    ("tencent-secret-id", "TENCENTCLOUD_SECRET_ID", "Tencent", shaped("AKID", (ALNUM, 32))),
    ("tencent-secret-key", "TENCENTCLOUD_SECRET_KEY", "Tencent", shaped((ALNUM, 32))),
    ("ibm-cloud", "IBMCLOUD_API_KEY", "IBM", shaped((B64URL, 44))),
    ("scaleway", "SCW_SECRET_KEY", "Scaleway", shaped(uuid)),
    ("linode", "LINODE_TOKEN", "Linode", shaped((HEX, 64))),
    ("vultr", "VULTR_API_KEY", "Vultr", shaped((UPPER, 36))),
    ("hetzner", "HCLOUD_TOKEN", "Hetzner", shaped((ALNUM, 64))),
    ("cloudflare-token", "CLOUDFLARE_API_TOKEN", "Cloudflare", shaped((B64URL, 40))),
    ("cloudflare-global", "CLOUDFLARE_API_KEY", "Cloudflare", shaped((HEX, 37))),
    (
        "cloudflare-origin-ca",
        "CF_ORIGIN_CA_KEY",
        "Cloudflare",
        shaped("v1.0-", (HEX, 24), "-", (HEX, 146)),
    ),
    ("fastly", "FASTLY_API_TOKEN", "Fastly", shaped((B64URL, 32))),
    ("netlify-pat", "NETLIFY_AUTH_TOKEN", "Netlify", shaped("nfp_", (ALNUM, 36))),
    ("netlify-legacy", "NETLIFY_AUTH_TOKEN", "Netlify", shaped((B64URL, 43))),
    ("vercel", "VERCEL_TOKEN", "Vercel", shaped((ALNUM, 24))),
    (
        "flyio-macaroon",
        "FLY_API_TOKEN",
        "Fly.io",
        shaped("FlyV1 fm2_", (B64, 120), ",fm2_", (B64, 80)),
    ),
    ("flyio-legacy", "FLY_ACCESS_TOKEN", "Fly.io", shaped("fo1_", (B64URL, 43))),
    ("render", "RENDER_API_KEY", "Render", shaped("rnd_", (ALNUM, 32))),
    ("bedrock-long", "AWS_BEARER_TOKEN_BEDROCK", "Bedrock", shaped("ABSK", (B64, 132))),
    (
        "bedrock-short",
        "AWS_BEARER_TOKEN_BEDROCK",
        "Bedrock",
        shaped("bedrock-api-key-", (B64, 400)),
    ),
    ("yandex-oauth", "YANDEX_OAUTH_TOKEN", "Yandex", shaped("y0_AgAAAA", (B64URL, 50))),
    ("yandex-api-key", "YC_API_KEY", "Yandex", shaped("AQVN", (B64URL, 36))),
    ("yandex-static", "YANDEX_SECRET_KEY", "Yandex", shaped("YC", (B64URL, 38))),
    ("openshift", "OPENSHIFT_TOKEN", "OpenShift", shaped("sha256~", (B64URL, 43))),
    ("confluent", "CONFLUENT_CLOUD_API_SECRET", "Confluent", shaped((B64, 64))),
    ("clickhouse", "CLICKHOUSE_SECRET", "ClickHouse", shaped("4b1d", (ALNUM, 38))),
    (
        "defined-networking",
        "DN_API_KEY",
        "Defined Networking",
        shaped("dnkey-", (LOWER, 26), "-", (LOWER, 52)),
    ),
    (
        "terraform-cloud",
        "TFE_TOKEN",
        "Terraform Cloud",
        shaped((ALNUM, 14), ".atlasv1.", (B64URL, 67)),
    ),
    ("infracost", "INFRACOST_API_KEY", "Infracost", shaped("ico-", (ALNUM, 32))),
    ("prefect", "PREFECT_API_KEY", "Prefect", shaped("pnu_", (ALNUM, 36))),
    ("scalingo", "SCALINGO_API_TOKEN", "Scalingo", shaped("tk-us-", (B64URL, 48))),
    ("settlemint", "SETTLEMINT_TOKEN", "SettleMint", shaped("sm_pat_", (ALNUM, 16))),
    ("azure-devops", "AZURE_DEVOPS_PAT", "Azure DevOps", shaped((ALNUM, 76), "AZDO", (ALNUM, 4))),
    # Package registries
    ("rubygems", "GEM_HOST_API_KEY", "RubyGems", shaped("rubygems_", (HEX, 48))),
    ("nuget", "NUGET_API_KEY", "NuGet", shaped("oy2", (LOWER, 43))),
    (
        "nuget-config",
        "NUGET_CONFIG",
        "NuGet",
        shaped('<add key="ClearTextPassword" value="', (ALNUM + "!#%", 18), '" />'),
    ),
    ("crates-io", "CARGO_REGISTRY_TOKEN", "crates.io", shaped("cio", (ALNUM, 32))),
    ("docker-hub-pat", "DOCKERHUB_TOKEN", "Docker Hub", shaped("dckr_pat_", (B64URL, 27))),
    ("docker-hub-oat", "DOCKER_ORG_TOKEN", "Docker Hub", shaped("dckr_oat_", (B64URL, 32))),
    ("jfrog-reference", "JFROG_ACCESS_TOKEN", "JFrog", shaped("cmVmdGtuOjAxOj", (ALNUM, 54))),
    ("artifactory-api-key", "ARTIFACTORY_API_KEY", "Artifactory", shaped("AKCp", (ALNUM, 69))),
    ("packagist", "PACKAGIST_TOKEN", "Packagist", shaped("packagist_ort_", (HEX, 68))),
    ("clojars", "CLOJARS_TOKEN", "Clojars", shaped("CLOJARS_", (LOWER, 60))),
    ("npmrc", "NPMRC", "npm", shaped("//registry.npmjs.org/:_authToken=", uuid)),
    # Source hosting and CI/CD
    ("gitlab-feature-flags", "GITLAB_FF_TOKEN", "GitLab", shaped("glffct-", (B64URL, 20))),
    (
        "gitlab-routable",
        "GITLAB_TOKEN",
        "GitLab",
        shaped("glpat-", (B64URL, 40), ".01.", (LOWER, 9)),
    ),
    ("gitlab-runner-registration", "RUNNER_TOKEN", "GitLab", shaped("GR1348941", (B64URL, 20))),
    ("gitlab-runner", "CI_RUNNER_TOKEN", "GitLab", shaped("glrt-", (B64URL, 20))),
    ("gitlab-job", "CI_JOB_TOKEN", "GitLab", shaped("glcbt-64_", (B64URL, 20))),
    ("gitlab-session", "GITLAB_COOKIE", "GitLab", shaped("_gitlab_session=", (HEX, 32))),
    ("bitbucket-app-password", "BITBUCKET_APP_PASSWORD", "Bitbucket", shaped("ATBB", (ALNUM, 32))),
    (
        "bitbucket-access-token",
        "BITBUCKET_ACCESS_TOKEN",
        "Bitbucket",
        shaped("ATCTT3xFfGN0", (B64URL, 180)),
    ),
    (
        "circleci",
        "CIRCLE_TOKEN",
        "CircleCI",
        shaped("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)),
    ),
    ("travis", "TRAVIS_API_TOKEN", "Travis", shaped((B64URL, 22))),
    ("buildkite", "BUILDKITE_API_TOKEN", "Buildkite", shaped("bkua_", (HEX, 40))),
    (
        "harness",
        "HARNESS_API_KEY",
        "Harness",
        shaped("pat.", (B64URL, 22), ".", (HEX, 24), ".", (ALNUM, 20)),
    ),
    ("codecov", "CODECOV_TOKEN", "Codecov", shaped(uuid)),
    ("drone", "DRONE_TOKEN", "Drone", shaped((ALNUM, 32))),
    ("octopus", "OCTOPUS_API_KEY", "Octopus", shaped("API-", (UPPER, 26))),
    ("jenkins", "JENKINS_API_TOKEN", "Jenkins", shaped("11", (HEX, 32))),
    ("sonarqube", "SONAR_TOKEN", "SonarQube", shaped("squ_", (HEX, 40))),
    ("snyk", "SNYK_TOKEN", "Snyk", shaped(uuid)),
    (
        "snyk-pat",
        "SNYK_TOKEN",
        "Snyk",
        shaped("snyk_uat.", ("p", HEX, 8), ".eyJ", (B64URL, 120), ".", (B64URL, 43)),
    ),
    ("stackhawk", "HAWK_API_KEY", "StackHawk", shaped("hawk.", (B64URL, 20), ".", (B64URL, 20))),
    ("dependency-track", "DT_API_KEY", "Dependency-Track", shaped("odt_", (ALNUM, 32))),
    ("rootly", "ROOTLY_API_TOKEN", "Rootly", shaped("rootly_", (HEX, 64))),
    # Observability
    ("datadog-api", "DD_API_KEY", "Datadog", shaped((HEX, 32))),
    ("datadog-app", "DATADOG_APP_KEY", "Datadog", shaped((HEX, 40))),
    ("sentry-legacy", "SENTRY_AUTH_TOKEN", "Sentry", shaped((HEX, 64))),
    ("sentry-user", "SENTRY_USER_TOKEN", "Sentry", shaped("sntryu_", (HEX, 64))),
    ("honeycomb-ingest", "HONEYCOMB_API_KEY", "Honeycomb", shaped("hcaik_", (LOWER, 58))),
    ("honeycomb-config", "HONEYCOMB_WRITEKEY", "Honeycomb", shaped((ALNUM, 22))),
    ("splunk-hec", "SPLUNK_HEC_TOKEN", "Splunk", shaped(uuid)),
    ("sumo-logic", "SUMO_ACCESS_KEY", "Sumo", shaped((ALNUM, 64))),
    ("logzio", "LOGZIO_TOKEN", "Logz.io", shaped((ALNUM, 32))),
    ("rollbar", "ROLLBAR_ACCESS_TOKEN", "Rollbar", shaped((HEX, 32))),
    ("bugsnag", "BUGSNAG_API_KEY", "Bugsnag", shaped((HEX, 32))),
    ("launchdarkly", "LAUNCHDARKLY_SDK_KEY", "LaunchDarkly", shaped("sdk-", uuid)),
    ("posthog", "POSTHOG_PERSONAL_API_KEY", "PostHog", shaped("phx_", (ALNUM, 43))),
    ("pagerduty", "PAGERDUTY_TOKEN", "PagerDuty", shaped((ALNUM + "_+", 20))),
    ("opsgenie", "OPSGENIE_API_KEY", "Opsgenie", shaped(uuid)),
    ("newrelic-insert", "NEW_RELIC_INSERT_KEY", "New Relic", shaped("NRII-", (ALNUM, 32))),
    ("newrelic-browser", "NEW_RELIC_BROWSER_KEY", "New Relic", shaped("NRJS-", (HEX, 19))),
    ("newrelic-license", "NEW_RELIC_LICENSE_KEY", "NewRelic", shaped((HEX, 36), "NRAL")),
    # Chat, messaging and email
    ("teams-webhook", "TEAMS_WEBHOOK_URL", "Microsoft Teams", _teams),
    ("twilio-auth", "TWILIO_AUTH_TOKEN", "Twilio", shaped((HEX, 32))),
    (
        "mailgun-private",
        "MAILGUN_API_KEY",
        "Mailgun",
        shaped((HEX, 32), "-", (HEX, 8), "-", (HEX, 8)),
    ),
    ("postmark", "POSTMARK_SERVER_TOKEN", "Postmark", shaped(uuid)),
    ("mailjet", "MAILJET_API_SECRET", "Mailjet", shaped((HEX, 32))),
    ("sparkpost", "SPARKPOST_API_KEY", "SparkPost", shaped((HEX, 40))),
    ("resend", "RESEND_API_KEY", "Resend", shaped("re_", (ALNUM, 8), "_", (ALNUM, 24))),
    ("messagebird", "MESSAGEBIRD_ACCESS_KEY", "MessageBird", shaped((ALNUM, 25))),
    ("sendbird", "SENDBIRD_API_TOKEN", "Sendbird", shaped((HEX, 40))),
    ("mattermost", "MATTERMOST_TOKEN", "Mattermost", shaped((LOWER, 26))),
    ("gitter", "GITTER_TOKEN", "Gitter", shaped((HEX, 40))),
    ("intercom", "INTERCOM_ACCESS_TOKEN", "Intercom", _intercom),
    ("zendesk", "ZENDESK_API_TOKEN", "Zendesk", shaped((ALNUM, 40))),
    ("vonage", "VONAGE_API_SECRET", "Vonage", shaped((ALNUM, 16))),
    ("discord-client-secret", "DISCORD_CLIENT_SECRET", "Discord", shaped((B64URL, 32))),
    (
        "slack-config-refresh",
        "SLACK_CONFIG_REFRESH",
        "Slack",
        shaped("xoxe-1-", (ALNUM, 140)),
    ),
    ("slack-workspace", "SLACK_LEGACY", "Slack", shaped("xoxa-2-", (ALNUM, 60))),
    ("brevo", "BREVO_API_KEY", "Brevo", shaped("xkeysib-", (HEX, 64), "-", (ALNUM, 16))),
    # AI providers
    ("openai-service-account", "OPENAI_API_KEY", "OpenAI", shaped("sk-svcacct-", (B64URL, 120))),
    ("openai-admin", "OPENAI_ADMIN_KEY", "OpenAI", shaped("sk-admin-", (B64URL, 120))),
    (
        "anthropic-admin",
        "ANTHROPIC_ADMIN_KEY",
        "Anthropic",
        shaped("sk-ant-admin01-", (B64URL, 93), "AA"),
    ),
    ("huggingface-org", "HF_ORG_TOKEN", "Hugging Face", shaped("api_org_", (ALNUM, 34))),
    ("replicate", "REPLICATE_API_TOKEN", "Replicate", shaped("r8_", (ALNUM, 37))),
    ("perplexity", "PPLX_API_KEY", "Perplexity", shaped("pplx-", (ALNUM, 48))),
    ("xai", "XAI_API_KEY", "xAI", shaped("xai-", (ALNUM, 80))),
    ("cohere", "COHERE_API_KEY", "Cohere", shaped((ALNUM, 40))),
    ("mistral", "MISTRAL_API_KEY", "Mistral", shaped((ALNUM, 32))),
    ("openrouter", "OPENROUTER_API_KEY", "OpenRouter", shaped("sk-or-v1-", (HEX, 64))),
    ("langfuse", "LANGFUSE_SECRET_KEY", "Langfuse", shaped("sk-lf-", uuid)),
    (
        "langsmith",
        "LANGSMITH_API_KEY",
        "LangSmith",
        shaped("lsv2_pt_", (HEX, 32), "_", (HEX, 10)),
    ),
    (
        "pinecone",
        "PINECONE_API_KEY",
        "Pinecone",
        shaped("pcsk_", (ALNUM, 5), "_", (ALNUM, 63)),
    ),
    ("nvidia", "NVIDIA_API_KEY", "NVIDIA", shaped("nvapi-", (B64URL, 64))),
    ("tavily", "TAVILY_API_KEY", "Tavily", shaped("tvly-dev-", (ALNUM, 32))),
    ("elevenlabs", "ELEVENLABS_API_KEY", "ElevenLabs", shaped("sk_", (HEX, 48))),
    ("privateai", "PRIVATE_AI_API_KEY", "PrivateAI", shaped((LOWER, 32))),
    ("firecrawl", "FIRECRAWL_API_KEY", "Firecrawl", shaped("fc-", (HEX, 32))),
    ("fireworks", "FIREWORKS_API_KEY", "Fireworks", shaped("fw_", (ALNUM, 24))),
    ("together", "TOGETHER_API_KEY", "Together", shaped("tgp_v1_", (B64URL, 43))),
    ("cerebras", "CEREBRAS_API_KEY", "Cerebras", shaped("csk-", (LOWER, 48))),
    ("modal-id", "MODAL_TOKEN_ID", "Modal", shaped("ak-", (ALNUM, 22))),
    ("modal-secret", "MODAL_TOKEN_SECRET", "Modal", shaped("as-", (ALNUM, 22))),
    ("voyage", "VOYAGE_API_KEY", "Voyage AI", shaped("pa-", (B64URL, 43))),
    ("brave-search", "BRAVE_API_KEY", "Brave Search", shaped("BSA", (B64URL, 28))),
    ("e2b", "E2B_API_KEY", "E2B", shaped("e2b_", (HEX, 40))),
    ("browserbase", "BROWSERBASE_API_KEY", "Browserbase", shaped("bb_live_", (B64URL, 27))),
    ("jina", "JINA_API_KEY", "Jina AI", shaped("jina_", (ALNUM, 60))),
    ("deno-deploy", "DENO_DEPLOY_TOKEN", "Deno Deploy", shaped("ddp_", (ALNUM, 36))),
    ("nightfall", "NIGHTFALL_API_KEY", "Nightfall", shaped("NF-", (ALNUM, 32))),
    (
        "salad-cloud",
        "SALAD_API_KEY",
        "SaladCloud",
        shaped("salad_cloud_", (ALNUM, 5), "_", (ALNUM, 40)),
    ),
    # Payments and finance
    (
        "braintree",
        "BRAINTREE_ACCESS_TOKEN",
        "Braintree",
        shaped("access_token$production$", (LOWER, 16), "$", (HEX, 32)),
    ),
    ("adyen", "ADYEN_API_KEY", "Adyen", shaped("AQE", (B64, 80), "==-", (B64, 43), "=")),
    ("razorpay", "RAZORPAY_KEY_SECRET", "Razorpay", shaped((ALNUM, 24))),
    ("plaid-access", "PLAID_ACCESS_TOKEN", "Plaid", shaped("access-production-", uuid)),
    ("plaid-secret", "PLAID_SECRET", "Plaid", shaped((HEX, 30))),
    (
        "flutterwave",
        "FLW_SECRET_KEY",
        "Flutterwave",
        shaped("FLWSECK_TEST-", (HEX, 32), "-X"),
    ),
    ("coinbase", "COINBASE_API_SECRET", "Coinbase", shaped((B64URL, 64))),
    ("gocardless", "GOCARDLESS_ACCESS_TOKEN", "GoCardless", shaped("live_", (ALNUM + "_-", 40))),
    ("kraken", "KRAKEN_PRIVATE_KEY", "Kraken", shaped((B64, 86), "==")),
    ("kucoin", "KUCOIN_API_SECRET", "KuCoin", shaped(uuid)),
    ("bittrex", "BITTREX_API_SECRET", "Bittrex", shaped((HEX, 32))),
    ("finicity", "FINICITY_APP_SECRET", "Finicity", shaped((LOWER, 20))),
    ("finnhub", "FINNHUB_API_KEY", "Finnhub", shaped((LOWER, 20))),
    ("mollie", "MOLLIE_API_KEY", "Mollie", shaped("live_", (ALNUM, 30))),
    (
        "paddle",
        "PADDLE_API_KEY",
        "Paddle",
        shaped("pdl_live_apikey_", (LOWER, 26), "_", (ALNUM, 22), "_", (ALNUM, 3)),
    ),
    ("lob", "LOB_API_KEY", "Lob", shaped("live_", (HEX, 35))),
    ("stripe-restricted-test", "STRIPE_TEST_KEY", "Stripe", shaped("rk_test_", (ALNUM, 99))),
    ("square-access", "SQUARE_ACCESS_TOKEN", "Square", shaped("sq0atp-", (B64URL, 22))),
    # Databases as a service
    (
        "planetscale-token",
        "PLANETSCALE_SERVICE_TOKEN",
        "PlanetScale",
        shaped("pscale_tkn_", (B64URL, 43)),
    ),
    (
        "planetscale-password",
        "DATABASE_PASSWORD",
        "PlanetScale",
        shaped("pscale_pw_", (B64URL, 43)),
    ),
    ("supabase-secret", "SUPABASE_SECRET_KEY", "Supabase", shaped("sb_secret_", (B64URL, 31))),
    ("supabase-pat", "SUPABASE_ACCESS_TOKEN", "Supabase", shaped("sbp_", (HEX, 40))),
    ("neon", "NEON_API_KEY", "Neon", shaped("napi_", (ALNUM, 64))),
    ("upstash", "UPSTASH_REDIS_REST_TOKEN", "Upstash", shaped("A", (ALNUM, 60), "=")),
    ("aiven", "AIVEN_SERVICE_PASSWORD", "Aiven", shaped("AVNS_", (ALNUM, 23))),
    (
        "mongodb-atlas-url",
        "MONGODB_URI",
        "MongoDB",
        shaped("mongodb+srv://app:", (ALNUM, 20), "@cluster0.ab1cd.mongodb.net/app"),
    ),
    ("mongodb-atlas-key", "MONGODB_ATLAS_PRIVATE_KEY", "MongoDB_Atlas", shaped(uuid)),
    (
        "cloudinary-url",
        "CLOUDINARY_URL",
        "Cloudinary",
        shaped("cloudinary://", ("public", DIGITS, 15), ":", (B64URL, 27), "@demo"),
    ),
    # SaaS and developer tools
    (
        "tailscale-key",
        "TS_AUTHKEY",
        "Tailscale",
        shaped("tskey-auth-k", (ALNUM, 10), "CNTRL-", (ALNUM, 33)),
    ),
    ("ngrok-authtoken", "NGROK_AUTHTOKEN", "ngrok", shaped("2", (ALNUM, 26), "_", (ALNUM, 21))),
    (
        "1password-service-account",
        "OP_SERVICE_ACCOUNT_TOKEN",
        "1Password",
        shaped("ops_eyJ", (B64URL, 300)),
    ),
    (
        "1password-secret-key",
        "OP_SECRET_KEY",
        "1Password",
        whole(
            shaped(
                "A3-",
                (UPPER, 6),
                "-",
                (UPPER, 6),
                "-",
                (UPPER, 5),
                "-",
                (UPPER, 5),
                "-",
                (UPPER, 5),
                "-",
                (UPPER, 5),
            )
        ),
    ),
    ("adobe", "ADOBE_CLIENT_SECRET", "Adobe", shaped("p8e-", (B64URL, 32))),
    ("airtable", "AIRTABLE_API_KEY", "Airtable", shaped("pat", (ALNUM, 14), ".", (HEX, 64))),
    (
        "asana",
        "ASANA_ACCESS_TOKEN",
        "Asana",
        shaped("2/", ("public", DIGITS, 16), "/", ("public", DIGITS, 16), ":", (HEX, 32)),
    ),
    (
        "authress",
        "AUTHRESS_KEY",
        "Authress",
        shaped("sc_", (LOWER, 12), ".", (LOWER, 5), ".acc_", (LOWER, 20), ".", (B64, 60)),
    ),
    ("hubspot-pat", "HUBSPOT_ACCESS_TOKEN", "HubSpot", shaped("pat-na1-", uuid)),
    ("hubspot-legacy", "HUBSPOT_API_KEY", "HubSpot", shaped(uuid)),
    ("okta", "OKTA_API_TOKEN", "Okta", shaped("00", (B64URL, 40))),
    ("auth0", "AUTH0_CLIENT_SECRET", "Auth0", shaped((B64URL, 64))),
    (
        "infisical",
        "INFISICAL_TOKEN",
        "Infisical",
        shaped("st.", (HEX, 24), ".", (HEX, 32), ".", (HEX, 32)),
    ),
    ("sourcegraph", "SRC_ACCESS_TOKEN", "Sourcegraph", shaped("sgp_", (HEX, 16), "_", (HEX, 40))),
    ("contentful-pat", "CONTENTFUL_MANAGEMENT_TOKEN", "Contentful", shaped("CFPAT-", (B64URL, 43))),
    ("contentful-delivery", "CONTENTFUL_DELIVERY_TOKEN", "Contentful", shaped((B64URL, 43))),
    ("algolia", "ALGOLIA_ADMIN_KEY", "Algolia", shaped((HEX, 32))),
    (
        "mapbox",
        "MAPBOX_SECRET_TOKEN",
        "Mapbox",
        shaped("sk.eyJ1Ijoi", (B64URL, 40), ".", (B64URL, 22)),
    ),
    ("dropbox-short", "DROPBOX_ACCESS_TOKEN", "Dropbox", shaped("sl.B", (B64URL, 135))),
    (
        "dropbox-long",
        "DROPBOX_TOKEN",
        "Dropbox",
        shaped((LOWER, 11), "AAAAAAAAAA", (B64URL, 43)),
    ),
    ("twitch", "TWITCH_OAUTH_TOKEN", "Twitch", shaped((LOWER, 30))),
    ("twitter-bearer", "TWITTER_BEARER_TOKEN", "Twitter", shaped("A" * 22, (ALNUM, 90))),
    ("twitter-secret", "TWITTER_API_SECRET", "Twitter", shaped((ALNUM, 50))),
    ("facebook-secret", "FACEBOOK_APP_SECRET", "Facebook", shaped((HEX, 32))),
    ("facebook-token", "FACEBOOK_ACCESS_TOKEN", "Facebook", shaped("EAA", (ALNUM, 180))),
    ("easypost", "EASYPOST_API_KEY", "EasyPost", shaped("EZAK", (ALNUM, 54))),
    ("duffel", "DUFFEL_ACCESS_TOKEN", "Duffel", shaped("duffel_test_", (B64URL, 43))),
    ("frameio", "FRAMEIO_TOKEN", "Frame.io", shaped("fio-u-", (B64URL, 64))),
    ("typeform", "TYPEFORM_TOKEN", "Typeform", shaped("tfp_", (B64URL, 44))),
    ("shippo", "SHIPPO_API_TOKEN", "Shippo", shaped("shippo_live_", (HEX, 40))),
    ("readme", "README_API_KEY", "ReadMe", shaped("rdme_", (LOWER, 70))),
    ("rapidapi", "RAPIDAPI_KEY", "RapidAPI", shaped((B64URL, 50))),
    ("squarespace", "SQUARESPACE_API_KEY", "Squarespace", shaped(uuid)),
    ("etsy", "ETSY_API_KEY", "Etsy", shaped((LOWER, 24))),
    ("flickr", "FLICKR_API_KEY", "Flickr", shaped((HEX, 32))),
    ("freshbooks", "FRESHBOOKS_TOKEN", "FreshBooks", shaped((LOWER, 64))),
    ("nytimes", "NYTIMES_API_KEY", "NYTimes", shaped((B64URL, 32))),
    ("beamer", "BEAMER_API_KEY", "Beamer", shaped("b_", (B64URL, 44))),
    ("adafruit", "ADAFRUIT_IO_KEY", "Adafruit", shaped((LOWER, 32))),
    ("looker", "LOOKER_CLIENT_SECRET", "Looker", shaped((ALNUM, 24))),
    ("linkedin", "LINKEDIN_CLIENT_SECRET", "LinkedIn", shaped((ALNUM, 16))),
    ("meraki", "MERAKI_API_KEY", "Meraki", shaped((HEX, 40))),
    (
        "maxmind",
        "MAXMIND_LICENSE_KEY",
        "MaxMind",
        shaped((ALNUM, 6), "_", (ALNUM, 29), "_mmk"),
    ),
    (
        "sidekiq",
        "BUNDLE_ENTERPRISE__CONTRIBSYS__COM",
        "Sidekiq",
        shaped((HEX, 8), ":", (HEX, 8)),
    ),
    ("jwt-base64", "ENCODED_JWT", "auth", _jwt_base64),
    ("vault-batch", "VAULT_TOKEN", "Vault", shaped("hvb.", (B64URL, 130))),
    ("doppler-service", "DOPPLER_TOKEN", "Doppler", shaped("dp.st.prd.", (ALNUM, 43))),
    ("shopify-shared-secret", "SHOPIFY_SECRET", "Shopify", shaped("shpss_", (HEX, 32))),
    ("linear-oauth", "LINEAR_TOKEN", "Linear", shaped("lin_oauth_", (ALNUM, 64))),
    # Formats without a vendor's name next to them, and vendor keys of other shapes.
    ("square-eaaa", "SQUARE_ACCESS_TOKEN", "Square", shaped("EAAA", (B64URL, 60))),
    ("facebook-page-token", "PAGE_TOKEN", "Meta", shaped("EAAG", (ALNUM, 180))),
    (
        "facebook-app-token",
        "FACEBOOK_APP_TOKEN",
        "Facebook",
        shaped((DIGITS, 16), "|", (B64URL, 27)),
    ),
    ("flyio-macaroon", "FLY_TOKEN", "deploy", shaped("fm2_", (B64, 180))),
    ("databricks-bare", "WORKSPACE_PAT", "workspace", shaped("dapi", (HEX, 32))),
    ("intra42", "INTRA_SECRET", "42", shaped("s-s4t2ud-", (HEX, 64))),
    ("stripe-prod", "STRIPE_KEY", "Stripe", shaped("sk_prod_", (ALNUM, 99))),
    (
        "oci-auth-token",
        "OCI_AUTH_TOKEN",
        "OCI",
        unelided(shaped(("d", ALNUM, 1), (ALNUM + ";(<#+-._", 19))),
    ),
    ("jfrog-token", "JFROG_ACCESS_TOKEN", "JFrog", shaped((ALNUM, 64))),
    ("atlassian-legacy", "JIRA_API_TOKEN", "Jira", shaped((ALNUM, 24))),
    ("asana-secret", "ASANA_CLIENT_SECRET", "Asana", shaped((ALNUM, 32))),
    ("confluent-key", "CONFLUENT_API_KEY", "Confluent", shaped((UPPER, 16))),
    ("codecov-alnum", "CODECOV_TOKEN", "Codecov", shaped((ALNUM, 32))),
    ("twitter-api-key", "TWITTER_API_KEY", "Twitter", shaped((ALNUM, 25))),
    ("vault-legacy", "VAULT_TOKEN", "Vault", shaped("s.", (ALNUM, 24))),
    ("sonar-legacy", "SONAR_TOKEN", "SonarQube", shaped((HEX, 40))),
    ("sourcegraph-legacy", "SOURCEGRAPH_TOKEN", "Sourcegraph", shaped((HEX, 40))),
    ("sourcegraph-cody", "SRC_ACCESS_TOKEN", "Sourcegraph", shaped("slk_", (HEX, 64))),
    ("pkcs12", "CLIENT_P12", "TLS", _pkcs12),
    ("kubernetes-secret", "MANIFEST", "Kubernetes", _kubernetes_secret),
    ("kubernetes-secret-listed", "MANIFEST", "Kubernetes", _kubernetes_secret_listed),
    ("terraform-output", "TF_OUTPUT", "Terraform", _terraform_output),
    (
        "curl-user",
        "CURL_COMMAND",
        "API",
        shaped("curl -sS -u deploy:", (ALNUM + "@#%!", 18), " https://api.internal/v1/items"),
    ),
    (
        "curl-header",
        "CURL_COMMAND",
        "API",
        shaped('curl -H "X-Api-Key: ', (ALNUM, 32), '" https://api.internal/v1/items'),
    ),
    (
        "registry-login",
        "LOGIN_COMMAND",
        "Registry",
        shaped("docker login -u ci -p ", (ALNUM + "@#%!", 20), " registry.example.com"),
    ),
    (
        "cli-password-mysql",
        "DB_COMMAND",
        "MySQL",
        shaped("mysql -u root -p", (ALNUM, 16), " -h db.internal app"),
    ),
    (
        "cli-password-sshpass",
        "SSH_COMMAND",
        "SSH",
        shaped("sshpass -p '", (ALNUM + "@#%!", 18), "' ssh deploy@10.0.0.4"),
    ),
    (
        "masked-value",
        "MASK_COMMAND",
        "GitHub Actions",
        shaped('echo "::add-mask::', (ALNUM + "@#%!", 20), '"'),
    ),
    (
        "wifi-password",
        "WIFI_COMMAND",
        "Wi-Fi",
        shaped("nmcli dev wifi connect HomeNet password ", (ALNUM + "@#%!", 16), ""),
    ),
    (
        "netrc-password",
        "NETRC",
        "netrc",
        shaped("machine github.com\n  login ci-bot\n  password ", (ALNUM, 20), "\n"),
    ),
    (
        "xml-secret",
        "SETTINGS_XML",
        "Maven",
        shaped("<server><id>corp</id><password>", (ALNUM + "@#%!", 18), "</password></server>"),
    ),
    (
        "composer-auth-token",
        "COMPOSER_AUTH",
        "Composer",
        shaped('{"bearer": {"repo.example.org": "', (ALNUM, 32), '"}}'),
    ),
    (
        "php-define-secret",
        "WP_CONFIG",
        "WordPress",
        shaped("define( 'DB_PASSWORD', '", (ALNUM + "@#%!", 18), "' );"),
    ),
    (
        "c-define-secret",
        "C_DEFINE",
        "C",
        shaped('#define WIFI_PASSWORD "', (ALNUM + "@#%!", 18), '"'),
    ),
    (
        "name-value-secret",
        "ENV_LIST",
        "Kubernetes",
        shaped('env:\n- name: DB_PASSWORD\n  value: "', (ALNUM, 18), '"\n'),
    ),
    (
        "npm-config-set",
        "NPM_COMMAND",
        "npm",
        shaped("npm config set //npm.corp.example.com/:_authToken ", (ALNUM, 36)),
    ),
    (
        "cookie-value",
        "HTTP_DUMP",
        "HTTP",
        shaped("< Set-Cookie: session=", (ALNUM, 48), "; Path=/; HttpOnly"),
    ),
    (
        "http-auth-password",
        "CLIENT_CODE",
        "requests",
        shaped("requests.get(url, auth=('deploy', '", (ALNUM + "@#%!", 18), "'))"),
    ),
    (
        "pgpass-password",
        "PGPASS",
        "PostgreSQL",
        shaped(" db.internal:5432:app:deploy:", (ALNUM + "@#%!", 18), "\n"),
    ),
    (
        "printed-secret",
        "SECRET_READ",
        "1Password",
        shaped("$ op read op://prod/db/password\n", (ALNUM, 20), "\n$ echo done\n"),
    ),
    (
        "cli-password-zip",
        "ARCHIVE_COMMAND",
        "zip",
        shaped("zip -r -P ", (ALNUM, 16), " backup.zip data/"),
    ),
    (
        "cli-password-gh-secret",
        "GH_COMMAND",
        "GitHub",
        shaped("gh secret set DEPLOY_TOKEN --body '", (ALNUM, 40), "'"),
    ),
    (
        "yaml-block-secret",
        "APP_CONFIG",
        "YAML",
        shaped("database:\n  password: |\n    ", (ALNUM + "#%!", 20), "\n  host: db\n"),
    ),
    (
        "toml-multiline-secret",
        "APP_TOML",
        "TOML",
        shaped('[database]\npassword = """', (ALNUM + "#%!", 20), '"""\n'),
    ),
    ("base64-encoded-secrets", "ENV_FILE", "dotenv", _encoded_env_file),
    (
        "signed-url-signature",
        "DOWNLOAD_URL",
        "AWS",
        shaped(
            "https://bucket.s3.amazonaws.com/report.csv?X-Amz-Expires=900&X-Amz-Signature=",
            (HEX, 64),
        ),
    ),
)


def provider_negatives(rng: random.Random) -> list[tuple[str, str]]:
    """Look-alikes of the provider formats that are not secrets: placeholders, documented
    examples, public ids and keys, digests next to a vendor's name."""
    return [
        ("provider-placeholder-x", "STRIPE_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx"),
        ("provider-placeholder-angle", "CLOUDFLARE_API_TOKEN=<your-cloudflare-api-token>"),
        ("provider-placeholder-env", "DD_API_KEY=${DD_API_KEY}"),
        ("provider-placeholder-prefix", "RENDER_API_KEY=rnd_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("provider-placeholder-docker", "docker login -u me -p dckr_pat_<your-token>"),
        ("provider-placeholder-uuid", "CODECOV_TOKEN=00000000-0000-0000-0000-000000000000"),
        ("provider-1password-doc", "OP_SECRET_KEY=A3-XXXXXX-XXXXXX-XXXXX-XXXXX-XXXXX-XXXXX"),
        ("provider-example", "LINODE_TOKEN=EXAMPLE" + pick(rng, HEX, 57)),
        ("provider-sentry-dsn", f"SENTRY_DSN=https://{pick(rng, HEX, 32)}@o12.ingest.sentry.io/4"),
        ("provider-datadog-site", "DD_SITE=datadoghq.eu and datadog_env: production"),
        ("provider-vendor-sha", f"DATADOG_COMMIT_SHA={pick(rng, HEX, 40)}"),
        ("provider-vendor-id", f"PLAID_CLIENT_ID={pick(rng, HEX, 24)}"),
        ("provider-twilio-number", "TWILIO_PHONE_NUMBER=+15005550006"),
        ("provider-launchdarkly-client-id", f"LAUNCHDARKLY_CLIENT_SIDE_ID={pick(rng, HEX, 24)}"),
        ("provider-flutterwave-public", f"FLWPUBK_TEST-{pick(rng, HEX, 32)}-X"),
        (
            "provider-mapbox-public",
            f"style pk.eyJ1Ijoi{pick(rng, B64URL, 40)}.{pick(rng, B64URL, 22)} (public)",
        ),
        ("provider-hubspot-portal", "HUBSPOT_PORTAL_ID=21998877"),
        ("provider-algolia-app-id", "ALGOLIA_APP_ID=LATENCY1AB"),
        ("provider-facebook-app-id", "FACEBOOK_APP_ID=1234567890123456"),
        ("provider-digest-4b1d", f"image: app@sha256:4b1d{pick(rng, HEX, 60)}"),
        ("provider-re-variable", 're_whitespace = re.compile(r"\\s+")  # re_pattern_cache'),
        ("provider-sk-words", "the task_runner and disk_usage_percent_threshold settings"),
        ("provider-prose", "Datadog, Sentry and Honeycomb all ingest the same OpenTelemetry data."),
        ("provider-global", f"global_{pick(rng, LOWER, 8)} = blob_storage.get('path')"),
        (
            "provider-openshift-placeholder",
            "oc login --token=sha256~xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ),
        ("provider-nuget-placeholder", '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />'),
        ("provider-braintree-doc", "access_token$sandbox$<merchant_id>$<token>"),
        ("provider-yandex-region", "YANDEX_REGION=ru-central1"),
        ("provider-slack-channel", "SLACK_CHANNEL_ID=C0123456789"),
        ("provider-aws-account", "aws_account_id = 123456789012"),
        ("provider-eaaa-blob", "payload EAAAAQAAAAEAAAABAAAAAQAAAAEAAAAB"),
        ("provider-eaaa-digest", f"aws-cli@sha256:eaaa{pick(rng, HEX, 60)}"),
        (
            "provider-oci-ids",
            f"OCI_USER_OCID=ocid1.user.oc1..aaaaaaaa{pick(rng, LOWER, 52)}\n"
            f"OCI_FINGERPRINT={':'.join(pick(rng, HEX, 2) for _ in range(16))}\n"
            "OCI_REGION=us-ashburn-1",
        ),
        (
            "provider-certificate-base64",
            "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ"
            "RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD",
        ),
        (
            "provider-kubernetes-configmap",
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: production\n  workers: '4'",
        ),
        (
            "provider-kubernetes-templated",
            "apiVersion: v1\nkind: Secret\nstringData:\n  password: {{ .Values.dbPassword }}\n"
            '  token: ""',
        ),
        ("provider-curl-references", 'curl -u "$API_USER:$API_PASS" https://api.internal/v1'),
        (
            "provider-curl-headers",
            'curl -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" '
            '-H "X-Auth-Email: ops@example.com" https://api.internal',
        ),
        ("provider-curl-no-password", "curl -u admin: https://localhost:9200"),
        (
            "provider-registry-login-stdin",
            'echo "$CR_PAT" | docker login ghcr.io -u octocat --password-stdin',
        ),
        ("provider-registry-login-reference", 'docker login -u ci -p "$REGISTRY_PASSWORD" ghcr.io'),
        ("provider-cli-password-prompt", "mysql -u root -p -h db.internal app"),
        ("provider-cli-password-reference", 'mysql -u root -p"$MYSQL_PWD" -h db.internal app'),
        ("provider-cli-password-port", "sshpass -f ~/.pw ssh -p 2222 deploy@10.0.0.4"),
        ("provider-npm-config-reference", "npm config set //npm.corp/:_authToken $NPM_TOKEN"),
        ("provider-cookie-attributes", "< Set-Cookie: theme=dark; Path=/; Max-Age=31536000"),
        ("provider-http-auth-names", "requests.get(url, auth=(user, password))"),
        ("provider-pgpass-reference", "localhost:5432:app:deploy:*"),
        ("provider-yaml-block-prose", "notes:\n  password: |\n    rotated by the ops team\n"),
        ("provider-toml-multiline-prose", 'password_help = """Ask the ops team."""'),
        ("provider-signed-url-unsigned", "https://example.com/verify?signature=none&user=4"),
        # PASSWORD_MIN_LENGTH=12
        ("provider-base64-env-metadata", "echo UEFTU1dPUkRfTUlOX0xFTkdUSD0xMgo= | base64 -d"),
        ("provider-gh-secret-file", "gh secret set DEPLOY_TOKEN < token.txt"),
        ("provider-netrc-prose", "machine learning password reset flow"),
        ("provider-xml-reference", "<password>${env.DEPLOY_PASSWORD}</password>"),
        ("provider-php-define-sample", "define( 'DB_PASSWORD', 'password_here' );"),
        ("provider-c-define-prompt", '#define PASSWORD_PROMPT "Enter password: "'),
        ("provider-c-define-name", '#define LN_userPassword "userPassword"'),
        (
            "provider-name-value-reference",
            "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n",
        ),
    ]
