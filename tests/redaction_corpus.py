"""Fake credentials in real formats, and harmless look-alikes, in the places people paste them.

Every credential is fake: drawn from a fixed seed in the alphabet, length
and prefix of its real format, then set in a context written by hand (a
.env, a curl command, a JSON config, a log line, a compose file, a chat
message). Look-alikes are texts a redactor must leave alone: hashes, ids,
digests, publishable keys, versions, placeholders, code and prose.

>>> CREDENTIALS[0].format, CREDENTIALS[0].secret in CREDENTIALS[0].text
('aws-access-key-id', True)
"""

import base64
import json
import random
import string
from collections.abc import Callable
from typing import NamedTuple


class Credential(NamedTuple):
    """A text holding one secret; `secret` is the exact substring that must go."""

    format: str
    text: str
    secret: str


class LookAlike(NamedTuple):
    """A text with nothing secret in it, which must come back unchanged."""

    name: str
    text: str


_rng = random.Random(20240604)

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def draw(alphabet: str, length: int) -> str:
    """`length` characters drawn from `alphabet` with the corpus's fixed seed."""
    return "".join(_rng.choice(alphabet) for _ in range(length))


def b64_of(data: bytes, *, urlsafe: bool = False) -> str:
    encoded = base64.urlsafe_b64encode(data) if urlsafe else base64.b64encode(data)
    return encoded.decode()


def random_bytes(length: int) -> bytes:
    return bytes(_rng.randrange(256) for _ in range(length))


def uuid4() -> str:
    raw = draw(HEX, 32)
    return f"{raw[:8]}-{raw[8:12]}-4{raw[13:16]}-{_rng.choice('89ab')}{raw[17:20]}-{raw[20:]}"


def pem_body(prefix: str, size: int) -> str:
    """A base64 body in 64-character lines that starts like the real DER structure."""
    body = prefix + b64_of(random_bytes(size))[len(prefix) :]
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def jwt(claims: dict[str, object], alg: str = "HS256") -> str:
    def part(value: dict[str, object]) -> str:
        return b64_of(json.dumps(value, separators=(",", ":")).encode(), urlsafe=True).rstrip("=")

    signature = b64_of(random_bytes(32 if alg.startswith("HS") else 256), urlsafe=True).rstrip("=")
    return f"{part({'alg': alg, 'typ': 'JWT'})}.{part(claims)}.{signature}"


def discord_token() -> str:
    user_id = str(_rng.randrange(10**17, 10**19))
    return f"{b64_of(user_id.encode()).rstrip('=')}.{draw(URLSAFE, 6)}.{draw(URLSAFE, 38)}"


