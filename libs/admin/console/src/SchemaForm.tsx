import type { ComponentChild } from 'preact';
import { useState } from 'preact/hooks';
import { labelOf } from './format';
import type { JsonSchema } from './types';

type Obj = Record<string, unknown>;

function typeOf(schema: JsonSchema): string {
  const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  if (typeof t === 'string') return t;
  if (schema.properties) return 'object';
  if (schema.enum) return 'enum';
  return 'unknown';
}

/** The fields of an object schema, generated: enums as selects, numbers with their bounds, booleans, nested fieldsets, JSON otherwise. */
export function SchemaForm(props: {
  schema: JsonSchema;
  value: Obj;
  onChange: (value: Obj) => void;
  idPrefix: string;
  errorField?: string;
}) {
  return (
    <ObjectFields schema={props.schema} value={props.value} onChange={props.onChange} path={props.idPrefix} errorField={props.errorField} />
  );
}

function ObjectFields(props: { schema: JsonSchema; value: Obj; onChange: (v: Obj) => void; path: string; errorField?: string }) {
  const props_ = props.schema.properties ?? {};
  const required = new Set(props.schema.required ?? []);
  return (
    <>
      {Object.entries(props_).map(([name, sub]) => (
        <Field
          key={name}
          name={name}
          schema={sub}
          required={required.has(name)}
          value={props.value[name]}
          path={`${props.path}-${name}`}
          invalid={props.errorField === name}
          onChange={(v) => {
            const next = { ...props.value };
            if (v === undefined) delete next[name];
            else next[name] = v;
            props.onChange(next);
          }}
        />
      ))}
    </>
  );
}

function Field(props: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  path: string;
  invalid: boolean;
  onChange: (v: unknown) => void;
}) {
  const { schema, path } = props;
  const label = `${schema.title ?? labelOf(props.name)}${props.required ? ' (required)' : ''}`;
  const hintId = `${path}-hint`;
  const hints = [schema.description, bounds(schema)].filter(Boolean).join(' ');
  const hint = hints ? (
    <span id={hintId} class="hint">
      {hints}
    </span>
  ) : null;
  const described = hints ? hintId : undefined;
  const invalid = props.invalid ? 'true' : undefined;
  const type = typeOf(schema);

  if (schema.enum) {
    return (
      <div class="field">
        <label for={path}>{label}</label>
        <select
          id={path}
          required={props.required}
          aria-describedby={described}
          aria-invalid={invalid}
          value={props.value === undefined ? '' : JSON.stringify(props.value)}
          onChange={(e) => props.onChange(e.currentTarget.value === '' ? undefined : JSON.parse(e.currentTarget.value))}
        >
          {!props.required && <option value="">(none)</option>}
          {schema.enum.map((o) => (
            <option key={JSON.stringify(o)} value={JSON.stringify(o)}>
              {typeof o === 'string' ? o : JSON.stringify(o)}
            </option>
          ))}
        </select>
        {hint}
      </div>
    );
  }
  if (type === 'number' || type === 'integer') {
    return (
      <div class="field">
        <label for={path}>{label}</label>
        <input
          id={path}
          type="number"
          inputMode={type === 'integer' ? 'numeric' : 'decimal'}
          step={type === 'integer' ? 1 : 'any'}
          min={schema.minimum ?? schema.exclusiveMinimum}
          max={schema.maximum ?? schema.exclusiveMaximum}
          required={props.required}
          aria-describedby={described}
          aria-invalid={invalid}
          value={typeof props.value === 'number' ? String(props.value) : ''}
          onInput={(e) => {
            const raw = e.currentTarget.value;
            props.onChange(raw === '' ? undefined : Number(raw));
          }}
        />
        {hint}
      </div>
    );
  }
  if (type === 'boolean') {
    return (
      <div class="field check">
        <input
          id={path}
          type="checkbox"
          aria-describedby={described}
          checked={props.value === true}
          onChange={(e) => props.onChange(e.currentTarget.checked)}
        />
        <label for={path}>{label}</label>
        {hint}
      </div>
    );
  }
  if (type === 'string') {
    return (
      <div class="field">
        <label for={path}>{label}</label>
        <input
          id={path}
          type="text"
          required={props.required}
          minLength={schema.minLength}
          maxLength={schema.maxLength}
          pattern={schema.pattern}
          aria-describedby={described}
          aria-invalid={invalid}
          value={typeof props.value === 'string' ? props.value : ''}
          onInput={(e) => props.onChange(e.currentTarget.value === '' && !props.required ? undefined : e.currentTarget.value)}
        />
        {hint}
      </div>
    );
  }
  if (type === 'object' && schema.properties) {
    const v = props.value !== null && typeof props.value === 'object' && !Array.isArray(props.value) ? (props.value as Obj) : {};
    return (
      <fieldset>
        <legend>{label}</legend>
        {hint}
        <ObjectFields schema={schema} value={v} path={path} onChange={props.onChange} />
      </fieldset>
    );
  }
  return <JsonField label={label} path={path} value={props.value} hint={hint} described={described} onChange={props.onChange} />;
}

/** Arrays and anything the form cannot draw: edited as JSON, parsed on every keystroke (an error says why). */
function JsonField(props: {
  label: string;
  path: string;
  value: unknown;
  hint: ComponentChild;
  described?: string;
  onChange: (v: unknown) => void;
}) {
  const [text, setText] = useState(() => (props.value === undefined ? '' : JSON.stringify(props.value, null, 2)));
  const [error, setError] = useState<string | null>(null);
  const errorId = `${props.path}-error`;
  return (
    <div class="field">
      <label for={props.path}>{props.label} (JSON)</label>
      <textarea
        id={props.path}
        rows={4}
        spellcheck={false}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={[props.described, error ? errorId : ''].filter(Boolean).join(' ') || undefined}
        value={text}
        onInput={(e) => {
          const t = e.currentTarget.value;
          setText(t);
          if (t.trim() === '') {
            setError(null);
            props.onChange(undefined);
            return;
          }
          try {
            props.onChange(JSON.parse(t));
            setError(null);
          } catch {
            setError('Not valid JSON yet.');
          }
        }}
      />
      {props.hint}
      {error && (
        <span id={errorId} class="error">
          {error}
        </span>
      )}
    </div>
  );
}

function bounds(s: JsonSchema): string {
  const parts: string[] = [];
  if (s.minimum !== undefined) parts.push(`at least ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) parts.push(`more than ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) parts.push(`at most ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) parts.push(`less than ${s.exclusiveMaximum}`);
  if (s.minLength !== undefined) parts.push(`${s.minLength} characters or more`);
  if (s.maxLength !== undefined) parts.push(`${s.maxLength} characters or fewer`);
  return parts.length ? `(${parts.join(', ')})` : '';
}
