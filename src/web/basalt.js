// Basalt's one script, served from /-/static/basalt.js (src/web/static.ts) and loaded with `defer` by
// the layout. Plain ES, no build step. It only enhances what the server drew: every page works
// without it (docs/decisions.md "One static same-origin script, for progressive enhancement").
//
// Copy buttons: `<button type="button" hidden data-copy-target="ID">` copies the value of the field
// (or the text of the element) with that id; `data-copy="VALUE"` copies VALUE. The server draws them
// `hidden`, so a page without script shows no button that does nothing; this script shows them.
(() => {
  'use strict';

  const FEEDBACK_MS = 2000;

  /** The field or element a button copies from, or null. */
  const sourceOf = (button) => {
    const id = button.getAttribute('data-copy-target');
    return id ? document.getElementById(id) : null;
  };

  const valueOf = (button) => {
    if (button.hasAttribute('data-copy')) return button.getAttribute('data-copy') ?? '';
    const source = sourceOf(button);
    if (!source) return '';
    return typeof source.value === 'string' ? source.value : (source.textContent ?? '');
  };

  /** Selects the source's whole text, so that the keyboard copies it. */
  const selectSource = (button) => {
    const source = sourceOf(button);
    if (!source) return false;
    if (typeof source.select === 'function') {
      source.focus();
      source.select();
      return true;
    }
    const selection = window.getSelection();
    if (!selection) return false;
    const range = document.createRange();
    range.selectNodeContents(source);
    selection.removeAllRanges();
    selection.addRange(range);
    return true;
  };

  /** Shows `text` beside the button (a polite live region, so screen readers hear it), for 2 s unless sticky. */
  const timers = new WeakMap();
  const say = (button, status, text, sticky) => {
    window.clearTimeout(timers.get(status));
    status.textContent = text;
    button.classList.toggle('copied', text === 'Copied');
    status.classList.toggle('copy-failed', text !== 'Copied');
    if (sticky) return;
    timers.set(
      status,
      window.setTimeout(() => {
        status.textContent = '';
        button.classList.remove('copied');
      }, FEEDBACK_MS),
    );
  };

  /** Without the Clipboard API (a page over plain http) or when it refuses: select, and say how. */
  const fallback = (button, status) => {
    let copied = false;
    try {
      copied = selectSource(button) && document.execCommand('copy');
    } catch {
      copied = false;
    }
    if (copied) say(button, status, 'Copied', false);
    else say(button, status, 'Press Ctrl+C to copy', true);
  };

  const enhance = (button) => {
    const status = document.createElement('span');
    status.className = 'copy-status';
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    button.insertAdjacentElement('afterend', status);
    button.addEventListener('click', () => {
      const value = valueOf(button);
      if (navigator.clipboard?.writeText) {
        navigator.clipboard.writeText(value).then(
          () => say(button, status, 'Copied', false),
          () => fallback(button, status),
        );
      } else {
        fallback(button, status);
      }
    });
    button.hidden = false;
  };

  for (const button of document.querySelectorAll('button[data-copy-target], button[data-copy]')) enhance(button);
})();
