"""requests-oauthlib (Debian python3-requests-oauthlib) with its defaults against the reference
server: a confidential client registered with client_secret_basic, and OAuth2Session.fetch_token
given the secret and no `auth`, which sends it with HTTP Basic (RFC 6749 §2.3.1). This version has
no PKCE switch: S256 goes as extra authorization and token parameters. The browser's part is the
test's: this script prints the authorization URL and reads the URL the browser was sent back to.

Usage: requests_oauthlib_defaults.py <issuer> <redirect URI>
"""
import base64
import hashlib
import secrets
import sys

from requests_oauthlib import OAuth2Session

from school_client import register_confidential, report


class SeenAuthorization:
    """Records the scheme of the Authorization header each token request carried."""

    def __init__(self):
        self.schemes = []

    def __call__(self, response, *args, **kwargs):
        header = response.request.headers.get("Authorization", "")
        self.schemes.append(header.split(" ", 1)[0])


issuer, redirect_uri = sys.argv[1], sys.argv[2]
metadata, client = register_confidential(issuer, redirect_uri, "requests-oauthlib with its defaults")

session = OAuth2Session(client["client_id"], redirect_uri=redirect_uri, scope=["courses:read"])
seen = SeenAuthorization()
session.hooks["response"].append(seen)
verifier = secrets.token_urlsafe(48)
challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
url, state = session.authorization_url(
    metadata["authorization_endpoint"], code_challenge=challenge, code_challenge_method="S256"
)
report("authorize", url=url)
callback = sys.stdin.readline().strip()
# The secret and no `auth`: requests-oauthlib's default is HTTP Basic.
token = session.fetch_token(
    metadata["token_endpoint"],
    authorization_response=callback,
    client_secret=client["client_secret"],
    code_verifier=verifier,
)
report(
    "token",
    auth="client_secret_basic" if seen.schemes[-1:] == ["Basic"] else "other",
    scope=" ".join(token.get("scope", [])),
    refresh=("refresh_token" in token),
)
