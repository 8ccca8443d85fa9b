"""What both default-settings scripts do before their library takes over: report a step as one JSON
line, and register a confidential client (client_secret_basic) with the reference server found
through its authorization-server metadata."""
import json

import requests


def report(step, **facts):
    print(json.dumps({"step": step, **facts}), flush=True)


def register_confidential(issuer, redirect_uri, client_name):
    """Returns the server's metadata and the registered client (with its secret)."""
    metadata = requests.get(f"{issuer}/.well-known/oauth-authorization-server").json()
    response = requests.post(
        metadata["registration_endpoint"],
        json={
            "client_name": client_name,
            "application_type": "native",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "client_secret_basic",
        },
    )
    response.raise_for_status()
    client = response.json()
    report("registration", client_id=client["client_id"], auth=client["token_endpoint_auth_method"])
    return metadata, client
