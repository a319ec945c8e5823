// Which events an SDK sends become one error: grouping by the SDK's fingerprint, the exception
// type and top in-app frame, or the message template; and the text people read of each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventTime, normalizeEvent, normalizeEventId, topFrame, userIdentifier } from '../../src/modules/error-tracking/event.rules.js';
import { formatLogMessage } from '../../src/modules/error-tracking/message-format.rules.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const normalize = (event: Record<string, unknown>) => normalizeEvent(event, { now: NOW, clientIp: '203.0.113.9' });
const fingerprint = (event: Record<string, unknown>) => normalize(event).fingerprint;

const frame = (lineno: number, extra: Record<string, unknown> = {}) => ({
  filename: 'app/models/user.py',
  module: 'app.models.user',
  function: 'save',
  lineno,
  in_app: true,
  ...extra,
});
const raised = (type: string, value: string, frames: unknown[] = [frame(10)]) => ({
  exception: { values: [{ type, value, stacktrace: { frames } }] },
});

describe('error grouping', () => {
  it('groups one exception type raised at one place whatever its message or line number', () => {
    const a = fingerprint(raised('ValueError', 'bad id 1', [frame(10)]));
    assert.equal(fingerprint(raised('ValueError', 'bad id 2', [frame(99)])), a);
    assert.match(a, /^[0-9a-f]{40}$/);
  });

  it('separates another type, another function, or another file', () => {
    const a = fingerprint(raised('ValueError', 'x'));
    assert.notEqual(fingerprint(raised('KeyError', 'x')), a);
    assert.notEqual(fingerprint(raised('ValueError', 'x', [frame(10, { function: 'load' })])), a);
    assert.notEqual(fingerprint(raised('ValueError', 'x', [frame(10, { filename: 'app/other.py', module: 'app.other' })])), a);
  });

  it('reads the frame nearest the raise that is in the application; library frames after it do not count', () => {
    const library = { filename: 'site-packages/lib.py', module: 'lib', function: 'call', in_app: false };
    const a = fingerprint(raised('ValueError', 'x', [frame(1)]));
    assert.equal(fingerprint(raised('ValueError', 'x', [frame(1), library])), a);
    assert.equal(topFrame([library]), undefined);
    assert.equal(topFrame([{ function: 'f' }, { function: 'g' }])?.function, 'g');
  });

  it('takes the last exception of a chain as the one raised, as the Go SDK’s bare array too', () => {
    const chain = {
      exception: {
        values: [
          { type: 'KeyError', value: 'k' },
          { type: 'ValueError', value: 'v' },
        ],
      },
    };
    assert.equal(normalize(chain).title, 'ValueError: v');
    assert.equal(
      normalize({
        exception: [
          { type: 'KeyError', value: 'k' },
          { type: 'ValueError', value: 'v' },
        ],
      }).title,
      'ValueError: v',
    );
  });

  it('groups messages by their template, not by the text with its params', () => {
    const a = normalize({ logentry: { message: 'User %s failed', params: ['ann'] } });
    const b = normalize({ logentry: { message: 'User %s failed', params: ['bob'] } });
    assert.equal(a.fingerprint, b.fingerprint);
    assert.equal(a.title, 'User ann failed');
    assert.equal(b.title, 'User bob failed');
    assert.notEqual(fingerprint({ message: 'Other %s' }), a.fingerprint);
    assert.equal(fingerprint({ message: 'User %s failed' }), a.fingerprint);
  });

  it('follows the SDK’s fingerprint, with {{ default }} standing for the default grouping', () => {
    const custom = fingerprint({ ...raised('ValueError', 'x'), fingerprint: ['checkout'] });
    assert.equal(fingerprint({ ...raised('KeyError', 'y'), fingerprint: ['checkout'] }), custom);
    assert.notEqual(fingerprint(raised('ValueError', 'x')), custom);
    const withDefault = (type: string) => fingerprint({ ...raised(type, 'x'), fingerprint: ['{{ default }}', 'eu'] });
    assert.notEqual(withDefault('ValueError'), withDefault('KeyError'));
    assert.equal(fingerprint({ ...raised('ValueError', 'x'), fingerprint: ['{{default}}', 'eu'] }), withDefault('ValueError'));
    assert.notEqual(withDefault('ValueError'), fingerprint(raised('ValueError', 'x')));
  });

  it('treats a synthetic exception by its message, not its type', () => {
    const synthetic = (type: string) => ({
      message: 'Something happened',
      exception: { values: [{ type, value: 'v', mechanism: { synthetic: true } }] },
    });
    assert.equal(fingerprint(synthetic('A')), fingerprint(synthetic('B')));
    assert.equal(normalize(synthetic('A')).title, 'Something happened');
  });
});

