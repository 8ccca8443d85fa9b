"""Authlib (Debian python3-authlib) with its defaults against the reference server: a confidential
client registered with client_secret_basic, and OAuth2Session's default client authentication
(HTTP Basic, RFC 6749 §2.3.1) at the token endpoint. The browser's part is the test's: this script
prints the authorization URL and reads the URL the browser was sent back to from stdin.

Usage: authlib_defaults.py <issuer> <redirect URI>
"""
import sys

from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

from school_client import register_confidential, report

issuer, redirect_uri = sys.argv[1], sys.argv[2]
metadata, client = register_confidential(issuer, redirect_uri, "authlib with its defaults")

# No token_endpoint_auth_method given: authlib's default, client_secret_basic.
session = OAuth2Session(
    client["client_id"],
    client["client_secret"],
    scope="courses:read",
    redirect_uri=redirect_uri,
    code_challenge_method="S256",
)
verifier = generate_token(48)
url, state = session.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier)
report("authorize", url=url)
callback = sys.stdin.readline().strip()
token = session.fetch_token(
    metadata["token_endpoint"], authorization_response=callback, state=state, code_verifier=verifier
)
report(
    "token",
    auth=session.token_endpoint_auth_method,
    scope=token.get("scope"),
    refresh=("refresh_token" in token),
)
