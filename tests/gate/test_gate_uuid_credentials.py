"""A UUID is an id almost everywhere a transcript holds one, but a credential under a name
that says password, API key or secret (Heroku's and Snyk's keys, many services' keys, a
password `uuidgen` made): redacted there, raw and in a transcript's JSON; ids, tokens that are
no credential, and placeholders stay."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from stet_lsp.gate import ResultCache, redact_text
from stet_lsp.gate.heuristics import is_drawn_uuid
from stet_lsp.gate.keynames import holds_a_credential_uuid

UUID = "9e9f6717-4a88-4e0e-8aca-809e5a0e1573"  # uuid.uuid4()'s


def _redacted(text: str, path: str = "notes.txt") -> str:
    return redact_text(text, path=path, cache=ResultCache()).text


def _in_a_tool_call(text: str) -> str:
    record = {"type": "tool_use", "input": {"command": text}}
    redacted = _redacted(json.dumps(record) + "\n", "events.jsonl")
    json.loads(redacted)
    return redacted


@pytest.mark.parametrize(
    "template",
    [
        "POSTGRES_PASSWORD={U}",
        'export DB_PASSWORD="{U}"',
        "docker run -e MYSQL_ROOT_PASSWORD={U} -d mysql:8",
        "PGPASSWORD={U} psql -h db -U app app",
        "ACME_API_KEY={U}",
        "ACME_TOKEN={U}",
        "ACME_SECRET={U}",
        "FROM alpine\nENV DB_PASSWORD {U}",
        "database:\n  host: db\n  password: {U}\n  user: app",
        "pass: {U}",
        "api_key: '{U}'",
        "client_secret: {U}",
        "[client]\nuser = app\npassword = {U}",
        "[default]\naws_secret_access_key = {U}",
        "db.user=app\ndb.password={U}",
        'DbPwd = "{U}"',
        '{{"db": {{"user": "app", "password": "{U}"}}}}',
        '{{"apiKey": "{U}"}}',
        '{{"secretKey": "{U}"}}',
        '{{"access_token": "{U}", "token_type": "bearer", "expires_in": 43199}}',
        'conn = psycopg2.connect(host="db", user="app", password="{U}")',
        "SECRET_KEY = '{U}'",
        "mytool login --password {U} --user app",
        "mytool deploy --api-key {U}",
        "x-api-key: {U}",
        "Authorization: Bearer {U}",
        '{{"headers": {{"Authorization": "Bearer {U}"}}}}',
        "X-Consul-Token: {U}",
        "curl -H 'X-Vault-Token: {U}' https://vault:8200/v1/secret/app",
        "mytool login --token={U}",
        "2024-05-01 12:00:01 INFO connect password={U} user=app",
        "postgres://app:{U}@db.internal:5432/app",
    ],
)
@pytest.mark.parametrize("case", ["lower", "upper"])
def test_a_uuid_under_a_credentials_name_is_redacted(template: str, case: str) -> None:
    value = UUID if case == "lower" else UUID.upper()
    text = template.format(U=value)
    assert value not in _redacted(text + "\n")
    assert value not in _in_a_tool_call(text)


@pytest.mark.parametrize(
    "name",
    [
        # ids, and names about a credential
        "secret_id",
        "secretId",
        "secret_name",
        "api_key_id",
        "key_id",
        "token_id",
        "password_reset_id",
        "client_id",
        "tenant_id",
        "subscription_id",
        "session_id",
        "request_id",
        "uuid",
        "parentUuid",
        "toolUseID",
        "x-request-id",
        # tokens that are no credential
        "X-CSRF-Token",
        "X-Request-Token",
        "--next-token",
        "next_page_token",
        "pageToken",
        "nextToken",
        "continuation_token",
        "idempotency_token",
        "client_token",
        "sync_token",
        "cancellation_token",
        "token",
        "NEXT_PAGE_TOKEN",
        "IDEMPOTENCY_KEY",
        "PARTITION_KEY",
        "SORT_KEY",
        "S3_OBJECT_KEY",
        # an AWS API's tokens, in its JSON
        "ChangeToken",
        "ClientRequestToken",
        "LifecycleActionToken",
    ],
)
@pytest.mark.parametrize("form", ["{name}={U}", "{name}: {U}", '{{"{name}": "{U}"}}'])
def test_a_uuid_under_other_names_stays(name: str, form: str) -> None:
    text = form.format(name=name, U=UUID) + "\n"
    assert _redacted(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "metadata:\n  name: db\n  namespace: prod\n  uid: 3f2a9c4e-7b1d-4e8a-9c2f-5d6e7f8a9b0c\n",
        '{"parentUuid": "3f2a9c4e-7b1d-4e8a-9c2f-5d6e7f8a9b0c", "sessionId": '
        '"9b1c2d3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e", "toolUseID": "toolu_01Xk9"}\n',
        "X-Request-Id: 3f2a9c4e-7b1d-4e8a-9c2f-5d6e7f8a9b0c\n",
    ],
)
def test_ids_in_records_and_manifests_stay(text: str) -> None:
    assert _redacted(text) == text


@pytest.mark.parametrize(
    "value",
    [
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
        "12345678-1234-1234-1234-123456789012",
        "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
        "11111111-2222-3333-4444-555555555555",
        "deadbeef-dead-beef-dead-beefdeadbeef",
        "123e4567-e89b-12d3-a456-426614174000",
        "550e8400-e29b-41d4-a716-446655440000",
    ],
)
@pytest.mark.parametrize("form", ["DB_PASSWORD={v}", "password: {v}", '{{"apiKey": "{v}"}}'])
def test_a_placeholder_uuid_under_a_credentials_name_stays(value: str, form: str) -> None:
    text = form.format(v=value) + "\n"
    assert _redacted(text) == text
    assert not is_drawn_uuid(value)


def test_drawn_uuids_are_told_from_typed_ones() -> None:
    assert is_drawn_uuid(UUID)
    assert is_drawn_uuid(UUID.upper())
    assert is_drawn_uuid("c9a2e0f4-3b71-11ef-9a4d-0242ac120002")  # a time-based one
    assert not is_drawn_uuid(UUID + "0")
    assert not is_drawn_uuid("{" + UUID + "}")


@pytest.mark.parametrize(
    ("key", "credential"),
    [
        ("password", True),
        ("DB_PASS", True),
        ("PGPASSWORD", True),
        ("adminPwd", True),
        ("x-api-key", True),
        ("HEROKU_APIKEY", True),
        ("clientSecret", True),
        ("aws_secret_access_key", True),
        ("SNYK_TOKEN", True),
        ("LICENSE_KEY", True),
        ("refreshToken", True),
        ("bypass", False),
        ("token", False),
        ("api_token", True),
        ("auth_token", True),
        ("github_token", False),
        ("primary_key", False),
        ("CLIENT_TOKEN", False),
        ("key", False),
    ],
)
def test_names_a_uuid_is_a_credential_under(key: str, credential: bool) -> None:
    assert holds_a_credential_uuid(key) is credential


# What an upper-case name ending in `_KEY` holds when the word before names no credential: a
# record's, a tenant's, an object's, a flag's id, a KMS key's id, a public site key.
_ID_KEYS = [
    "KMS_KEY",
    "AWS_KMS_KEY",
    "SSE_KMS_KEY",
    "KMS_ENCRYPTION_KEY",
    "TENANT_KEY",
    "PROJECT_KEY",
    "INSTANCE_KEY",
    "ENTITY_KEY",
    "RECORD_KEY",
    "USER_KEY",
    "ACCOUNT_KEY",
    "EVENT_KEY",
    "MESSAGE_KEY",
    "LOCK_KEY",
    "LOOKUP_KEY",
    "MAP_KEY",
    "SURROGATE_KEY",
    "NATURAL_KEY",
    "UNIQUE_KEY",
    "BUSINESS_KEY",
    "S3_KEY",
    "FILE_KEY",
    "ASSET_KEY",
    "IMAGE_KEY",
    "STORAGE_KEY",
    "RESOURCE_KEY",
    "BUCKET_KEY",
    "OBJECT_STORE_KEY",
    "DEDUPE_KEY",
    "IDEMPOTENT_KEY",
    "FEATURE_FLAG_KEY",
    "EXPERIMENT_KEY",
    "TRACKING_KEY",
    "JOB_KEY",
    "TASK_KEY",
    "RUN_KEY",
    "SITE_KEY",
    "HCAPTCHA_SITE_KEY",
    "REACT_APP_SITE_KEY",
    # tokens a device, a push service, a form or a mailed link holds
    "DEVICE_TOKEN",
    "PUSH_TOKEN",
    "FCM_TOKEN",
    "APNS_TOKEN",
    "REGISTRATION_TOKEN",
    "CSRF_TOKEN",
    "XSRF_TOKEN",
    "INVITE_TOKEN",
    "INVITATION_TOKEN",
    "RESET_TOKEN",
    "VERIFICATION_TOKEN",
    "CONFIRMATION_TOKEN",
    "UNSUBSCRIBE_TOKEN",
    "STATE_TOKEN",
]


@pytest.mark.parametrize("name", _ID_KEYS)
@pytest.mark.parametrize(
    "form",
    ["{name}={U}", "{name}: {U}", '{{"{name}": "{U}"}}', 'const {name} = "{U}";'],
)
def test_an_upper_case_name_for_an_id_keeps_its_uuid(name: str, form: str) -> None:
    text = form.format(name=name, U=UUID) + "\n"
    assert _redacted(text) == text


def test_an_id_under_a_key_name_stays_where_it_repeats() -> None:
    text = (
        f"TENANT_KEY={UUID}\n"
        f"GET https://api.example.com/tenants/{UUID}/users\n"
        f'{{"tenantId": "{UUID}"}}\n'
    )
    assert _redacted(text) == text


@pytest.mark.parametrize(
    "name",
    [
        "LICENSE_KEY",
        "MASTER_KEY",
        "ENCRYPTION_KEY",
        "SIGNING_KEY",
        "PRIVATE_KEY",
        "ACCESS_KEY",
        "AUTH_KEY",
        "APP_KEY",
        "SERVICE_KEY",
        "ADMIN_KEY",
        "DEPLOY_KEY",
        "ACME_API_KEY",
        "ACME_SECRET_KEY",
        "ACME_TOKEN",
        "SESSION_TOKEN",
        "BEARER_TOKEN",
    ],
)
@pytest.mark.parametrize("form", ["{name}={U}", '{{"{name}": "{U}"}}', "{name}: {U}"])
def test_an_upper_case_credentials_name_takes_its_uuid(name: str, form: str) -> None:
    text = form.format(name=name, U=UUID) + "\n"
    assert UUID not in _redacted(text)


@pytest.mark.parametrize(
    "text",
    [
        "-ACME_TOKEN={U}",
        "+ACME_TOKEN={U}",
        "-DB_PASSWORD={U}",
        "--- a/.env\n+++ b/.env\n@@ -1,2 +1,2 @@\n-ACME_TOKEN={U}\n+ACME_TOKEN=${{ACME_TOKEN}}",
        'process.env.ACME_TOKEN = "{U}";',
        'os.environ["ACME_TOKEN"] = "{U}"',
        "<ns:apiKey>{U}</ns:apiKey>",
        "PASSWORD2={U}",
        "DB_PASSWORD_1={U}",
        "API_KEY_2={U}",
        "api_key2: {U}",
        '{{"XApiKey": "{U}"}}',
        '{{"OAuthToken": "{U}"}}',
        "DB_PASS={U}",
        "ADMIN_PASS={U}",
        "SMTP_PASS={U}",
        "MYSQL_PASS={U}",
    ],
)
def test_a_marked_qualified_or_numbered_credentials_name_takes_its_uuid(text: str) -> None:
    assert UUID not in _redacted(text.format(U=UUID) + "\n")


@pytest.mark.parametrize(
    "text",
    [
        "PASS: {U}",
        "--- PASS: {U} (0.00s)",
        "--- PASS: {U}",
        '{{"PASS": "{U}"}}',
        '{{"boarding_pass": "{U}"}}',
        '{{"render_pass": "{U}"}}',
        '{{"first_pass": "{U}"}}',
        '{{"finalPass": "{U}"}}',
        "BUILD_PASS={U}",
    ],
)
def test_a_pass_that_is_no_password_keeps_its_uuid(text: str) -> None:
    line = text.format(U=UUID) + "\n"
    assert _redacted(line) == line


@pytest.mark.parametrize(
    "value",
    [
        "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
        "3fa85f64-5717-4562-b3fc-2c963f66afa6",
        "d290f1ee-6c54-4b01-90e6-d701748f0851",
        "16fd2706-8baf-433b-82eb-8c7fada847da",
        "a8098c1a-f86e-11da-bd1a-00112444be1e",
        "6fa459ea-ee8a-3ca4-894e-db77e160355e",
        "886313e1-3b8a-5372-9b90-0c9aee199e5d",
        "919108f7-52d1-4320-9bac-f847db4148a8",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "C232AB00-9414-11EC-B3C8-9F6BDECED846",
        "00112233-4455-6677-8899-aabbccddeeff",
        "11112222-3333-4444-5555-666677778888",
        "aaaabbbb-cccc-dddd-eeee-ffff00001111",
        "a1b2c3d4-e5f6-a7b8-c9d0-e1f2a3b4c5d6",
        "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
        "3f2a9c4e-7b1d-4e8a-9c2f-5d6e7f8a9b0c",
    ],
)
def test_documented_and_typed_uuids_are_placeholders(value: str) -> None:
    assert not is_drawn_uuid(value)
    text = f"DB_PASSWORD={value}\n"
    assert _redacted(text) == text


def test_few_drawn_uuids_are_taken_for_typed_ones() -> None:
    rng = random.Random(4122)
    drawn = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(30_000)]
    assert sum(not is_drawn_uuid(value) for value in drawn) <= 10
