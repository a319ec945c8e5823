import { toIso } from '../../infra/clock.js';
import type { StackFrame, StackTrace } from './errors.presenter.js';
import type { EventView } from './errors.service.js';
import { eventFacts } from './event-view.rules.js';

/** Times as the pages write them: `2026-11-26 14:03:07 UTC`. */
export const when = (ms: number) =>
  toIso(ms)
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

function Frame({ frame, failing }: { frame: StackFrame; failing: boolean }) {
  return (
    <li class={frame.in_app ? 'et-frame in-app' : 'et-frame'} data-in-app={frame.in_app ? 'true' : 'false'}>
      <code>{frame.function ?? '?'}</code> <span class="muted">in</span> <code>{frame.filename ?? frame.module ?? '?'}</code>
      {frame.lineno !== null ? <span class="muted"> line {frame.lineno}</span> : null}
      {frame.in_app ? <span class="badge">in app</span> : null}
      {frame.context.length > 0 ? (
        <pre>
          {frame.context.map(([n, text]) => (
            // The frame's own line; in the frame that raised it is the failing line.
            <span class={n === frame.lineno ? (failing ? 'et-line current failing' : 'et-line current') : 'et-line'}>
              {`${String(n).padStart(5)}  ${text}\n`}
            </span>
          ))}
        </pre>
      ) : null}
    </li>
  );
}

/**
 * The stack trace, newest frame first: the application's frames open, the libraries' folded
 * into one `<details>` (all frames open when the SDK marked none as the application's).
 */
export function StackTraceView({ trace }: { trace: StackTrace | null }) {
  if (!trace || trace.frames.length === 0) return <p class="muted">No stack trace was sent with this event.</p>;
  const failing = trace.frames[0];
  const app = trace.frames.filter((f) => f.in_app);
  const library = trace.frames.filter((f) => !f.in_app);
  return (
    <div id="stack-trace">
      {trace.type || trace.value ? (
        <p>
          <code>{[trace.type, trace.value].filter(Boolean).join(': ')}</code>
        </p>
      ) : null}
      {app.length === 0 ? (
        <ol class="et-frames">
          {library.map((f) => (
            <Frame frame={f} failing={f === failing} />
          ))}
        </ol>
      ) : (
        <>
          <ol class="et-frames" id="app-frames">
            {app.map((f) => (
              <Frame frame={f} failing={f === failing} />
            ))}
          </ol>
          {library.length > 0 ? (
            <details class="et-library" id="library-frames">
              <summary>
                {library.length} library {library.length === 1 ? 'frame' : 'frames'}
              </summary>
              <ol class="et-frames">
                {library.map((f) => (
                  <Frame frame={f} failing={f === failing} />
                ))}
              </ol>
            </details>
          ) : null}
        </>
      )}
    </div>
  );
}