describe('what an error shows', () => {
  it('titles an exception "Type: value" and names its culprit by frame, or by transaction', () => {
    const event = normalize(raised('ValueError', 'bad id'));
    assert.equal(event.title, 'ValueError: bad id');
    assert.equal(event.name, 'ValueError');
    assert.equal(event.culprit, 'save (app.models.user)');
    assert.equal(normalize({ ...raised('ValueError', 'x'), transaction: '/users/:id' }).culprit, '/users/:id');
  });

  it('labels an event without exception or message, and bounds and cleans its texts', () => {
    assert.equal(normalize({}).title, '<unlabeled event>');
    assert.equal(normalize({ message: 'first line\nsecond' }).title, 'first line');
    assert.equal(normalize({ message: 'x'.repeat(300) }).title.length, 255);
    assert.equal(normalize({ message: 'a\u0000b' }).title, 'ab');
  });

  it('reads the level, folding warn and anything unknown', () => {
    assert.equal(normalize({ level: 'WARNING' }).level, 'warning');
    assert.equal(normalize({ level: 'warn' }).level, 'warning');
    assert.equal(normalize({ level: 'verbose' }).level, 'error');
    assert.equal(normalize({}).level, 'error');
  });

  it('identifies the user by id, username, e-mail or IP address, in that order', () => {
    assert.equal(userIdentifier({ user: { id: 7, username: 'u' } }, 'ip'), 'id:7');
    assert.equal(userIdentifier({ user: { username: 'u', email: 'E@x' } }, 'ip'), 'username:u');
    assert.equal(userIdentifier({ user: { email: 'Ann@Example.com' } }, 'ip'), 'email:ann@example.com');
    assert.equal(userIdentifier({ user: { ip_address: '{{auto}}' } }, '198.51.100.1'), 'ip:198.51.100.1');
    assert.equal(userIdentifier({}, 'ip'), null);
  });

  it('takes event ids as 32 hex digits, folding a UUID', () => {
    assert.equal(normalizeEventId('8E1A5C0B-1F2D-4C3B-9A8E-7D6C5B4A3F21'), '8e1a5c0b1f2d4c3b9a8e7d6c5b4a3f21');
    assert.equal(normalizeEventId('xyz'), undefined);
    assert.equal(normalize({ event_id: 'fc6d8c0c43fc4630ad850ee518f1b9d0' }).eventId, 'fc6d8c0c43fc4630ad850ee518f1b9d0');
  });

  it('reads the timestamp as RFC 3339 or Unix seconds; missing, zero or far future is the receive time', () => {
    assert.equal(eventTime('2026-01-01T00:00:00Z', NOW), Date.UTC(2026, 0, 1));
    assert.equal(eventTime('2026-01-01T00:00:00', NOW), Date.UTC(2026, 0, 1));
    assert.equal(eventTime(1_767_225_600.5, NOW), 1_767_225_600_500);
    assert.equal(eventTime('1767225600', NOW), 1_767_225_600_000);
    assert.equal(eventTime(undefined, NOW), NOW);
    assert.equal(eventTime(0, NOW), NOW);
    assert.equal(eventTime((NOW + 3_600_000) / 1000, NOW), NOW);
  });
});

describe('log message formatting (Python % operator)', () => {
  it('formats positional and named params as Python prints them', () => {
    assert.equal(formatLogMessage('User %s failed %d times (%r)', ['ann', 3.7, 'x']), "User ann failed 3 times ('x')");
    assert.equal(formatLogMessage('%(who)s is %(ok)s, got %(v)s', { who: 'ann', ok: true, v: null }), 'ann is True, got None');
    assert.equal(formatLogMessage('100%% of %s', ['cases']), '100% of cases');
  });

  it('leaves the template as it is when the params do not fit it', () => {
    assert.equal(formatLogMessage('%s and %s', ['one']), undefined);
    assert.equal(formatLogMessage('%s', ['one', 'two']), undefined);
    assert.equal(formatLogMessage('%(missing)s', { other: 1 }), undefined);
    assert.equal(formatLogMessage('%*d', [3, 4]), undefined);
    assert.equal(formatLogMessage('no params %s', []), undefined);
    assert.equal(formatLogMessage('no params %s', undefined), undefined);
  });

  it('shows a template that does not fit as the event’s text', () => {
    assert.equal(normalize({ logentry: { message: '%s and %s', params: ['one'] } }).title, '%s and %s');
    assert.equal(normalize({ logentry: { message: 'T %s', params: ['a'], formatted: 'given' } }).title, 'given');
  });
});
