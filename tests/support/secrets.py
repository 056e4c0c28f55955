"""Texts for the redaction gate's tests: real-format fake secrets with the detector that must
name each, and ordinary developer sentences that must pass (ynm/service/redaction.py).

The secrets are built at run time from deterministic pseudo-random bodies, so no literal token
sits in the repository.
"""

from __future__ import annotations

import base64
import json
import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def fake(n: int, alphabet: str = ALNUM, seed: int = 1) -> str:
    """``n`` deterministic pseudo-random characters: the body of a well-formed fake secret
    (built at run time so that no literal token sits in the repository)."""
    rng = random.Random(seed * 7919 + n)
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


JWT = ".".join([b64({"alg": "HS256", "typ": "JWT"}), b64({"sub": "1234567890", "name": "Ada"}),
                fake(43, ALNUM + "-_")])

# name -> (detector that must fire, text holding a real-format fake secret)
SECRETS = {
    "github fine-grained": ("GitHub Token",
                            "CI uses github_pat_11AAAAAAA0" + fake(72) + " for the mirror job"),
    "github classic": ("GitHub Token", "token ghp_" + fake(36)),
    "github oauth": ("GitHub Token", "gho_" + fake(36) + " from the device flow"),
    "openai project": ("OpenAI Token", "OPENAI_API_KEY=sk-proj-" + fake(74, ALNUM + "-_")
                       + "T3BlbkFJ" + fake(74, ALNUM + "-_", 2)),
    "openai service account": ("OpenAI Token", "key sk-svcacct-" + fake(60, ALNUM + "-_")),
    "openai legacy": ("OpenAI Token", "old key sk-" + fake(20) + "T3BlbkFJ" + fake(20, seed=3)),
    "anthropic": ("Anthropic API Key",
                  "ANTHROPIC_API_KEY=sk-ant-api03-" + fake(93, ALNUM + "-_") + "AA"),
    "other sk- key": ("sk- API Key", "deepseek key sk-" + fake(32, HEX)),
    "slack bot": ("Slack Token", "bot token xoxb-123456789012-1234567890123-"
                  + fake(24, string.ascii_lowercase + string.digits)),
    "slack webhook": ("Slack Token", "post to https://hooks.slack.com/services/T0"
                      + fake(8, string.ascii_uppercase + string.digits) + "/B0"
                      + fake(8, string.ascii_uppercase + string.digits, 2) + "/" + fake(24)),
    "slack app": ("Slack Token", "app token xapp-1-A0" + fake(9, string.ascii_uppercase)
                  + "-1234567890123-" + fake(64, HEX)),
    "stripe live": ("Stripe Access Key", "stripe sk_live_" + fake(24)),
    "stripe test": ("Stripe Access Key", "stripe rk_test_" + fake(99)),
    "stripe webhook": ("Stripe Webhook Secret", "webhook whsec_" + fake(32)),
    "aws": ("AWS Access Key", "aws AKIA" + fake(16, string.ascii_uppercase + string.digits)),
    "openssh key": ("Private Key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA"),
    "encrypted key": ("Private Key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0B"),
    "jwt": ("JSON Web Token", "session cookie " + JWT),
    "bearer": ("Bearer Token", "curl -H 'Authorization: Bearer " + fake(40) + "'"),
    "gitlab": ("GitLab Token", "glpat-" + fake(20)),
    "google": ("Google API Key", "maps key AIza" + fake(35, ALNUM + "-_")),
    "npm": ("NPM tokens", "publish with npm_" + fake(36)),
    "pypi": ("PyPI Token", "twine password pypi-AgEIcHlwaS5vcmc" + fake(70, ALNUM + "-_")),
    "password in url": ("Basic Auth Credentials",
                        "clone https://deploy:" + fake(16) + "@git.example.com/repo.git"),
    "hugging face": ("Hugging Face Token", "HF_TOKEN=hf_" + fake(34, string.ascii_letters)),
}

