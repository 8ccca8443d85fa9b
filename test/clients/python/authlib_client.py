"""Authlib (Debian python3-authlib), its requests client with its defaults: client_secret_basic,
state checked on the response; PKCE S256 switched on as OAuth 2.1 requires. Authorization code,
an MCP call, refresh, revocation: every step through OAuth2Session.

Usage: authlib_client.py <MCP server URL>
"""
import sys

from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

from agent_app import Callback, call_mcp, discover, register, report

resource_url = sys.argv[1]
prm, metadata = discover(resource_url)
callback = Callback()
client = register(metadata, callback.redirect_uri, "authlib agent")

session = OAuth2Session(
    client["client_id"],
    client["client_secret"],
    scope=" ".join(prm["scopes_supported"]),
    redirect_uri=callback.redirect_uri,
    code_challenge_method="S256",
)
verifier = generate_token(48)
url, state = session.create_authorization_url(
    metadata["authorization_endpoint"], code_verifier=verifier, resource=prm["resource"]
)
response_url = callback.wait(url)
token = session.fetch_token(
    metadata["token_endpoint"], authorization_response=response_url, state=state, code_verifier=verifier
)
report("token", scope=token.get("scope"), refresh=("refresh_token" in token), auth=session.token_endpoint_auth_method)
call_mcp(session, resource_url, "mcp")

first_access = token["access_token"]
refreshed = session.refresh_token(metadata["token_endpoint"])
report("refresh", rotated=refreshed["refresh_token"] != token.get("refresh_token"), new_access=refreshed["access_token"] != first_access)
call_mcp(session, resource_url, "mcp-after-refresh")

revoked = session.revoke_token(
    metadata["revocation_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token"
)
report("revocation", status=revoked.status_code, by="authlib")
call_mcp(session, resource_url, "mcp-after-revocation")
