"""What an application around an OAuth client library does besides OAuth: discovery (RFC 9728,
then RFC 8414), registration (RFC 7591: neither library registers), a loopback listener for the
redirect (RFC 8252), opening the browser (Python's webbrowser, which honours BROWSER), the MCP
call, and one JSON line per step on stdout for the test to read.

Used by authlib_client.py and requests_oauthlib_client.py; only the Debian packages' modules and
the standard library.
"""
import http.server
import json
import sys
import threading
import urllib.parse
import webbrowser

import requests

MCP_TOOL_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "list_my_notes", "arguments": {}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


def report(step, **facts):
    print(json.dumps({"step": step, **facts}), flush=True)


def discover(resource_url):
    """The protected resource's metadata (path-inserted, RFC 9728 §3.1), then its authorization server's."""
    parts = urllib.parse.urlsplit(resource_url)
    prm = requests.get(f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}").json()
    issuer = prm["authorization_servers"][0]
    metadata = requests.get(f"{issuer}/.well-known/oauth-authorization-server").json()
    report("discovery", resource=prm["resource"], scopes=prm.get("scopes_supported"), issuer=metadata["issuer"])
    return prm, metadata


def register(metadata, redirect_uri, name):
    """A confidential client, with the libraries' default client authentication: HTTP Basic."""
    response = requests.post(
        metadata["registration_endpoint"],
        json={
            "client_name": name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_basic",
        },
    )
    response.raise_for_status()
    client = response.json()
    report("registration", client_id=client["client_id"], auth=client["token_endpoint_auth_method"])
    return client


class Callback:
    """A loopback listener for one authorization response (RFC 8252 §7.3)."""

    def __init__(self):
        received = threading.Event()
        self.received = received
        self.url = None
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if not self.path.startswith("/callback?") or received.is_set():
                    self.send_response(404)  # the browser's favicon request, for one
                    self.end_headers()
                    return
                owner.url = f"http://127.0.0.1:{self.server.server_port}{self.path}"
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.end_headers()
                self.wfile.write(b"<p>Signed in. You may close this window.</p>")
                received.set()

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.redirect_uri = f"http://127.0.0.1:{self.server.server_port}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, url):
        """Opens the browser at the authorization URL and waits for the redirect back."""
        webbrowser.open(url)
        if not self.received.wait(60):
            report("error", message="no authorization response within 60 s")
            sys.exit(1)
        self.server.shutdown()
        return self.url


def call_mcp(session, resource_url, step):
    response = session.post(resource_url, json=MCP_TOOL_CALL, headers=MCP_HEADERS)
    notes = None
    if response.status_code == 200:
        notes = json.loads(response.json()["result"]["content"][0]["text"])
    report(step, status=response.status_code, notes=notes)
