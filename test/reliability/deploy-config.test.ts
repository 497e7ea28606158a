import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';

/**
 * The deployment files' hostile-input decisions, read as text (the compose set itself runs in
 * test/container/compose.test.ts): no secret on a command line, the proxy never retries an answer
 * (a 503 `overloaded` goes to the client), its X-Forwarded-For believed from its own address only,
 * Redis with a password.
 */
const read = (path: string): string => readFileSync(resolve(REPO_ROOT, path), 'utf8');
const compose = read('compose.yaml');

describe('deployment files', () => {
  it('compose.yaml: no secret on a command line; the loader\'s password in PGPASSWORD', () => {
    const commands = [...compose.matchAll(/^\s*command:(.*)$/gm)].map((match) => match[1] ?? '');
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) expect(command).not.toMatch(/PASSWORD|API_KEY|SECRET|METRICS_KEY|:\/\/[^/@"]*:[^/@"]*@/);
    expect(compose).toMatch(/PGPASSWORD: \$\{LOADER_PASSWORD:\?/);
    expect(read('deploy/postgres/entry.sh')).not.toMatch(/-v \w*password=/);
  });

  it('HAProxy retries only what no replica answered (never a 503); compose trusts the X-Forwarded-For of the proxy\'s address alone', () => {
    const haproxy = read('deploy/haproxy/haproxy.cfg');
    const retryOn = /^\s*retry-on (.*)$/m.exec(haproxy)?.[1] ?? '';
    expect(retryOn.split(/\s+/)).not.toContain('503');
    expect(retryOn).not.toMatch(/\b(?:all-retryable-errors|5\d\d-except-502|503)\b/);
    expect(haproxy).toMatch(/^\s*option forwardfor\b/m);
    const proxyAddress = /ipv4_address: (\$\{PROXY_ADDRESS:-[0-9.]+\})/.exec(compose)?.[1];
    expect(proxyAddress).toBeDefined();
    const trusted = [...compose.matchAll(/TRUSTED_PROXIES: (.*)$/gm)].map((match) => match[1]);
    expect(trusted.length).toBe(3);
    for (const value of trusted) expect(value).toBe(proxyAddress);
  });

  it('Redis: a password, given on its standard input; no --protected-mode no', () => {
    const redis = `${read('deploy/redis/Containerfile')}\n${read('deploy/redis/entry.sh')}`;
    expect(redis).not.toMatch(/protected-mode["', ]+no/);
    expect(redis).toMatch(/requirepass "\$password"/);
    expect(redis).toMatch(/redis-server [^\n]* - <<CONFIG/);
    for (const url of [...compose.matchAll(/RATE_LIMIT_REDIS_URL: (.*)$/gm)].map((match) => match[1])) expect(url).toMatch(/^redis:\/\/:\$\{REDIS_PASSWORD(?::\?[^}]*)?\}@redis:6379$/);
  });
});
