/**
 * A button that copies the value of the field (or the text of the element) with id `target`, or
 * `value` itself. Drawn `hidden`: the page's script (src/web/basalt.js) shows it and makes it work,
 * so a browser without script shows no button that does nothing (the field can still be selected).
 * `what` names the value for assistive technology when a page has several ("Copy DSN").
 */
export function CopyButton({ target, value, what }: { target?: string; value?: string; what: string }) {
  return (
    <button type="button" class="secondary copy-button" hidden data-copy-target={target} data-copy={value}>
      Copy<span class="visually-hidden"> {what}</span>
    </button>
  );
}
