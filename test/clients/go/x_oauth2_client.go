// An agent on golang.org/x/oauth2 (Debian golang-golang-x-oauth2-dev, built in GOPATH mode:
// GO111MODULE=off GOPATH=/usr/share/gocode), with its defaults: client authentication
// auto-detected (HTTP Basic first), the token source refreshing an expired token. PKCE S256 and
// the resource indicator are passed as extra parameters (this version has no PKCE helpers).
// Around the library, what the application does itself: discovery (RFC 9728, RFC 8414),
// registration (RFC 7591), a loopback listener (RFC 8252), opening the browser ($BROWSER), the
// state check, the MCP call, and revocation (the library has none: RFC 7009 by HTTP with the
// same client credentials). One JSON line per step on stdout.
//
// Usage: x_oauth2_client <MCP server URL>
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

func report(step string, facts map[string]interface{}) {
	facts["step"] = step
	line, _ := json.Marshal(facts)
	fmt.Println(string(line))
}

func fail(err error) {
	report("error", map[string]interface{}{"message": err.Error()})
	os.Exit(1)
}

func getJSON(target string, into interface{}) {
	response, err := http.Get(target)
	if err != nil {
		fail(err)
	}
	defer response.Body.Close()
	if err := json.NewDecoder(response.Body).Decode(into); err != nil {
		fail(err)
	}
}

func randomString() string {
	bytes := make([]byte, 32)
	if _, err := rand.Read(bytes); err != nil {
		fail(err)
	}
	return base64.RawURLEncoding.EncodeToString(bytes)
}

// callMCP calls the tool that needs a user, with the client's HTTP client (which adds the token).
func callMCP(client *http.Client, resource string, step string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_my_notes","arguments":{}}}`
	request, _ := http.NewRequest("POST", resource, strings.NewReader(body))
	request.Header.Set("content-type", "application/json")
	request.Header.Set("accept", "application/json, text/event-stream")
	response, err := client.Do(request)
	if err != nil {
		fail(err)
	}
	defer response.Body.Close()
	facts := map[string]interface{}{"status": response.StatusCode}
	if response.StatusCode == 200 {
		var message struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		json.NewDecoder(response.Body).Decode(&message)
		var notes []string
		json.Unmarshal([]byte(message.Result.Content[0].Text), &notes)
		facts["notes"] = notes
	}
	report(step, facts)
}

func main() {
	ctx := context.Background()
	resource := os.Args[1]
	parts, _ := url.Parse(resource)

	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	getJSON(fmt.Sprintf("%s://%s/.well-known/oauth-protected-resource%s", parts.Scheme, parts.Host, parts.Path), &prm)
	var metadata struct {
		Issuer                string `json:"issuer"`
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		RegistrationEndpoint  string `json:"registration_endpoint"`
		RevocationEndpoint    string `json:"revocation_endpoint"`
	}
	getJSON(prm.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &metadata)
	report("discovery", map[string]interface{}{"resource": prm.Resource, "scopes": prm.ScopesSupported, "issuer": metadata.Issuer})

	// The loopback listener, on a port of the system's choosing.
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	redirectURI := fmt.Sprintf("http://%s/callback", listener.Addr().String())

	registration, _ := json.Marshal(map[string]interface{}{
		"client_name":                "x/oauth2 agent",
		"redirect_uris":              []string{redirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "client_secret_basic",
	})
	response, err := http.Post(metadata.RegistrationEndpoint, "application/json", bytes.NewReader(registration))
	if err != nil {
		fail(err)
	}
	var client struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	json.NewDecoder(response.Body).Decode(&client)
	response.Body.Close()
	report("registration", map[string]interface{}{"client_id": client.ClientID, "auth": client.AuthMethod})

	conf := &oauth2.Config{
		ClientID:     client.ClientID,
		ClientSecret: client.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: metadata.AuthorizationEndpoint, TokenURL: metadata.TokenEndpoint},
		RedirectURL:  redirectURI,
		Scopes:       prm.ScopesSupported,
	}
	verifier := randomString()
	digest := sha256.Sum256([]byte(verifier))
	state := randomString()
	authURL := conf.AuthCodeURL(state,
		oauth2.SetAuthURLParam("code_challenge", base64.RawURLEncoding.EncodeToString(digest[:])),
		oauth2.SetAuthURLParam("code_challenge_method", "S256"),
		oauth2.SetAuthURLParam("resource", prm.Resource))

	codes := make(chan url.Values, 1)
	server := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser's favicon request, for one
			return
		}
		w.Header().Set("content-type", "text/html")
		fmt.Fprint(w, "<p>Signed in. You may close this window.</p>")
		select {
		case codes <- r.URL.Query():
		default:
		}
	})}
	go server.Serve(listener)
	if err := exec.Command(os.Getenv("BROWSER"), authURL).Start(); err != nil {
		fail(err)
	}
	var answer url.Values
	select {
	case answer = <-codes:
	case <-time.After(60 * time.Second):
		fail(fmt.Errorf("no authorization response within 60 s"))
	}
	server.Close()
	if answer.Get("state") != state {
		fail(fmt.Errorf("the authorization response's state differs"))
	}

	token, err := conf.Exchange(ctx, answer.Get("code"), oauth2.SetAuthURLParam("code_verifier", verifier))
	if err != nil {
		fail(err)
	}
	report("token", map[string]interface{}{"scope": token.Extra("scope"), "refresh": token.RefreshToken != ""})
	callMCP(conf.Client(ctx, token), resource, "mcp")

	// Refresh: the token source renews a token that has expired.
	expired := &oauth2.Token{RefreshToken: token.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	refreshed, err := conf.TokenSource(ctx, expired).Token()
	if err != nil {
		fail(err)
	}
	report("refresh", map[string]interface{}{
		"rotated":    refreshed.RefreshToken != token.RefreshToken,
		"new_access": refreshed.AccessToken != token.AccessToken,
	})
	callMCP(conf.Client(ctx, refreshed), resource, "mcp-after-refresh")

	form := url.Values{"token": {refreshed.RefreshToken}, "token_type_hint": {"refresh_token"}}
	revoke, _ := http.NewRequest("POST", metadata.RevocationEndpoint, strings.NewReader(form.Encode()))
	revoke.Header.Set("content-type", "application/x-www-form-urlencoded")
	revoke.SetBasicAuth(url.QueryEscape(client.ClientID), url.QueryEscape(client.ClientSecret))
	revoked, err := http.DefaultClient.Do(revoke)
	if err != nil {
		fail(err)
	}
	revoked.Body.Close()
	report("revocation", map[string]interface{}{"status": revoked.StatusCode, "by": "http"})
	callMCP(conf.Client(ctx, refreshed), resource, "mcp-after-revocation")
}