def url_encoded_b64(length: int) -> str:
    return b64_of(random_bytes(length)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")


HUMAN_PASSWORDS = (
        "Sup3rS3cret!", "Tr0ub4dor&3", "hunter2hunter2", "Winter2024!", "pa55-w0rd-prod", "Kx9#mP2vQ",
        "N0t-4-r3al-p4ss", "s3cr3t_db_pw", "Zebra!Lamp7", "f1sh&Chips99", "Q7w!e9R2t", "m0ngo-adm1n-pw",
        "rabbit4life!", "letMe1n#2023", "Orange_Tree_88", "p%40ssw0rd%21", "dev-Passw0rd-12", "Hx7$kL2q",
        "correct-horse-42", "Blue$ky2025", "g7Hj2kLm9Q", "Redis#Cache1", "StagingPw!77", "admin1234!",
        "c0ffee&Cream", "Ftp_Upl0ad_2", "mail3r!Pass", "L0gin@Home", "j8Kd!p2Lx", "SaPassword#19",
        "v3ry-l0ng-passphrase-2024", "Rust&Go#42", "Spring2023$",
)


def human_password() -> str:
    return _rng.choice(HUMAN_PASSWORDS)


def generated_password() -> str:
    return draw(ALNUM, _rng.randrange(16, 25))


Maker = Callable[[], "str | tuple[str, str]"]
"""Makes one fake: the secret, or (what goes into the context, the secret within it)."""

# (format, maker, contexts); `§` in a context marks where the fake goes.
FORMATS: list[tuple[str, Maker, list[str]]] = [
    # --- cloud providers ---------------------------------------------------
    ("aws-access-key-id", lambda: "AKIA" + draw(BASE32, 16), [
        "AWS_ACCESS_KEY_ID=§\nAWS_DEFAULT_REGION=eu-west-1\nAWS_PROFILE=staging\n",
        "[default]\naws_access_key_id = §\nregion = us-east-1\noutput = json\n",
        "why does `aws s3 ls s3://acme-backups` say AccessDenied? the deploy user has key § and the bucket policy looks fine",
        'provider "aws" {\n  region     = "us-west-2"\n  access_key = "§"\n}\n',
    ]),
    ("aws-temporary-access-key-id", lambda: "ASIA" + draw(BASE32, 16), [
        "2024-06-03 10:14:22,118 botocore.credentials INFO Found credentials in environment variables. key=§ expires=2024-06-03T11:14:22Z",
        'env:\n  - name: AWS_ACCESS_KEY_ID\n    value: "§"\n',
    ]),
    ("mollie-api-key", lambda: "live_" + draw(ALNUM, 30), [
        "the shop owner finally sent the payment provider key, set it in production: §",
        "MOLLIE_API_KEY=§\nMOLLIE_PROFILE=pfl_3RkSN4Fzjq\n",
    ]),
    ("s3-compatible-access-key-id", lambda: draw(UPPER_ALNUM, 20), [
        "the backup cron talks to our object storage:\nS3_ACCESS_KEY_ID=§\nS3_ENDPOINT=https://s3.fr-par.example.net\n",
        'minio:\n  access_key_id: "§"\n  bucket: nightly-dumps\n',
    ]),
    ("token-handed-over-in-prose", lambda: draw(HEX, 40), [
        "here's my personal token so you can try the export script against staging: § (expires friday)",
        "the api key for the label printer service, if you need it to reproduce: §",
    ]),
    # An access key id is half of a credential pair: the "id" after it names no harmless id.
    ("access-key-id-in-prose", lambda: draw(HEX, 32), [
        "bucket creds for the media worker, access key id § and the secret comes in a sec",
        "the access key id is § (read-only, the uploads bucket)",
    ]),
    ("feature-flag-client-token", lambda: "shop:production." + draw(HEX, 64), [
        "frontend token for the flag proxy, for local testing only: §",
    ]),
    ("aws-secret-access-key", lambda: draw(B64, 40), [
        "[default]\naws_secret_access_key = §\nregion = eu-central-1\n",
        "export AWS_SECRET_ACCESS_KEY=§\nexport AWS_REGION=ap-southeast-2\n",
        '{\n  "Credentials": {\n    "SecretAccessKey": "§",\n    "Expiration": "2024-06-01T12:00:00Z"\n  }\n}',
        "$ aws configure\nAWS Access Key ID [None]: \nAWS Secret Access Key [None]: §\nDefault region name [None]: eu-west-2\n",
        "User name,Password,Access key ID,Secret access key,Console login link\nci-bot,,AKIA"
        + draw(BASE32, 16) + ",§,https://123456789012.signin.aws.amazon.com/console\n",
        "  aws_secret_key: §   # rotated 2024-05\n",
    ]),
    ("aws-session-token", lambda: "FwoGZXIvYXdzE" + draw(B64, 300), [
        "export AWS_SESSION_TOKEN=§\n",
        '"SessionToken": "§",\n',
    ]),
    ("aws-session-token", lambda: "IQoJb3JpZ2luX2VjE" + draw(B64, 380) + "==", [
        "[temp]\naws_session_token=§\n",
    ]),
    ("gcp-api-key", lambda: "AIza" + draw(URLSAFE, 35), [
        "curl 'https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=§'",
        "GOOGLE_API_KEY=§\nGOOGLE_CLOUD_PROJECT=acme-prod-3321\n",
        'import google.generativeai as genai\ngenai.configure(api_key="§")\nmodel = genai.GenerativeModel("gemini-1.5-pro")\n',
    ]),
    ("gcp-oauth-client-secret", lambda: "GOCSPX-" + draw(URLSAFE, 28), [
        ('{"installed":{"client_id":"734581209311-8t1fvb0q3a9l6jd2s5k4p7n0m1c3e6r9.apps.googleusercontent.com",'
        '"project_id":"acme-cli","client_secret":"§","redirect_uris":["http://localhost"]}}'),
        "GOOGLE_CLIENT_SECRET=§\n",
    ]),
    ("gcp-oauth-access-token", lambda: "ya29.a0" + draw(URLSAFE, 180), [
        'curl -H "Authorization: Bearer §" https://www.googleapis.com/drive/v3/files?pageSize=10',
        "DEBUG google.auth.transport.requests: refreshed token §",
    ]),
    ("gcp-refresh-token", lambda: "1//0" + draw(URLSAFE, 99), [
        ('{\n  "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",\n'
        '  "refresh_token": "§",\n  "type": "authorized_user"\n}'),
    ]),
    ("gcp-service-account-key", lambda: _escaped_pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 1190), [
        '{\n  "type": "service_account",\n  "project_id": "acme-prod-3321",\n  "client_id": "'
        + str(int(draw(HEX, 40), 16))[:21] + '",\n  "private_key": "§",\n  "client_email": '
        '"deployer@acme-prod-3321.iam.gserviceaccount.com",\n  "token_uri": "https://oauth2.googleapis.com/token"\n}\n',
    ]),
    ("azure-storage-account-key", lambda: draw(B64, 86) + "==", [
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=§;EndpointSuffix=core.windows.net",
        ('services.AddAzureClients(b => b.AddBlobServiceClient("DefaultEndpointsProtocol=https;AccountName=shopimages;'
        'AccountKey=§;EndpointSuffix=core.windows.net"));'),
    ]),
    ("azure-sas-token", lambda: url_encoded_b64(32), [
        ("https://acmelogs.blob.core.windows.net/backups/db-2024-06-01.bak?sv=2022-11-02&ss=b&srt=o&sp=r"
        "&se=2024-07-01T00:00:00Z&st=2024-06-01T00:00:00Z&spr=https&sig=§"),
        "azcopy copy ./dist 'https://cdnassets.blob.core.windows.net/$web?sv=2021-08-06&se=2024-09-30&sr=c&sp=rwl&sig=§' --recursive",
    ]),
    ("azure-entra-client-secret", lambda: draw(ALNUM, 3) + _rng.choice(string.digits) + "Q~" + draw(ALNUM + "_~.-", 34), [
        "AZURE_TENANT_ID=72f988bf-86f1-41af-91ab-2d7cd011db47\nAZURE_CLIENT_ID=04b07795-8ddb-461a-bbee-02f9e1bf7b46\nAZURE_CLIENT_SECRET=§\n",
        "az login --service-principal -u 04b07795-8ddb-461a-bbee-02f9e1bf7b46 -p §  --tenant contoso.onmicrosoft.com",
    ]),
    ("azure-service-bus-key", lambda: draw(B64, 43) + "=", [
        "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=§",
    ]),
    # --- version control ----------------------------------------------------
    ("github-classic-token", lambda: "ghp_" + draw(ALNUM, 36), [
        "export GITHUB_TOKEN=§\n",
        "git remote set-url origin https://§@github.com/acme/infra.git",
        'curl -H "Authorization: token §" https://api.github.com/user/repos?per_page=100',
        "hey can you check why the release job fails? I set GH_TOKEN to § in the repo settings",
        "machine github.com\n  login octocat\n  password §\n",
    ]),
    ("github-fine-grained-token", lambda: "github_pat_11" + draw(UPPER_ALNUM, 20) + "_" + draw(ALNUM, 59), [
        "GITHUB_PAT=§\n",
        'gh auth login --with-token <<< "§"',
        '{"github": {"token": "§", "owner": "acme"}}',
    ]),
    ("github-oauth-token", lambda: "gho_" + draw(ALNUM, 36), [
        "github.com:\n    user: octocat\n    oauth_token: §\n    git_protocol: https\n",
    ]),
    ("github-app-token", lambda: "ghs_" + draw(ALNUM, 36), [
        "[2024-06-02T08:11:03Z] cloning https://x-access-token:§@github.com/acme/api.git into /tmp/build-4411",
        "GITHUB_APP_INSTALLATION_TOKEN: §",
    ]),
    ("github-refresh-token", lambda: "ghr_" + draw(ALNUM, 76), [
        '{"access_token":"expired","refresh_token":"§","refresh_token_expires_in":15811200}',
    ]),
    ("gitlab-personal-token", lambda: "glpat-" + draw(URLSAFE, 20), [
        'curl --header "PRIVATE-TOKEN: §" "https://gitlab.example.com/api/v4/projects?owned=true"',
        "GITLAB_TOKEN=§\n",
        "git clone https://oauth2:§@gitlab.com/acme/platform/api.git",
    ]),
    ("gitlab-runner-token", lambda: "glrt-" + draw(URLSAFE, 20), [
        '[[runners]]\n  name = "docker-runner-1"\n  url = "https://gitlab.com/"\n  token = "§"\n  executor = "docker"\n',
    ]),
    ("gitlab-deploy-token", lambda: "gldt-" + draw(URLSAFE, 20), [
        "docker login registry.gitlab.com -u gitlab+deploy-token-118 -p §",
    ]),
    ("bitbucket-app-password", lambda: "ATBB" + draw(ALNUM, 32), [
        "BITBUCKET_USERNAME=acme-ci\nBITBUCKET_APP_PASSWORD=§\n",
    ]),
    ("atlassian-api-token", lambda: "ATATT3xFfGF0" + draw(URLSAFE, 170) + "=" + draw(HEX.upper(), 8), [
        "JIRA_API_TOKEN=§\nJIRA_BASE_URL=https://acme.atlassian.net\n",
        "curl -u ops@acme.io:§ https://acme.atlassian.net/rest/api/3/myself",
    ]),
    # --- payments -----------------------------------------------------------
    ("stripe-secret-key", lambda: "sk_live_51" + draw(ALNUM, 97), [
        'import stripe\nstripe.api_key = "§"\n',
        "STRIPE_SECRET_KEY=§\nSTRIPE_PUBLISHABLE_KEY=pk_live_51" + draw(ALNUM, 97) + "\n",
        "curl https://api.stripe.com/v1/charges -u §: -d amount=2000 -d currency=usd",
    ]),
    ("stripe-test-secret-key", lambda: "sk_test_" + draw(ALNUM, 24), [
        "const stripe = require('stripe')('§');",
        "my test key § returns 'No such customer' for cus_Nffrfeuw98RdAn, why?",
    ]),
    ("stripe-restricted-key", lambda: "rk_live_51" + draw(ALNUM, 97), [
        "STRIPE_RESTRICTED_KEY=§   # read-only reporting key\n",
        "stripe:\n  key: §\n  account: acct_1032D82eZvKYlo2C\n",
    ]),
    ("stripe-webhook-secret", lambda: "whsec_" + draw(ALNUM, 32), [
        "STRIPE_WEBHOOK_SECRET=§\n",
        "event = stripe.Webhook.construct_event(payload, sig_header, '§')",
        "> Ready! You are using Stripe API Version [2023-10-16]. Your webhook signing secret is § (^C to quit)",
    ]),
    ("square-access-token", lambda: "sq0atp-" + draw(URLSAFE, 22), [
        "SQUARE_ACCESS_TOKEN=§\nSQUARE_ENVIRONMENT=production\n",
    ]),
    ("square-oauth-secret", lambda: "sq0csp-" + draw(URLSAFE, 43), [
        '{"application_id": "sq0idp-wGVapF8sNt9PLrdj5znuKA", "application_secret": "§"}',
    ]),
    ("shopify-access-token", lambda: "shpat_" + draw(HEX, 32), [
        "curl -X GET https://acme-store.myshopify.com/admin/api/2024-04/shop.json -H 'X-Shopify-Access-Token: §'",
        "SHOPIFY_ADMIN_TOKEN=§\n",
    ]),
    ("braintree-access-token", lambda: _prefixed("access_token$production$", f"{draw(LOWER_ALNUM, 16)}${draw(HEX, 32)}"), [
        'gateway = braintree.BraintreeGateway(access_token="§")',
    ]),
    # --- chat -----------------------------------------------------------------
    ("slack-bot-token", lambda: f"xoxb-{_rng.randrange(10**11, 10**12)}-{_rng.randrange(10**12, 10**13)}-{draw(ALNUM, 24)}", [
        "SLACK_BOT_TOKEN=§\nSLACK_SIGNING_SECRET_FILE=/run/secrets/slack\n",
        'app = App(token="§")',
        "2024-06-01 12:00:03 ERROR slack_sdk.web: invalid_auth for token §",
    ]),
    ("slack-user-token", lambda: f"xoxp-{_rng.randrange(10**11, 10**12)}-{_rng.randrange(10**11, 10**12)}-{_rng.randrange(10**12, 10**13)}-{draw(HEX, 32)}", [
        'curl -H "Authorization: Bearer §" https://slack.com/api/conversations.list',
    ]),
    ("slack-app-token", lambda: f"xapp-1-A{draw(UPPER_ALNUM, 10)}-{_rng.randrange(10**12, 10**13)}-{draw(HEX, 64)}", [
        "SLACK_APP_TOKEN=§  # socket mode\n",
    ]),
    ("slack-webhook", lambda: f"T{draw(UPPER_ALNUM, 10)}/B{draw(UPPER_ALNUM, 10)}/{draw(ALNUM, 24)}", [
        "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"deploy done\"}' https://hooks.slack.com/services/§",
        "alerting:\n  slack_url: https://hooks.slack.com/services/§\n  channel: '#ops'\n",
    ]),
    ("discord-bot-token", discord_token, [
        "import discord\nclient = discord.Client(intents=discord.Intents.default())\nclient.run('§')\n",
        "DISCORD_TOKEN=§\nGUILD_ID=1133582016426303598\n",
    ]),
    ("discord-webhook", lambda: draw(URLSAFE, 68), [
        "https://discord.com/api/webhooks/1187463129877839943/§",
        'WEBHOOK = "https://discordapp.com/api/webhooks/998765432101234567/§"',
    ]),
    ("telegram-bot-token", lambda: f"{_rng.randrange(10**9, 7 * 10**9)}:AA{draw(URLSAFE, 33)}", [
        "curl 'https://api.telegram.org/bot§/sendMessage?chat_id=-1001234567890&text=deploy%20ok'",
        "TELEGRAM_BOT_TOKEN=§\n",
        "bot = telebot.TeleBot('§')",
    ]),
    ("teams-webhook", lambda: f"{uuid4()}@{uuid4()}/IncomingWebhook/{draw(HEX, 32)}/{uuid4()}", [
        "TEAMS_WEBHOOK=https://acme.webhook.office.com/webhookb2/§\n",
    ]),
    # --- AI providers ---------------------------------------------------------
    ("openai-project-key", lambda: "sk-proj-" + draw(URLSAFE, 74) + "T3BlbkFJ" + draw(URLSAFE, 74), [
        "OPENAI_API_KEY=§\n",
        'from openai import OpenAI\nclient = OpenAI(api_key="§")\n',
        "I keep getting 429 with § even though billing is set up, any idea?",
        '{\n  "mcpServers": {\n    "search": {"command": "npx", "args": ["-y", "search-mcp"], "env": {"OPENAI_API_KEY": "§"}}\n  }\n}',
    ]),
    ("openai-legacy-key", lambda: "sk-" + draw(ALNUM, 20) + "T3BlbkFJ" + draw(ALNUM, 20), [
        "openai.api_key = '§'",
        "$env:OPENAI_API_KEY = \"§\"",
    ]),
    ("openai-service-account-key", lambda: "sk-svcacct-" + draw(URLSAFE, 74) + "T3BlbkFJ" + draw(URLSAFE, 74), [
        "  OPENAI_API_KEY: §\n",
    ]),
    ("anthropic-api-key", lambda: "sk-ant-api03-" + draw(URLSAFE, 93) + "AA", [
        "ANTHROPIC_API_KEY=§\n",
        "curl https://api.anthropic.com/v1/messages -H 'x-api-key: §' -H 'anthropic-version: 2023-06-01'",
        'client = anthropic.Anthropic(api_key="§")',
    ]),
    ("huggingface-token", lambda: "hf_" + draw(string.ascii_letters, 34), [
        "HF_TOKEN=§\n",
        "huggingface-cli login --token § --add-to-git-credential",
        'from huggingface_hub import login\nlogin(token="§")\n',
    ]),
    ("groq-api-key", lambda: "gsk_" + draw(ALNUM, 52), [
        "GROQ_API_KEY=§\n",
    ]),
    ("replicate-token", lambda: "r8_" + draw(ALNUM, 37), [
        "export REPLICATE_API_TOKEN=§\n",
    ]),
    ("perplexity-key", lambda: "pplx-" + draw(ALNUM, 48), [
        'headers = {"Authorization": "Bearer §", "Content-Type": "application/json"}',
    ]),
    ("xai-key", lambda: "xai-" + draw(ALNUM, 80), [
        "XAI_API_KEY=§\n",
    ]),
    ("openrouter-key", lambda: "sk-or-v1-" + draw(HEX, 64), [
        'base_url="https://openrouter.ai/api/v1", api_key="§"',
    ]),
    # --- email and messaging APIs ---------------------------------------------
    ("sendgrid-key", lambda: f"SG.{draw(URLSAFE, 22)}.{draw(URLSAFE, 43)}", [
        "SENDGRID_API_KEY=§\nMAIL_FROM=noreply@acme.io\n",
        "sg = SendGridAPIClient('§')",
    ]),
    ("mailgun-key", lambda: "key-" + draw(HEX, 32), [
        "curl -s --user 'api:§' https://api.mailgun.net/v3/mg.acme.io/messages -F from='Acme <noreply@acme.io>'",
        "MAILGUN_API_KEY=§\n",
    ]),
    ("mailchimp-key", lambda: draw(HEX, 32) + "-us" + str(_rng.randrange(1, 21)), [
        "MAILCHIMP_API_KEY=§\n",
        'mailchimp.setConfig({ apiKey: "§", server: "us6" });',
    ]),
    ("twilio-auth-token", lambda: draw(HEX, 32), [
        "TWILIO_ACCOUNT_SID=AC" + draw(HEX, 32) + "\nTWILIO_AUTH_TOKEN=§\n",
        "client = Client('AC" + draw(HEX, 32) + "', auth_token='§')",
    ]),
    ("brevo-key", lambda: f"xkeysib-{draw(HEX, 64)}-{draw(ALNUM, 16)}", [
        "BREVO_API_KEY=§\n",
    ]),
    ("postmark-server-token", uuid4, [
        'curl "https://api.postmarkapp.com/email" -H "X-Postmark-Server-Token: §" -d @mail.json',
        "POSTMARK_SERVER_TOKEN=§\n",
    ]),
    ("resend-key", lambda: f"re_{draw(ALNUM, 8)}_{draw(ALNUM, 24)}", [
        "const resend = new Resend('§');",
    ]),
    # --- package registries -----------------------------------------------------
    ("npm-token", lambda: "npm_" + draw(ALNUM, 36), [
        "//registry.npmjs.org/:_authToken=§\n",
        "NPM_TOKEN=§ npm publish --access public",
    ]),
    ("npm-legacy-token", uuid4, [
        "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=§\nalways-auth=true\n",
    ]),
    ("pypi-token", lambda: "pypi-AgEIcHlwaS5vcmc" + draw(URLSAFE, 150), [
        "[pypi]\n  username = __token__\n  password = §\n",
        "twine upload -u __token__ -p § dist/*",
        "UV_PUBLISH_TOKEN=§\n",
    ]),
    ("rubygems-key", lambda: "rubygems_" + draw(HEX, 48), [
        "---\n:rubygems_api_key: §\n",
    ]),
    ("nuget-key", lambda: "oy2" + draw(LOWER_ALNUM, 43), [
        "dotnet nuget push bin/Release/Acme.Core.1.4.2.nupkg --api-key § --source https://api.nuget.org/v3/index.json",
    ]),
    ("docker-hub-token", lambda: "dckr_pat_" + draw(URLSAFE, 27), [
        "echo § | docker login -u acmeci --password-stdin",
        "DOCKERHUB_TOKEN=§\n",
    ]),
    ("crates-io-token", lambda: "cio" + draw(ALNUM, 32), [
        "cargo login §",
        "[registry]\ntoken = \"§\"\n",
    ]),
    # --- infrastructure -----------------------------------------------------------
    ("vault-token", lambda: "hvs.CAESI" + draw(URLSAFE, 86), [
        "export VAULT_ADDR=https://vault.internal:8200\nexport VAULT_TOKEN=§\n",
        "curl -H \"X-Vault-Token: §\" https://vault.internal:8200/v1/secret/data/app",
    ]),
    ("vault-token", lambda: "hvs." + draw(ALNUM, 24), [
        "Key                  Value\n---                  -----\ntoken                §\ntoken_accessor       "
        + draw(ALNUM, 24) + "\ntoken_duration       768h\n",
    ]),
    ("terraform-cloud-token", lambda: draw(ALNUM, 14) + ".atlasv1." + draw(ALNUM, 67), [
        '{\n  "credentials": {\n    "app.terraform.io": {\n      "token": "§"\n    }\n  }\n}',
        "TF_TOKEN_app_terraform_io=§\n",
    ]),
    ("digitalocean-token", lambda: "dop_v1_" + draw(HEX, 64), [
        "doctl auth init --access-token §",
        "DIGITALOCEAN_TOKEN=§\n",
    ]),
    ("cloudflare-api-token", lambda: draw(URLSAFE, 40), [
        "CLOUDFLARE_API_TOKEN=§\n",
        'curl "https://api.cloudflare.com/client/v4/user/tokens/verify" -H "Authorization: Bearer §"',
    ]),
    ("cloudflare-global-key", lambda: draw(HEX, 37), [
        'curl https://api.cloudflare.com/client/v4/zones -H "X-Auth-Email: ops@acme.io" -H "X-Auth-Key: §"',
    ]),
    ("cloudflare-origin-ca-key", lambda: f"v1.0-{draw(HEX, 24)}-{draw(HEX, 146)}", [
        "CF_ORIGIN_CA_KEY=§\n",
    ]),
    ("heroku-api-key", lambda: "HRKU-AA" + draw(URLSAFE, 58), [
        "HEROKU_API_KEY=§ heroku apps:info -a acme-web",
    ]),
    ("heroku-legacy-key", uuid4, [
        "machine api.heroku.com\n  login ops@acme.io\n  password §\n",
    ]),
    ("flyio-token", lambda: "fo1_" + draw(URLSAFE, 43), [
        "FLY_API_TOKEN=§ flyctl deploy --remote-only",
    ]),
    ("doppler-token", lambda: "dp.st.prd." + draw(ALNUM, 40), [
        "DOPPLER_TOKEN=§ doppler run -- npm start",
    ]),
    ("pulumi-token", lambda: "pul-" + draw(HEX, 40), [
        "PULUMI_ACCESS_TOKEN=§\n",
    ]),
    ("grafana-cloud-token", lambda: "glc_" + b64_of(random_bytes(90)), [
        "GRAFANA_CLOUD_API_KEY=§\n",
    ]),
    ("grafana-service-account-token", lambda: f"glsa_{draw(ALNUM, 32)}_{draw(HEX, 8)}", [
        'curl -H "Authorization: Bearer §" https://grafana.acme.io/api/dashboards/uid/k8s-nodes',
    ]),
    ("sentry-auth-token", lambda: "sntrys_" + b64_of(random_bytes(120)).rstrip("="), [
        "SENTRY_AUTH_TOKEN=§ sentry-cli releases new 1.4.2",
    ]),
    ("newrelic-user-key", lambda: "NRAK-" + draw(UPPER_ALNUM, 27), [
        "NEW_RELIC_API_KEY=§\n",
    ]),
    ("datadog-api-key", lambda: draw(HEX, 32), [
        "docker run -d -e DD_API_KEY=§ -e DD_SITE=datadoghq.eu gcr.io/datadoghq/agent:7",
        "  datadog:\n    apiKey: §\n    site: datadoghq.com\n",
    ]),
    ("linear-api-key", lambda: "lin_api_" + draw(ALNUM, 40), [
        "LINEAR_API_KEY=§\n",
    ]),
    ("notion-token", lambda: "ntn_" + draw(string.digits, 11) + draw(ALNUM, 35), [
        "const notion = new Client({ auth: '§' })",
    ]),
    ("notion-legacy-token", lambda: "secret_" + draw(ALNUM, 43), [
        "NOTION_TOKEN=§\n",
    ]),
    ("postman-api-key", lambda: f"PMAK-{draw(HEX, 24)}-{draw(HEX, 34)}", [
        "postman login --with-api-key §",
    ]),
    ("supabase-access-token", lambda: "sbp_" + draw(HEX, 40), [
        "SUPABASE_ACCESS_TOKEN=§ supabase db push",
    ]),
    ("planetscale-token", lambda: "pscale_tkn_" + draw(URLSAFE, 43), [
        "PLANETSCALE_SERVICE_TOKEN=§\n",
    ]),
    ("databricks-token", lambda: "dapi" + draw(HEX, 32), [
        "[DEFAULT]\nhost  = https://adb-1234567890123456.7.azuredatabricks.net\ntoken = §\n",
    ]),
    ("mapbox-secret-token", lambda: "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + draw(URLSAFE, 40) + "." + draw(URLSAFE, 22), [
        "MAPBOX_DOWNLOADS_TOKEN=§\n",
    ]),
    ("okta-api-token", lambda: "00" + draw(URLSAFE, 40), [
        'curl -H "Authorization: SSWS §" https://acme.okta.com/api/v1/users?limit=25',
    ]),
    ("netlify-token", lambda: "nfp_" + draw(ALNUM, 36), [
        "NETLIFY_AUTH_TOKEN=§ netlify deploy --prod",
    ]),
    ("age-secret-key", lambda: "AGE-SECRET-KEY-1" + draw("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58), [
        "# created: 2024-06-01T10:00:00Z\n# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n§\n",
    ]),
    ("firebase-server-key", lambda: f"AAAA{draw(URLSAFE, 7)}:APA91b{draw(URLSAFE, 134)}", [
        "FCM_SERVER_KEY=§\n",
    ]),
    # --- private keys ---------------------------------------------------------------
    ("rsa-private-key", lambda: _pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1190), [
        "here is the deploy key, paste it into the CI variable:\n§\nthanks!",
        "$ cat ~/.ssh/id_rsa\n§\n",
    ]),
    ("ec-private-key", lambda: _pem("EC PRIVATE KEY", "MHcCAQEEI", 121), [
        "tls:\n  key: |\n§\n",
    ]),
    ("openssh-private-key", lambda: _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 300), [
        "~/.ssh/id_ed25519:\n§\n",
        "SSH_PRIVATE_KEY (masked in CI? no...):\n§",
    ]),
    ("pkcs8-private-key", lambda: _pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 1190), [
        "openssl genpkey -algorithm RSA -out key.pem && cat key.pem\n§\n",
    ]),
    ("encrypted-private-key", lambda: _pem("ENCRYPTED PRIVATE KEY", "MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQI", 1250), [
        "§\n",
    ]),
    ("pgp-private-key", lambda: _pem("PGP PRIVATE KEY BLOCK", "lQOYBGZb", 900, pgp=True), [
        "gpg --export-secret-keys --armor ops@acme.io\n§\n",
    ]),
    ("private-key-in-json", lambda: _escaped_pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 1190), [
        '{"ssh": {"host": "10.0.4.12", "user": "deploy", "key": "§"}}',
    ]),
    ("truncated-private-key", lambda: _pem("RSA PRIVATE KEY", "MIIEpQIBAAKCAQEA", 600, end=False), [
        "the key starts like this (cut off by the terminal):\n§",
    ]),
    # --- tokens by shape ------------------------------------------------------------
    ("jwt", lambda: jwt({"sub": str(_rng.randrange(10**6)), "name": "Jane Doe", "iat": 1717200000}), [
        "Set-Cookie: session=§; Path=/; HttpOnly; Secure",
        '{"access_token": "§", "token_type": "bearer", "expires_in": 3600}',
        "localStorage.getItem('token') returns § and the API says 401",
    ]),
    ("jwt-rs256", lambda: jwt({"iss": "https://auth.acme.io/", "aud": "api", "exp": 1717203600}, alg="RS256"), [
        'curl -H "Authorization: Bearer §" https://api.acme.io/v1/orders',
    ]),
    ("supabase-service-role-key", lambda: jwt({"iss": "supabase", "ref": draw(string.ascii_lowercase, 20), "role": "service_role"}), [
        "SUPABASE_SERVICE_ROLE_KEY=§\n",
    ]),
    ("opaque-bearer-token", lambda: draw(ALNUM, 40), [
        'curl -H "Authorization: Bearer §" https://api.internal.acme.io/v2/jobs',
        "GET /v1/me HTTP/1.1\nHost: api.acme.io\nAuthorization: Bearer §\nAccept: */*\n",
    ]),
    ("api-token-header", lambda: draw(HEX, 40), [
        "Authorization: Token §\n",
        "x-api-key: §\n",
    ]),
    ("basic-auth-header", lambda: b64_of(f"admin:{human_password()}".encode()), [
        "Authorization: Basic §\n",
        'curl -H "Authorization: Basic §" https://jenkins.acme.io/api/json',
    ]),
    ("docker-config-auth", lambda: b64_of(f"acmeci:{generated_password()}".encode()), [
        '{\n  "auths": {\n    "registry.acme.io": {\n      "auth": "§"\n    }\n  }\n}',
    ]),
    # --- connection strings and URLs with a password ----------------------------------
    ("postgres-url-password", human_password, [
        "DATABASE_URL=postgres://app:§@db.internal:5432/shop\n",
        'SQLALCHEMY_DATABASE_URI = "postgresql+psycopg2://etl:§@10.0.3.7/warehouse"',
        "psql 'postgresql://readonly:§@replica.acme.io:6432/analytics?sslmode=require'",
    ]),
    ("postgres-url-password", generated_password, [
        "  DB_URL: postgres://svc_orders:§@orders-db:5432/orders\n",
    ]),
    ("mysql-url-password", human_password, [
        "spring.datasource.url=jdbc:mysql://root:§@127.0.0.1:3306/inventory",
        "mysql://wp:§@mysql.internal/wordpress",
    ]),
    ("mongodb-url-password", human_password, [
        'MONGO_URI="mongodb+srv://admin:§@cluster0.x7ab2.mongodb.net/?retryWrites=true&w=majority"',
        "mongosh 'mongodb://root:§@localhost:27017/admin?authSource=admin'",
    ]),
    ("redis-url-password", human_password, [
        "REDIS_URL=redis://:§@cache.internal:6379/0\n",
        "CELERY_BROKER_URL=rediss://default:§@redis-12345.c1.eu-west-1-2.ec2.cloud.redislabs.com:12345",
    ]),
    ("amqp-url-password", human_password, [
        "amqp://guest:§@rabbitmq:5672/%2F",
        "BROKER_URL=amqps://orders:§@b-1a2b3c4d.mq.eu-west-1.amazonaws.com:5671",
    ]),
    ("http-basic-url", human_password, [
        "pip install --index-url https://deploy:§@pypi.acme.io/simple/ acme-core",
        "git clone https://jdoe:§@git.acme.io/platform/infra.git",
    ]),
    ("ftp-smtp-url", human_password, [
        "ftp://uploader:§@files.acme.io/incoming/",
        "EMAIL_URL=smtp://noreply%40acme.io:§@smtp.mailgun.org:587",
    ]),
    ("curl-user-password", human_password, [
        "curl -u admin:§ https://nexus.acme.io/service/rest/v1/repositories",
        "curl --user 'elastic:§' -X GET 'https://es.internal:9200/_cluster/health?pretty'",
    ]),
    ("mysql-cli-password", human_password, [
        "mysql -h db.internal -u root -p§ shop < dump.sql",
        "mysqldump -uadmin -p§ --all-databases > backup.sql",
    ]),
    ("connection-string-password", human_password, [
        "Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=shop;User ID=app;Password=§;Encrypt=True;",
        "Driver={ODBC Driver 18 for SQL Server};Server=10.0.2.4;Database=erp;UID=sa;PWD=§;",
        "jdbc:postgresql://db.internal:5432/shop?user=app&password=§&ssl=true",
    ]),
    # --- generic assignments ---------------------------------------------------------
    ("env-password", human_password, [
        "DB_HOST=localhost\nDB_USER=app\nDB_PASSWORD=§\nDB_NAME=shop\n",
        "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: §\n      POSTGRES_DB: shop\n",
        "docker run -d -e MYSQL_ROOT_PASSWORD=§ -p 3306:3306 mysql:8",
        "spring.datasource.password=§\nspring.datasource.username=app\n",
    ]),
    ("config-password", human_password, [
        '{"db": {"host": "10.0.0.5", "user": "app", "password": "§"}}',
        "database:\n  host: db.internal\n  username: app\n  password: §\n",
        "<server>\n  <id>nexus-releases</id>\n  <username>deployer</username>\n  <password>§</password>\n</server>",
        "env:\n  - name: DB_PASSWORD\n    value: \"§\"\n",
        "conn = psycopg2.connect(host='db', user='app', password='§', dbname='shop')",
    ]),
    ("cli-password", human_password, [
        "redis-cli -h cache.internal -p 6379 -a § --no-auth-warning ping",
        "sshpass -p '§' ssh deploy@10.0.4.12 'sudo systemctl restart api'",
        "PGPASSWORD=§ psql -h db.internal -U app -d shop -c 'select count(*) from orders'",
    ]),
    ("inventory-password", human_password, [
        "[web]\n10.0.4.12 ansible_user=deploy ansible_ssh_pass=§\n",
        "ansible_become_password: \"§\"\n",
    ]),
    ("k8s-secret-manifest", human_password, [
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  username: app\n  password: §\n",
    ]),
    ("tfvars-password", human_password, [
        'db_username = "app"\ndb_password = "§"\nregion      = "eu-west-1"\n',
    ]),
    ("chat-password", human_password, [
        "fyi the staging db password is § until we rotate it on monday",
        "login for the router admin page: user admin, password: §",
    ]),
    ("secret-key-setting", lambda: "django-insecure-" + draw(LOWER_ALNUM + "!@#%^&*(-_=+)", 50), [
        "SECRET_KEY = '§'\nDEBUG = True\n",
    ]),
    ("secret-key-setting", lambda: draw(HEX, 64), [
        'app.config["SECRET_KEY"] = "§"',
        "JWT_SECRET=§\nJWT_EXPIRES_IN=3600\n",
        "secret_key_base: §\n",
        "  client_secret: §\n  redirect_uri: https://app.acme.io/callback\n",
    ]),
    ("npmrc-basic-auth", lambda: b64_of(f"ci:{generated_password()}".encode()), [
        "registry=https://npm.acme.io/\n_auth=§\nalways-auth=true\n",
    ]),
    ("java-properties-secret", lambda: draw(B64, 40), [
        "aws.region=eu-west-1\naws.secretKey=§\naws.s3.bucket=acme-assets\n",
        'os.environ["AWS_SECRET_ACCESS_KEY"] = "§"',
    ]),
    ("generic-api-key", lambda: draw(ALNUM, 32), [
        'const apiKey = "§";\nfetch(`https://api.weather.io/v1/forecast?city=Oslo&apikey=${apiKey}`)',
        "ALGOLIA_ADMIN_API_KEY=§\n",
        "weather:\n  api_key: §\n  units: metric\n",
        "requests.get(url, params={'q': 'berlin', 'api_key': '§'})",
        "[api]\nauth_token = \"§\"\n",
        "heroku config:set API_SECRET=§ -a acme-web",
        "export TOKEN=§\n",
    ]),
]


