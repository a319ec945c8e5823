import type { ComponentChildren } from 'preact';
import type { FieldErrors } from './page-policy.js';

/** Every page form posts its session's CSRF token (checked once, by the page layer). */
export function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="authenticity_token" value={token} />;
}

/** The message of a form as a whole (`_`: an expired form, a refusal), above its fields. */
export function FormError({ errors }: { errors?: FieldErrors | undefined }) {
  const message = errors?._;
  return message ? (
    <p class="flash flash-error" role="alert">
      {message}
    </p>
  ) : null;
}

const idOf = (name: string) => `field-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

function FieldMessage({ id, error }: { id: string; error?: string | undefined }) {
  return error ? (
    <span class="field-error" id={`${id}-error`}>
      {error}
    </span>
  ) : null;
}

interface FieldProps {
  label: string;
  name: string;
  value?: unknown;
  error?: string | undefined;
  hint?: ComponentChildren;
  required?: boolean;
  type?: 'text' | 'password' | 'email' | 'date' | 'url' | 'number';
  autocomplete?: string;
  maxLength?: number;
}

/** A labelled input with its hint and, after a refused submit, its message beside it. */
export function Field({ label, name, value, error, hint, required, type = 'text', autocomplete, maxLength }: FieldProps) {
  const id = idOf(name);
  return (
    <div class={error ? 'field has-error' : 'field'}>
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        value={typeof value === 'string' || typeof value === 'number' ? String(value) : ''}
        required={required}
        autocomplete={autocomplete}
        maxLength={maxLength}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {hint ? <small class="hint">{hint}</small> : null}
      <FieldMessage id={id} error={error} />
    </div>
  );
}

export function TextArea({ label, name, value, error, hint, rows = 5, maxLength }: Omit<FieldProps, 'type'> & { rows?: number }) {
  const id = idOf(name);
  return (
    <div class={error ? 'field has-error' : 'field'}>
      <label for={id}>{label}</label>
      <textarea id={id} name={name} rows={rows} maxLength={maxLength} aria-invalid={error ? 'true' : undefined}>
        {typeof value === 'string' ? value : ''}
      </textarea>
      {hint ? <small class="hint">{hint}</small> : null}
      <FieldMessage id={id} error={error} />
    </div>
  );
}

export function Checkbox({
  label,
  name,
  checked,
  value = '1',
  error,
}: {
  label: string;
  name: string;
  checked: boolean;
  value?: string;
  error?: string | undefined;
}) {
  const id = idOf(`${name}-${value}`);
  return (
    <div class="field checkbox">
      <input id={id} type="checkbox" name={name} value={value} checked={checked} />
      <label for={id}>{label}</label>
      <FieldMessage id={id} error={error} />
    </div>
  );
}

export function Select({
  label,
  name,
  value,
  options,
  error,
}: {
  label: string;
  name: string;
  value: string;
  options: readonly { value: string; label: string }[];
  error?: string | undefined;
}) {
  const id = idOf(name);
  return (
    <div class={error ? 'field has-error' : 'field'}>
      <label for={id}>{label}</label>
      <select id={id} name={name}>
        {options.map((option) => (
          <option key={option.value} value={option.value} selected={option.value === value}>
            {option.label}
          </option>
        ))}
      </select>
      <FieldMessage id={id} error={error} />
    </div>
  );
}

/** A one-button form (Revoke, Close issue): an action is always a button with visible text. */
export function ActionButton({
  action,
  csrf,
  label,
  kind,
}: {
  action: string;
  csrf: string;
  label: string;
  kind?: 'danger' | 'secondary';
}) {
  return (
    <form method="post" action={action} class="inline-action">
      <Csrf token={csrf} />
      <button type="submit" class={kind}>
        {label}
      </button>
    </form>
  );
}
