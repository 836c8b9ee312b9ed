// A certified OpenID provider (panva/oidc-provider) for the console's tests, on loopback.
//
//   node server.js --port 43123 --config provider.json --state state.json
//
// provider.json (read once, written by the test fixture tests/identity_provider.py):
//   issuer          "http://127.0.0.1:43123"
//   jwks            {"keys": [private JWK, ...]}: the fixture makes the key, so a test can also
//                   sign a token the provider would never issue (expired, another issuer)
//   resources       {"urn:dlo:api": {"scope": "api", "ttl": 600}, ...}: the audiences the
//                   client-credentials grant issues JWT access tokens for (resource indicators)
//   cookie_keys     ["..."]
//
// state.json (read at every use, so a test can rewrite it between two sign-ins):
//   users           {"alice": {"password": "...", "groups": [...], "email": "...", ...}}:
//                   the key is the subject; every member but the password is a claim
//   clients         [client metadata, ...]: the console's client (code + PKCE S256) and scripts'
//                   clients (client_credentials); redirect URIs can change between tests
//   client_claims   {"<client_id>": {"groups": [...]}}: claims a client's access tokens carry
//
// Interactions: GET /interaction/<uid> shows a login form (Username, Password, "Sign in");
// consent is granted at once (every client here is first-party). RP-initiated logout confirms
// itself (as Keycloak does for a request with id_token_hint).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    config: { type: 'string' },
    state: { type: 'string' },
  },
});
if (!args.port || !args.config || !args.state) {
  console.error('usage: node server.js --port N --config provider.json --state state.json');
  process.exit(2);
}

const config = JSON.parse(readFileSync(args.config, 'utf8'));

function state() {
  return JSON.parse(readFileSync(args.state, 'utf8'));
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Clients live in the state file, so a test can set the console's redirect URIs once it knows
// its live server's port; oidc-provider re-validates a client whenever its metadata changes.
// Everything else (sessions, grants, codes, interactions) is kept in memory.
const stores = new Map();

class StateFileAdapter {
  constructor(model) {
    this.model = model;
    if (!stores.has(model)) stores.set(model, new Map());
    this.store = stores.get(model);
  }

  async upsert(id, payload, expiresIn) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : undefined;
    this.store.set(id, { payload, expiresAt });
    if (payload.grantId) {
      const key = `grant:${payload.grantId}`;
      const ids = stores.get('grants')?.get(key) || [];
      if (!stores.has('grants')) stores.set('grants', new Map());
      stores.get('grants').set(key, [...ids, [this.model, id]]);
    }
    if (payload.userCode) this.store.set(`userCode:${payload.userCode}`, { payload: id });
    if (payload.uid) this.store.set(`uid:${payload.uid}`, { payload: id });
  }

  async find(id) {
    if (this.model === 'Client') {
      return state().clients.find((client) => client.client_id === id);
    }
    const entry = this.store.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt && entry.expiresAt < Date.now()) {
      this.store.delete(id);
      return undefined;
    }
    return entry.payload;
  }

  async findByUid(uid) {
    const id = this.store.get(`uid:${uid}`)?.payload;
    return id ? this.find(id) : undefined;
  }

  async findByUserCode(userCode) {
    const id = this.store.get(`userCode:${userCode}`)?.payload;
    return id ? this.find(id) : undefined;
  }

  async consume(id) {
    const entry = this.store.get(id);
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    this.store.delete(id);
  }

  async revokeByGrantId(grantId) {
    const key = `grant:${grantId}`;
    for (const [model, id] of stores.get('grants')?.get(key) || []) {
      stores.get(model)?.delete(id);
    }
    stores.get('grants')?.delete(key);
  }
}

function account(sub) {
  const user = state().users[sub];
  if (!user) return undefined;
  const { password: _password, ...claims } = user;
  return {
    accountId: sub,
    async claims() {
      return { ...claims, sub };
    },
  };
}

const resources = config.resources || {};

