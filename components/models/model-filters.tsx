import { Select } from '@/components/ui/input';
import type { BaseModelDto } from './create-model-dialog';

interface ModelFiltersProps {
  projects: string[];
  baseModels: BaseModelDto[];
  project: string;
  baseModel: string;
  onProjectChange: (value: string) => void;
  onBaseModelChange: (value: string) => void;
}

/** Native selects: keyboard and screen readers work without extra code, and the lists are short. */
export function ModelFilters({
  projects,
  baseModels,
  project,
  baseModel,
  onProjectChange,
  onBaseModelChange,
}: ModelFiltersProps) {
  return (
    <div className="flex flex-wrap items-center gap-2">
      <label htmlFor="model-filter-project" className="sr-only">
        Filter by project
      </label>
      <Select
        id="model-filter-project"
        value={project}
        onChange={(event) => onProjectChange(event.target.value)}
        className="w-44"
        data-testid="model-filter-project"
      >
        <option value="">All projects</option>
        {/* A project from the URL that no longer exists still shows as selected. */}
        {project && !projects.includes(project) ? <option value={project}>{project}</option> : null}
        {projects.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </Select>
      <label htmlFor="model-filter-base" className="sr-only">
        Filter by base model
      </label>
      <Select
        id="model-filter-base"
        value={baseModel}
        onChange={(event) => onBaseModelChange(event.target.value)}
        className="w-52"
        data-testid="model-filter-base-model"
      >
        <option value="">All base models</option>
        {baseModel && !baseModels.some((m) => m.id === baseModel) ? (
          <option value={baseModel}>{baseModel}</option>
        ) : null}
        {baseModels.map((m) => (
          <option key={m.id} value={m.id}>
            {m.id}
          </option>
        ))}
      </Select>
    </div>
  );
}