ORDINARY = [
    "Use the risk-based-authentication-flow for admin logins",
    "The desk-booking-service-integration-tests run nightly",
    "Run task-runner-configuration-for-ci before merging",
    "Our disk-usage-monitoring-dashboard-v2 alerts at 90%",
    "The whisk-and-flask-template-repository-2024 is deprecated",
    "Mask-sensitive-fields-before-logging-v3 is the middleware order",
    "Ask-before-dropping-tables-in-production-1 is our policy",
    "The flag risk-score-threshold-override-enabled-for-tenant-42 is on in prod",
    "The audit-task-kubernetes-cluster-autoscaler-2024-11-01 job moved to Fridays",
    "The branch feature/whisk-sk-1234567890abcdefghij stays until review",
    "Install scikit-learn, not sk-learn-compatible-estimators-v2 from the fork",
    "Fixed in commit 3f2a9c1e5b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a on main",
    "The anchor is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Memory 01JD8X3YQK5V7Z9B2C4D6F8G0H was superseded by 01JD8X4ZZK5V7Z9B2C4D6F8G0J",
    "Request 550e8400-e29b-41d4-a716-446655440000 failed with a 502",
    "See https://github.com/acme/payments/blob/main/docs/risk-assessment-guidelines.md",
    "The staging db is postgres://db.internal:5432/app?sslmode=require",
    "Image digest sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "The cache key is dGhpcyBpcyBub3QgYSBzZWNyZXQgYXQgYWxsIHJlYWxseQ== for the test blob",
    "Bearer tokens are validated by the gateway-authentication-middleware",
    "The gateway wants a bearer token-based-authentication-everywhere policy",
    "Send Authorization: Bearer $GITHUB_TOKEN from CI, never a literal token",
    "ghp_ tokens are classic; github_pat_ tokens are fine-grained and expire",
    "Use sk-proj- keys for project-scoped access, stored in OPENAI_API_KEY",
    "The AKIA prefix marks long-term AWS access key ids; ASIA marks temporary ones",
    "Set api_key: from-the-environment-variable-never-hard-coded in settings",
    "Rotate the payments DB password in the vault at secret/payments/prod/db",
]

# A secret-shaped run glued to the end of a word is not a secret: every detector is bounded on
# the left (the reference's unbounded patterns refuse all of these).
GLUED = [
    "risk-" + fake(24),                                    # sk-<20+>
    "MYAKIA" + fake(16, string.ascii_uppercase + string.digits),
    "xghp_" + fake(36),
    "whisk-proj-" + fake(40),
    "idxoxb-123456789012-1234567890123-" + fake(24, string.ascii_lowercase),
]

# Passwords written out after a password-like name: each refused, naming "Secret Keyword"
# (ynm.service.redaction._password_assignment). A redis.conf's space-separated
# "requirepass foobared99" is not found (no ":" or "=").
PASSWORDS = [
    'password=hunter2',
    'db_password: "S3cr3t!"',
    'PGPASSWORD=s3cretpw psql -h db.internal app',
    'export PGPASSWORD=Tr0ub4dor',
    'mysql -u root --password=letmein42',
    'MYSQL_ROOT_PASSWORD=example123',
    'the staging creds are admin / password: Summer2024!',
    "DB_PASS='p@ssw0rd'",
    '{"username": "deploy", "password": "Xk9#mPq2"}',
    'password = "correct horse battery staple"',
    'client_secret=8f3a9c1e7b',
    'smtp_pwd: Mailer#2024',
    'passphrase="open sesame 42"',
    'set wifi password=GuestNet2024',
    "conn = psycopg2.connect(password='hunter2', host='db')",
]

# Sentences and code about passwords that hold none: each must pass. detect-secrets'
# KeywordDetector in its file-type modes refuses 14 of them (docs in ynm.service.redaction).
PASSWORD_PROSE = [
    'reset your password in settings',
    'the password field is required',
    'Password: the one in 1Password',
    'password: required',
    'Note the password: it rotates monthly',
    'Passwords must be at least 12 characters',
    'Use PGPASSWORD from the environment, never a literal',
    'password: ${DB_PASSWORD}',
    'password=$PGPASSWORD psql',
    'password = os.environ["DB_PASSWORD"]',
    'set password=<new password> in the form',
    '"password": "<password>"',
    '"password": "********"',
    'The login form posts username and password to /api/session',
    'Forgot-password emails go out through SES',
    'password_reset_token expires after 1 hour',
    'The secret: keep the blast radius small',
    'Store secrets in Vault, not in .env files',
    'client_secret is read from SECRETS_PATH at boot',
    'Run `passwd` to change your unix password',
    'The password hash uses argon2id with m=64MiB',
    'password: use the team vault entry "db-prod"',
    'We removed the password login; SSO only now',
    'Password rotation: every 90 days for service accounts',
    'db_password: see vault secret/payments/prod/db',
    'the admin password is in 1Password under "Prod DB"',
    'password=${{ secrets.DB_PASSWORD }} in the workflow',
    'password: process.env.DB_PASSWORD',
    'Set api_key: from-the-environment-variable-never-hard-coded in settings',
    '"password": "string"',
    'password: str = Field(min_length=12)',
    'def check_password(password: str) -> bool:',
    'if password == confirm_password:',
    'password_field = forms.CharField(widget=forms.PasswordInput)',
]
