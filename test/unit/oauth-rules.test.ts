// The OAuth rules a client meets before any storage: which redirect URIs are registered and
// matched (RFC 6749 §3.1.2, RFC 8252 §7.3, RFC 9700 §4.1.3), which scopes are granted
// (RFC 6749 §3.3) and how PKCE is checked (RFC 7636, S256 only).
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { describe, it } from 'node:test';
import { OAuthError } from '../../src/infra/errors/oauth-errors.js';
import { checkChallenge, verifyPkce } from '../../src/modules/oauth/pkce.rules.js';
import { parseRedirectUris, redirectUriAllowed, splitRedirectUris } from '../../src/modules/oauth/redirect-uri.rules.js';
import { grantableScopes, joinScopes, parseScope, registrableScopes, splitScopes } from '../../src/modules/oauth/scopes.rules.js';

describe('redirect URI registration', () => {
  it('keeps absolute URIs one per line, trimmed and without repeats', () => {
    const parsed = parseRedirectUris(' https://app.example/cb \r\nhttp://127.0.0.1/cb\n\nhttps://app.example/cb\ncom.example.app:/oauth');
    assert.deepEqual(parsed, { uris: ['https://app.example/cb', 'http://127.0.0.1/cb', 'com.example.app:/oauth'], problems: [] });
  });

  it('says why a URI is refused, in the established product’s words', () => {
    const problem = (text: string) => parseRedirectUris(text).problems;
    assert.deepEqual(problem(''), ["can't be blank"]);
    assert.deepEqual(problem('/relative/cb'), ['must be an absolute URI.']);
    assert.deepEqual(problem('https://app.example/cb#frag'), ['cannot contain a fragment.']);
    for (const scheme of ['javascript:alert(1)', 'data:text/html,x', 'vbscript:x', 'file:///etc/passwd']) {
      assert.deepEqual(problem(scheme), ['is forbidden by the server.'], scheme);
    }
    assert.deepEqual(problem('https://user:pass@app.example/cb'), ['must be a valid URI.']);
    assert.deepEqual(problem('https://app example/cb'), ['must be a valid URI.']);
    assert.deepEqual(problem(`https://app.example/${'a'.repeat(2000)}`), ['is too long']);
  });

  it('refuses more than ten URIs, and names each kind of problem once', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`).join('\n');
    assert.deepEqual(parseRedirectUris(eleven).problems, ['can have at most 10 URIs']);
    assert.deepEqual(parseRedirectUris('/a\n/b').problems, ['must be an absolute URI.']);
  });

  it('stores URIs one per line', () => {
    assert.deepEqual(splitRedirectUris('https://a.example/cb\nhttps://b.example/cb\n'), ['https://a.example/cb', 'https://b.example/cb']);
  });
});

describe('redirect URI matching', () => {
  const registered = ['https://app.example/cb?x=1', 'http://127.0.0.1/native', 'http://[::1]:8080/v6'];

  it('accepts exactly a registered URI', () => {
    assert.equal(redirectUriAllowed(registered, 'https://app.example/cb?x=1'), true);
  });

  it('refuses prefixes, extensions, case and normalisation variants', () => {
    for (const uri of [
      'https://app.example/cb',
      'https://app.example/cb?x=1&y=2',
      'https://app.example/cb/?x=1',
      'https://APP.example/cb?x=1',
      'https://app.example:443/cb?x=1',
      'https://app.example/cb?x=1#f',
      'http://app.example/cb?x=1',
    ]) {
      assert.equal(redirectUriAllowed(registered, uri), false, uri);
    }
  });

  it('lets a native app pick the port of a registered http loopback IP URI, and nothing else', () => {
    assert.equal(redirectUriAllowed(registered, 'http://127.0.0.1:53120/native'), true);
    assert.equal(redirectUriAllowed(registered, 'http://[::1]:1/v6'), true);
    assert.equal(redirectUriAllowed(registered, 'http://[::1]/v6'), true);
    assert.equal(redirectUriAllowed(registered, 'http://127.0.0.1:53120/other'), false);
    assert.equal(redirectUriAllowed(registered, 'http://127.0.0.1:99999/native'), false);
    assert.equal(redirectUriAllowed(registered, 'http://localhost:53120/native'), false);
    assert.equal(redirectUriAllowed(registered, 'https://127.0.0.1:53120/native'), false);
    assert.equal(redirectUriAllowed(['http://localhost/native'], 'http://localhost:53120/native'), false);
  });

  it('refuses an over-long URI even when registered', () => {
    const long = `https://app.example/${'a'.repeat(2000)}`;
    assert.equal(redirectUriAllowed([long], long), false);
  });
});

