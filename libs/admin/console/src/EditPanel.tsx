import { useEffect, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import { formatAmount } from './format';
import { SchemaForm } from './SchemaForm';
import type { ActionSchema, Preview, Proposal } from './types';

type Obj = Record<string, unknown>;

/**
 * Approve with edits: a form generated from the action's JSON Schema; "Preview" asks the application for the
 * recomputed amount and the steps the edit adds (nothing is written); then approve the previewed payload.
 */
export function EditPanel(props: {
  api: Api;
  proposal: Proposal;
  busy: boolean;
  onApprove: (payload: unknown) => void;
  onConflict: (e: ApiError) => void;
  onCancel: () => void;
}) {
  const { api, proposal } = props;
  const [schema, setSchema] = useState<ActionSchema | null>(null);
  const [schemaError, setSchemaError] = useState<string | null>(null);
  const [value, setValue] = useState<Obj>(() =>
    proposal.payload !== null && typeof proposal.payload === 'object' ? { ...(proposal.payload as Obj) } : {},
  );
  const [preview, setPreview] = useState<{ payload: string; result: Preview } | null>(null);
  const [previewing, setPreviewing] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api
      .schema(proposal.id)
      .then(setSchema)
      .catch((e: unknown) => setSchemaError(e instanceof ApiError ? e.message : String(e)));
  }, [api, proposal.id]);

  const current = JSON.stringify(value);
  const fresh = preview && preview.payload === current ? preview.result : null;

  const runPreview = async () => {
    setPreviewing(true);
    setError(null);
    try {
      const result = await api.preview(proposal.id, proposal.version, value);
      setPreview({ payload: current, result });
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) props.onConflict(e);
      else setError(e instanceof Error ? e.message : String(e));
    } finally {
      setPreviewing(false);
    }
  };

  return (
    <section aria-labelledby="edit-title" class="panel edit">
      <h3 id="edit-title">Approve with edits</h3>
      {schemaError && (
        <p class="error" role="alert">
          The action's schema could not be read: {schemaError}
        </p>
      )}
      {schema && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void runPreview();
          }}
        >
          {schema.description && <p class="muted">{schema.description}</p>}
          <fieldset>
            <legend>{schema.action}: the payload</legend>
            <SchemaForm
              schema={schema.schema}
              value={value}
              onChange={setValue}
              idPrefix="edit"
              errorField={fresh && !fresh.ok ? fresh.field : undefined}
            />
          </fieldset>
          <div class="actions">
            <button type="submit" disabled={previewing}>
              {previewing ? 'Previewing…' : 'Preview the edit'}
            </button>
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel the edit
            </button>
          </div>
        </form>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div aria-live="polite">
        {fresh && !fresh.ok && (
          <p class="error" id="preview-result">
            This edit cannot apply: {fresh.reason}
          </p>
        )}
        {fresh && fresh.ok && (
          <div class="preview" id="preview-result">
            <p>
              Amount: {formatAmount(fresh.previousAmount)} → <strong>{formatAmount(fresh.amount)}</strong>
            </p>
            {fresh.extraSteps.length > 0 ? (
              fresh.extraSteps.map((s) => (
                <p key={s.name} class="warn">
                  This edit adds a step: {s.name} ({s.permission})
                </p>
              ))
            ) : (
              <p>This edit adds no step.</p>
            )}
            <p>
              Steps after the edit: {fresh.steps.map((s) => `${s.name} (${s.permission})`).join(', ') || 'none'}.
              {fresh.restarts && ' The approval chain starts again: other people sign every step (you decide once).'}
            </p>
            {fresh.risk.reason && <p class="muted">Risk review: {fresh.risk.reason}</p>}
          </div>
        )}
      </div>
      {fresh && fresh.ok && (
        <button type="button" disabled={props.busy} onClick={() => props.onApprove(value)}>
          Approve with these edits
        </button>
      )}
      {preview && !fresh && <p class="muted">The form changed since the preview: preview it again before approving.</p>}
    </section>
  );
}