def _prefixed(prefix: str, secret: str) -> tuple[str, str]:
    """A fixed prefix and its random secret: only the secret counts when judging what survived."""
    return prefix + secret, secret


def _pem(label: str, prefix: str, size: int, *, pgp: bool = False, end: bool = True) -> tuple[str, str]:
    body = pem_body(prefix, size)
    if pgp:
        body = f"Comment: GPGTools\n\n{body}\n={draw(B64, 4)}"
    block = f"-----BEGIN {label}-----\n{body}\n" + (f"-----END {label}-----" if end else "")
    return block.rstrip("\n"), body


def _escaped_pem(label: str, prefix: str, size: int) -> tuple[str, str]:
    """A PEM block as JSON holds it: the newlines written as `\\n`."""
    block, body = _pem(label, prefix, size)
    return (block + "\n").replace("\n", "\\n"), body.replace("\n", "\\n")


def entry(name: str, context: str, made: "str | tuple[str, str]") -> Credential:
    inserted, secret = made if isinstance(made, tuple) else (made, made)
    return Credential(name, context.replace("§", inserted), secret)


def _credentials() -> list[Credential]:
    return [entry(name, context, make()) for name, make, contexts in FORMATS for context in contexts]


CREDENTIALS: list[Credential] = _credentials()