function Pairs({ id, pairs, empty }: { id: string; pairs: readonly [string, string][]; empty: string }) {
  if (pairs.length === 0) return <p class="muted">{empty}</p>;
  return (
    <dl class="facts" id={id}>
      {pairs.map(([key, value]) => (
        <>
          <dt>{key}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

/**
 * Event navigation (latest, older, newer, by event id) and the shown event's facts: when and
 * where it happened, breadcrumbs, tags, user, request, contexts, SDK and its stack trace.
 */
export function EventSection({ view, base, trace, eventId }: { view: EventView; base: string; trace: StackTrace | null; eventId: string }) {
  const { event } = view;
  const facts = eventFacts(event.payload);
  const to = (id: string) => `${base}?event=${encodeURIComponent(id)}`;
  return (
    <section id="event" aria-labelledby="event-heading" data-event-id={event.event_id}>
      <div class="page-head">
        <h2 id="event-heading">{view.latest ? 'Latest event' : 'Event'}</h2>
        <nav class="et-event-nav" aria-label="Events">
          {view.latest ? <span class="muted">Latest</span> : <a href={base}>Latest</a>}
          {view.older ? (
            <a href={to(view.older)} rel="next">
              ← Older
            </a>
          ) : (
            <span class="muted">← Older</span>
          )}
          {view.newer ? (
            <a href={to(view.newer)} rel="prev">
              Newer →
            </a>
          ) : (
            <span class="muted">Newer →</span>
          )}
        </nav>
      </div>
      <form method="get" action={base} class="search-form" role="search" aria-label="Find an event">
        <label for="event-id">Event ID</label>
        <input type="search" id="event-id" name="event" value={eventId} maxLength={64} placeholder="32 hexadecimal digits" />
        <button type="submit" class="secondary">
          Show event
        </button>
      </form>
      <dl class="facts" id="event-summary">
        <dt>Event ID</dt>
        <dd>
          <code id="event-id-shown">{event.event_id}</code>
        </dd>
        <dt>Occurred</dt>
        <dd>{when(event.occurred_at)}</dd>
        <dt>Level</dt>
        <dd>{event.level}</dd>
        {event.environment ? (
          <>
            <dt>Environment</dt>
            <dd>{event.environment}</dd>
          </>
        ) : null}
        {event.release ? (
          <>
            <dt>Release</dt>
            <dd>{event.release}</dd>
          </>
        ) : null}
        {facts.sdk ? (
          <>
            <dt>SDK</dt>
            <dd id="event-sdk">
              {facts.sdk.name}
              {facts.sdk.version ? ` ${facts.sdk.version}` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      <h3>Stack trace</h3>
      <StackTraceView trace={trace} />
      <h3>Breadcrumbs</h3>
      {facts.breadcrumbs.length === 0 ? (
        <p class="muted">No breadcrumbs were sent with this event.</p>
      ) : (
        <div class="table-wrap">
          <table id="breadcrumbs">
            <thead>
              <tr>
                <th>Time</th>
                <th>Category</th>
                <th>Level</th>
                <th>Message</th>
              </tr>
            </thead>
            <tbody>
              {facts.breadcrumbs.map((b) => (
                <tr>
                  <td>{b.timestamp !== null ? toIso(b.timestamp).slice(11, 19) : ''}</td>
                  <td>{b.category ?? b.type ?? ''}</td>
                  <td>{b.level ?? ''}</td>
                  <td class="et-wrap">
                    {b.message ?? ''}
                    {b.data.length > 0 ? <div class="muted small">{b.data.map(([k, v]) => `${k}: ${v}`).join(' · ')}</div> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Tags</h3>
      {facts.tags.length === 0 ? (
        <p class="muted">No tags.</p>
      ) : (
        <ul class="et-tags" id="tags">
          {facts.tags.map(([key, value]) => (
            <li>
              <span class="badge">
                {key}: <strong>{value}</strong>
              </span>
            </li>
          ))}
        </ul>
      )}
      <h3>User</h3>
      <Pairs id="event-user" pairs={facts.user} empty="No user was sent with this event." />
      <h3>Request</h3>
      {facts.request ? (
        <>
          <p id="event-request">
            <code>
              {facts.request.method ?? 'GET'} {facts.request.url ?? ''}
              {facts.request.query ? `?${facts.request.query.replace(/^\?/, '')}` : ''}
            </code>
          </p>
          {facts.request.headers.length > 0 ? (
            <details>
              <summary>Headers</summary>
              <Pairs id="event-request-headers" pairs={facts.request.headers} empty="" />
            </details>
          ) : null}
        </>
      ) : (
        <p class="muted">No request was sent with this event.</p>
      )}
      <h3>Contexts</h3>
      {facts.contexts.length === 0 ? (
        <p class="muted">No contexts.</p>
      ) : (
        <div id="event-contexts" class="et-contexts">
          {facts.contexts.map((c) => (
            <section>
              <h4>{c.name}</h4>
              <Pairs id={`context-${c.name}`} pairs={c.entries} empty="—" />
            </section>
          ))}
        </div>
      )}
      {facts.sdk && facts.sdk.packages.length > 0 ? <p class="muted small">SDK packages: {facts.sdk.packages.join(', ')}</p> : null}
    </section>
  );
}
