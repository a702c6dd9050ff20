'use client';

import { useState, type FormEvent } from 'react';
import { DatasetDropZone } from '@/components/sft/dataset-drop-zone';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/card';
import { TextField } from '@/components/ui/field';
import { isApiClientError } from '@/lib/client/api/api-fetch';
import { useUploadEvalSet } from '@/lib/client/queries/evals';
import type { EvalSet } from '@/lib/client/evals/evals';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A set is a JSONL file of examples (`messages`, optional `reference` and `metadata`), named within a project; the
 * same name again is its next version. The server checks every line and says which one is wrong.
 */
export function UploadEvalSet({ entity, onUploaded }: { entity: string; onUploaded?: (set: EvalSet) => void }) {
  const [project, setProject] = useState('');
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const upload = useUploadEvalSet();

  function submit(event: FormEvent) {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!NAME.test(project.trim())) found.project = 'Letters, digits, ".", "_" or "-", starting with a letter or digit';
    if (!NAME.test(name.trim())) found.name = 'Letters, digits, ".", "_" or "-", starting with a letter or digit';
    if (!file) found.file = 'Choose a JSONL file';
    setErrors(found);
    if (Object.keys(found).length || !file) return;
    upload.mutate(
      { entity, project: project.trim(), name: name.trim(), file },
      {
        onSuccess: (set) => {
          setFile(null);
          onUploaded?.(set);
        },
        onError: (error) => {
          if (isApiClientError(error)) {
            const { project: p, name: n } = error.fieldErrors;
            setErrors({ ...(p ? { project: p } : {}), ...(n ? { name: n } : {}) });
          }
        },
      },
    );
  }

  return (
    <Card aria-labelledby="upload-set-title">
      <CardHeader
        id="upload-set-title"
        title="Upload an eval set"
        description={
          <>
            JSONL, one example a line:{' '}
            <code className="font-mono text-xs break-all">
              {'{"messages": [...], "reference": "4", "metadata": {...}}'}
            </code>
            . An SFT file works as it is: a last assistant message is the reference.
          </>
        }
      />
      <form onSubmit={submit} noValidate aria-label="Upload an eval set">
        <CardBody className="grid gap-4 md:grid-cols-[minmax(0,1fr)_minmax(0,1fr)_minmax(0,1.4fr)]">
          <TextField
            id="eval-set-project"
            label="Project"
            value={project}
            onChange={(e) => setProject(e.target.value)}
            error={errors.project}
            placeholder="demo"
            autoComplete="off"
            data-testid="eval-set-project"
          />
          <TextField
            id="eval-set-name"
            label="Name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={errors.name}
            placeholder="math-basics"
            hint="The same name again makes a new version."
            autoComplete="off"
            data-testid="eval-set-name"
          />
          <div className="flex flex-col gap-1.5">
            <span className="text-sm font-medium text-fg" id="eval-set-file-label">
              File
            </span>
            <DatasetDropZone
              fileName={file?.name ?? null}
              onFile={(f) => {
                setFile(f);
                setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'file')));
                upload.reset();
              }}
              invalid={Boolean(errors.file)}
              describedBy={errors.file ? 'eval-set-file-error' : undefined}
            />
            {errors.file ? (
              <p id="eval-set-file-error" className="text-xs font-medium text-danger-text">
                {errors.file}
              </p>
            ) : null}
          </div>
        </CardBody>
        {upload.isError ? (
          <div className="px-5 pb-4">
            <Alert tone="danger" role="alert" title="The set was not uploaded">
              <span data-testid="eval-set-upload-error">{upload.error.message}</span>
            </Alert>
          </div>
        ) : upload.isSuccess ? (
          <div className="px-5 pb-4">
            <Alert tone="success" role="status">
              <span data-testid="eval-set-uploaded">
                Uploaded {upload.data.project}/{upload.data.name} v{upload.data.version}:{' '}
                {upload.data.num_examples.toLocaleString('en')} examples.
              </span>
            </Alert>
          </div>
        ) : null}
        <CardFooter>
          <Button type="submit" pending={upload.isPending} data-testid="eval-set-upload">
            Upload
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