# Credentials a pattern redactor cannot tell from ordinary text: no known
# prefix, no name that says what they are. docs/privacy.md lists them as
# limits; the benchmark reports them apart, so that the recall on the corpus
# above is not read as covering them.
KNOWN_MISSES: list[Credential] = [
    entry("pgpass-line", "db.internal:5432:shop:app:§\n", "Sup3rS3cret!"),
    entry("bare-token-in-prose", "use § for the DNS script", draw(URLSAFE, 40)),
    entry("discord-token-without-context", "here: §", discord_token()),
    entry("base64-env-file", "paste this into the CI variable: §", b64_of(b"DB_PASSWORD=hunter2hunter2\n")),
]


# --- look-alikes ------------------------------------------------------------------------

def _sha() -> str:
    return draw(HEX, 40)


def _sha256() -> str:
    return draw(HEX, 64)


def _git_log() -> str:
    subjects = ["fix flaky retry test", "bump httpx to 0.27", "add notes revision", "refactor store sync",
                "docs: privacy page", "ci: cache pip wheels"]
    return "\n".join(f"{draw(HEX, 7)} {subject}" for subject in subjects)


LOOK_ALIKES: list[LookAlike] = [
    # git
    LookAlike("git-log-oneline", _git_log()),
    LookAlike("git-commit-header", f"commit {_sha()}\nAuthor: Jane Doe <jane@acme.io>\nDate:   Mon Jun 3 10:14:22 2024 +0200\n\n    fix token refresh race\n"),
    LookAlike("git-short-sha-chat", f"the regression came in with {draw(HEX, 7)}, reverting it fixes the password reset page"),
    LookAlike("github-commit-url", f"see https://github.com/acme/api/commit/{_sha()} for the fix"),
    LookAlike("git-rev-parse", f"$ git rev-parse HEAD\n{_sha()}\n"),
    LookAlike("git-merge-line", f"Merge: {draw(HEX, 7)} {draw(HEX, 7)}\n"),
    LookAlike("git-diff-index", f"diff --git a/app/auth.py b/app/auth.py\nindex {draw(HEX, 7)}..{draw(HEX, 7)} 100644\n--- a/app/auth.py\n+++ b/app/auth.py"),
    LookAlike("git-show-path", f"git show {_sha()}:config/settings.py | grep -n SECRET"),
    LookAlike("go-pseudo-version", f"require github.com/acme/lib v0.0.0-20240321172213-{draw(HEX, 12)}"),
    LookAlike("git-submodule-status", f" {_sha()} vendor/tokenizer (v1.2.0)"),
    LookAlike("kubectl-version", f'Client Version: version.Info{{Major:"1", Minor:"29", GitVersion:"v1.29.2", GitCommit:"{_sha()}", GitTreeState:"clean"}}'),
    LookAlike("pre-commit-rev", f"repos:\n  - repo: https://github.com/psf/black\n    rev: {_sha()}\n    hooks:\n      - id: black\n"),
    LookAlike("github-actions-pin", f"      - uses: actions/checkout@{_sha()} # v4.1.1\n"),
    LookAlike("lockfile-git-source", f'source = "git+https://github.com/acme/tokenizer?rev=main#{_sha()}"'),
    # UUIDs used as ids
    LookAlike("uuid-json-id", f'{{"id": "{uuid4()}", "name": "checkout-service", "owner": "payments"}}'),
    LookAlike("uuid-request-log", f"2024-06-03T10:14:22Z INFO request_id={uuid4()} method=POST path=/v1/login status=401 duration_ms=12"),
    LookAlike("uuid-rest-path", f"GET /api/v2/users/{uuid4()}/sessions HTTP/1.1"),
    LookAlike("uuid-k8s-uid", f"metadata:\n  name: api-7d9f8b6c5d-x2x9z\n  uid: {uuid4()}\n  resourceVersion: \"884213\"\n"),
    LookAlike("uuid-header", f"X-Request-ID: {uuid4()}\nX-Correlation-ID: {uuid4()}\n"),
    LookAlike("uuid-sql", f"SELECT * FROM orders WHERE customer_id = '{uuid4()}' AND status = 'paid';"),
    LookAlike("uuid-trace", f"trace_id={draw(HEX, 32)} span_id={draw(HEX, 16)} parent={draw(HEX, 16)}"),
    LookAlike("uuid-azure-ids", f"AZURE_TENANT_ID={uuid4()}\nAZURE_SUBSCRIPTION_ID={uuid4()}\n"),
    LookAlike("uuid-idempotency", f'"idempotency_key": "{uuid4()}"'),
    LookAlike("uuid-chat", f"job {uuid4()} failed again after the token refresh, logs attached"),
    # image digests
    LookAlike("docker-pull-digest", f"docker pull nginx@sha256:{_sha256()}"),
    LookAlike("ghcr-digest", f"image: ghcr.io/acme/api@sha256:{_sha256()}"),
    LookAlike("docker-push-output", f"latest: digest: sha256:{_sha256()} size: 1573"),
    LookAlike("k8s-image-id", f"    imageID: docker-pullable://registry.acme.io/web@sha256:{_sha256()}"),
    LookAlike("docker-ps", f"CONTAINER ID   IMAGE         COMMAND                  STATUS\n{draw(HEX, 12)}   redis:7.2    \"docker-entrypoint.s…\"   Up 3 hours"),
    LookAlike("docker-inspect-id", f'"Id": "sha256:{_sha256()}",'),
    LookAlike("oci-url-digest", f"oras pull docker://registry.acme.io/charts/api:1.4.2@sha256:{_sha256()}"),
    # checksums
    LookAlike("sha256sum", f"{_sha256()}  acme-cli-1.4.2-linux-amd64.tar.gz"),
    LookAlike("md5sum", f"{draw(HEX, 32)}  backup-2024-06-01.sql.gz"),
    LookAlike("sha1-checksum", f"SHA1 ({draw(HEX, 40)}) = release.zip"),
    LookAlike("sha512-release-notes", f"SHA-512: {draw(HEX, 128)}"),
    LookAlike("pip-hash", f"httpx==0.27.0 \\\n    --hash=sha256:{_sha256()} \\\n    --hash=sha256:{_sha256()}"),
    LookAlike("cargo-lock", f'[[package]]\nname = "tokio"\nversion = "1.37.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{_sha256()}"\n'),
    LookAlike("go-sum", f"golang.org/x/crypto v0.23.0 h1:{b64_of(random_bytes(32))}\ngolang.org/x/crypto v0.23.0/go.mod h1:{b64_of(random_bytes(32))}"),
    LookAlike("npm-integrity", f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n  "integrity": "sha512-{b64_of(random_bytes(64))}"\n}}'),
    LookAlike("yarn-lock", f'"@babel/core@^7.24.0":\n  version "7.24.6"\n  resolved "https://registry.yarnpkg.com/@babel/core/-/core-7.24.6.tgz#{draw(HEX, 40)}"\n  integrity sha512-{b64_of(random_bytes(64))}'),
    LookAlike("terraform-lock", f'provider "registry.terraform.io/hashicorp/aws" {{\n  version = "5.51.1"\n  hashes = [\n    "h1:{b64_of(random_bytes(32))}",\n    "zh:{_sha256()}",\n  ]\n}}'),
    LookAlike("poetry-lock", f'files = [\n    {{file = "pydantic-2.7.1-py3-none-any.whl", hash = "sha256:{_sha256()}"}},\n]'),
    LookAlike("git-lfs-pointer", f"version https://git-lfs.github.com/spec/v1\noid sha256:{_sha256()}\nsize 48213377\n"),
    LookAlike("crc-log", f"upload ok: part 3/7 crc32c={b64_of(random_bytes(4))} md5={b64_of(random_bytes(16))}"),
    # base64 content hashes
    LookAlike("etag", f'ETag: "{draw(HEX, 32)}"\nContent-Length: 48213'),
    LookAlike("content-md5", f"Content-MD5: {b64_of(random_bytes(16))}\nContent-Type: application/octet-stream"),
    LookAlike("digest-header", f"Digest: SHA-256={b64_of(random_bytes(32))}"),
    LookAlike("sri-script", f'<script src="https://cdn.jsdelivr.net/npm/htmx.org@1.9.12" integrity="sha384-{b64_of(random_bytes(48))}" crossorigin="anonymous"></script>'),
    LookAlike("csp-hash", f"Content-Security-Policy: script-src 'self' 'sha256-{b64_of(random_bytes(32))}'"),
    LookAlike("s3-etag-multipart", f'"ETag": "\\"{draw(HEX, 32)}-12\\""'),
    LookAlike("ssh-fingerprint", f"ED25519 key fingerprint is SHA256:{b64_of(random_bytes(32)).rstrip('=')}."),
    LookAlike("gpg-fingerprint", "pub   rsa4096 2023-01-10 [SC]\n      " + draw(HEX.upper(), 40) + "\nuid           [ultimate] Jane Doe <jane@acme.io>"),
    LookAlike("base64-image", "background: url(data:image/png;base64," + b64_of(random_bytes(300)) + ");"),
    LookAlike("base64-json-blob", "state=" + b64_of(b'{"return_to":"/dashboard","nonce_len":16}', urlsafe=True)),
    LookAlike("k8s-configmap-binary", "binaryData:\n  logo.png: " + b64_of(random_bytes(120)) + "\n"),
    # publishable keys
    LookAlike("stripe-publishable-live", "STRIPE_PUBLISHABLE_KEY=pk_live_51" + draw(ALNUM, 97)),
    LookAlike("stripe-publishable-js", "const stripe = Stripe('pk_test_" + draw(ALNUM, 24) + "');"),
    LookAlike("stripe-publishable-env", "NEXT_PUBLIC_STRIPE_KEY=pk_test_51" + draw(ALNUM, 97)),
    LookAlike("stripe-publishable-config", "stripe:\n  publishableKey: pk_live_51" + draw(ALNUM, 60) + "\n"),
    LookAlike("mapbox-public-token", "mapboxgl.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOiJ" + draw(URLSAFE, 40) + "." + draw(URLSAFE, 22) + "';"),
    LookAlike("clerk-publishable", "NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=pk_test_" + b64_of(b"clerk.acme.io$").rstrip("=")),
    # A DSN's key sends events as the project: a credential since issue 27 (SHAPE_CREDENTIALS). Its event ids are not.
    LookAlike("sentry-event-id", f"Sentry event {draw(HEX, 32)} in o{_rng.randrange(10**5, 10**6)}.ingest.sentry.io/{_rng.randrange(10**6, 10**7)}"),
    LookAlike("recaptcha-site-key", "<div class=\"g-recaptcha\" data-sitekey=\"6Lc" + draw(URLSAFE, 37) + "\"></div>"),
    LookAlike("algolia-app-id", "ALGOLIA_APP_ID=" + draw(UPPER_ALNUM, 10) + "\nALGOLIA_INDEX=products"),
    LookAlike("ga-measurement-id", "gtag('config', 'G-" + draw(UPPER_ALNUM, 10) + "');"),
    LookAlike("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + draw(B64, 43) + " jane@laptop"),
    LookAlike("ssh-rsa-public-key", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + draw(B64, 500) + " deploy@ci"),
    LookAlike("pem-public-key", "-----BEGIN PUBLIC KEY-----\n" + pem_body("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 294) + "\n-----END PUBLIC KEY-----"),
    LookAlike("pem-certificate", "-----BEGIN CERTIFICATE-----\n" + pem_body("MIIDdzCCAl+gAwIBAgIE", 890) + "\n-----END CERTIFICATE-----"),
    LookAlike("known-hosts", "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"),
    LookAlike("age-public-key", "# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"),
    LookAlike("pgp-public-key", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + pem_body("mQINBGZb", 600) + "\n-----END PGP PUBLIC KEY BLOCK-----"),
    # object ids
    LookAlike("stripe-charge-id", f'{{"id": "ch_3{draw(ALNUM, 23)}", "object": "charge", "amount": 2000, "customer": "cus_{draw(ALNUM, 14)}"}}'),
    LookAlike("stripe-event-id", f"Received event evt_1{draw(ALNUM, 23)} type=invoice.paid for in_1{draw(ALNUM, 23)}"),
    LookAlike("stripe-payment-intent", f"payment pi_3{draw(ALNUM, 23)} succeeded; subscription sub_1{draw(ALNUM, 23)} renews monthly"),
    LookAlike("stripe-price-product", f"price_1{draw(ALNUM, 23)} belongs to prod_{draw(ALNUM, 14)}"),
    LookAlike("stripe-account-id", f"Stripe-Account: acct_1{draw(ALNUM, 15)}"),
    LookAlike("stripe-checkout-session", f"https://checkout.stripe.com/c/pay/cs_test_a1{draw(ALNUM, 56)}"),
    LookAlike("stripe-request-id", f"Request-Id: req_{draw(ALNUM, 14)}"),
    LookAlike("openai-ids", f"chatcmpl-{draw(ALNUM, 29)} finished; file-{draw(ALNUM, 24)} uploaded to asst_{draw(ALNUM, 24)}"),
    LookAlike("openai-org-id", f"OpenAI-Organization: org-{draw(ALNUM, 24)}"),
    LookAlike("anthropic-message-id", f'{{"id": "msg_01{draw(ALNUM, 22)}", "type": "message", "role": "assistant"}}'),
    LookAlike("anthropic-tool-use-id", f'{{"type": "tool_use", "id": "toolu_01{draw(ALNUM, 22)}", "name": "bash"}}'),
    LookAlike("anthropic-request-id", f"request-id: req_011{draw(ALNUM, 21)}"),
    LookAlike("github-node-id", '{"login": "octocat", "id": 583231, "node_id": "MDQ6VXNlcjU4MzIzMQ=="}'),
    LookAlike("github-run-url", f"https://github.com/acme/api/actions/runs/{_rng.randrange(10**9, 10**10)}/job/{_rng.randrange(10**10, 10**11)}"),
    LookAlike("slack-ids", f"channel C{draw(UPPER_ALNUM, 10)} user U{draw(UPPER_ALNUM, 10)} ts {_rng.randrange(10**9, 2 * 10**9)}.{_rng.randrange(10**5, 10**6)}"),
    LookAlike("discord-snowflake", f"guild_id: {_rng.randrange(10**17, 10**18)}\nchannel_id: {_rng.randrange(10**17, 10**18)}"),
    LookAlike("telegram-chat-id", "TELEGRAM_CHAT_ID=-1001234567890"),
    LookAlike("twilio-account-sid", f"Your Twilio Account SID is AC{draw(HEX, 32)} (not secret), messaging service MG{draw(HEX, 32)}"),
    LookAlike("aws-iam-unique-ids", f'{{"UserId": "AIDA{draw(BASE32, 17)}", "Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/ci-bot"}}'),
    LookAlike("aws-assumed-role-id", f"AROA{draw(BASE32, 17)}:botocore-session-1717400000"),
    LookAlike("aws-request-id", f"RequestId: {uuid4()} Duration: 12.34 ms Billed Duration: 13 ms Memory Size: 128 MB"),
    LookAlike("ec2-instance-id", f"i-{draw(HEX, 17)} (t3.medium) in subnet-{draw(HEX, 17)}, sg-{draw(HEX, 17)}, ami-{draw(HEX, 17)}"),
    LookAlike("cloudfront-id", f"Distribution E{draw(UPPER_ALNUM, 13)} invalidation I{draw(UPPER_ALNUM, 13)} completed"),
    LookAlike("gcp-project-number", "projects/734581209311/locations/europe-west1/services/api"),
    LookAlike("oauth-client-id", "GOOGLE_CLIENT_ID=734581209311-8t1fvb0q3a9l6jd2s5k4p7n0m1c3e6r9.apps.googleusercontent.com"),
    LookAlike("ipfs-cid", f"ipfs://bafybei{draw('abcdefghijklmnopqrstuvwxyz234567', 52)}"),
    LookAlike("k8s-pod-names", "api-7d9f8b6c5d-x2x9z   1/1   Running   0   3h\nworker-5c6b7d8f9-qq8lm   1/1   Running   2   3h"),
    LookAlike("bitcoin-txid", f"tx {_sha256()} confirmed in block 842311"),
    # ARNs and account numbers
    LookAlike("iam-role-arn", "arn:aws:iam::123456789012:role/ci-deploy"),
    LookAlike("lambda-arn", "arn:aws:lambda:eu-west-1:123456789012:function:resize-images:PROD"),
    LookAlike("secretsmanager-arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db/password-AbCdEf"),
    LookAlike("kms-arn", f"arn:aws:kms:eu-central-1:210987654321:key/{uuid4()}"),
    LookAlike("s3-arn-policy", '{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::acme-assets/*"}'),
    LookAlike("aws-account-chat", "deploy to account 123456789012 (prod), not 210987654321"),
    LookAlike("ecr-url", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/api:1.4.2"),
    # versions
    LookAlike("version-bump", "upgraded fastapi 0.110.0 -> 0.111.1 and pydantic 2.7.1 -> 2.7.3"),
    LookAlike("runtime-versions", "node v20.11.1, npm 10.2.4, python 3.11.7, go1.22.3 linux/amd64"),
    LookAlike("package-json-version", '{"name": "@acme/web", "version": "2.14.0-rc.1", "private": true}'),
    LookAlike("semver-build", "version 1.0.0+20130313144700.sha." + draw(HEX, 7)),
    LookAlike("user-agent", "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.112 Safari/537.36"),
    LookAlike("docker-tag", "image: ghcr.io/acme/api:sha-" + draw(HEX, 7)),
    LookAlike("requirements", "httpx==0.27.0\nattrs>=23.2\ntenacity~=8.3\nplatformdirs==4.2.2\n"),
    LookAlike("build-number", f"build 2024.06.03-{_rng.randrange(1000, 9999)} ({draw(HEX, 9)})"),
    # placeholders
    LookAlike("placeholder-angle", 'curl -H "Authorization: Bearer <your-api-key>" https://api.acme.io/v1/me'),
    LookAlike("placeholder-env-ref", "api_key: ${API_KEY}\npassword: ${DB_PASSWORD}\ntoken: $GITHUB_TOKEN\n"),
    LookAlike("placeholder-gha", "env:\n  NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n"),
    LookAlike("placeholder-helm", "token: {{ .Values.slack.token | quote }}\npassword: {{ required \"password\" .Values.db.password }}"),
    LookAlike("placeholder-your-key", '{"apiKey": "YOUR_API_KEY", "secret": "YOUR_SECRET_HERE"}'),
    LookAlike("placeholder-xxx", "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    LookAlike("placeholder-stripe-doc", "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx"),
    LookAlike("placeholder-stars", "password: ********\napi_key: ****************"),
    LookAlike("placeholder-url", "DATABASE_URL=postgres://user:password@localhost:5432/dbname"),
    LookAlike("placeholder-url-env", "REDIS_URL=redis://:${REDIS_PASSWORD}@redis:6379/0"),
    LookAlike("placeholder-sk-dots", "OPENAI_API_KEY=sk-...  # put yours here"),
    LookAlike("placeholder-changeme", "SECRET_KEY=changeme\nADMIN_PASSWORD=changeme"),
    LookAlike("placeholder-bearer-env", 'curl -H "Authorization: Bearer $TOKEN" -H "X-Api-Key: $API_KEY" https://api.acme.io'),
    LookAlike("placeholder-curl-user", 'curl -u "$NEXUS_USER:$NEXUS_PASSWORD" https://nexus.acme.io'),
    LookAlike("placeholder-mysql-prompt", "mysql -u root -p shop"),
    LookAlike("placeholder-empty", "DB_PASSWORD=\nAPI_TOKEN=\n"),
    LookAlike("placeholder-angle-secret", "AWS_SECRET_ACCESS_KEY=<secret>\nAWS_ACCESS_KEY_ID=<key id>"),
    LookAlike("placeholder-redacted", "token: [REDACTED]\npassword: <redacted>"),
    LookAlike("placeholder-dummy", 'stripe.api_key = "sk_test_dummy"'),
    LookAlike("placeholder-example-jwt", "Authorization: Bearer <jwt>"),
    LookAlike("placeholder-slack", "SLACK_BOT_TOKEN=xoxb-your-bot-token"),
    LookAlike("placeholder-k8s-secret-ref", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password\n"),
    # code
    LookAlike("code-signature", "def login(username: str, password: str) -> Token:\n    user = authenticate(username, password)\n"),
    LookAlike("code-getpass", 'password = getpass.getpass("Password: ")'),
    LookAlike("code-headers-get", 'token = request.headers.get("Authorization", "").removeprefix("Bearer ")'),
    LookAlike("code-max-tokens", "resp = client.messages.create(model=MODEL, max_tokens=4096, messages=messages)"),
    LookAlike("code-environ", 'SECRET_KEY = os.environ["SECRET_KEY"]\nAPI_KEY = os.getenv("API_KEY")'),
    LookAlike("code-optional-field", "class Settings(BaseSettings):\n    api_key: str | None = None\n    password: SecretStr\n    token: Optional[str] = None\n"),
    LookAlike("code-bcrypt", "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())"),
    LookAlike("code-if-not-token", "if not token:\n    raise HTTPException(status_code=401, detail=\"missing token\")"),
    LookAlike("code-tokenizer", 'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")\ntokens = tokenizer(text)["input_ids"]'),
    LookAlike("code-constant", "PASSWORD_MIN_LENGTH = 12\nTOKEN_TTL_SECONDS = 3600"),
    LookAlike("code-token-type", '{"token_type": "Bearer", "expires_in": 3600, "scope": "read write"}'),
    LookAlike("code-kwarg-passthrough", "conn = connect(host=host, user=user, password=password, token=token)"),
    LookAlike("code-fstring-header", 'headers = {"Authorization": f"Bearer {token}"}'),
    LookAlike("code-sort-key", "rows = sorted(rows, key=lambda row: row[1])\nlatest = max(items, key=itemgetter(0))"),
    LookAlike("code-react-state", 'const [token, setToken] = useState("");\nconst [password, setPassword] = useState("");'),
    LookAlike("code-cache-key", 'cache_key = f"user:{user_id}:profile"\nprimary_key: "id"'),
    LookAlike("code-password-stdin", "echo $CR_PAT | docker login ghcr.io -u USERNAME --password-stdin"),
    LookAlike("code-jwt-decode", 'payload = jwt.decode(token, settings.SECRET_KEY, algorithms=["HS256"])'),
    LookAlike("code-create-token", 'access_token = create_access_token(data={"sub": user.email}, expires_delta=timedelta(minutes=30))'),
    LookAlike("code-ts-interface", "interface Credentials {\n  username: string;\n  password: string;\n  apiKey?: string;\n}"),
    LookAlike("code-go-struct", 'type Config struct {\n\tToken    string `json:"token"`\n\tPassword string `yaml:"password"`\n}'),
    LookAlike("code-html-input", '<input type="password" name="password" autocomplete="current-password">'),
    LookAlike("code-sql-column", "ALTER TABLE users ADD COLUMN password_hash TEXT NOT NULL, ADD COLUMN api_token_id UUID;"),
    LookAlike("code-settings-ref", "password=settings.DB_PASSWORD, token=config.auth.token"),
    LookAlike("code-keyring", 'token = keyring.get_password("memsift", "github")'),
    LookAlike("code-rust", 'let token = std::env::var("GITHUB_TOKEN").expect("GITHUB_TOKEN not set");'),
    LookAlike("code-shell-read", 'read -rsp "Password: " PASSWORD && export PGPASSWORD="$PASSWORD"'),
    LookAlike("code-pydantic-field", 'api_key: str = Field(..., alias="x-api-key")'),
    LookAlike("code-k8s-secret-ref", "envFrom:\n  - secretRef:\n      name: api-secrets\nexistingSecret: postgres-credentials"),
    LookAlike("code-yaml-type", "properties:\n  password:\n    type: string\n    format: password\n  token:\n    type: string"),
    LookAlike("code-csrf-template", '<input type="hidden" name="csrf_token" value="{{ csrf_token() }}">'),
    LookAlike("code-comparison", "if password != confirm_password:\n    errors.append('passwords differ')"),
    LookAlike("code-shell-pwd", "PWD=/home/jane/src/memsift\nOLDPWD=/home/jane"),
    # prose
    LookAlike("prose-reset", "I reset my password yesterday and now the token expired again, is the session cookie stale?"),
    LookAlike("prose-key-idea", "The key is to keep tokens short-lived and rotate secrets through the vault."),
    LookAlike("prose-basic-auth", "basic auth is enabled on staging; Bearer tokens are used in prod."),
    LookAlike("prose-password-field", "the password field is required and the API key header is optional"),
    LookAlike("prose-passwordless", "passwordless: true\nbypass: true\nauth: oauth2\nkeyboard: us"),
    LookAlike("prose-token-limit", "we hit the token limit at 128000 tokens; the key insight is chunking by section"),
    LookAlike("prose-rotation", "Rotated the Stripe secret key and the GitHub token on 2024-06-01 after the leak drill."),
    LookAlike("prose-how-to", "Create a personal access token under Settings > Developer settings > Tokens (classic) and paste it here."),
    LookAlike("prose-private-tag", "memsift drops anything you wrap in a private tag, so wrap the address like that."),
    LookAlike("prose-secret-manager", "secrets live in AWS Secrets Manager under prod/api; the app reads them at boot"),
    LookAlike("prose-password-policy", "password must be 12+ characters with 1 digit; tokens expire after 30 days"),
    # other high-entropy or sensitive-looking text
    LookAlike("email-addresses", "ping jane.doe+alerts@acme.io or ops-team@acme.co.uk about the rotation"),
    LookAlike("ip-mac", "eth0: inet 10.0.4.12/24 ether 02:42:ac:11:00:02 inet6 fe80::42:acff:fe11:2/64"),
    LookAlike("css-colors", ".btn { color: #1a2b3c; background: #ffcc00; border-color: #a1b2c3d4; }"),
    LookAlike("tailwind-classes", '<div class="flex items-center justify-between px-4 py-2 text-sm font-medium">'),
    LookAlike("localhost-urls", "http://localhost:8080/api, http://127.0.0.1:5432, redis://localhost:6379/0, http://[::1]:3000"),
    LookAlike("url-with-user-only", "ssh://git@github.com/acme/api.git and https://jane@bitbucket.org/acme/web.git"),
    LookAlike("scp-style", "git@github.com:acme/infra.git"),
    LookAlike("url-with-port-path", "https://registry.acme.io:5000/v2/api/manifests/1.4.2?digest=true&user=ci"),
    LookAlike("mongodb-no-auth", "mongodb://localhost:27017,localhost:27018/?replicaSet=rs0"),
    LookAlike("timestamps", "2024-06-03T10:14:22.123456+02:00 1717402462 1717402462123"),
    LookAlike("hash-in-filename", f"dist/assets/index-{draw(ALNUM, 8)}.js  142.31 kB │ gzip: 45.10 kB"),
    LookAlike("webpack-chunk", f"main.{draw(HEX, 20)}.bundle.js"),
    LookAlike("long-identifier", "test_refresh_token_is_rotated_when_access_token_expires_before_the_deadline"),
    LookAlike("kebab-slug", "https://blog.acme.io/posts/how-we-rotate-secret-keys-without-downtime-2024"),
    LookAlike("nonce-log", f"oauth callback state={draw(HEX, 16)} code_challenge_method=S256"),
    LookAlike("sk-learn", "pip install scikit-learn  # the sk-learn docs call it sklearn; task-runner-for-sk-models"),
    LookAlike("hf-hub-names", "from huggingface_hub import hf_hub_download\npath = hf_hub_download(repo_id='bert-base-uncased', filename='config.json')"),
    LookAlike("regex-source", r"TOKEN_RE = re.compile(r'ghp_[A-Za-z0-9]{36}')"),
    LookAlike("aws-example-in-docs", "The access key id looks like AKIAIOSFODNN7EXAMPLE and the secret like wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY."),
    LookAlike("log-levels", "INFO  auth.middleware: token accepted for user=42 scope=read\nWARN  auth.middleware: password attempts=3 locked=false"),
    LookAlike("markdown-table", "| setting | default |\n|---|---|\n| `MEMSIFT_STORE` | sqlite |\n| `api_key` | none |"),
    LookAlike("cron-and-paths", "*/5 * * * * /usr/local/bin/rotate-keys --dry-run >> /var/log/rotate.log 2>&1"),
    LookAlike("json-schema", '{"type": "object", "properties": {"password": {"type": "string", "minLength": 12}}, "required": ["password"]}'),
    LookAlike("python-traceback", 'File "/app/auth.py", line 42, in verify\n    raise InvalidToken("signature mismatch")\njwt.exceptions.InvalidSignatureError: Signature verification failed'),
    LookAlike("base32-totp-uri-label", "otpauth app shows: ACME (jane@acme.io), 30s period, 6 digits"),
    LookAlike("dns-records", "acme.io. 300 IN TXT \"v=spf1 include:_spf.google.com ~all\"\n_dmarc.acme.io. 300 IN TXT \"v=DMARC1; p=reject\""),
    LookAlike("ansible-vault-ref", "db_password: \"{{ vault_db_password }}\"\napi_token: \"{{ lookup('env', 'API_TOKEN') }}\""),
    LookAlike("terraform-var-ref", 'password = var.db_password\ntoken    = data.vault_generic_secret.api.data["token"]'),
    LookAlike("docker-compose-secret-file", "secrets:\n  db_password:\n    file: ./secrets/db_password.txt\n"),
]


# --- credentials handed over in prose ------------------------------------------------------
# A sentence, not an assignment: the credential follows a word that names it, in the
# phrasings (and languages) people write to an agent in. Drawn from a seed of their own,
# so the entries above keep their values.

_prose_rng = random.Random(20261201)


def _prose_draw(alphabet: str, length: int) -> str:
    return "".join(_prose_rng.choice(alphabet) for _ in range(length))


def _prose_password() -> str:
    """A human-made password: letters, digits and a symbol, 10 to 14 characters."""
    body = _prose_draw(string.ascii_lowercase, 4) + _prose_draw(string.ascii_uppercase, 2) + _prose_draw(string.digits, 3)
    return body + _prose_rng.choice("#!%&*@") + _prose_draw(ALNUM, _prose_rng.randrange(0, 5))


def _prose(name: str, template: str, *secrets: str) -> list[Credential]:
    """One entry per secret the sentence holds: each must go."""
    text = template.format(*secrets)
    return [Credential(name, text, secret) for secret in secrets]


PROSE_CREDENTIALS: list[Credential] = [
    *_prose("prose-secret-key", "secret key {}", _prose_draw(B64, 40)),
    *_prose("prose-key-and-secret", "use key {} and secret {} for the sandbox account",
            _prose_draw(ALNUM, 24), _prose_draw(ALNUM, 40)),
    *_prose("prose-api-key-use", "the api key for staging, use {}", _prose_draw(HEX, 32)),
    *_prose("prose-my-token-is", "my token is {} if you need to call the API yourself", _prose_draw(ALNUM, 40)),
    *_prose("prose-password-backticks", "the password for the admin panel is `{}`, please rotate it after", _prose_password()),
    *_prose("prose-key-quoted", "here's the staging API key, '{}', don't commit it", _prose_draw(URLSAFE, 32)),
    *_prose("prose-token-double-quotes", 'Token "{}" works for the webhook test', _prose_draw(ALNUM, 36)),
    *_prose("prose-deploy-key", "the deploy key? it's {}", _prose_draw(LOWER_ALNUM, 32)),
    *_prose("prose-webhook-secret", "I rotated the webhook secret, the new one is {}.", _prose_draw(ALNUM, 32)),
    *_prose("prose-creds-pass", "creds for the VPN: user deploy, pass {}", _prose_password()),
    *_prose("prose-passphrase", "ok the passphrase for the signing step is {} (temporary)", _prose_password()),
    *_prose("prose-api-key-arrow", "API key (prod) -> {}", _prose_draw(ALNUM, 32)),
    *_prose("prose-secret-for", "the client secret for the OAuth app is {} and it expires in May",
            _prose_draw(URLSAFE, 40)),
    *_prose("prose-token-then", "try again with token {} then tell me the status code", _prose_draw(HEX, 40)),
    *_prose("prose-access-key-and-secret-key", "access key {} / secret key {}",
            _prose_draw(UPPER_ALNUM, 20), _prose_draw(B64, 40)),
    *_prose("prose-french-password", "le mot de passe de la base de staging est {}", _prose_password()),
    *_prose("prose-french-key", "voici la clé API de prod : {}", _prose_draw(ALNUM, 32)),
    *_prose("prose-french-token", "le jeton d'accès c'est {}, il expire demain", _prose_draw(ALNUM, 40)),
    *_prose("prose-german-key", "der API-Schlüssel lautet {}", _prose_draw(ALNUM, 32)),
    *_prose("prose-german-password", "das Passwort für staging ist `{}`", _prose_password()),
    *_prose("prose-spanish-password", "la contraseña del servidor es {}", _prose_password()),
    *_prose("prose-spanish-key", "usa la clave {} para el entorno de pruebas", _prose_draw(ALNUM, 32)),
    *_prose("prose-dutch-password", "het wachtwoord is {} voor de testomgeving", _prose_password()),
    *_prose("prose-portuguese-password", "a senha do banco é {}", _prose_password()),
    *_prose("prose-italian-key", "la chiave API è {}", _prose_draw(ALNUM, 32)),
]

# Prose that names a credential and quotes a hash, an id or a commit as such: left alone.
PROSE_LOOK_ALIKES: list[LookAlike] = [
    LookAlike("prose-key-fix-commit", f"the key fix is in commit {_prose_draw(HEX, 40)}"),
    LookAlike("prose-token-commit-backticks", f"the token refresh race was fixed by commit `{_prose_draw(HEX, 40)}`"),
    LookAlike("prose-secret-sha256", f"the secret file has sha256 {_prose_draw(HEX, 64)} on both hosts"),
    LookAlike("prose-key-id-uuid", f"key id {uuid4()} was rotated on Monday"),
    LookAlike("prose-password-reset-request", f"the password reset request {_prose_draw(HEX, 32)} failed with 500"),
    LookAlike("prose-token-trace-id", f"the token endpoint returned trace id {_prose_draw(HEX, 32)}"),
    LookAlike("prose-public-key-fingerprint", f"ssh key fingerprint SHA256:{_prose_draw(B64, 43)}"),
    LookAlike("prose-api-key-hash", f"we store the api key hash (sha1) {_prose_draw(HEX, 40)}, never the key"),
    LookAlike("prose-secret-rotation-job", f"secret rotation job {_prose_draw(LOWER_ALNUM, 24)} finished at 03:00"),
    LookAlike("prose-idempotency-key", f"the idempotency key {_prose_draw(ALNUM, 32)} was reused by the retry"),
    LookAlike("prose-primary-key", f"primary key {uuid4()} is duplicated in orders"),
    LookAlike("prose-token-issue", "the token bug is tracked in issue ENG-48213 and PR #9921"),
    LookAlike("prose-password-log-field", "WARN password attempts=3 locked=false for user=42"),
    LookAlike("prose-token-email", "the token was mailed to jane.doe2024@acme.io yesterday"),
    LookAlike("prose-key-in-vault-path", "the key is in vault at secret/data/prod/api, read it from there"),
    LookAlike("prose-password-identifier", "password_reset_token_expiry_in_seconds is 3600 by default"),
    LookAlike("prose-french-commit", f"la clé de cache a changé dans le commit {_prose_draw(HEX, 40)}"),
    LookAlike("prose-german-build", f"der Schlüssel kam mit Build {_prose_draw(HEX, 12)}-{_prose_draw(HEX, 8)}"),
    LookAlike("prose-secret-branch", "the secret scanning fix lives on branch fix/secretScanningFalsePositives2"),
    LookAlike("prose-token-version", "token handling changed in version 2.14.0-rc.1+build.5 of the SDK"),
    LookAlike("prose-key-build-id", f"the key rotation ran in build id {_prose_draw(HEX, 32)} last night"),
]

CREDENTIALS += PROSE_CREDENTIALS
LOOK_ALIKES += PROSE_LOOK_ALIKES


# --- each credential judged alone -------------------------------------------------------------
# A credential redacted earlier on a line must not hide a later one, and a login handed over as a
# `user / password` pair is a credential. Drawn from a seed of their own, so the entries above keep
# their values.

_alone_rng = random.Random(20261217)


def _alone_draw(alphabet: str, length: int) -> str:
    return "".join(_alone_rng.choice(alphabet) for _ in range(length))


def _alone_password() -> str:
    """A made password: a letter, then both cases, digits and a symbol in shuffled order, 10 to 14 characters."""
    chars = [*_alone_draw(string.ascii_letters, 5), *_alone_draw(string.digits, 3), _alone_rng.choice("#!%&*@$?"),
             *_alone_draw(ALNUM, _alone_rng.randrange(0, 5))]
    _alone_rng.shuffle(chars)
    return _alone_draw(string.ascii_letters, 1) + "".join(chars)


def _alone(name: str, template: str, *secrets: str) -> list[Credential]:
    """One entry per secret the text holds: each must go, whatever was found before it."""
    text = template.format(*secrets)
    return [Credential(name, text, secret) for secret in secrets]


ALONE_CREDENTIALS: list[Credential] = [
    # several credentials on one line
    *_alone("url-password-then-api-key-in-prose", "postgres://app:{}@db/shop and the api key is {}",
            _alone_draw(ALNUM, 12), _alone_draw(HEX, 32)),
    *_alone("github-token-then-twilio-auth-token", "gh token ghp_{} works; the twilio auth token is {} (account AC{})",
            _alone_draw(ALNUM, 36), _alone_draw(HEX, 32), _alone_draw(HEX, 32)),
    *_alone("env-password-then-token-in-prose", "DB_PASSWORD={} and my token is {}",
            _alone_password(), _alone_draw(ALNUM, 40)),
    *_alone("three-in-prose", "the password is {}, the api key is {} and the webhook secret is {}",
            _alone_password(), _alone_draw(ALNUM, 32), _alone_draw(URLSAFE, 32)),
    *_alone("bearer-then-password-in-prose", "curl -H 'Authorization: Bearer {}' works but the password {} does not",
            _alone_draw(ALNUM, 32), _alone_password()),
    *_alone("redis-url-then-login-pair", "cache at redis://:{}@cache:6379/0, the admin login is ops / {}",
            _alone_password(), _alone_password()),
    *_alone("curl-password-then-password-in-prose",
            "curl -u ops:{} https://nas.acme.io/api works, and the password for the share is {}",
            _alone_password(), _alone_password()),
    *_alone("ssh-key-mention-then-api-key", "my ssh key is on the wiki; the api key is {}", _alone_draw(HEX, 32)),
    *_alone("stripe-key-then-key-in-prose", "sk_live_{} is prod; for the label printer the key is {}",
            _alone_draw(ALNUM, 24), _alone_draw(HEX, 40)),
    # a login handed over as a pair
    *_alone("login-pair-slash", "login for the router admin page is admin / {}", _alone_password()),
    *_alone("login-pair-slash-comma", "the login for the staging router is admin / {}, change it after the demo",
            _alone_password()),
    *_alone("login-pair-colon", "creds: deploy:{}", _alone_password()),
    *_alone("login-pair-email-slash", "sign in as ops@acme.io / {} on the grafana box", _alone_password()),
    *_alone("login-pair-backticks", "the wifi account is `guest` / `{}` this week", _alone_password()),
    *_alone("login-pair-then-pair", "user admin / {} on staging and user admin / {} on prod",
            _alone_password(), _alone_password()),
    *_alone("login-pair-french", "identifiants : admin / {}", _alone_password()),
    *_alone("login-pair-german", "Zugangsdaten für das NAS: admin / {}", _alone_password()),
    *_alone("user-then-password", "user deploy password {}", _alone_password()),
    *_alone("username-then-pass", "username ops, pass {} for the VPN", _alone_password()),
    *_alone("user-colon-pass-colon", "user: ci / pass: {}", _alone_password()),
]

# Text with a login word next to a slash or a colon, and nothing secret in it.
ALONE_LOOK_ALIKES: list[LookAlike] = [
    LookAlike("paths-with-blanks", "the user code moved from src / lib to packages / core"),
    LookAlike("ratio", "the login ratio is 3 / 4 of users on mobile, 16:9 screens mostly"),
    LookAlike("dates", "user signups 2024-06-01 / 2024-06-30 doubled"),
    LookAlike("versions", "the login service went from v1.4.2 / v2.0.0-rc.1 last week"),
    LookAlike("protocols", "the login flow: OAuth2 / OpenID-Connect, with PKCE"),
    LookAlike("account-region", "the account acme-prod / eu-west-1 hosts the login API"),
    LookAlike("user-group", "the socket's user / group is www-data / www-data, mode 0660"),
    LookAlike("uid-gid", "run the container as user 1000:1000 so the login files stay yours"),
    LookAlike("login-timestamp", "last login 2024-06-03T10:14:22Z from 10.0.4.12"),
    LookAlike("scp-user-host", "copy it with scp dist.tar user@build-01:/srv/releases/"),
    LookAlike("login-placeholders", "login: ${DB_USER} / password: ${DB_PASSWORD} from the vault"),
    LookAlike("sign-in-buttons", "Sign in / Sign up buttons swapped places on the account page"),
    LookAlike("latency", "login latency p50 12ms / p99 340ms after the cache"),
    LookAlike("user-agent", "user agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0"),
    LookAlike("account-ids", "accounts 123456789012 / 210987654321 share the login role"),
    LookAlike("url-user-only", "login with https://jane@git.acme.io/acme/web.git / ssh"),
]

CREDENTIALS += ALONE_CREDENTIALS
LOOK_ALIKES += ALONE_LOOK_ALIKES


# --- every common shape (issue 27) -------------------------------------------------------------
# Shapes a tester found missed, and the others their families bring: a key body without its BEGIN
# line, other DSN dialects, the auth helpers of HTTP clients, CLI password flags, cookies, signed
# URLs, cloud service-account files, error-tracker DSNs, and `user / password` pairs no login word
# announces. Drawn from a seed of their own, so the entries above keep their values.

_shape_rng = random.Random(20261204)


def _shape_draw(alphabet: str, length: int) -> str:
    return "".join(_shape_rng.choice(alphabet) for _ in range(length))


def _shape_password() -> str:
    """A made password of all four kinds (lower, upper, digit, symbol), 10 to 14 characters, a letter first."""
    chars = [*_shape_draw(string.ascii_lowercase, 3), *_shape_draw(string.ascii_uppercase, 2),
             *_shape_draw(string.digits, 3), _shape_rng.choice("#!%&*@$?"), *_shape_draw(ALNUM, _shape_rng.randrange(0, 4))]
    _shape_rng.shuffle(chars)
    return _shape_draw(string.ascii_letters, 1) + "".join(chars)


def _shape_body(prefix: str, size: int) -> str:
    """A private key's base64 body in 64-character lines, starting as its DER structure does."""
    body = prefix + base64.b64encode(bytes(_shape_rng.randrange(256) for _ in range(size))).decode()[len(prefix):]
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def _shape(name: str, template: str, *secrets: str) -> list[Credential]:
    text = template.format(*secrets)
    return [Credential(name, text, secret) for secret in secrets]


_KUBE_KEY = base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\n" + bytes(_shape_rng.randrange(256) for _ in range(600))
                             + b"\n-----END RSA PRIVATE KEY-----\n").decode()

SHAPE_CREDENTIALS: list[Credential] = [
    # private keys without their BEGIN line
    *_shape("pem-body-without-begin", "the key got cut when I pasted it:\n{}\n-----END PRIVATE KEY-----\n",
            _shape_body("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1190)),
    *_shape("pem-rsa-body-bare", "here is what is left of id_rsa, no header:\n{}\n",
            _shape_body("MIIEpAIBAAKCAQEA", 1180)),
    *_shape("openssh-body-bare", "the deploy key body is\n{}\n(the header got lost in the chat)",
            _shape_body("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 380)),
    # (the secret after the encoded BEGIN line, which the certificate's data starts with too)
    Credential("kubeconfig-client-key-data", "users:\n- name: admin\n  user:\n    client-certificate-data: "
               f"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM\n    client-key-data: {_KUBE_KEY}\n", _KUBE_KEY[20:]),
    # other DSN dialects
    *_shape("go-mysql-dsn", 'db, err := sql.Open("mysql", "app:{}@tcp(db.internal:3306)/shop?parseTime=true")',
            _shape_password()),
    *_shape("go-mysql-dsn-unix", "DSN=backup:{}@unix(/var/run/mysqld/mysqld.sock)/ledger\n", _shape_password()),
    *_shape("oracle-ezconnect", "sqlplus scott/{}@//db-ora.internal:1521/ORCLPDB1", _shape_password()),
    *_shape("sqlcmd-password", "sqlcmd -S db.internal -U sa -P {} -Q \"SELECT @@VERSION\"", _shape_password()),
    # auth helpers of HTTP clients
    *_shape("requests-auth-tuple", 'r = requests.get(url, auth=("deploy", "{}"), timeout=10)', _shape_password()),
    *_shape("httpx-auth-tuple", "client = httpx.Client(base_url=API, auth=('ops', '{}'))", _shape_password()),
    *_shape("http-basic-auth", 'session.auth = HTTPBasicAuth("jenkins", "{}")', _shape_draw(ALNUM, 24)),
    *_shape("http-digest-auth", "requests.get(url, auth=HTTPDigestAuth('admin', '{}'))", _shape_password()),
    *_shape("aiohttp-basic-auth", 'auth = aiohttp.BasicAuth("metrics", "{}")', _shape_password()),
    *_shape("go-set-basic-auth", 'req.SetBasicAuth("registry", "{}")', _shape_password()),
    *_shape("java-credentials", 'new UsernamePasswordCredentials("svc-build", "{}")', _shape_password()),
    *_shape("dotnet-network-credential", 'var cred = new NetworkCredential("smtp-relay", "{}");', _shape_password()),
    # CLI password flags
    *_shape("htpasswd-b", "htpasswd -b /etc/nginx/.htpasswd admin {} && nginx -s reload", _shape_password()),
    *_shape("htpasswd-nb", "htpasswd -nbB monitor {}", _shape_password()),
    *_shape("cli-db-password", "./manage.py createsuperuser --db-password {} --noinput", _shape_password()),
    *_shape("cli-password-equals", "restic backup /srv --password={} --repo s3:backups/restic", _shape_password()),
    *_shape("cli-admin-password", "helm install grafana grafana/grafana --set x=1 --admin-password '{}'",
            _shape_password()),
    *_shape("cli-client-secret", "gh-app-cli login --client-id Iv1.8a61f9b3a7aba766 --client-secret {}",
            _shape_draw(HEX, 40)),
    *_shape("keytool-storepass", "keytool -importcert -keystore app.jks -storepass {} -file ca.pem",
            _shape_password()),
    *_shape("openssl-passout", "openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{}",
            _shape_password()),
    *_shape("wget-http-password", "wget --http-user=ci --http-password={} https://nexus.acme.io/repo/app.jar",
            _shape_password()),
    # cookies
    *_shape("cookie-sessionid", "Cookie: sessionid={}; csrftoken={}",
            _shape_draw(LOWER_ALNUM, 32), _shape_draw(ALNUM, 32)),
    *_shape("set-cookie-session", "Set-Cookie: _shop_session={}; path=/; secure; HttpOnly",
            _shape_draw(B64, 88) + "--" + _shape_draw(HEX, 40)),
    *_shape("curl-cookie-phpsessid", "curl -b 'PHPSESSID={}' https://intranet.acme.io/admin/", _shape_draw(LOWER_ALNUM, 26)),
    *_shape("cookie-jsessionid", "the request had Cookie: JSESSIONID={} and still got 401", _shape_draw(UPPER_ALNUM, 32)),
    # signed URLs
    *_shape("s3-presigned-signature",
            "https://acme-exports.s3.eu-west-1.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Date=20261204T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={}",
            _shape_draw(HEX, 64)),
    *_shape("s3-presigned-security-token",
            "https://acme-exports.s3.amazonaws.com/a.zip?X-Amz-Security-Token={}&X-Amz-Expires=600",
            _shape_draw(ALNUM, 40) + "%2F" + _shape_draw(ALNUM, 120) + "%3D"),
    *_shape("gcs-signed-url", "https://storage.googleapis.com/acme-media/v.mp4?X-Goog-Algorithm=GOOG4-RSA-SHA256"
            "&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={}", _shape_draw(HEX, 256)),
    *_shape("cloudfront-signed-url", "https://d111111abcdef8.cloudfront.net/video.mp4?Expires=1767225600"
            "&Signature={}&Key-Pair-Id=K2JCJMDEHXQW5F", _shape_draw(URLSAFE + "~", 172)),
    # cloud service-account files
    *_shape("gcp-private-key-id", '{{\n  "type": "service_account",\n  "project_id": "acme-prod-3321",\n'
            '  "private_key_id": "{}",\n  "client_email": "ci@acme-prod-3321.iam.gserviceaccount.com"\n}}',
            _shape_draw(HEX, 40)),
    # error-tracker DSNs
    *_shape("sentry-dsn", 'sentry_sdk.init(dsn="https://{}@o4505123.ingest.sentry.io/4505123456789")',
            _shape_draw(HEX, 32)),
    *_shape("sentry-dsn-env", "SENTRY_DSN=https://{}@sentry.acme.io/12\n", _shape_draw(HEX, 32)),
    # pairs no login word announces
    *_shape("prose-pair-is", "the staging box is root / {}", _shape_password()),
    *_shape("prose-pair-as", "ssh into 10.0.4.12 as deploy / {} and restart the worker", _shape_password()),
    *_shape("prose-pair-colon-root", "root:{} works on the NAS since Monday", _shape_password()),
    *_shape("prose-pair-with", "the router takes admin / {} until IT resets it", _shape_password()),
]

# Their harmless neighbours: variables, placeholders, files, public halves, ids, versions and paths.
SHAPE_LOOK_ALIKES: list[LookAlike] = [
    LookAlike("go-mysql-dsn-placeholder", 'sql.Open("mysql", "user:password@tcp(localhost:3306)/dbname")'),
    LookAlike("go-mysql-dsn-no-password", 'sql.Open("mysql", "root:@tcp(127.0.0.1:3306)/test")'),
    LookAlike("requests-auth-variables", "requests.get(url, auth=(user, password), timeout=10)"),
    LookAlike("requests-auth-env", "auth=('api', os.environ['SHOP_TOKEN'])"),
    LookAlike("basic-auth-variables", "session.auth = HTTPBasicAuth(settings.USER, settings.PASSWORD)"),
    LookAlike("htpasswd-prompt", "htpasswd -c /etc/nginx/.htpasswd admin   # asks for the password"),
    LookAlike("password-stdin", "echo \"$CR_PAT\" | docker login ghcr.io -u ci --password-stdin"),
    LookAlike("password-file-flag", "restic backup /srv --password-file /run/secrets/restic --repo s3:backups/restic"),
    LookAlike("token-flag-variable", "gh release create v1.2.0 --token $GITHUB_TOKEN --notes-file CHANGES.md"),
    LookAlike("password-flag-subshell", 'mysqldump --password="$(pass show db/prod)" shop > dump.sql'),
    LookAlike("openssl-passout-env", "openssl pkcs12 -export -in cert.pem -out b.p12 -passout env:P12_PASSWORD"),
    LookAlike("cookie-preferences", "Cookie: theme=dark; lang=en-GB; consent=yes"),
    LookAlike("set-cookie-analytics", "Set-Cookie: _ga=GA1.2.1234567890.1700000000; Path=/; Max-Age=63072000"),
    LookAlike("session-settings", "SESSION_ENGINE=django.contrib.sessions.backends.db\nSESSION_COOKIE_AGE=1209600"),
    LookAlike("session-timeout", "session_timeout=3600 and session_store=redis://cache:6379/2"),
    LookAlike("s3-presign-no-signature", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261204T101500Z"
              "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"),
    LookAlike("signature-version", "set signature_version=s3v4 in the boto config, or ?signature=v4 fails"),
    LookAlike("service-account-public-fields", '"client_email": "deployer@acme-prod.iam.gserviceaccount.com",\n'
              '"client_id": "104583920348572039485",\n"auth_uri": "https://accounts.google.com/o/oauth2/auth"'),
    LookAlike("kubeconfig-certificate-data", "clusters:\n- cluster:\n    certificate-authority-data: "
              "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwK"),
    LookAlike("spki-public-key-body", "the public key body starts MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMx"
              "H2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkP"),
    LookAlike("sentry-env-ref", "SENTRY_DSN = os.environ['SENTRY_DSN']; docs: https://docs.sentry.io/platforms/python/"),
    LookAlike("sentry-envelope-url", "the SDK posts to https://o4505123.ingest.sentry.io/api/4505123456789/envelope/"),
    LookAlike("pair-region", "the staging box is web-01 / eu-west-1 behind the balancer"),
    LookAlike("pair-split", "the traffic split is canary / stable at 10 / 90"),
    LookAlike("pair-input-output", "the converter runs as input / output streams, see io.go"),
    LookAlike("host-port-pair", "root:x:0:0:root:/root:/bin/bash is the first line of /etc/passwd"),
    LookAlike("image-tag-colon", "image: ghcr.io/acme/api:2026.12.04-rc1"),
]

# A vendor's token no rule names, announced too far ahead for the prose rules.
PREFIXED_CREDENTIALS: list[Credential] = [
    Credential("prefixed-token-far", "Voilà le nouveau token Cloudflare pour cert-manager, l'ancien a fuité dans un "
               "screenshot: cf_dns_Rk7Tw2Lp9Xq4Vn6Hm3Jd8Bz5Ys1. Fais le nécessaire.", "cf_dns_Rk7Tw2Lp9Xq4Vn6Hm3Jd8Bz5Ys1"),
    Credential("prefixed-token-bare", "set it in the chart values, then redeploy: acme_live_9Qw3Er7Ty2Ui8Op4As6Df1Gh5Jk",
               "acme_live_9Qw3Er7Ty2Ui8Op4As6Df1Gh5Jk"),
]
PREFIXED_LOOK_ALIKES: list[LookAlike] = [
    LookAlike("snake-case-test-name", "test_user_login_flow_handles_expired_sessions_correctly is flaky on CI"),
    LookAlike("prefixed-hex-digest", "cache key: build_cache_0123456789abcdef0123456789abcdef"),
    LookAlike("prefixed-mixed-words", "rename my_var_NAME_with_CAPS to something shorter"),
]

CREDENTIALS += SHAPE_CREDENTIALS + PREFIXED_CREDENTIALS
LOOK_ALIKES += SHAPE_LOOK_ALIKES + PREFIXED_LOOK_ALIKES
