"""Every rule by name: a realistic secret it must catch, redacted whole, and a realistic
look-alike it must leave alone (a placeholder, a reference, a public id or key, metadata next
to the vendor's name, documentation naming the prefix).

Values are built at run time from a public prefix and a seeded random body: `{A36}` is 36
letters and digits, `{H40}` 40 hex digits, ... (`FILL` below), `{G}` a UUID. In a positive
case, `<<…>>` marks what the rule must find: the whole token, or the whole value after its
name."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import gate_corpus
import pytest

from stet_lsp.gate import RULE_NAMES, ResultCache, redact_text, scan_text

FILL = {
    "A": gate_corpus.ALNUM,
    "U": gate_corpus.UPPER_ALNUM,
    "L": string.ascii_lowercase + string.digits,
    "H": gate_corpus.HEX,
    "B": gate_corpus.B64,
    "W": gate_corpus.B64URL,
    "D": string.digits,
    "a": string.ascii_lowercase,
}
_HOLE = re.compile(r"\{([AULHBWDa])(\d+)\}|\{G\}")
_SECRET = re.compile(r"<<(.*?)>>", re.DOTALL)

# (rule, a secret it must find, a look-alike it must leave alone)
CASES = [
    (
        "1password-service-account-token",
        "OP_SERVICE_ACCOUNT_TOKEN=<<ops_eyJ{B300}>>",
        "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ...",
    ),
    ("adafruit-key", "ADAFRUIT_IO_KEY=<<{L32}>>", "ADAFRUIT_IO_USERNAME=maker_jane"),
    (
        "adobe-client-secret",
        "ADOBE_CLIENT_SECRET=<<p8e-{W32}>>",
        "Adobe client secrets begin with `p8e-`.",
    ),
    ("adyen-api-key", "ADYEN_API_KEY=<<AQE{B60}-{B40}>>", "ADYEN_MERCHANT_ACCOUNT=AcmeShopECOM"),
    ("age-secret-key", "# <<AGE-SECRET-KEY-1{U58}>>", "recipient: age1{L58}"),
    (
        "aiven-password",
        "AIVEN_SERVICE_PASSWORD=<<AVNS_{A24}>>",
        "Aiven passwords start with AVNS_ and are shown once.",
    ),
    ("airtable-token", "AIRTABLE_API_KEY=<<pat{A14}.{H64}>>", "AIRTABLE_BASE_ID=app{A14}"),
    ("algolia-api-key", "ALGOLIA_ADMIN_KEY=<<{A32}>>", "ALGOLIA_INDEX_NAME=prod_products"),
    (
        "alibaba-secret-key",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET=<<{A30}>>",
        "ALIBABA_CLOUD_REGION=cn-hangzhou",
    ),
    (
        "anthropic-api-key",
        "ANTHROPIC_API_KEY=<<sk-ant-api03-{W93}AA>>",
        "ANTHROPIC_API_KEY=sk-ant-api03-...",
    ),
    (
        "artifactory-reference-token",
        "ARTIFACTORY_TOKEN=<<cmVmdGtu{A64}>>",
        "echo cmVmdGtuOjAx | base64 -d",
    ),
    (
        "asana-token",
        "ASANA_ACCESS_TOKEN=<<1/{D16}:{H32}>>",
        "ASANA_PROJECT_URL=https://app.asana.com/0/{D16}/list",
    ),
    ("auth0-client-secret", "AUTH0_CLIENT_SECRET=<<{W64}>>", "AUTH0_CLIENT_ID={A32}"),
    (
        "authorization-header",
        'headers = {"Authorization": "Token <<{A40}>>"}',
        "Set the Authorization: Token header to your access token.",
    ),
    (
        "authress-key",
        "AUTHRESS_KEY=<<sc_{L10}.{L5}.acc_{L16}.{W60}>>",
        "Service client keys look like sc_<client>.<key>.acc_<account>.<secret>",
    ),
    (
        "aws-secret-access-key",
        "aws_secret_access_key = <<{B40}>>",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "aws-bedrock-api-key",
        "AWS_BEARER_TOKEN_BEDROCK=<<ABSK{B132}>>",
        "AWS_BEARER_TOKEN_BEDROCK=ABSK<your-bedrock-api-key>",
    ),
    (
        "azure-devops-pat",
        "AZURE_DEVOPS_EXT_PAT=<<{A76}AZDO{A4}>>",
        "AZDO_ORG_SERVICE_URL=https://dev.azure.com/acme",
    ),
    (
        "azure-sas-signature",
        "https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sr=b&sp=r&sig=<<{A20}%2B{A22}%3D>>",
        "https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sr=b&sig={signature}",
    ),
    (
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=<<{B86}==>>;EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=<your-account-key>",
    ),
    ("beamer-token", "BEAMER_API_KEY=<<b_{W44}>>", "BEAMER_PRODUCT_ID=Xyz123Abc"),
    ("bittrex-key", "BITTREX_API_SECRET=<<{L32}>>", "BITTREX_API_URL=https://api.bittrex.com/v3"),
    (
        "braintree-access-token",
        "BT_TOKEN=<<access_token$production${L16}${H32}>>",
        "access_token$production$your_merchant_id$your_token",
    ),
    ("brave-search-api-key", "BRAVE_API_KEY=<<BSA{W28}>>", "BRAVE_API_KEY=BSA..."),
    (
        "brevo-api-key",
        "BREVO_API_KEY=<<xkeysib-{H64}-{A16}>>",
        "Brevo API keys start with xkeysib-.",
    ),
    ("browserbase-api-key", "BROWSERBASE_API_KEY=<<bb_live_{W27}>>", "BROWSERBASE_PROJECT_ID={G}"),
    ("bugsnag-api-key", "BUGSNAG_API_KEY=<<{H32}>>", "BUGSNAG_BUILD_SHA={H40}"),
    (
        "buildkite-token",
        "BUILDKITE_API_TOKEN=<<bkua_{H40}>>",
        "BUILDKITE_API_TOKEN=bkua_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
    ("cerebras-api-key", "CEREBRAS_API_KEY=<<csk-{L48}>>", "CEREBRAS_API_KEY=csk-..."),
    ("circleci-token", "CIRCLE_TOKEN=<<CCIPAT_{A22}_{H40}>>", "CIRCLE_TOKEN=CCIPAT_<your-token>"),
    ("clickhouse-cloud-key", "CLICKHOUSE_KEY_SECRET=<<4b1d{A38}>>", "commit 4b1d{H36}"),
    ("clojars-token", "CLOJARS_DEPLOY_TOKEN=<<CLOJARS_{L60}>>", "CLOJARS_USERNAME=acme-ci"),
    (
        "cloudflare-origin-ca-key",
        "CF_ORIGIN_CA_KEY=<<v1.0-{H24}-{H146}>>",
        "release v1.0-beta.2 is out",
    ),
    ("cloudflare-api-token", "CLOUDFLARE_API_TOKEN=<<{W40}>>", "CLOUDFLARE_ZONE_ID={H32}"),
    (
        "cli-password",
        "mysql -u root -p<<{A16}>> -h db.internal app",
        "mysql -u root -p -h db.internal app",
    ),
    ("deno-deploy-token", "DENO_DEPLOY_TOKEN=<<ddp_{A36}>>", "DENO_DEPLOY_TOKEN=ddp_..."),
    (
        "dependency-track-api-key",
        "DT_API_KEY=<<odt_{A32}>>",
        "Dependency-Track keys start with odt_.",
    ),
    (
        "e2b-api-key",
        "E2B_API_KEY=<<e2b_{H40}>>",
        "E2B_API_KEY=e2b_0000000000000000000000000000000000000000",
    ),
    (
        "firecrawl-api-key",
        "FIRECRAWL_API_KEY=<<fc-{H32}>>",
        "FIRECRAWL_API_URL=https://api.firecrawl.dev",
    ),
    ("fireworks-api-key", "FIREWORKS_API_KEY=<<fw_{A24}>>", "FIREWORKS_API_KEY=fw_..."),
    ("jina-api-key", "JINA_API_KEY=<<jina_{A60}>>", "JINA_API_KEY=jina_..."),
    ("modal-token", "MODAL_TOKEN_SECRET=<<as-{A22}>>", "MODAL_TOKEN_ID=ak-xxxxxxxxxxxxxxxxxxxxxx"),
    (
        "name-value-secret",
        'env:\n- name: DB_PASSWORD\n  value: "<<{A18}>>"\n',
        "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n",
    ),
    (
        "netrc-password",
        "machine github.com\n  login ci-bot\n  password <<{A20}>>\n",
        "machine learning password reset flow",
    ),
    ("nightfall-api-key", "NIGHTFALL_API_KEY=<<NF-{A32}>>", "NIGHTFALL_API_KEY=NF-..."),
    (
        "php-define-secret",
        "define( 'DB_PASSWORD', '<<{A18}>>' );",
        "define( 'DB_PASSWORD', 'password_here' );",
    ),
    (
        "c-define-secret",
        '#define WIFI_PASSWORD "<<{A18}>>"',
        '#define PASSWORD_PROMPT "Enter password: "',
    ),
    (
        "masked-value",
        'echo "::add-mask::<<{A24}>>"',
        'echo "::add-mask::${{ steps.login.outputs.token }}"',
    ),
    ("rootly-api-key", "ROOTLY_API_TOKEN=<<rootly_{H64}>>", "ROOTLY_API_TOKEN=rootly_..."),
    (
        "salad-cloud-api-key",
        "SALAD_API_KEY=<<salad_cloud_{A5}_{A40}>>",
        "SALAD_API_KEY=salad_cloud_...",
    ),
    ("stackhawk-api-key", "HAWK_API_KEY=<<hawk.{W20}.{W20}>>", "HAWK_API_KEY=hawk.xxxxx.yyyyy"),
    ("together-api-key", "TOGETHER_API_KEY=<<tgp_v1_{W43}>>", "TOGETHER_API_KEY=tgp_v1_..."),
    ("voyage-api-key", "VOYAGE_API_KEY=<<pa-{W43}>>", "VOYAGE_API_KEY=pa-..."),
    (
        "wifi-password",
        'network={\n    ssid="HomeNet"\n    psk="<<{A12}!>>"\n}',
        "key-mgmt=wpa-psk\npsk=$WIFI_PSK",
    ),
    (
        "composer-auth-token",
        '{"bearer": {"repo.example.org": "<<{A32}>>"}}',
        '{"bearer": {"repo.example.org": "${COMPOSER_BEARER}"}}',
    ),
    (
        "xml-secret",
        "<server><id>corp</id><password><<{A18}>></password></server>",
        "<server><id>corp</id><password>${env.DEPLOY_PASSWORD}</password></server>",
    ),
    (
        "cookie-value",
        "< Set-Cookie: session=<<{A48}>>; Path=/; HttpOnly",
        "< Set-Cookie: theme=dark; Path=/; Max-Age=31536000",
    ),
    (
        "http-auth-password",
        "requests.get(url, auth=('deploy', '<<{A16}>>'))",
        "requests.get(url, auth=(user, password))",
    ),
    (
        "yaml-block-secret",
        "db:\n  password: |\n    <<{A20}>>\n",
        "db:\n  description: |\n    The password must be rotated every 90 days.\n",
    ),
    (
        "toml-multiline-secret",
        '[db]\npassword = """<<{A20}>>"""\n',
        '[db]\ndescription = """The password is rotated monthly."""\n',
    ),
    (
        "signed-url-signature",
        "https://b.s3.amazonaws.com/k?X-Amz-Expires=900&X-Amz-Signature=<<{H64}>>",
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=900",
    ),
    (
        "base64-encoded-secrets",
        # DB_PASSWORD=Qx7zK2mP9vLtR4nB
        "echo <<REJfUEFTU1dPUkQ9UXg3eksybVA5dkx0UjRuQgo=>> | base64 -d > .env",
        # PASSWORD_MIN_LENGTH=12
        "echo UEFTU1dPUkRfTUlOX0xFTkdUSD0xMgo= | base64 -d > .env",
    ),
    (
        "pgpass-password",
        "db.internal:5432:app:deploy:<<{A16}>>",
        "db.internal:5432:app:deploy:$PGPASSWORD",
    ),
    ("cohere-api-key", "COHERE_API_KEY=<<{A40}>>", "COHERE_MODEL=command-r-plus"),
    (
        "coinbase-token",
        "COINBASE_API_SECRET=<<{W64}>>",
        "COINBASE_COMMERCE_WEBHOOK_URL=https://example.com/hooks/coinbase",
    ),
    (
        "confluent-secret-key",
        "CONFLUENT_CLOUD_API_SECRET=<<{B64}>>",
        "CONFLUENT_SCHEMA_REGISTRY_URL=https://psrc-abc12.us-east-2.aws.confluent.cloud",
    ),
    (
        "connection-string-password",
        "[database]\nhost = db.internal\npassword = <<{A20}>>\n",
        "Server=db;Database=app;User Id=app;Password={password};",
    ),
    (
        "contentful-token",
        "CONTENTFUL_MANAGEMENT_TOKEN=<<CFPAT-{W43}>>",
        "CONTENTFUL_SPACE_ID={L12}",
    ),
    ("crates-io-token", "CARGO_REGISTRY_TOKEN=<<cio{A32}>>", "CARGO_REGISTRY_TOKEN=cio..."),
    (
        "curl-auth-header",
        "curl -H 'X-Api-Key: <<{A32}>>' https://api.example.com/v1/items",
        "curl -H 'X-Api-Key: $API_KEY' https://api.example.com/v1/items",
    ),
    (
        "curl-auth-user",
        "curl -u <<deploy:{A16}>> https://api.example.com/v1/items",
        'curl -u "$API_USER:$API_PASS" https://api.example.com/v1/items',
    ),
    ("datadog-api-key", "DD_API_KEY=<<{H32}>>", "DATADOG_HOST=https://api.datadoghq.com"),
    (
        "defined-networking-token",
        "DN_API_KEY=<<dnkey-{L26}-{L52}>>",
        "Defined Networking API keys start with dnkey-.",
    ),
    (
        "digitalocean-token",
        "DIGITALOCEAN_ACCESS_TOKEN=<<dop_v1_{H64}>>",
        "DIGITALOCEAN_ACCESS_TOKEN=dop_v1_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
    (
        "discord-bot-token",
        "DISCORD_BOT_TOKEN=<<M{W25}.{W6}.{W38}>>",
        "pip install discord.py==2.3.2",
    ),
    ("docker-hub-token", "DOCKERHUB_TOKEN=<<dckr_pat_{W27}>>", "DOCKERHUB_TOKEN=dckr_pat_..."),
    (
        "doppler-token",
        "DOPPLER_TOKEN=<<dp.pt.{A43}>>",
        "Doppler service tokens start with dp.st. and name their config.",
    ),
    ("drone-ci-token", "DRONE_TOKEN=<<{A32}>>", "DRONE_SERVER_HOST=drone.example.com"),
    ("env-assignment", "DB_PASSWORD=<<hunter2Summer>>", "PASSWORD_HASHER=argon2id"),
    (
        "dropbox-token",
        "DROPBOX_ACCESS_TOKEN=<<sl.B{W140}>>",
        "Short-lived Dropbox tokens start with sl.B or sl.u.",
    ),
    (
        "duffel-token",
        "DUFFEL_ACCESS_TOKEN=<<duffel_test_{W43}>>",
        "DUFFEL_ACCESS_TOKEN=duffel_test_<your-token>",
    ),
    (
        "dynatrace-token",
        "DT_API_TOKEN=<<dt0c01.{U24}.{A64}>>",
        "Token ids look like dt0c01.{U24} (the public part).",
    ),
    (
        "easypost-api-key",
        "EASYPOST_API_KEY=<<EZAK{A54}>>",
        "EasyPost production keys start with EZAK, test keys with EZTK.",
    ),
    ("elevenlabs-api-key", "ELEVENLABS_API_KEY=<<sk_{H48}>>", "ELEVENLABS_API_KEY=sk_..."),
    ("etsy-token", "ETSY_API_KEY=<<{L24}>>", "ETSY_SHOP_NAME=handmadegoods"),
    ("fastly-api-token", "FASTLY_API_TOKEN=<<{W32}>>", "FASTLY_SERVICE_ID={A22}"),
    (
        "fcm-server-key",
        'headers = {"Authorization": "key=<<AAAA{A7}:APA91b{W134}>>"}',
        "registration_token = 'AAAA' # then :APA91b and the device's",
    ),
    ("figma-token", "FIGMA_TOKEN=<<figd_{W43}>>", "FIGMA_TOKEN=figd_<personal-access-token>"),
    ("finicity-secret", "FINICITY_SECRET=<<{L20}>>", "FINICITY_PARTNER_ID={D13}"),
    ("finnhub-token", "FINNHUB_API_KEY=<<{L20}>>", "FINNHUB_BASE_URL=https://finnhub.io/api/v1"),
    ("flickr-token", "FLICKR_API_SECRET=<<{L32}>>", "FLICKR_USER_ID=12345678@N00"),
    (
        "flutterwave-secret-key",
        "FLW_SECRET_KEY=<<FLWSECK_TEST-{H32}-X>>",
        "FLW_PUBLIC_KEY=FLWPUBK-{H32}-X",
    ),
    ("flyio-token", "FLY_API_TOKEN=<<FlyV1 fm2_{B120}>>", "FLY_API_TOKEN=FlyV1 fm2_..."),
    ("frameio-token", "FRAMEIO_TOKEN=<<fio-u-{W64}>>", "FRAMEIO_TOKEN=fio-u-..."),
    ("framework-secret-key", "APP_KEY=<<base64:{B43}=>>", "DROPBOX_APP_KEY={L15}"),
    ("freshbooks-token", "FRESHBOOKS_TOKEN=<<{L64}>>", "FRESHBOOKS_ACCOUNT_ID=aBc12"),
    (
        "gcp-private-key-id",
        '{"type": "service_account", "private_key_id": "<<{H40}>>"}',
        '{"type": "service_account", "private_key_id": "<your-key-id>"}',
    ),
    (
        "github-app-token",
        "GITHUB_TOKEN=<<ghs_{A36}>>",
        "Installation tokens are prefixed ghs_ and expire after an hour.",
    ),
    (
        "github-fine-grained-token",
        "GH_TOKEN=<<github_pat_11{A20}_{A59}>>",
        "GH_TOKEN=github_pat_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
    ("github-oauth-token", "token: <<gho_{A36}>>", "OAuth app tokens start with gho_."),
    ("github-refresh-token", "refresh_token=<<ghr_{A76}>>", "Refresh tokens start with ghr_."),
    ("gitlab-routable-token", "GITLAB_TOKEN=<<glpat-{W27}.01.{L9}>>", "GITLAB_TOKEN=glpat-<token>"),
    (
        "gitlab-runner-registration-token",
        "REGISTRATION_TOKEN=<<GR1348941{W20}>>",
        "Runner registration tokens start with GR1348941.",
    ),
    (
        "gitlab-session-cookie",
        "Cookie: _gitlab_session=<<{L32}>>",
        "Set-Cookie: _gitlab_session=; Max-Age=0",
    ),
    ("gitter-token", "GITTER_TOKEN=<<{L40}>>", "GITTER_ROOM_NAME=acme/dev"),
    (
        "gocardless-token",
        "GOCARDLESS_ACCESS_TOKEN=<<live_{W40}>>",
        "GOCARDLESS_ENVIRONMENT=sandbox",
    ),
    (
        "google-oauth-access-token",
        "GOOGLE_ACCESS_TOKEN=<<ya29.{W120}>>",
        "Google access tokens start with ya29.",
    ),
    (
        "google-oauth-client-secret",
        "GOOGLE_CLIENT_SECRET=<<GOCSPX-{W28}>>",
        "GOOGLE_CLIENT_SECRET=GOCSPX-<client-secret>",
    ),
    ("grafana-api-key", "GRAFANA_API_KEY=<<eyJrIjoi{A60}>>", "echo eyJrIjoiIn0= | base64 -d"),
    (
        "grafana-service-account-token",
        "GRAFANA_TOKEN=<<glsa_{A32}_{H8}>>",
        "Service account tokens start with glsa_.",
    ),
    (
        "grafana-token",
        "GRAFANA_CLOUD_TOKEN=<<glc_{B80}>>",
        "Cloud access policy tokens start with glc_.",
    ),
    ("groq-api-key", "GROQ_API_KEY=<<gsk_{A52}>>", "GROQ_API_KEY=gsk_..."),
    (
        "harness-token",
        "HARNESS_API_KEY=<<pat.{W22}.{A24}.{A20}>>",
        "Set HARNESS_API_KEY to a pat.<account>.<id>.<secret> token.",
    ),
    ("heroku-api-key", "HEROKU_API_KEY=<<{G}>>", "HEROKU_APP_ID={G}"),
    ("hetzner-token", "HCLOUD_TOKEN=<<{A64}>>", "HCLOUD_LOCATION=fsn1"),
    (
        "honeycomb-api-key",
        "HONEYCOMB_API_KEY=<<hcaik_{A58}>>",
        "HONEYCOMB_DATASET=production-traces",
    ),
    ("hubspot-api-key", "HUBSPOT_API_KEY=<<{G}>>", "HUBSPOT_ACCOUNT_ID={D8}"),
    (
        "hubspot-token",
        "HUBSPOT_ACCESS_TOKEN=<<pat-na1-{G}>>",
        "Private app tokens start with pat-na1- or pat-eu1-.",
    ),
    ("huggingface-org-token", "HF_ORG_TOKEN=<<api_org_{A34}>>", "api_org_id = 42"),
    ("huggingface-token", "HF_TOKEN=<<hf_{A34}>>", "from huggingface_hub import hf_hub_download"),
    ("ibm-cloud-api-key", "IBMCLOUD_API_KEY=<<{W44}>>", "IBM_CLOUD_REGION=us-south"),
    ("infisical-token", "INFISICAL_TOKEN=<<st.{H24}.{H32}.{H32}>>", "INFISICAL_PROJECT_ID={G}"),
    ("infracost-api-key", "INFRACOST_API_KEY=<<ico-{A32}>>", "INFRACOST_API_KEY=ico-..."),
    ("intercom-token", "INTERCOM_ACCESS_TOKEN=<<dG9rO{B60}=>>", "echo dG9rOmFiYw== | base64 -d"),
    (
        "jdbc-password",
        "DB_URL=jdbc:oracle:thin:app/<<{A16}>>@db.internal:1521/ORCL",
        "DB_URL=jdbc:oracle:thin:@db.internal:1521/ORCL",
    ),
    ("jenkins-api-token", "JENKINS_API_TOKEN=<<11{H32}>>", "JENKINS_URL=https://ci.example.com"),
    ("kraken-key", "KRAKEN_API_SECRET=<<{B86}==>>", "KRAKEN_API_URL=https://api.kraken.com"),
    ("kucoin-key", "KUCOIN_API_SECRET=<<{G}>>", "KUCOIN_SANDBOX_HOST=openapi-sandbox.kucoin.com"),
    ("langfuse-secret-key", "LANGFUSE_SECRET_KEY=<<sk-lf-{G}>>", "LANGFUSE_PUBLIC_KEY=pk-lf-{G}"),
    (
        "langsmith-api-key",
        "LANGSMITH_API_KEY=<<lsv2_pt_{H32}_{H10}>>",
        "LANGSMITH_API_KEY=lsv2_pt_...",
    ),
    ("launchdarkly-key", "LAUNCHDARKLY_SDK_KEY=<<sdk-{G}>>", "LAUNCHDARKLY_PROJECT_KEY=default"),
    ("linear-api-key", "LINEAR_API_KEY=<<lin_api_{A40}>>", "LINEAR_API_KEY=lin_api_..."),
    ("linkedin-secret", "LINKEDIN_CLIENT_SECRET=<<{A16}>>", "LINKEDIN_CLIENT_ID={L14}"),
    ("linode-token", "LINODE_TOKEN=<<{H64}>>", "LINODE_IMAGE=linode/ubuntu22.04"),
    ("lob-api-key", "LOB_API_KEY=<<live_{H35}>>", "LOB_PUBLISHABLE_KEY=live_pub_{H31}"),
    ("logzio-token", "LOGZIO_TOKEN=<<{A32}>>", "LOGZIO_LISTENER_HOST=listener.logz.io"),
    (
        "looker-secret",
        "LOOKERSDK_CLIENT_SECRET=<<{A24}>>",
        "LOOKERSDK_BASE_URL=https://acme.looker.com",
    ),
    ("mailchimp-api-key", "MAILCHIMP_API_KEY=<<{H32}-us21>>", "MAILCHIMP_API_KEY=<your-key>-us21"),
    ("mailgun-api-key", "MAILGUN_API_KEY=<<key-{H32}>>", "MAILGUN_DOMAIN=mg.example.com"),
    ("mailjet-key", "MJ_APIKEY_PRIVATE=<<{H32}>>", "MAILJET_SENDER_NAME=Acme Support"),
    (
        "mapbox-secret-token",
        "MAPBOX_SECRET_TOKEN=<<sk.eyJ1Ijoi{W40}.{W22}>>",
        "MAPBOX_ACCESS_TOKEN=pk.eyJ1Ijoi{W40}.{W22}",
    ),
    ("mattermost-token", "MATTERMOST_TOKEN=<<{L26}>>", "MATTERMOST_TEAM_NAME=engineering"),
    (
        "maxmind-license-key",
        "MAXMIND_LICENSE_KEY=<<{A6}_{A29}_mmk>>",
        "MaxMind license keys end in _mmk.",
    ),
    ("meraki-api-key", "MERAKI_DASHBOARD_API_KEY=<<{H40}>>", "MERAKI_ORG_ID=549236"),
    ("messagebird-key", "MESSAGEBIRD_API_KEY=<<{A25}>>", "MESSAGEBIRD_ORIGINATOR=AcmeAlerts"),
    ("mistral-api-key", "MISTRAL_API_KEY=<<{A32}>>", "MISTRAL_MODEL=mistral-large-latest"),
    ("mollie-api-key", "MOLLIE_API_KEY=<<live_{A30}>>", "MOLLIE_PROFILE_ID=pfl_{A10}"),
    (
        "mongodb-atlas-private-key",
        "MONGODB_ATLAS_PRIVATE_KEY=<<{G}>>",
        "MONGODB_ATLAS_PUBLIC_KEY={a8}",
    ),
    ("neon-api-key", "NEON_API_KEY=<<napi_{A64}>>", "NEON_API_KEY=napi_..."),
    ("netlify-legacy-token", "NETLIFY_AUTH_TOKEN=<<{W43}>>", "NETLIFY_SITE_ID={G}"),
    ("netlify-token", "NETLIFY_AUTH_TOKEN=<<nfp_{A40}>>", "NETLIFY_AUTH_TOKEN=nfp_..."),
    ("new-relic-key", "NEW_RELIC_API_KEY=<<NRAK-{U27}>>", "NEW_RELIC_API_KEY=NRAK-..."),
    (
        "new-relic-license-key",
        "NEW_RELIC_LICENSE_KEY=<<{H36}NRAL>>",
        "NEW_RELIC_APP_NAME=payments-api",
    ),
    ("notion-token", "NOTION_TOKEN=<<ntn_{A46}>>", "NOTION_TOKEN=ntn_..."),
    (
        "npm-auth-token",
        "//registry.npmjs.org/:_authToken=<<{G}>>",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    ),
    ("npm-token", "NPM_TOKEN=<<npm_{A36}>>", "npm_config_registry=https://registry.npmjs.org"),
    ("nuget-api-key", "NUGET_API_KEY=<<oy2{L43}>>", "NuGet API keys begin with oy2."),
    (
        "nuget-config-password",
        '<add key="ClearTextPassword" value="<<{A16}>>" />',
        '<add key="Username" value="ci-bot" />',
    ),
    ("nvidia-api-key", "NVIDIA_API_KEY=<<nvapi-{W64}>>", "NVIDIA_API_KEY=nvapi-..."),
    ("nytimes-token", "NYT_API_KEY=<<{A32}>>", "NYTIMES_SECTION=technology"),
    (
        "octopus-deploy-api-key",
        "OCTOPUS_API_KEY=<<API-{U28}>>",
        "OCTOPUS_SERVER_URL=https://acme.octopus.app",
    ),
    ("okta-token", "OKTA_API_TOKEN=<<00{W40}>>", "OKTA_DOMAIN=dev-123456.okta.com"),
    ("openai-api-key", "OPENAI_API_KEY=<<sk-proj-{W100}>>", "OPENAI_API_KEY=sk-proj-..."),
    (
        "openrouter-api-key",
        "OPENROUTER_API_KEY=<<sk-or-v1-{H64}>>",
        "OPENROUTER_API_KEY=sk-or-v1-...",
    ),
    (
        "openshift-token",
        "oc login --token=<<sha256~{W43}>> --server=https://api.acme:6443",
        "OpenShift tokens start with sha256~ and are 50 characters long.",
    ),
    ("opsgenie-key", "OPSGENIE_API_KEY=<<{G}>>", "OPSGENIE_TEAM_ID={G}"),
    (
        "packagist-token",
        "PACKAGIST_TOKEN=<<packagist_uut_{A40}>>",
        "PACKAGIST_TOKEN=packagist_uut_...",
    ),
    (
        "paddle-api-key",
        "PADDLE_API_KEY=<<pdl_live_apikey_{A50}>>",
        "PADDLE_CLIENT_TOKEN=live_{H27}",
    ),
    ("pagerduty-token", "PAGERDUTY_TOKEN=<<u+{A18}>>", "PAGERDUTY_SERVICE_ID=P{U6}"),
    ("perplexity-api-key", "PPLX_API_KEY=<<pplx-{A48}>>", "PPLX_API_KEY=pplx-..."),
    ("pinecone-api-key", "PINECONE_API_KEY=<<pcsk_{A6}_{A64}>>", "PINECONE_API_KEY=pcsk_..."),
    (
        "plaid-access-token",
        "PLAID_ACCESS_TOKEN=<<access-sandbox-{G}>>",
        "Tokens that start with access-sandbox- only work in the sandbox.",
    ),
    ("postman-api-key", "POSTMAN_API_KEY=<<PMAK-{H24}-{H34}>>", "POSTMAN_API_KEY=PMAK-..."),
    (
        "posthog-personal-key",
        "POSTHOG_PERSONAL_API_KEY=<<phx_{A43}>>",
        'posthog.init("phc_{A43}", {api_host: "https://eu.i.posthog.com"})',
    ),
    ("postmark-token", "POSTMARK_SERVER_TOKEN=<<{G}>>", "POSTMARK_MESSAGE_STREAM=outbound"),
    (
        "prefect-api-key",
        "PREFECT_API_KEY=<<pnu_{A36}>>",
        "PREFECT_API_URL=https://api.prefect.cloud/api/accounts/{G}/workspaces/{G}",
    ),
    ("privateai-api-key", "PRIVATE_AI_API_KEY=<<{L32}>>", "PRIVATEAI_URL=http://localhost:8080"),
    ("pulumi-token", "PULUMI_ACCESS_TOKEN=<<pul-{H40}>>", "Pulumi access tokens begin with pul-."),
    (
        "putty-private-key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240101\nPublic-Lines: 2\n{B64}\n{B16}\n<<Private-Lines: 1\n{B44}\nPrivate-MAC: {H64}>>\n",
        "Private-Lines: the number of lines of the private key that follow.",
    ),
    (
        "printed-secret",
        "$ op read op://prod/db/password\n<<{A20}>>\n$ echo ok\n",
        "$ op read op://prod/db/password > db.txt\nchmod-600-db.txt\n",
    ),
    ("pypi-token", "TWINE_PASSWORD=<<pypi-AgEIcHlwaS5vcmc{W80}>>", "TWINE_PASSWORD=pypi-AgE..."),
    (
        "query-password",
        "https://api.example.com/login?user=app&password=<<{A16}>>",
        "https://example.com/reset?password=<new-password>",
    ),
    (
        "sql-password",
        "CREATE USER 'app'@'%' IDENTIFIED BY '<<{A16}>>';",
        "Removes the directory identified by `path`.",
    ),
    ("rapidapi-key", "X_RAPIDAPI_KEY=<<{W50}>>", "RAPIDAPI_HOST=weatherapi-com.p.rapidapi.com"),
    ("razorpay-key-secret", "RAZORPAY_KEY_SECRET=<<{A24}>>", "RAZORPAY_KEY_ID=rzp_live_{A14}"),
    ("readme-api-key", "README_API_KEY=<<rdme_{L70}>>", "README_API_KEY=rdme_..."),
    ("render-api-key", "RENDER_API_KEY=<<rnd_{A32}>>", "RENDER_SERVICE_ID=srv-{L20}"),
    ("replicate-token", "REPLICATE_API_TOKEN=<<r8_{A37}>>", "REPLICATE_API_TOKEN=r8_..."),
    ("resend-api-key", "RESEND_API_KEY=<<re_{A8}_{A24}>>", "re_path('api/', include(router.urls))"),
    ("rollbar-token", "ROLLBAR_ACCESS_TOKEN=<<{H32}>>", "ROLLBAR_ENVIRONMENT=production"),
    ("rubygems-api-key", "GEM_HOST_API_KEY=<<rubygems_{H48}>>", "GEM_HOST_API_KEY=rubygems_..."),
    ("scaleway-secret-key", "SCW_SECRET_KEY=<<{G}>>", "SCW_DEFAULT_ORGANIZATION_ID={G}"),
    ("scalingo-api-token", "SCALINGO_API_TOKEN=<<tk-us-{W48}>>", "SCALINGO_API_TOKEN=tk-us-..."),
    ("sendbird-token", "SENDBIRD_API_TOKEN=<<{H40}>>", "SENDBIRD_APP_ID={G}"),
    ("sendgrid-api-key", "SENDGRID_API_KEY=<<SG.{W22}.{W43}>>", "SENDGRID_API_KEY=SG.xxxx"),
    ("sentry-legacy-token", "SENTRY_AUTH_TOKEN=<<{H64}>>", "SENTRY_ORG=acme"),
    ("sentry-token", "SENTRY_AUTH_TOKEN=<<sntrys_eyJ{B100}>>", "SENTRY_AUTH_TOKEN=sntrys_..."),
    (
        "settlemint-token",
        "SETTLEMINT_ACCESS_TOKEN=<<sm_pat_{A16}>>",
        "SETTLEMINT_ACCESS_TOKEN=sm_pat_...",
    ),
    ("shippo-token", "SHIPPO_API_KEY=<<shippo_live_{H40}>>", "SHIPPO_API_KEY=shippo_live_..."),
    (
        "shopify-token",
        "SHOPIFY_ACCESS_TOKEN=<<shpat_{H32}>>",
        "SHOPIFY_ACCESS_TOKEN=shpat_<admin-api-token>",
    ),
    ("snyk-token", "SNYK_TOKEN=<<{G}>>", "SNYK_ORG_ID={G}"),
    (
        "sparkpost-api-key",
        "SPARKPOST_API_KEY=<<{H40}>>",
        "SPARKPOST_API_URL=https://api.eu.sparkpost.com",
    ),
    ("splunk-token", "SPLUNK_HEC_TOKEN=<<{G}>>", "SPLUNK_INDEX=main"),
    ("squarespace-token", "SQUARESPACE_API_KEY=<<{G}>>", "SQUARESPACE_SITE_ID={G}"),
    (
        "stripe-webhook-secret",
        "STRIPE_WEBHOOK_SECRET=<<whsec_{A32}>>",
        "STRIPE_WEBHOOK_SECRET=whsec_...",
    ),
    ("sumo-logic-key", "SUMO_ACCESS_KEY=<<{A64}>>", "SUMO_ACCESS_ID=su{A12}"),
    (
        "supabase-secret-key",
        "SUPABASE_SECRET_KEY=<<sb_secret_{W32}>>",
        "SUPABASE_PUBLISHABLE_KEY=sb_publishable_{W32}",
    ),
    ("supabase-token", "SUPABASE_ACCESS_TOKEN=<<sbp_{H40}>>", "SUPABASE_ACCESS_TOKEN=sbp_..."),
    ("tavily-api-key", "TAVILY_API_KEY=<<tvly-dev-{A32}>>", "TAVILY_API_KEY=tvly-..."),
    (
        "telegram-bot-token",
        "TELEGRAM_BOT_TOKEN=<<{D10}:AA{W33}>>",
        "curl https://api.telegram.org/bot<token>/getMe",
    ),
    (
        "terraform-cloud-token",
        "TFE_TOKEN=<<{A14}.atlasv1.{W67}>>",
        "Terraform Cloud tokens hold .atlasv1. between their two parts.",
    ),
    ("travis-ci-token", "TRAVIS_API_TOKEN=<<{W22}>>", "TRAVIS_BRANCH=main"),
    ("twilio-api-key", "TWILIO_API_KEY=<<SK{H32}>>", "TWILIO_API_KEY=SK..."),
    ("twilio-auth-token", "TWILIO_AUTH_TOKEN=<<{H32}>>", "TWILIO_MESSAGING_SERVICE_SID=MG{H32}"),
    ("twitch-token", "TWITCH_CLIENT_SECRET=<<{L30}>>", "TWITCH_CLIENT_ID={L30}"),
    (
        "twitter-bearer-token",
        "TWITTER_BEARER_TOKEN=<<AAAAAAAAAAAAAAAAAAAAAA{A90}>>",
        "TWITTER_USER_ID=1234567890",
    ),
    ("typeform-token", "TYPEFORM_TOKEN=<<tfp_{W44}>>", "TYPEFORM_TOKEN=tfp_..."),
    (
        "upstash-token",
        "UPSTASH_REDIS_REST_TOKEN=<<{W60}>>",
        "UPSTASH_REDIS_REST_URL=https://eu1-rapid-cat-12345.upstash.io",
    ),
    ("vercel-token", "VERCEL_TOKEN=<<{A24}>>", "VERCEL_PROJECT_ID=prj_{A28}"),
    ("vonage-api-secret", "VONAGE_API_SECRET=<<{A16}>>", "VONAGE_API_KEY={H8}"),
    ("vultr-api-key", "VULTR_API_KEY=<<{U36}>>", "VULTR_REGION=ewr"),
    ("xai-api-key", "XAI_API_KEY=<<xai-{A80}>>", "XAI_API_KEY=xai-..."),
    (
        "yandex-oauth-token",
        "YANDEX_OAUTH_TOKEN=<<y0_{W58}>>",
        "Yandex OAuth tokens start with y0_.",
    ),
    ("yandex-static-key", "YANDEX_SECRET_KEY=<<YC{W38}>>", "YANDEX_ACCESS_KEY_ID=YCAJE{A20}"),
    ("zendesk-token", "ZENDESK_API_TOKEN=<<{A40}>>", "ZENDESK_SUBDOMAIN=acme"),
]


def fill(template: str, rng: random.Random) -> str:
    def hole(match: re.Match[str]) -> str:
        if match.group(0) == "{G}":
            return gate_corpus.uuid4(rng)
        return gate_corpus.pick(rng, FILL[match.group(1)], int(match.group(2)))

    return _HOLE.sub(hole, template)


def _found(text: str) -> list[tuple[str, str]]:
    return [
        (f.rule, text[f.offset : f.end_offset])
        for f in scan_text(text, path="settings.env", cache=ResultCache())
    ]


@pytest.mark.parametrize(("rule", "positive", "negative"), CASES, ids=[c[0] for c in CASES])
def test_the_rule_redacts_a_secret_whole(rule: str, positive: str, negative: str) -> None:
    text = fill(positive, random.Random(rule))
    [secret] = _SECRET.findall(text)
    text = text.replace("<<", "").replace(">>", "")
    assert _found(text) == [(rule, secret)]
    redacted = redact_text(text, path="settings.env", cache=ResultCache()).text
    assert redacted == text.replace(secret, f"[REDACTED:{rule}#1]")


@pytest.mark.parametrize(("rule", "positive", "negative"), CASES, ids=[c[0] for c in CASES])
def test_the_rule_leaves_a_look_alike_alone(rule: str, positive: str, negative: str) -> None:
    text = fill(negative, random.Random(rule))
    assert _found(text) == []


def test_every_rule_is_named_in_a_test() -> None:
    """Each rule name appears in some test of the gate (its own cases, a corpus format's
    expectation or a rule-specific test), so no rule goes untested by name."""
    tests = Path(__file__).resolve().parents[1]
    sources = [*tests.glob("gate/*.py"), *tests.glob("gate_corpus*.py"), tests / "corpus_parts.py"]
    text = "\n".join(path.read_text(encoding="utf-8") for path in sources)
    named = {name for name in RULE_NAMES if re.search(rf"(?<![\w-]){name}(?![\w-])", text)}
    assert RULE_NAMES - named == set()
    assert {rule for rule, _, _ in CASES} <= RULE_NAMES
