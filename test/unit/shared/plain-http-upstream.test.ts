/**
 * The upstream transport rule both processes' production modes apply (src/shared/plain-http-upstream.ts):
 * https anywhere, http only to this machine (localhost, 127.0.0.0/8, ::1, IPv4-mapped loopback).
 */
import assert from 'node:assert/strict';
import { isPlainHttpOffHost } from '../../../src/shared/plain-http-upstream.js';

describe('plain http to an upstream on another host', () => {
  it('is http:// whose host is not localhost or a loopback address', () => {
    for (const url of [
      'http://api:8402',
      'http://api.internal',
      'http://10.0.0.5',
      'http://[2001:db8::1]',
      'http://localhost.example',
    ])
      assert.equal(isPlainHttpOffHost(url), true, url);
    for (const url of [
      'https://api.internal',
      'http://127.0.0.1:8402',
      'http://127.1',
      'http://[::1]:4022',
      'http://LOCALHOST:8545',
      'http://[::ffff:127.0.0.1]',
      'not a url',
    ])
      assert.equal(isPlainHttpOffHost(url), false, url);
  });
});