describe('scopes', () => {
  it('parses space-delimited tokens, without repeats; tabs, newlines, quotes and backslashes are malformed', () => {
    assert.deepEqual(parseScope(undefined), []);
    assert.deepEqual(parseScope('api  read_user api'), ['api', 'read_user']);
    assert.equal(parseScope('api\tread_user'), null);
    assert.equal(parseScope('api\nread_user'), null);
    assert.equal(parseScope('"api"'), null);
    assert.equal(parseScope('api\\'), null);
    assert.equal(parseScope('é'), null);
  });

  it('grants what was asked when the application registered it; omitted means api', () => {
    assert.deepEqual(grantableScopes('read_user openid', ['api', 'read_user', 'openid']), ['read_user', 'openid']);
    assert.deepEqual(grantableScopes(undefined, ['api', 'read_user']), ['api']);
    assert.deepEqual(grantableScopes('', ['api']), ['api']);
  });

  it('refuses (invalid_scope) a scope not registered, unknown, malformed, or an empty default', () => {
    assert.equal(grantableScopes('api', ['read_user']), null);
    assert.equal(grantableScopes('nonsense', ['nonsense', 'api']), null);
    assert.equal(grantableScopes('api\tread_user', ['api', 'read_user']), null);
    assert.equal(grantableScopes(undefined, ['read_user']), null);
  });

  it('lets only administrators register sudo and admin_mode', () => {
    assert.equal(registrableScopes(false).includes('sudo'), false);
    assert.equal(registrableScopes(false).includes('admin_mode'), false);
    assert.ok(registrableScopes(false).includes('api'));
    assert.ok(registrableScopes(true).includes('sudo'));
    assert.ok(registrableScopes(true).includes('admin_mode'));
  });

  it('stores scopes space-separated', () => {
    assert.deepEqual(splitScopes(' api  openid '), ['api', 'openid']);
    assert.equal(joinScopes(['api', 'openid']), 'api openid');
  });
});

describe('PKCE', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  // RFC 7636 Appendix B.
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('computes the RFC 7636 Appendix B example', () => {
    assert.equal(hash('sha256', verifier, 'base64url'), challenge);
  });

  it('checks the challenge at /oauth/authorize: S256 only, 43–128 unreserved characters', () => {
    assert.equal(checkChallenge(challenge, 'S256', true), null);
    assert.equal(checkChallenge(undefined, undefined, false), null);
    assert.match(checkChallenge(undefined, undefined, true) ?? '', /PKCE is required/);
    assert.match(checkChallenge(undefined, 'S256', false) ?? '', /without code_challenge/);
    assert.match(checkChallenge(challenge, undefined, false) ?? '', /code_challenge_method/);
    assert.equal(checkChallenge(challenge, 'plain', false), 'code_challenge_method must be S256.');
    assert.equal(checkChallenge(challenge, 's256', false), 'code_challenge_method must be S256.');
    assert.match(checkChallenge('short', 'S256', false) ?? '', /43 to 128/);
    assert.match(checkChallenge(`${challenge}+`, 'S256', false) ?? '', /43 to 128/);
    assert.match(checkChallenge('a'.repeat(129), 'S256', false) ?? '', /43 to 128/);
  });

  const refusal = (stored: { challenge: string | null; method: string | null }, v: string | undefined) => {
    try {
      verifyPkce(stored, v);
      return null;
    } catch (error) {
      assert.ok(error instanceof OAuthError);
      return { error: error.error, description: error.message };
    }
  };

  it('accepts the matching verifier at the token endpoint, and a code without challenge without one', () => {
    assert.equal(refusal({ challenge, method: 'S256' }, verifier), null);
    assert.equal(refusal({ challenge: null, method: null }, undefined), null);
  });

  it('refuses a wrong, malformed or missing verifier, and a verifier for a code issued without challenge', () => {
    assert.deepEqual(refusal({ challenge, method: 'S256' }, `${verifier.slice(0, -1)}Y`), {
      error: 'invalid_grant',
      description: 'code_verifier does not match code_challenge.',
    });
    assert.deepEqual(refusal({ challenge, method: 'S256' }, 'short'), {
      error: 'invalid_grant',
      description: 'code_verifier is malformed.',
    });
    assert.deepEqual(refusal({ challenge, method: 'S256' }, undefined), {
      error: 'invalid_request',
      description: 'Missing required parameter: code_verifier.',
    });
    assert.deepEqual(refusal({ challenge: null, method: null }, verifier), {
      error: 'invalid_grant',
      description: 'code_verifier was sent for a code issued without code_challenge.',
    });
  });

  it('accepts the padded standard-base64 verifiers git-credential-oauth sends, by their digest', () => {
    const padded = `${Buffer.from('a'.repeat(32)).toString('base64')}`;
    assert.equal(padded.length, 44);
    assert.ok(/[=+/]/.test(padded));
    assert.equal(refusal({ challenge: hash('sha256', padded, 'base64url'), method: 'S256' }, padded), null);
  });
});
