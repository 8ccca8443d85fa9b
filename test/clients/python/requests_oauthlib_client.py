"""requests-oauthlib (Debian python3-requests-oauthlib), its OAuth2Session with its defaults:
the secret sent with HTTP Basic, state checked on the response. PKCE S256 is passed as extra
authorization and token parameters (this version has no PKCE switch). oauthlib refuses http
endpoints unless OAUTHLIB_INSECURE_TRANSPORT is set, which the test does for its loopback issuer.
The library has no revocation: that step posts to the revocation endpoint with the same client
credentials and token (RFC 7009).

Usage: requests_oauthlib_client.py <MCP server URL>
"""
import base64
import hashlib
import secrets
import sys

import requests
from requests.auth import HTTPBasicAuth
from requests_oauthlib import OAuth2Session

from agent_app import Callback, call_mcp, discover, register, report

resource_url = sys.argv[1]
prm, metadata = discover(resource_url)
callback = Callback()
client = register(metadata, callback.redirect_uri, "requests-oauthlib agent")

session = OAuth2Session(client["client_id"], redirect_uri=callback.redirect_uri, scope=prm["scopes_supported"])
verifier = secrets.token_urlsafe(48)
challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
url, state = session.authorization_url(
    metadata["authorization_endpoint"],
    code_challenge=challenge,
    code_challenge_method="S256",
    resource=prm["resource"],
)
response_url = callback.wait(url)
token = session.fetch_token(
    metadata["token_endpoint"],
    authorization_response=response_url,
    client_secret=client["client_secret"],
    code_verifier=verifier,
)
report("token", scope=" ".join(token.get("scope", [])), refresh=("refresh_token" in token), auth="client_secret_basic")
call_mcp(session, resource_url, "mcp")

first_access = token["access_token"]
credentials = HTTPBasicAuth(client["client_id"], client["client_secret"])
refreshed = session.refresh_token(metadata["token_endpoint"], auth=credentials)
report("refresh", rotated=refreshed["refresh_token"] != token.get("refresh_token"), new_access=refreshed["access_token"] != first_access)
call_mcp(session, resource_url, "mcp-after-refresh")

revoked = requests.post(
    metadata["revocation_endpoint"],
    data={"token": refreshed["refresh_token"], "token_type_hint": "refresh_token"},
    auth=credentials,
)
report("revocation", status=revoked.status_code, by="http")
call_mcp(session, resource_url, "mcp-after-revocation")