const provider = new Provider(config.issuer, {
  adapter: StateFileAdapter,
  jwks: config.jwks,
  cookies: { keys: config.cookie_keys },
  findAccount: (_ctx, sub) => account(sub),
  scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups', 'roles'],
  },
  // The ID token carries the claims its scopes ask for (groups among them), as Keycloak,
  // Entra ID and Okta can be set to do; userinfo answers them too.
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  // Everything here is on loopback, which oidc-provider's guard against server-side request
  // forgery refuses to call: the back-channel logout posts to the console's live server there.
  fetch: (url, options) => {
    const { dispatcher: _guard, ...rest } = options;
    return fetch(url, rest);
  },
  features: {
    devInteractions: { enabled: false },
    // The console's back-channel logout URI is in its client's metadata when a test sets it.
    backchannelLogout: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: async (ctx, form) => {
        ctx.body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing out</title></head>
<body><h1>Signing out of the identity provider</h1>${form}
<button id="confirm" type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<script>document.getElementById('confirm').click()</script></body></html>`;
      },
      postLogoutSuccessSource: async (ctx) => {
        ctx.body = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signed out</title></head>'
          + '<body><h1>Signed out of the identity provider</h1></body></html>';
      },
    },
    resourceIndicators: {
      enabled: true,
      // A client-credentials request without `resource` gets the first configured audience;
      // an authorization-code flow without it gets an opaque token for userinfo only.
      defaultResource: async (ctx, _client, oneOf) => {
        if (oneOf) return oneOf;
        if (ctx.oidc.params?.grant_type === 'client_credentials') return Object.keys(resources)[0];
        return undefined;
      },
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        const resource = resources[indicator];
        if (!resource) throw new errors.InvalidTarget();
        return {
          scope: resource.scope || 'api',
          audience: indicator,
          accessTokenTTL: resource.ttl || 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // A script's token carries the claims the test set for its client (its groups).
  extraTokenClaims: async (_ctx, token) => {
    if (token.kind !== 'ClientCredentials') return undefined;
    return state().client_claims?.[token.clientId];
  },
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    ClientCredentials: 600,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
  },
  renderError: async (ctx, out) => {
    ctx.type = 'html';
    ctx.body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Provider error</title></head>
<body><h1>${escapeHtml(out.error)}</h1><p>${escapeHtml(out.error_description || '')}</p></body></html>`;
  },
});

// What happened to each back-channel logout, in the provider's log (tests read it on failure).
provider.on('backchannel.success', (_ctx, client, sub, sid) => console.log(`backchannel.success ${client.clientId} ${sub} ${sid}`));
provider.on('backchannel.error', (_ctx, err, client) => console.log(`backchannel.error ${client.clientId} ${err.message}`));
provider.on('server_error', (_ctx, err) => console.log(`server_error ${err.stack}`));

function loginPage(uid, clientId, message = '') {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Sign in to the identity provider</title></head>
<body><h1>Sign in to the identity provider</h1><p>for ${escapeHtml(clientId)}</p>
${message ? `<p role="alert">${escapeHtml(message)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
<label>Username <input name="login" autofocus></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button>
</form></body></html>`;
}

async function formBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function grantEverything(ctx, details) {
  const { prompt, params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  const consent = details.grantId ? {} : { grantId };
  return provider.interactionFinished(ctx.req, ctx.res, { consent }, { mergeWithLastSubmission: true });
}

provider.use(async (ctx, next) => {
  const match = ctx.path.match(/^\/interaction\/([^/]+)(\/login)?$/);
  if (!match) return next();
  ctx.set('cache-control', 'no-store');
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (match[1] !== details.uid) throw new errors.InvalidRequest('interaction mismatch');

  if (ctx.method === 'GET' && details.prompt.name === 'consent') {
    ctx.respond = false;
    return grantEverything(ctx, details);
  }
  if (ctx.method === 'GET') {
    ctx.type = 'html';
    ctx.body = loginPage(details.uid, details.params.client_id);
    return undefined;
  }
  if (ctx.method === 'POST' && match[2]) {
    const form = await formBody(ctx.req);
    const sub = form.get('login') || '';
    const user = state().users[sub];
    if (!user || user.password !== form.get('password')) {
      ctx.type = 'html';
      ctx.body = loginPage(details.uid, details.params.client_id, 'Wrong username or password.');
      return undefined;
    }
    ctx.respond = false;
    return provider.interactionFinished(
      ctx.req, ctx.res, { login: { accountId: sub } }, { mergeWithLastSubmission: false },
    );
  }
  ctx.status = 405;
  return undefined;
});

const server = provider.listen(Number(args.port), '127.0.0.1', () => {
  console.log(`oidc-provider listening at ${config.issuer}`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.closeAllConnections();
    process.exit(0);
  });
}
