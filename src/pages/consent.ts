/**
 * The built-in consent page (RFC 6749 §10.2; MCP security best practices, consent UI): who is
 * asking (name, id, and for metadata-document clients the host of the `client_id` URL), where the
 * code will go (host and port, with a warning for loopback), what each scope allows, and two
 * buttons. A host may replace it with `consent.render`.
 * @module
 */
import type { OAuthResponse } from '../core/http.js';
import type { ConsentPageContext } from '../options.js';
import { escapeHtml, layout, pageHeaders } from './html.js';

function clientIdHost(clientId: string): string | undefined {
  if (!clientId.startsWith('https://')) return undefined;
  const rest = clientId.slice('https://'.length);
  const end = rest.search(/[/?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** Renders the consent page body. */
export function renderConsentPage(context: ConsentPageContext, serviceName: string): string {
  const e = escapeHtml;
  const metadataHost = clientIdHost(context.client.clientId);
  const who =
    metadataHost === undefined
      ? `<p><span class="host">${e(context.clientName)}</span><br><span class="muted">Client ID <code>${e(context.client.clientId)}</code>${
          context.client.origin === 'dynamic' ? ' (self-registered: the name is not verified)' : ''
        }</span></p>`
      : `<p><span class="host">${e(metadataHost)}</span><br><span class="muted">calls itself “${e(context.clientName)}”; client ID <code>${e(context.client.clientId)}</code></span></p>`;
  const loopbackWarning = context.loopback
    ? `<p class="warn">The authorization will be sent to <code>${e(context.redirectHost)}</code>, a program on this computer. Allow only if you started this application yourself just now.</p>`
    : `<p>The authorization will be sent to <code>${e(context.redirectHost)}</code>.</p>`;
  const scopes = context.scopes
    .map((s) => `<li>${e(s.description)} <span class="muted">(<code>${e(s.name)}</code>)</span></li>`)
    .join('');
  // Say what will be left out rather than let a requested scope silently disappear.
  const notGrantable =
    context.notGrantable.length === 0
      ? ''
      : `<p class="warn">Your account cannot grant ${context.notGrantable.length === 1 ? 'this' : 'these'}, so the application will not get ${context.notGrantable.length === 1 ? 'it' : 'them'}:</p><ul class="not-granted">${context.notGrantable
          .map((s) => `<li>${e(s.description)} <span class="muted">(<code>${e(s.name)}</code>)</span></li>`)
          .join('')}</ul>`;
  const resources =
    context.resources.length === 0
      ? ''
      : `<p class="muted">For use with: ${context.resources.map((r) => `<code>${e(r)}</code>`).join(', ')}</p>`;
  const hidden = Object.entries(context.fields)
    .map(([name, value]) => `<input type="hidden" name="${e(name)}" value="${e(value)}">`)
    .join('');
  const body =
    `<h1>${e(serviceName)}: allow access?</h1>` +
    who +
    `<p>wants to:</p><ul>${scopes}</ul>` +
    notGrantable +
    resources +
    loopbackWarning +
    `<form method="post" action="${e(context.action)}">${hidden}<div class="actions">` +
    `<button type="submit" name="decision" value="allow" class="primary">Allow</button>` +
    `<button type="submit" name="decision" value="deny">Deny</button></div></form>` +
    `<p class="muted">Signed in as <code>${e(context.userName ?? context.userId)}</code>.</p>`;
  return layout(`Allow ${context.clientName}?`, body, context.uiLocales?.[0] ?? 'en');
}

/** The consent response, with the redirect origin allowed as a form action. */
export function consentResponse(html: string, redirectOrigin: string): OAuthResponse {
  return { status: 200, headers: pageHeaders([redirectOrigin]), body: html };
}
